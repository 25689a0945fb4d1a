"""Frontends: PyTorch (`torch.export` + dync's FX importer) and ONNX, both producing dync IR
(`common.ImportedProgram`)."""
