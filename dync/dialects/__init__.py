"""dync IR: the program as `func` + `scf.if`/`scf.while` + torch value-semantic tensor ops,
with shape symbols (ranges) and per-value dim expressions. See `dync.dialects.dync_ir`."""

import importlib
import sys
import types

from .dync_ir import (
    ENTRY_ATTR,
    SHAPE_ATTR,
    SYMBOLS_ATTR,
    check_ir,
    read_shape,
    read_symbols,
    set_entry_signature,
    shape_attr,
    symbols_attr,
)

__all__ = [
    "ENTRY_ATTR",
    "SHAPE_ATTR",
    "SYMBOLS_ATTR",
    "check_ir",
    "read_shape",
    "read_symbols",
    "set_entry_signature",
    "shape_attr",
    "symbols_attr",
]


def _stub_missing_dialect_modules() -> None:
    """The MLIR Python bindings look for a Python module of each op's dialect every time they
    wrap an op, and do not remember a failed import: IREE ships none for `torch`/`torch_c`,
    so every walk over dync IR paid a failed import per op (seconds per pass on a suite
    model). An empty module is found once and cached."""
    for namespace in ("torch", "torch_c"):
        name = f"iree.compiler.dialects.{namespace}"
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)


_stub_missing_dialect_modules()
