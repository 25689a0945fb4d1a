"""Float arithmetic on sizes, in forms the FX importer takes (it takes no `torch.sym_float`).

* Rounded back to an int (`int(0.065 * t / 10 + 0.5)`, `math.ceil(n * 0.3)`,
  `F.interpolate`'s `trunc(sym_float(s) * 0.5)`): when the float is affine in sizes, each
  float constant the float nearest to a fraction of small denominator, the rounding is
  integer arithmetic on them, `(13 * t + 1000) // 2000` (`integer_rounding`), what the
  float arithmetic gives for sizes far below 2**31 and what `shape_exprs.integral` makes of
  the same expression in the module's types.
* Used as a number by tensor ops (`x / float(n)`, `torch.full((n,), 1.0 / n)`,
  `torch.tensor([2.0 / (w - 1)])`, `x / math.sqrt(d)`; torch's own `grid_sampler_2d`
  decomposition un-normalizes coordinates with `sym_float(s) * 0.5 - 0.5`): the expression
  becomes 0-d float64 tensors, Python's float arithmetic exactly, taken by the ops as a tensor
  operand, cast to float32 where the op's result is (eager casts the Python float so; a
  float64 0-d tensor would promote an integer operand) (`as_tensor_arithmetic`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from fractions import Fraction

import torch

from .shape_exprs import nearest_fraction, size_range

_aten = torch.ops.aten


def _floor_division(op, n, q):
    return op(operator.floordiv, n, q)


def _ceil_division(op, n, q):
    return op(operator.neg, op(operator.floordiv, op(operator.neg, n), q))


#: Float arithmetic on sizes, and the tensor op each becomes.
_ARITHMETIC = {operator.mul: _aten.mul.Tensor, operator.add: _aten.add.Tensor,
               operator.sub: _aten.sub.Tensor, operator.truediv: _aten.div.Tensor,
               operator.neg: _aten.neg.default, operator.pow: _aten.pow.Tensor_Tensor,
               torch._sym_sqrt: _aten.sqrt.default, torch.sym_float: None}
#: Tensor ops that take the expression where a tensor may stand.
_OPERANDS = {_aten.mul.Tensor, _aten.add.Tensor, _aten.sub.Tensor, _aten.div.Tensor}
#: Roundings of a float to an int, and how each rounds a ratio n / q (q > 0) of ints; None:
#: toward zero (`_truncating`).
_ROUNDINGS = {math.floor: _floor_division, math.ceil: _ceil_division, math.trunc: None,
              torch.sym_int: None}


def integer_rounding(node: torch.fx.Node) -> Callable | None:
    """For `node`, a rounding (`math.trunc`/`floor`/`ceil`, `torch.sym_int`) of float
    arithmetic affine in int-valued nodes (sizes), `build(op)` making the same int from them
    in integer arithmetic (`op(target, *operands)` adds a node); else None."""
    form = _affine(node.args[0]) if node.target in _ROUNDINGS and len(node.args) == 1 else None
    if form is None:
        return None
    terms, b = form
    q = math.lcm(b.denominator, *(a.denominator for a in terms.values()))
    weights, r = {size: int(a * q) for size, a in terms.items() if a}, int(b * q)
    low = high = r
    for size, p in weights.items():
        ends = [p * bound if bound is not None else math.copysign(math.inf, p)
                for bound in size_range(size.meta["val"])]
        low, high = low + min(ends), high + max(ends)
    divide = _ROUNDINGS[node.target] or _truncating(low, high)
    if divide is None:
        return None

    def build(op):
        n = None
        for size, p in weights.items():
            term = op(operator.mul, size, p) if p != 1 else size
            n = term if n is None else op(operator.add, n, term)
        n = r if n is None else op(operator.add, n, r) if r else n
        return divide(op, n, q) if q != 1 else n

    return build


def _truncating(low: float, high: float) -> Callable | None:
    """Rounding toward zero of n / q for n in [low, high]: floor or ceiling division where n
    has one sign, else None."""
    return _floor_division if low >= 0 else _ceil_division if high <= 0 else None


_Affine = tuple[dict[torch.fx.Node, Fraction], Fraction]


def _affine(value) -> _Affine | None:
    """({s: a}, b) with `value` = sum(a * s) + b over int-valued nodes s (sizes, and what a
    `sym_float` takes), a and b the fractions the float constants stand for."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return {}, Fraction(value)
    if isinstance(value, float):
        near = nearest_fraction(value)
        return ({}, near) if near is not None else None
    if not isinstance(value, torch.fx.Node):
        return None
    val = value.meta.get("val")
    if value.target is torch.sym_float and len(value.args) == 1:
        return _affine(value.args[0])
    if isinstance(val, torch.SymInt):
        return {value: Fraction(1)}, Fraction(0)
    if not isinstance(val, torch.SymFloat) or value.kwargs:
        return None
    forms = [_affine(a) for a in value.args]
    if any(f is None for f in forms):
        return None
    if value.target is operator.neg and len(forms) == 1:
        return _scaled(forms[0], Fraction(-1))
    if len(forms) != 2:
        return None
    (t1, b1), (t2, b2) = forms
    if value.target in (operator.add, operator.sub):
        sign = 1 if value.target is operator.add else -1
        terms = dict(t1)
        for size, a in t2.items():
            terms[size] = terms.get(size, 0) + sign * a
        return terms, b1 + sign * b2
    if value.target is operator.mul and not (t1 and t2):
        return _scaled(forms[0], b2) if not t2 else _scaled(forms[1], b1)
    if value.target is operator.truediv and not t2 and b2 != 0:
        return _scaled(forms[0], 1 / b2)
    return None


def _scaled(form: _Affine, factor: Fraction) -> _Affine:
    terms, b = form
    return {size: a * factor for size, a in terms.items()}, b * factor


def as_tensor_arithmetic(graph: torch.fx.Graph) -> None:
    """Rewrite, in place, the float size expressions of `graph` that only tensor ops use."""
    floats = {n for n in graph.nodes if n.op == "call_function" and n.target in _ARITHMETIC
              and isinstance(n.meta.get("val"), torch.SymFloat)}
    changed = True
    while changed:  # drop expressions with a use or an operand that stays a SymFloat
        changed = False
        for node in list(floats):
            used = all(u in floats or _takes(u, node) for u in node.users)
            fed = all(a in floats or not isinstance(a.meta.get("val"), torch.SymFloat)
                      for a in node.args if isinstance(a, torch.fx.Node))
            if not (used and fed and node.users):
                floats.discard(node)
                changed = True
    if not floats:
        return
    fake = next(n.meta["val"].fake_mode for n in graph.nodes
                if isinstance(n.meta.get("val"), torch._subclasses.FakeTensor))

    def made(target, args, kwargs=None, like=None, dtype=torch.float64) -> torch.fx.Node:
        node = graph.call_function(target, tuple(args), kwargs or {})
        with fake:
            node.meta["val"] = (torch.empty((), dtype=dtype) if like is None
                                else torch.empty_like(like))
        return node

    def scalar(value) -> torch.fx.Node:
        return made(_aten.scalar_tensor.default, (value,), {"dtype": torch.float64})

    users = set()
    for node in [n for n in graph.nodes if n in floats]:
        with graph.inserting_before(node):
            if node.target is torch.sym_float:
                tensor = scalar(node.args[0])
            else:
                tensor = made(_ARITHMETIC[node.target],
                              [a if a in floats else scalar(a) for a in node.args])
        users.update(u for u in node.users if u not in floats)
        node.replace_all_uses_with(tensor)
        graph.erase_node(node)
        floats.discard(node)
        floats.add(tensor)
    for user in [n for n in graph.nodes if n in users]:
        _adapted(user, made, graph)


def _takes(user: torch.fx.Node, operand: torch.fx.Node) -> bool:
    """Whether `user` can take the float `operand` as a 0-d tensor (`_adapted`)."""
    if user.target in _OPERANDS:
        return True
    if user.target is _aten.scalar_tensor.default:
        return user.args[0] is operand
    if user.target is _aten.full.default:
        return len(user.args) == 2 and user.args[1] is operand and operand not in user.args[0]
    if user.target is _aten.pow.Tensor_Scalar:
        return user.args[1] is operand and user.args[0] is not operand
    return False


def _adapted(user: torch.fx.Node, made, graph: torch.fx.Graph) -> None:
    """`user`, which took a float where it now gets a 0-d float64 tensor, made to take it:
    `scalar_tensor(t, dtype)` a cast, `full(size, t)` the cast expanded, `pow(x, t)` the
    tensor-tensor power; an elementwise op of a float32 result gets it cast to float32, as
    eager casts a Python float there (a float64 0-d tensor would promote an integer or 0-d
    operand to float64)."""
    want = user.meta["val"]
    if user.target in _OPERANDS:
        if want.dtype in (torch.float64, torch.float16, torch.bfloat16):
            return  # the op's own cast of the 0-d operand: half types compute in float
        with graph.inserting_before(user):
            user.args = tuple(_cast(a, want.dtype, made) if _is_scalar_tensor(a) else a
                              for a in user.args)
        return
    with graph.inserting_before(user):
        if user.target is _aten.pow.Tensor_Scalar:
            replacement = made(_aten.pow.Tensor_Tensor, user.args, like=want)
        else:
            value = _cast(user.args[0] if user.target is _aten.scalar_tensor.default
                          else user.args[1], want.dtype, made)
            if user.target is _aten.scalar_tensor.default:
                replacement = value
            else:
                expanded = made(_aten.expand.default, (value, user.args[0]), like=want)
                replacement = made(_aten.clone.default, (expanded,), like=want)
    user.replace_all_uses_with(replacement)
    graph.erase_node(user)


def _is_scalar_tensor(node) -> bool:
    return (isinstance(node, torch.fx.Node) and isinstance(node.meta.get("val"), torch.Tensor)
            and node.meta["val"].dim() == 0 and node.meta["val"].dtype == torch.float64)


def _cast(tensor: torch.fx.Node, dtype: torch.dtype, made) -> torch.fx.Node:
    if dtype == torch.float64:
        return tensor
    return made(_aten._to_copy.default, (tensor,), {"dtype": dtype}, dtype=dtype)
