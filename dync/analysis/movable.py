"""Which ops keep their place in a block and which may move: an op whose place is part of the
program's meaning or cannot be reasoned about bounds the segments `dync-plan-execution`
reorders and the work `dync-sink-into-branches` moves into a branch (SoD² §4.3, its ``nac``
partition points).
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import is_tensor
from ..dialects.torch_ops import BIND
from .op_kinds import HOST_READS, RANDOM, REGION_OPS, TERMINATORS
from .tensor_sizes import TensorSizes

_MOVABLE_DIALECTS = ("torch.aten.", "torch.prim.", "torch.constant.", "torch.vtensor.literal",
                     "torch_c.", "torch.tensor_static_info_cast", "arith.", "tensor.", BIND)
_FIXED = REGION_OPS | HOST_READS | RANDOM | TERMINATORS | {
    "func.call", "torch.symbolic_int", "torch.prim.Print", "torch.prim.RaiseException"}


def fixed(op: ir.Operation, sizes: TensorSizes) -> bool:
    """Whether `op` keeps its place: it bounds the segments around it."""
    name = op.name
    if name in _FIXED or op.regions or not name.startswith(_MOVABLE_DIALECTS):
        return True
    if name.startswith("torch.aten.") and name.endswith("_"):   # in place on a mutable tensor
        return True
    values = list(op.operands) + list(op.results)
    if any(str(v.type).startswith("!torch.tensor") for v in values):
        return True
    return any(is_tensor(r.type) and sizes.dims(r) is None for r in op.results)
