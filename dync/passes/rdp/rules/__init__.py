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

from ....analysis.op_facts import BROADCASTING, SAME_SHAPE
from ....dialects.symbolic import NAC, Dim, floordiv, known

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

# Which ops keep their operand's shape or broadcast their operands': the table of op facts.

rule(*sorted(SAME_SHAPE))(_same)


@rule(*sorted(BROADCASTING))
def _broadcast(op, ins, ctx) -> Fact:
    return Fact(shape=broadcast(*(f.shape for f in ins if f.shape is not None)))


# The rules of the layout and compute ops register themselves on import.
from . import compute, layout  # noqa: E402, F401
