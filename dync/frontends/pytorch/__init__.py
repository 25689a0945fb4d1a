"""PyTorch frontend: `torch.export` with `torch.export.Dim` dynamic shapes, imported by
IREE's bundled FX importer extended with dync's `cond`/`while_loop` handlers
(`export.import_module`)."""
