"""Where padding is: the arguments `dync-bucket` padded to a bucket's size, and the functions
whose convolution padding IREE writes out as copies (all, unless `dync-fuse-padding` asked IREE
to fuse it).
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.dync_ir import read_copied_padding, read_flags
from ..dialects.torch_ops import BARRIER, defining
from ..dialects.walk import functions, reachable
from .op_kinds import viewed_argument

FUSE_PADDING = "--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops"


def copies_padding(module: ir.Operation) -> set[str]:
    """The functions whose convolution padding IREE writes out as copies: all of them unless
    the module asks IREE to fuse padding, else those reachable from the entry points
    `dync-fuse-padding` kept out of the fusion."""
    if FUSE_PADDING not in read_flags(module):
        return set(functions(module))
    return set(reachable(module, read_copied_padding(module)))


def padded_argument(value: ir.Value) -> ir.Operation | None:
    """The `constant_pad_nd` of a function argument `value` comes from through
    dync-bucket's `padded_through_barrier`, else None."""
    chain = ("torch_c.from_builtin_tensor", BARRIER, "torch_c.to_builtin_tensor",
             "torch.aten.constant_pad_nd")
    for name in chain:
        op = defining(value, name)
        if op is None:
            return None
        value = op.operands[0]
    return op if viewed_argument(value) is not None else None
