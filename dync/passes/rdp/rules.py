"""Transfer functions of `dync-rdp`: for each op of dync IR, its SoD² class and how its
results' dims (and, for ints and int lists, values) follow from its operands.

SoD²'s four classes (digest-sod2.md 2.2), decided per op *instance*, after constants are known:

* ``ISDO`` — the output is determined by input shapes: `aten.size.int`, `numel`, `dim`;
* ``ISDOS`` — the output shape is determined by input shapes: elementwise, conv, matmul,
  reductions over constant dims, views with constant sizes;
* ``ISVDOS`` — the output shape also needs input *values*: views, slices, `arange`, factories
  and `topk` whose sizes are not constants;
* ``EDO`` — the output shape is known only after execution: `nonzero`, `scf.if`, `scf.while`.

A rule returns one `Fact` per result; the pass meets it with the result's type and its
`torch.bind_symbolic_shape`. Ops without a rule keep what their types say (and are counted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy

from ...dialects.symbolic import NAC, Dim, ceildiv, floordiv, known

INT64_MAX = 2**63 - 1
ISDO, ISDOS, ISVDOS, EDO = "ISDO", "ISDOS", "ISVDOS", "EDO"


@dataclass(frozen=True)
class Fact:
    """What RDP knows about one SSA value: a tensor's dims, an int's value, a list's items."""

    shape: tuple[Dim, ...] | None = None
    value: Dim = None
    items: tuple[Fact, ...] | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


UNDEF = Fact()


def int_fact(v: int | sympy.Expr) -> Fact:
    return Fact(value=sympy.Integer(v) if isinstance(v, int) else v)


class Context:
    """What a rule may ask of the pass: fresh symbols for execution-determined dims."""

    def fresh(self, key: tuple, upper: Dim) -> sympy.Symbol:
        raise NotImplementedError


Rule = Callable[..., Sequence[Fact] | Fact]


@dataclass(frozen=True)
class Spec:
    rule: Rule
    cls: str | None  # None: plumbing (casts, list packing), not counted
    shape_operands: tuple[int, ...] = ()  # operands whose *values* decide the output shape


RULES: dict[str, Spec] = {}


def rule(*names: str, cls: str | None = ISDOS, shape_operands: tuple[int, ...] = ()):
    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = Spec(fn, cls, shape_operands)
        return fn
    return register


def classify(op_name: str, ins: Sequence[Fact]) -> str | None:
    """The SoD² class of an op instance (None for plumbing: casts, list packing)."""
    spec = RULES.get(op_name)
    if spec is None or spec.cls is None:
        return None
    if spec.cls == ISDOS and spec.shape_operands:
        for i in spec.shape_operands:
            if i < len(ins) and not _all_constant(ins[i]):
                return ISVDOS
    return spec.cls


def _all_constant(f: Fact) -> bool:
    if f.items is not None:
        return all(_all_constant(i) for i in f.items)
    return f.value is None or isinstance(f.value, sympy.Integer)


# --- operand helpers -------------------------------------------------------------------------

def ival(f: Fact) -> Dim:
    return f.value if known(f.value) else NAC


def iconst(f: Fact) -> int | None:
    return int(f.value) if isinstance(f.value, sympy.Integer) else None


def ilist(f: Fact) -> list[Dim] | None:
    return None if f.items is None else [ival(i) for i in f.items]


def _axis(d: int | None, rank: int) -> int | None:
    if d is None:
        return None
    return d + rank if d < 0 else d


def _same(op, ins: Sequence[Fact], ctx) -> Fact:
    return Fact(shape=ins[0].shape)


def _product(dims: Sequence[Dim]) -> Dim:
    if not all(known(d) for d in dims):
        return NAC
    return sympy.Mul(*dims) if dims else sympy.Integer(1)


def broadcast(*shapes: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
    """Right-aligned broadcasting. A dim other than 1 decides the result, even against an
    unknown one (which is then equal to it or 1); two different symbolic dims broadcast to
    their max, exact for valid programs (equal, or one of them is 1)."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        decided = [d for d in dims if known(d) and d != 1]
        if any(isinstance(d, sympy.Integer) for d in decided):
            out.append(next(d for d in decided if isinstance(d, sympy.Integer)))
        elif decided:
            out.append(sympy.Max(*decided))
        elif all(known(d) for d in dims):
            out.append(sympy.Integer(1))
        else:
            out.append(NAC if NAC in dims else None)
    return tuple(out)


# --- ISDO: values from shapes ----------------------------------------------------------------

@rule("torch.aten.size.int", cls=ISDO)
def _size(op, ins: Sequence[Fact], ctx) -> Fact:
    x, d = ins
    axis = None if x.rank is None else _axis(iconst(d), x.rank)
    return Fact(value=NAC if axis is None else x.shape[axis] or NAC)


@rule("torch.aten.numel", cls=ISDO)
def _numel(op, ins, ctx) -> Fact:
    return Fact(value=NAC if ins[0].shape is None else _product(ins[0].shape))


@rule("torch.aten.dim", cls=ISDO)
def _dim(op, ins, ctx) -> Fact:
    return Fact(value=NAC if ins[0].rank is None else sympy.Integer(ins[0].rank))


# --- ints and lists --------------------------------------------------------------------------

def _int_op(fn: Callable[[sympy.Expr, sympy.Expr], sympy.Expr]) -> Rule:
    def transfer(op, ins, ctx) -> Fact:
        args = [ival(f) for f in ins]
        return Fact(value=fn(*args) if all(known(a) for a in args) else NAC)
    return transfer


for _name, _fn in {
    "torch.aten.add.int": lambda a, b: a + b,
    "torch.aten.sub.int": lambda a, b: a - b,
    "torch.aten.mul.int": lambda a, b: a * b,
    "torch.aten.floordiv.int": floordiv,
    "torch.aten.remainder.int": sympy.Mod,
    "torch.aten.neg.int": lambda a: -a,
}.items():
    rule(_name, cls=ISDO)(_int_op(_fn))


@rule("torch.prim.ListConstruct", cls=None)
def _list(op, ins, ctx) -> Fact:
    return Fact(items=tuple(ins))


@rule("torch.prim.ListUnpack", cls=None)
def _unpack(op, ins, ctx) -> list[Fact]:
    items = ins[0].items
    n = len(op.results)
    return list(items) if items is not None and len(items) == n else [UNDEF] * n


def _identity(op, ins, ctx) -> Fact:
    x = ins[0]
    return Fact(shape=x.shape, value=NAC if x.value is None else x.value)


rule("torch_c.to_builtin_tensor", "torch_c.from_builtin_tensor", "torch.tensor_static_info_cast",
     "torch.copy.to_vtensor", "torch.copy.to_tensor", "torch_c.to_i64", "torch_c.from_i64",
     cls=None)(_identity)
rule("torch.aten.Int.Tensor", "torch.aten.item", "torch.aten.clone", "torch.aten.contiguous",
     "torch.aten._to_copy", "torch.aten.to.dtype", "torch.aten.detach", "torch.aten.type_as",
     "torch.aten.alias", "torch.aten.lift_fresh_copy")(_identity)


# --- ISDOS: elementwise and broadcasting -----------------------------------------------------

_UNARY = """relu sigmoid tanh gelu exp log log2 rsqrt sqrt neg abs logical_not silu hardtanh
leaky_relu clamp clamp_min clamp_max erf cos sin floor ceil round sign reciprocal bitwise_not
softmax.int log_softmax.int _softmax _log_softmax layer_norm batch_norm group_norm dropout
zeros_like ones_like full_like empty_like rand_like randn_like fill.Scalar cumsum elu hardswish
hardsigmoid mish softplus isnan isinf pow.Tensor_Scalar add.Scalar sub.Scalar mul.Scalar
div.Scalar rsub.Scalar remainder.Scalar floor_divide.Scalar eq.Scalar ne.Scalar gt.Scalar
lt.Scalar ge.Scalar le.Scalar masked_fill.Scalar index_put scatter.src scatter.value
scatter_add index_add copy bernoulli""".split()
_BINARY = """add.Tensor sub.Tensor mul.Tensor div.Tensor div.Tensor_mode eq.Tensor ne.Tensor
gt.Tensor lt.Tensor ge.Tensor le.Tensor maximum minimum logical_and logical_or logical_xor
where.self where.ScalarSelf where.ScalarOther pow.Tensor_Tensor floor_divide remainder.Tensor
bitwise_and.Tensor bitwise_or.Tensor bitwise_xor.Tensor atan2 masked_fill.Tensor""".split()

rule(*(f"torch.aten.{n}" for n in _UNARY))(_same)


@rule(*(f"torch.aten.{n}" for n in _BINARY))
def _broadcast(op, ins, ctx) -> Fact:
    return Fact(shape=broadcast(*(f.shape for f in ins if f.shape is not None)))


# --- ISDOS / ISVDOS: layout ------------------------------------------------------------------

@rule("torch.aten.view", "torch.aten.reshape", "torch.aten._unsafe_view", shape_operands=(1,))
def _view(op, ins, ctx) -> Fact:
    x, sizes = ins[0], ilist(ins[1])
    if sizes is None:
        return UNDEF
    if sizes.count(-1) + sum(not known(d) for d in sizes) == 1:
        # a view keeps the element count: the one size not given (-1, or read from a
        # tensor at run time) is the count divided by the others
        sizes = [-1 if not known(d) else d for d in sizes]
        rest = [d for d in sizes if d != -1]
        total, others = _product(x.shape or [NAC]), _product(rest)
        inferred = NAC
        if known(total) and known(others):
            quotient = sympy.cancel(total / others)
            inferred = quotient if sympy.fraction(sympy.together(quotient))[1] == 1 else \
                floordiv(total, others)
        sizes = [inferred if d == -1 else d for d in sizes]
    return Fact(shape=tuple(sizes))


@rule("torch.aten.expand", "torch.aten.broadcast_to", shape_operands=(1,))
def _expand(op, ins, ctx) -> Fact:
    x, sizes = ins[0], ilist(ins[1])
    if sizes is None or x.shape is None:
        return UNDEF
    lead = len(sizes) - len(x.shape)
    return Fact(shape=tuple(x.shape[i - lead] if d == -1 else d for i, d in enumerate(sizes)))


@rule("torch.aten.permute")
def _permute(op, ins, ctx) -> Fact:
    x, order = ins[0], ilist(ins[1])
    if x.shape is None or order is None or not all(isinstance(d, sympy.Integer) for d in order):
        return UNDEF
    return Fact(shape=tuple(x.shape[_axis(int(d), x.rank)] for d in order))


@rule("torch.aten.transpose.int")
def _transpose(op, ins, ctx) -> Fact:
    x = ins[0]
    if x.shape is None:
        return UNDEF
    a, b = (_axis(iconst(f), x.rank) for f in ins[1:3])
    if a is None or b is None:
        return UNDEF
    dims = list(x.shape)
    dims[a], dims[b] = dims[b], dims[a]
    return Fact(shape=tuple(dims))


@rule("torch.aten.t")
def _t(op, ins, ctx) -> Fact:
    return Fact(shape=None if ins[0].shape is None else tuple(reversed(ins[0].shape)))


@rule("torch.aten.unsqueeze")
def _unsqueeze(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank + 1)
    if d is None:
        return UNDEF
    return Fact(shape=x.shape[:d] + (sympy.Integer(1),) + x.shape[d:])


@rule("torch.aten.squeeze.dim", "torch.aten.select.int")
def _drop_dim(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank)
    if d is None:
        return UNDEF
    if op.name.endswith("squeeze.dim") and x.shape[d] != 1:
        return Fact(shape=x.shape) if is_int(x.shape[d]) else UNDEF
    return Fact(shape=x.shape[:d] + x.shape[d + 1:])


def is_int(d: Dim) -> bool:
    return isinstance(d, sympy.Integer)


@rule("torch.aten.flatten.using_ints")
def _flatten(op, ins, ctx) -> Fact:
    x = ins[0]
    if x.shape is None:
        return UNDEF
    rank = max(x.rank, 1)
    start, end = (_axis(iconst(f), rank) for f in ins[1:3])
    if start is None or end is None or x.rank == 0:
        return Fact(shape=(sympy.Integer(1),)) if x.rank == 0 else UNDEF
    return Fact(shape=x.shape[:start] + (_product(x.shape[start:end + 1]),) + x.shape[end + 1:])


@rule("torch.aten.slice.Tensor", shape_operands=(2, 3, 4))
def _slice(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank)
    if d is None:
        return UNDEF
    size = x.shape[d]
    start = sympy.Integer(0) if ins[2].value is None else ival(ins[2])
    end = size if ins[3].value is None else ival(ins[3])
    step = ival(ins[4])
    if not all(known(v) for v in (size, start, end, step)):
        # bounds only known at run time (a length read from a tensor): a fresh symbol, at most
        # the sliced dim (SoD² §4.1's runtime symbol for a not-a-constant)
        length = ctx.fresh((d,), size) if known(size) else NAC
        return Fact(shape=x.shape[:d] + (length,) + x.shape[d + 1:])
    start, end = (_clamp_index(v, size) for v in (start, end))
    length = sympy.Max(ceildiv(end - start, step), 0)
    length = length.args[1] if isinstance(length, sympy.Max) and _nonneg(length.args[1]) else length
    return Fact(shape=x.shape[:d] + (length,) + x.shape[d + 1:])


def _nonneg(e: sympy.Expr) -> bool:
    return bool(e.is_nonnegative)


def _clamp_index(v: sympy.Expr, size: sympy.Expr) -> sympy.Expr:
    if isinstance(v, sympy.Integer):
        if v >= INT64_MAX // 2:
            return size
        if v < 0:
            v = size + v
            return v if not isinstance(v, sympy.Integer) else sympy.Max(v, 0)
        if isinstance(size, sympy.Integer):
            return sympy.Min(v, size)
        return v
    return v if v == size else sympy.Min(v, size)


@rule("torch.aten.narrow", shape_operands=(3,))
def _narrow(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank)
    if d is None:
        return UNDEF
    length = ival(ins[3])
    if not known(length):
        length = ctx.fresh((d,), x.shape[d]) if known(x.shape[d]) else NAC
    return Fact(shape=x.shape[:d] + (length,) + x.shape[d + 1:])


@rule("torch.aten.cat", "torch.aten.stack")
def _cat(op, ins, ctx) -> Fact:
    parts = ins[0].items
    if not parts or any(p.shape is None for p in parts):
        return UNDEF
    stack = op.name.endswith("stack")
    rank = parts[0].rank + (1 if stack else 0)
    d = _axis(iconst(ins[1]), rank)
    if d is None:
        return UNDEF
    if stack:
        first = parts[0].shape
        return Fact(shape=first[:d] + (sympy.Integer(len(parts)),) + first[d:])
    shapes = [p.shape for p in parts if not (p.rank == 1 and p.shape[0] == 0)]  # cat skips []
    if not shapes:
        return Fact(shape=parts[0].shape)
    dims = []
    for i in range(len(shapes[0])):
        column = [s[i] for s in shapes]
        if i == d:
            dims.append(sympy.Add(*column) if all(known(c) for c in column) else NAC)
        else:
            dims.append(next((c for c in column if is_int(c)), column[0]))
    return Fact(shape=tuple(dims))


@rule("torch.aten.split.Tensor", "torch.aten.unbind.int", "torch.aten.split_with_sizes")
def _split(op, ins, ctx) -> Fact:
    x = ins[0]
    unbind = op.name.endswith("unbind.int")
    d = None if x.shape is None else _axis(iconst(ins[1] if unbind else ins[2]), x.rank)
    if d is None or not is_int(x.shape[d]):
        return UNDEF
    total = int(x.shape[d])
    if unbind:
        return Fact(items=tuple(Fact(shape=x.shape[:d] + x.shape[d + 1:]) for _ in range(total)))
    if op.name.endswith("split_with_sizes"):
        sizes = ilist(ins[1]) or []
    else:
        step = iconst(ins[1])
        if not step:
            return UNDEF
        sizes = [sympy.Integer(min(step, total - k)) for k in range(0, total, step)]
    return Fact(items=tuple(Fact(shape=x.shape[:d] + (s,) + x.shape[d + 1:]) for s in sizes))


@rule("torch.aten.constant_pad_nd", "torch.aten.pad")
def _pad(op, ins, ctx) -> Fact:
    x, pads = ins[0], ilist(ins[1])
    if x.shape is None or pads is None:
        return UNDEF
    dims = list(x.shape)
    for k in range(len(pads) // 2):
        i = len(dims) - 1 - k
        low, high = pads[2 * k], pads[2 * k + 1]
        dims[i] = dims[i] + low + high if known(dims[i]) and known(low) and known(high) else NAC
    return Fact(shape=tuple(dims))


@rule("torch.aten.repeat", shape_operands=(1,))
def _repeat(op, ins, ctx) -> Fact:
    x, times = ins[0], ilist(ins[1])
    if x.shape is None or times is None:
        return UNDEF
    lead = len(times) - x.rank
    return Fact(shape=tuple(t * (x.shape[i - lead] if i >= lead else 1) if known(t) else NAC
                            for i, t in enumerate(times)))


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
    return (ceildiv(span, stride) if ceil else floordiv(span, stride)) + 1


def _spatial(ins: Sequence[Fact], n: int, kernel, stride, pad, dilation, ceil=False):
    x = ins[0].shape
    if x is None or kernel is None:
        return None
    stride = stride or kernel
    pad = pad if pad and len(pad) == n else list(pad or [0]) * n
    dilation = dilation if dilation and len(dilation) == n else list(dilation or [1]) * n
    return tuple(_window(x[-n + i], kernel[i], stride[i], pad[i], dilation[i], ceil)
                 for i in range(n))


@rule("torch.aten.conv1d", "torch.aten.conv2d", "torch.aten.conv3d", "torch.aten.convolution")
def _conv(op, ins, ctx) -> Fact:
    x, w = ins[0].shape, ins[1].shape
    if x is None or w is None:
        return UNDEF
    if op.name.endswith("convolution") and iconst(ins[6]) != 0:  # transposed: not modelled
        return Fact(shape=(x[0], NAC) + (NAC,) * (len(x) - 2))
    n = len(w) - 2
    dims = _spatial(ins, n, list(w[2:]), ilist(ins[3]), ilist(ins[4]), ilist(ins[5]))
    return Fact(shape=x[:-n - 1] + (w[0],) + dims)


@rule("torch.aten.max_pool2d", "torch.aten.max_pool2d_with_indices", "torch.aten.max_pool1d")
def _max_pool(op, ins, ctx) -> list[Fact]:
    n = 1 if op.name.endswith("1d") else 2
    dims = _spatial(ins, n, ilist(ins[1]), ilist(ins[2]), ilist(ins[3]), ilist(ins[4]),
                    ceil=iconst(ins[5]) == 1)
    shape = None if dims is None else ins[0].shape[:-n] + dims
    return [Fact(shape=shape)] * len(op.results)


@rule("torch.aten.avg_pool2d", "torch.aten.avg_pool1d")
def _avg_pool(op, ins, ctx) -> Fact:
    n = 1 if op.name.endswith("1d") else 2
    dims = _spatial(ins, n, ilist(ins[1]), ilist(ins[2]), ilist(ins[3]), None,
                    ceil=iconst(ins[4]) == 1)
    return Fact(shape=None if dims is None else ins[0].shape[:-n] + dims)


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


@rule("torch.aten.sum.dim_IntList", "torch.aten.mean.dim", "torch.aten.amax", "torch.aten.amin",
      "torch.aten.any.dim", "torch.aten.all.dim", "torch.aten.max.dim", "torch.aten.min.dim",
      "torch.aten.argmax", "torch.aten.argmin", "torch.aten.var.correction",
      "torch.aten.std.correction",
      "torch.aten.linalg_vector_norm", "torch.aten.logsumexp")
def _reduce_dims(op, ins, ctx) -> list[Fact]:
    x, dims_arg = ins[0].shape, ins[1]
    if op.name.endswith("linalg_vector_norm"):
        dims_arg, keep = ins[2], ins[3]
    else:
        keep = ins[2]
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
