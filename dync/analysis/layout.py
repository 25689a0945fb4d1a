"""Which layout IREE computes a module's convolutions in: NHWC when `dync-channels-last` asked
for IREE's conversion (read by the passes that count or patch convolution inputs), and which
convolutions that conversion transposes.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.dync_ir import read_preprocessing
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import constant_int, defining
from .op_facts import window

CHANNELS_LAST = "iree-preprocessing-convert-conv-to-channels-last"


def rank(value: ir.Value) -> int | None:
    """The rank of a tensor `value`, None when its type has none."""
    dims = type_dims(value.type)
    return None if dims is None else len(dims)


def converts_to_channels_last(module: ir.Operation) -> bool:
    """Whether IREE will compute `module`'s convolutions in NHWC (`dync-channels-last` asked for it)."""
    return CHANNELS_LAST in read_preprocessing(module)


def relaid_by_iree(conv: ir.Operation) -> bool:
    """Whether IREE's NHWC conversion transposes this convolution's input and filter (one
    group, not a transposed convolution, a rank-4 filter)."""
    facts = window(conv.name)
    if facts is None or facts.groups is None or constant_int(conv.operands[facts.groups]) != 1:
        return False
    return not maybe_transposed(conv) and rank(conv.operands[1]) == 4


def maybe_transposed(conv: ir.Operation) -> bool:
    """Whether `conv` is, or may be, a transposed convolution (a generic `convolution` whose
    ``transposed`` operand is true or not a constant)."""
    facts = window(conv.name)
    if facts is None or facts.transposed is None:
        return False
    transposed = defining(conv.operands[facts.transposed], "torch.constant.bool")
    return transposed is None or ir.BoolAttr(transposed.attributes["value"]).value
