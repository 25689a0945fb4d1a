"""`dync-rdp` rules of the compute ops (ISDOS): matmuls, convolutions, pooling, reductions,
indexing; of factories (ISVDOS) and of ops whose sizes only execution knows (EDO).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from ....analysis.op_facts import CONVOLUTION, POOL, window, with_trait
from ....dialects.symbolic import NAC, Dim, ceildiv, floordiv, known
from . import EDO, ISDO, UNDEF, Fact, _axis, _product, broadcast, iconst, ilist, ival, rule
from .layout import is_int

# --- ISDOS: compute --------------------------------------------------------------------------

@rule("torch.aten.matmul", "torch.aten.mm", "torch.aten.bmm")
def _matmul(op, ins, ctx) -> Fact:
    a, b = ins[0].shape, ins[1].shape
    if a is None or b is None:
        return UNDEF
    if len(a) == 1 and len(b) == 1:
        return Fact(shape=())
    if len(b) == 1:
        return Fact(shape=a[:-1])
    if len(a) == 1:
        return Fact(shape=b[:-2] + b[-1:])
    batch = broadcast(a[:-2], b[:-2])
    return Fact(shape=batch + (a[-2], b[-1]))


@rule("torch.aten.linear")
def _linear(op, ins, ctx) -> Fact:
    x, w = ins[0].shape, ins[1].shape
    if x is None or w is None:
        return UNDEF
    return Fact(shape=x[:-1] + (w[0],) if len(w) == 2 else x[:-1])


@rule("torch.aten.addmm")
def _addmm(op, ins, ctx) -> Fact:
    a, b = ins[1].shape, ins[2].shape
    return UNDEF if a is None or b is None else Fact(shape=(a[0], b[1]))


def _window(size: Dim, kernel: Dim, stride: Dim, pad: Dim, dilation: Dim, ceil: bool) -> Dim:
    if not all(known(v) for v in (size, kernel, stride, pad, dilation)):
        return NAC
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    if not ceil:
        return floordiv(span, stride) + 1
    # ceil_mode: PyTorch drops a last window that would start in the right padding, so the
    # size is min(ceil(span / stride), floor((size + pad - 1) / stride)) + 1. Affine maps
    # have no min: only where it is a number (or stride 1, where no window is dropped).
    last = ceildiv(span, stride)
    if stride == 1:
        return last + 1
    if not (last.is_Integer and size.is_Integer):
        return NAC
    return min(last, floordiv(size + pad - 1, stride)) + 1


def _spatial(ins: Sequence[Fact], n: int, kernel, stride, pad, dilation, ceil=False):
    x = ins[0].shape
    if x is None or kernel is None:
        return None
    stride = stride or kernel
    # The defaults are sympy integers: `_window` gives up on anything else (an avg pool, which
    # has no dilation operand, came out NAC).
    pad = pad if pad and len(pad) == n else list(pad or [sympy.Integer(0)]) * n
    dilation = dilation if dilation and len(dilation) == n else list(
        dilation or [sympy.Integer(1)]) * n
    return tuple(_window(x[-n + i], kernel[i], stride[i], pad[i], dilation[i], ceil)
                 for i in range(n))


@rule(*sorted(with_trait(CONVOLUTION)))
def _conv(op, ins, ctx) -> Fact:
    x, w = ins[0].shape, ins[1].shape
    if x is None or w is None:
        return UNDEF
    facts = window(op.name)
    if facts.transposed is not None and iconst(ins[facts.transposed]) != 0:
        return Fact(shape=(x[0], NAC) + (NAC,) * (len(x) - 2))  # transposed: not modelled
    n = len(w) - 2
    dims = _spatial(ins, n, list(w[2:]), ilist(ins[facts.stride]), ilist(ins[facts.padding]),
                    ilist(ins[facts.dilation]))
    return Fact(shape=x[:-n - 1] + (w[0],) + dims)


@rule(*sorted(with_trait(POOL)))
def _pool(op, ins, ctx) -> list[Fact]:
    facts = window(op.name)
    n = facts.spatial
    dilation = None if facts.dilation is None else ilist(ins[facts.dilation])
    dims = _spatial(ins, n, ilist(ins[1]), ilist(ins[facts.stride]), ilist(ins[facts.padding]),
                    dilation, ceil=iconst(ins[facts.ceil_mode]) == 1)
    shape = None if dims is None else ins[0].shape[:-n] + dims
    return [Fact(shape=shape)] * len(op.results)


@rule("torch.aten.adaptive_avg_pool2d", "torch.aten.adaptive_max_pool2d",
      "torch.aten.adaptive_avg_pool1d", "torch.aten.adaptive_max_pool1d")
def _adaptive_pool(op, ins, ctx) -> list[Fact]:
    x, out = ins[0].shape, ilist(ins[1])
    shape = None if x is None or out is None else x[:-len(out)] + tuple(out)
    return [Fact(shape=shape)] * len(op.results)


@rule("torch.aten.upsample_nearest2d.vec", "torch.aten.upsample_bilinear2d.vec",
      shape_operands=(1, 2))
def _upsample(op, ins, ctx) -> Fact:
    x, sizes = ins[0].shape, ilist(ins[1])
    if x is None:
        return UNDEF
    if sizes is None:
        scales = ins[2].items
        if scales is None:
            return UNDEF
        sizes = [NAC] * len(scales)  # float scales: the type says more
    return Fact(shape=x[:-len(sizes)] + tuple(sizes))


def _reduce(x: tuple[Dim, ...] | None, dims: list[Dim] | None, keepdim: bool) -> Fact:
    if x is None:
        return UNDEF
    if dims is None or not dims:  # all dims
        return Fact(shape=(sympy.Integer(1),) * len(x) if keepdim else ())
    axes = {_axis(int(d), len(x)) for d in dims if is_int(d)}
    if len(axes) != len(dims):
        return UNDEF
    if keepdim:
        return Fact(shape=tuple(sympy.Integer(1) if i in axes else d for i, d in enumerate(x)))
    return Fact(shape=tuple(d for i, d in enumerate(x) if i not in axes))


@rule("torch.aten.sum", "torch.aten.max", "torch.aten.min", "torch.aten.mean", "torch.aten.any",
      "torch.aten.all", "torch.aten.prod", "torch.aten.norm.Scalar")
def _reduce_all(op, ins, ctx) -> Fact:
    return Fact(shape=None if ins[0].shape is None else ())


# Where a reduction's dims and keepdim are when not at (1, 2): (self, dim, keepdim, ...).
_REDUCED_OPERANDS = {"torch.aten.linalg_vector_norm": (2, 3),   # (self, ord, dim, keepdim)
                     "torch.aten.var.correction": (1, 3),       # (self, dim, correction, keepdim)
                     "torch.aten.std.correction": (1, 3)}


@rule("torch.aten.sum.dim_IntList", "torch.aten.mean.dim", "torch.aten.amax", "torch.aten.amin",
      "torch.aten.any.dim", "torch.aten.all.dim", "torch.aten.max.dim", "torch.aten.min.dim",
      "torch.aten.argmax", "torch.aten.argmin", "torch.aten.var.correction",
      "torch.aten.std.correction",
      "torch.aten.linalg_vector_norm", "torch.aten.logsumexp")
def _reduce_dims(op, ins, ctx) -> list[Fact]:
    at_dims, at_keep = _REDUCED_OPERANDS.get(op.name, (1, 2))
    x, dims_arg, keep = ins[0].shape, ins[at_dims], ins[at_keep]
    dims = ilist(dims_arg) if dims_arg.items is not None else (
        None if dims_arg.value is None else [ival(dims_arg)])
    return [_reduce(x, dims, iconst(keep) == 1)] * len(op.results)


@rule("torch.aten.topk", shape_operands=(1,))
def _topk(op, ins, ctx) -> list[Fact]:
    x = ins[0].shape
    d = None if x is None else _axis(iconst(ins[2]), len(x))
    if d is None:
        return [UNDEF, UNDEF]
    return [Fact(shape=x[:d] + (ival(ins[1]),) + x[d + 1:])] * 2


@rule("torch.aten.sort", "torch.aten.native_dropout")
def _two_same(op, ins, ctx) -> list[Fact]:
    return [Fact(shape=ins[0].shape)] * 2


@rule("torch.aten.embedding")
def _embedding(op, ins, ctx) -> Fact:
    w, idx = ins[0].shape, ins[1].shape
    return UNDEF if w is None or idx is None else Fact(shape=idx + w[1:])


@rule("torch.aten.index_select")
def _index_select(op, ins, ctx) -> Fact:
    x, idx = ins[0].shape, ins[2].shape
    d = None if x is None else _axis(iconst(ins[1]), len(x))
    if d is None or idx is None:
        return UNDEF
    return Fact(shape=x[:d] + (idx[0] if idx else sympy.Integer(1),) + x[d + 1:])


@rule("torch.aten.gather")
def _gather(op, ins, ctx) -> Fact:
    return Fact(shape=ins[2].shape)


@rule("torch.aten.index.Tensor", "torch.aten.index.Tensor_hacked_twin")
def _index(op, ins, ctx) -> Fact:
    x, indices = ins[0].shape, ins[1].items
    if x is None or indices is None:
        return UNDEF
    used = [i for i, f in enumerate(indices) if f.shape is not None]
    index_shape = broadcast(*(indices[i].shape for i in used))
    if index_shape is None or not used:
        return UNDEF
    rest = x[len(indices):]
    contiguous = used == list(range(used[0], used[-1] + 1))
    if contiguous:
        return Fact(shape=x[:used[0]] + index_shape + x[used[-1] + 1:len(indices)] + rest)
    kept = tuple(x[i] for i in range(len(indices)) if i not in used)
    return Fact(shape=index_shape + kept + rest)


# --- ISVDOS: factories -----------------------------------------------------------------------

@rule("torch.aten.zeros", "torch.aten.ones", "torch.aten.empty.memory_format", "torch.aten.full",
      "torch.aten.rand", "torch.aten.randn", "torch.aten.empty_strided", shape_operands=(0,))
def _factory(op, ins, ctx) -> Fact:
    sizes = ilist(ins[0])
    return UNDEF if sizes is None else Fact(shape=tuple(sizes))


@rule("torch.aten.new_zeros", "torch.aten.new_ones", "torch.aten.new_empty", "torch.aten.new_full",
      shape_operands=(1,))
def _new_factory(op, ins, ctx) -> Fact:
    sizes = ilist(ins[1])
    return UNDEF if sizes is None else Fact(shape=tuple(sizes))


@rule("torch.aten.scalar_tensor", "torch.aten.tensor.int", "torch.aten.tensor.float",
      "torch.aten.tensor.bool", cls=ISDO)
def _scalar_tensor(op, ins, ctx) -> Fact:
    return Fact(shape=(), value=ins[0].value if op.name.endswith(("tensor", "int")) else None)


@rule("torch.aten.arange", "torch.aten.arange.start", "torch.aten.arange.start_step",
      shape_operands=(0, 1, 2))
def _arange(op, ins, ctx) -> Fact:
    if op.name.endswith("arange"):
        start, end, step = sympy.Integer(0), ival(ins[0]), sympy.Integer(1)
    elif op.name.endswith("start"):
        start, end, step = ival(ins[0]), ival(ins[1]), sympy.Integer(1)
    else:
        start, end, step = ival(ins[0]), ival(ins[1]), ival(ins[2])
    if not all(known(v) for v in (start, end, step)):
        return Fact(shape=(NAC,))
    length = ceildiv(end - start, step)
    return Fact(shape=(length if step == 1 and start == 0 else sympy.Max(length, 0),))


# --- EDO -------------------------------------------------------------------------------------

@rule("torch.aten.nonzero", cls=EDO)
def _nonzero(op, ins, ctx) -> Fact:
    x = ins[0].shape
    if x is None:
        return UNDEF
    count = ctx.fresh((0,), _product(x))
    return Fact(shape=(count, sympy.Integer(len(x))))
