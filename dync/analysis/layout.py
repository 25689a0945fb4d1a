"""Which layout IREE computes a module's convolutions in: NHWC when `dync-channels-last` asked
for IREE's conversion (read by the passes that count or patch convolution inputs), which
convolutions that conversion transposes, and the constant window of a 2-D convolution (read
by the passes that rewrite convolutions into other ops), and the constant window of a pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from ..dialects.dync_ir import read_preprocessing
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import constant_bool, constant_int, constant_int_list, defining
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


# Pool -> (spatial axes, operand index of its dilation or None, of its ceil_mode).
POOLS = {f"torch.aten.{kind}_pool{n}d{suffix}": (n, 4 if kind == "max" else None,
                                                 5 if kind == "max" else 4)
         for kind, suffix in (("max", ""), ("avg", ""), ("max", "_with_indices"))
         for n in (1, 2, 3)}


@dataclass(frozen=True)
class PoolWindow:
    """The kernel, stride, padding and dilation (one per spatial axis) and ceil mode of a pool."""

    kernel: list[int]
    stride: list[int]
    padding: list[int]
    dilation: list[int]
    ceil_mode: bool


def pool_window(pool: ir.Operation) -> PoolWindow | None:
    """The window of a max or average pool (`POOLS`: `max_pool{1,2,3}d`, with indices too, and
    `avg_pool{1,2,3}d`) whose kernel, stride, padding, dilation and ceil mode are constants
    (one int given for every axis; an empty stride is the kernel); None for any other op."""
    if pool.name not in POOLS:
        return None
    n, dilation_at, ceil_at = POOLS[pool.name]
    ceil_mode = constant_bool(pool.operands[ceil_at])
    kernel = _spread(pool.operands[1], n)
    stride = _spread(pool.operands[2], n, kernel)
    padding = _spread(pool.operands[3], n)
    dilation = [1] * n if dilation_at is None else _spread(pool.operands[dilation_at], n)
    if ceil_mode is None or None in (kernel, stride, padding, dilation):
        return None
    return PoolWindow(kernel, stride, padding, dilation, ceil_mode)


def _spread(value: ir.Value, n: int, default: list[int] | None = None) -> list[int] | None:
    """A pool's kernel, stride, padding or dilation as `n` ints (one given for all; an empty
    list is `default`)."""
    ints = constant_int_list(value)
    if ints is None:
        return None
    if not ints:
        return default
    return ints * n if len(ints) == 1 else ints if len(ints) == n else None
