"""What torch-dialect ops do to memory: which results alias an operand, which may reuse an
operand's buffer, which only read shapes, which read data on the host (sets of the table in
`op_facts`), and bytes per element. Shared by `dync-plan-buffers` (liveness),
`dync-plan-execution` (ordering) and the passes that look for one kind of op."""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import element_type
from ..dialects.torch_ops import owner
from ..dialects.walk import function_argument
from . import op_facts
from .op_facts import with_trait

BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "f8E4M3FN": 1, "f8E5M2": 1,
         "si64": 8, "ui64": 8, "i64": 8, "si32": 4, "ui32": 4, "i32": 4, "si16": 2,
         "ui16": 2, "i16": 2, "si8": 1, "ui8": 1, "i8": 1, "i1": 1,
         "complex<f32>": 8, "complex<f64>": 16, "index": 8}

# The sets the passes ask, each a query of the one table of op facts (`op_facts`).
VIEWS = with_trait(op_facts.VIEW)
ELEMENTWISE = with_trait(op_facts.ELEMENTWISE)
SCATTERS = with_trait(op_facts.SCATTER)
CONSTANT_OPS = with_trait(op_facts.CONSTANT)
# Windowed ops and the operand holding their padding: IREE materializes a padded copy of the
# input (the producer writes into its interior when the input has no other use).
PADDED = op_facts.PADDING_OPERAND
CONVOLUTIONS = with_trait(op_facts.CONVOLUTION)
CONVOLUTIONS_2D = op_facts.CONVOLUTIONS_2D
POOLS = with_trait(op_facts.POOL)
BATCH_NORMS = with_trait(op_facts.BATCH_NORM)
REDUCTIONS = with_trait(op_facts.REDUCTION)
RESHAPES = with_trait(op_facts.RESHAPE)
SOFTMAXES = with_trait(op_facts.SOFTMAX)
LOG_SOFTMAXES = with_trait(op_facts.LOG_SOFTMAX)
MATMULS = with_trait(op_facts.MATMUL)
GATHERS = with_trait(op_facts.GATHER)
REGION_OPS = with_trait(op_facts.REGION)
SHAPE_ONLY = with_trait(op_facts.SHAPE_QUERY)
TERMINATORS = with_trait(op_facts.TERMINATOR)
HOST_READS = with_trait(op_facts.HOST_READ)
RANDOM = with_trait(op_facts.RANDOM)


def element_bytes(t: ir.Type) -> int:
    """Bytes per element of a `!torch.vtensor` or builtin tensor type (i1 is stored as a byte)."""
    return BYTES.get(element_type(t) or "f32", 4)


def from_constants(op: ir.Operation, constant: set[ir.Value]) -> bool:
    """Whether `op` is a constant, or computes from `constant` values alone (IREE folds or
    hoists it: a weight's transpose, a literal's shape list)."""
    return op.name in CONSTANT_OPS or (not op.regions and len(op.operands) > 0 and all(
        v in constant for v in op.operands))


def viewed_argument(value: ir.Value) -> int | None:
    """The index of the function argument `value` is, or is a view of (a permute is no view:
    it changes the layout), else None."""
    while (op := owner(value)) is not None:
        if op.name not in VIEWS or not op.operands:
            return None
        value = op.operands[0]
    return function_argument(value)
