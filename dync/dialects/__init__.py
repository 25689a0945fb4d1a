"""dync IR: the program as `func` + `scf.if`/`scf.while` + torch value-semantic tensor ops,
with shape symbols (ranges) and per-value dim expressions. See `dync.dialects.dync`."""

from .dync import (
    ENTRY_ATTR,
    SHAPE_ATTR,
    SYMBOLS_ATTR,
    read_shape,
    read_symbols,
    set_entry_signature,
    shape_attr,
    symbols_attr,
    verify,
)

__all__ = [
    "ENTRY_ATTR",
    "SHAPE_ATTR",
    "SYMBOLS_ATTR",
    "read_shape",
    "read_symbols",
    "set_entry_signature",
    "shape_attr",
    "symbols_attr",
    "verify",
]
