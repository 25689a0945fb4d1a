"""Frontends: PyTorch (`torch.export` + dync's FX importer) and ONNX, both producing dync IR."""

from .common import ImportedProgram

__all__ = ["ImportedProgram"]
