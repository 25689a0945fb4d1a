"""PyTorch frontend: `torch.export` with `torch.export.Dim` dynamic shapes, imported by
IREE's bundled FX importer extended with dync's `cond`/`while_loop` handlers."""

from .export import import_module

__all__ = ["import_module"]
