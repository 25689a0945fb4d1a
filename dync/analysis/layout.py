"""Which layout IREE computes a module's convolutions in: NHWC when `dync-channels-last` asked
for IREE's conversion (read by the passes that count or patch convolution inputs), which
convolutions that conversion transposes, and the constant window of a 2-D convolution (read
by the passes that rewrite convolutions into other ops).
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from ..dialects.dync_ir import read_preprocessing
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import constant_int, constant_int_list, defining
from .op_facts import CONVOLUTIONS_2D, window

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


@dataclass(frozen=True)
class ConvWindow:
    """The groups, stride, padding and dilation (two of each) of a 2-D convolution."""

    groups: int
    stride: list[int]
    padding: list[int]
    dilation: list[int]


def constant_window(conv: ir.Operation) -> ConvWindow | None:
    """The window of a 2-D convolution (not transposed) of a floating-point rank-4 input by a
    rank-4 filter of static shape, with a ranked result, whose groups, stride, padding and
    dilation are constants; None for any other op."""
    facts = window(conv.name)
    if conv.name not in CONVOLUTIONS_2D or facts is None or facts.groups is None \
            or maybe_transposed(conv):
        return None
    x, weight = (type_dims(v.type) for v in conv.operands[:2])
    if x is None or weight is None or len(x) != 4 or len(weight) != 4 or None in weight \
            or type_dims(conv.results[0].type) is None \
            or element_type(conv.operands[0].type) not in FLOAT_ELEMENTS:
        return None
    groups = constant_int(conv.operands[facts.groups])
    found = [constant_int_list(conv.operands[i])
             for i in (facts.stride, facts.padding, facts.dilation)]
    if groups is None or any(v is None or len(v) != 2 for v in found):
        return None
    return ConvWindow(groups, *found)
