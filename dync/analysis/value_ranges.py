"""The ranges of integer values in a module: what `dync-check-indices` needs to know that an index
is in range without checking it at run time.

A range is a pair of lists of sympy expressions over the module's shape symbols: every element
of the value (a `!torch.int`, or every element of an integer tensor) is at least the least of
`lows` and at most the greatest of `highs`. It is derived from the ops that make the value — a
constant or small integer literal, a symbol, a tensor's size, a fill, `arange`, the positions
`argmax`/`topk`/`sort` return, `remainder` by a divisor proven positive (the coordinates dync's
own `nonzero` computes: see `frontends.pytorch.decompositions._nonzero`), a Python index
counted from the end (`where(x < 0, x + n, x)`: `counted_from_end`), `clamp`, sums and
non-negative multiples, and the ops that only move values around (views, slices, gathers,
`where`, `cat`, `stack`/`unbind`) — and through control flow: a private function's argument has
the union of the ranges its call sites pass, a call's result the range of what the callee
returns, an `scf.if` result the union of its yields, a loop's carried value the union of its
initial value and what an iteration yields, where the latter does not depend on the carried
value itself (a greedy decoder's `argmax` token), and a counter from its start up to the
bound the loop tests it against (`i + 1 < stop` forwarding `i + 1`: dync's `for` over a
dynamic range). Anything else (a
float, a conversion, an entry point's argument) has no range. `within` proves a bound by exact
cancellation, or, for an expression linear in the symbols, at the corners of their declared
ranges; it never relies on sympy's sign assumptions about symbols (an unbacked symbol may be
0). Where that fails, it tries again with each count read from data that makes a length (the
end of an `arange`, of a slice from 0: `count = mask.sum().item()`) taken as the symbol the
trace names that length, at most what the count was derived to be, and an index tensor with a
dim that is a symbol taken to have elements (that symbol at least 1): the coordinates
`_true_positions` gives a table of a data-dependent length.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from iree.compiler import ir

from ..dialects.symbolic import bound_dims, bounds, element_type, narrow_range, symbol, type_dims
from ..dialects.torch_ops import bindings, constant_int, constant_int_list, constant_ints, owner
from ..dialects.walk import call_sites, callee, exported, function_argument, functions, nested_ops

# At most this many candidate bounds on each side (a sum multiplies them); beyond: no range.
_CANDIDATES = 16
# The largest integer literal whose values are read for its range.
_LITERAL_ELEMENTS = 1 << 16
# How deep the derivation follows definitions before it gives up (no range).
_DEPTH = 200


@dataclass(frozen=True)
class Range:
    """Every element lies in [min(lows), max(highs)]."""

    lows: tuple[sympy.Expr, ...]
    highs: tuple[sympy.Expr, ...]

    @staticmethod
    def exactly(value: sympy.Expr | int) -> Range:
        v = sympy.sympify(value)
        return Range((v,), (v,))

    def exact(self) -> sympy.Expr | None:
        if len(self.lows) == 1 and len(self.highs) == 1 and self.lows[0] == self.highs[0]:
            return self.lows[0]
        return None


def _union(ranges: list[Range | None]) -> Range | None:
    if not ranges or any(r is None for r in ranges):
        return None
    return _capped(tuple(dict.fromkeys(e for r in ranges for e in r.lows)),
                   tuple(dict.fromkeys(e for r in ranges for e in r.highs)))


def _capped(lows: tuple, highs: tuple) -> Range | None:
    return Range(lows, highs) if len(lows) <= _CANDIDATES and len(highs) <= _CANDIDATES else None


def _plus(a: Range | None, b: Range | None, sign: int = 1) -> Range | None:
    if a is None or b is None:
        return None
    low_b, high_b = (b.lows, b.highs) if sign > 0 else (tuple(-e for e in b.highs),
                                                      tuple(-e for e in b.lows))
    return _capped(tuple(dict.fromkeys(sympy.expand(x + y) for x in a.lows for y in low_b)),
                   tuple(dict.fromkeys(sympy.expand(x + y) for x in a.highs for y in high_b)))


def _scaled(a: Range | None, factor: int | None) -> Range | None:
    if a is None or factor is None or factor < 0:
        return None
    return Range(tuple(sympy.expand(e * factor) for e in a.lows),
                 tuple(sympy.expand(e * factor) for e in a.highs))


# Ops whose result holds only values of their first operand (same element type).
_MOVES = frozenset({
    "torch.aten.slice.Tensor", "torch.aten.view", "torch.aten.reshape", "torch.aten._unsafe_view",
    "torch.aten.unsqueeze", "torch.aten.squeeze", "torch.aten.squeeze.dim",
    "torch.aten.flatten.using_ints", "torch.aten.unflatten.int", "torch.aten.permute", "torch.aten.transpose.int",
    "torch.aten.t", "torch.aten.clone", "torch.aten.contiguous", "torch.aten.expand",
    "torch.aten.broadcast_to", "torch.aten.select.int", "torch.aten.index.Tensor",
    "torch.aten.index.Tensor_hacked_twin", "torch.aten.index_select", "torch.aten.gather",
    "torch.aten.narrow", "torch.aten.repeat", "torch.aten.flip", "torch.aten.roll",
    "torch.aten.detach", "torch.aten.alias", "torch.aten.lift_fresh_copy",
    "torch_c.to_builtin_tensor", "torch_c.from_builtin_tensor",
    "torch.tensor_static_info_cast", "torch.prim.NumToTensor.Scalar", "torch.aten.Int.Tensor",
    "torch.aten.item", "torch.aten.ScalarImplicit",
})
_ADDS = ("torch.aten.add.Scalar", "torch.aten.add.Tensor")
# Ops filling a tensor with one value: the operand holding it.
_FILLS = {"torch.aten.full": 1, "torch.aten.full_like": 1, "torch.aten.new_full": 2,
          "torch.aten.fill.Scalar": 1, "torch.aten.scalar_tensor": 0}
# Conversions of an integer tensor to another integer type.
_CONVERSIONS = frozenset({"torch.aten.to.dtype", "torch.aten._to_copy",
                          "torch.prims.convert_element_type", "torch.aten.to.dtype_layout"})
# Ops returning positions along a dim: (result, operand holding the dim, None: all elements).
_POSITIONS = {
    "torch.aten.argmax": (0, 1), "torch.aten.argmin": (0, 1), "torch.aten.topk": (1, 2),
    "torch.aten.sort": (1, 1), "torch.aten.max.dim": (1, 1), "torch.aten.min.dim": (1, 1),
    "torch.aten.argsort": (0, 1), "torch.aten.sort.stable": (1, 2),
    "torch.aten.argsort.stable": (0, 2),
}


# Ops that pass a value on unchanged: casts between torch's and builtin tensors, a 0-d view,
# a 0-d boolean tensor read as a condition.
_SAME_VALUE = frozenset({"torch_c.to_builtin_tensor", "torch_c.from_builtin_tensor",
                         "torch.aten.view", "torch_c.to_i1", "torch.aten.Bool.Tensor"})


_CONJUNCTIONS = frozenset({"torch.aten.logical_and", "torch.aten.bitwise_and.Tensor",
                          "torch.aten.__and__.Tensor"})


def counted_from_end(value: ir.Value) -> bool:
    """Whether `value` is ``where(x < 0, x + n, x)``: a Python index `x` into a dim of `n`,
    counted from the end where negative (dync's rewriting reads and writes `t[i]` for a 0-d
    tensor `i` so; one outside [-n, n) stays outside [0, n))."""
    op = owner(value)
    return op is not None and op.name == "torch.aten.where.self" \
        and _from_end_parts(list(op.operands)) is not None


def _from_end_parts(operands: list[ir.Value]) -> tuple[ir.Value, ir.Value] | None:
    """(x, n) of the operands of ``where(x < 0, x + n, x)``; None for another `where`."""
    test, shifted, x = owner(operands[0]), owner(operands[1]), operands[2]
    if test is None or test.name != "torch.aten.lt.Scalar" or test.operands[0] != x \
            or constant_int(test.operands[1]) != 0:
        return None
    if shifted is None or shifted.name not in _ADDS or shifted.operands[0] != x \
            or constant_int(shifted.operands[2]) != 1:
        return None
    return x, shifted.operands[1]


class ValueRanges:
    """Ranges of the integer values of `module` (see the module's docstring)."""

    def __init__(self, module: ir.Module | ir.Operation, naming_sizes: bool = False):
        self._module = module
        self._functions = functions(module)
        self._sites = call_sites(module)
        self._public = set(exported(module))
        # Each symbol over every range a function of the module declares for it: a proof
        # must hold in each function (a version or bucket may declare a narrower one).
        self.symbol_ranges: dict[str, tuple[int, int]] = {}
        for op in nested_ops(module.operation):
            if op.name == "torch.symbolic_int":
                declared: dict[str, tuple[int, int]] = {}
                narrow_range(declared, op)
                for name, (lo, hi) in declared.items():
                    old = self.symbol_ranges.get(name, (lo, hi))
                    self.symbol_ranges[name] = (min(lo, old[0]), max(hi, old[1]))
        self._memo: dict[ir.Value, Range | None] = {}
        self._active: set[ir.Value] = set()
        # `naming_sizes`: an int that is the length of what it makes is its symbol
        # (`_named_size`), each such symbol with the highs it was derived to have.
        self._naming_sizes = naming_sizes
        self._symbol_highs: dict[sympy.Symbol, tuple[sympy.Expr, ...]] = {}
        self._sized: ValueRanges | None = None

    # -- proofs ----------------------------------------------------------------------------
    def _from_end(self, operands) -> Range | None:
        """`where(x < 0, x + n, x)` (`counted_from_end`): for x in [lo, hi], at least
        min(lo + n, 0) and at most max(n - 1, hi) — in [0, n) where x lies in [-n, n)."""
        parts = _from_end_parts(operands)
        if parts is None:
            return None
        r, n = self.of(parts[0]), self.of(parts[1])
        negative = _plus(r, n)
        if negative is None:
            return None
        return _capped(tuple(dict.fromkeys((*negative.lows, sympy.Integer(0)))),
                       tuple(dict.fromkeys((*(sympy.expand(e - 1) for e in n.highs),
                                            *r.highs))))

    def nonzero(self, value: ir.Value) -> bool:
        """Whether no element of `value` (an int or an integer tensor) is proven to be 0: all
        at least 1, or all at most -1 (a size declared from 1 up, a count clamped to 1)."""
        one = sympy.Integer(1)
        found = self.of(value)
        if found is None:  # unbounded above, but clamped from below: `counts.clamp(min=1)`
            op = owner(value)
            clamped = op is not None and (
                op.name == "torch.aten.clamp_min" or op.name == "torch.aten.clamp"
                and len(op.operands) > 2 and _is_none(op.operands[2]))
            low = self.of(op.operands[1]) if clamped and not _is_none(op.operands[1]) else None
            return low is not None and all(self.at_most(one, e) for e in low.lows)
        return all(self.at_most(one, low) for low in found.lows) \
            or all(self.at_most(high, -one) for high in found.highs)

    def within(self, value: ir.Value, size: sympy.Expr) -> bool:
        """Whether every element of `value` is proven to lie in [0, size): with the ranges
        derived, or else with the unbacked sizes named (`_named_size`)."""
        if self._within(value, size):
            return True
        if self._naming_sizes:
            return False
        if self._sized is None:
            self._sized = ValueRanges(self._module, naming_sizes=True)
            for op in nested_ops(self._module.operation):
                if op.name in ("torch.aten.arange", "torch.aten.slice.Tensor"):
                    # Every size named up front: `_nonempty` reads what each is bounded by.
                    self._sized.of(op.operands[0 if op.name == "torch.aten.arange" else 3])
        return self._sized._within(value, size)

    def _within(self, value: ir.Value, size: sympy.Expr) -> bool:
        try:
            found = self.of(value)
        except RecursionError:  # a derivation deeper than the interpreter's stack: unproven
            self._active.clear()
            return False
        if found is None or size is None:
            return False
        ranges = self._nonempty(value)
        return all(self.at_most(sympy.Integer(0), low, ranges) for low in found.lows) \
            and all(self.at_most(high, size - 1, ranges) for high in found.highs)

    def _nonempty(self, tensor: ir.Value) -> dict[str, tuple[int, int]]:
        """The symbols' ranges where `tensor` has elements: a dim of it that is a symbol at
        least 1 (at 0 it has no element to be out of range), and so each symbol a named size
        (`_named_size`) says is at least as large."""
        dims = tensor_dims(tensor) if element_type(tensor.type) is not None else None
        ranges = dict(self.symbol_ranges)
        todo = [d for d in dims or () if isinstance(d, sympy.Symbol)]
        while todo:
            s = todo.pop()
            lo, hi = ranges.get(s.name, (1, 1))
            if lo >= 1:
                continue
            ranges[s.name] = (1, max(hi, 1))
            todo.extend(h for h in self._symbol_highs.get(s, ()) if isinstance(h, sympy.Symbol))
        return ranges

    def _extreme(self, a: ir.Value, b: ir.Value, least: bool) -> Range | None:
        """`min(a, b)` (`least`) or `max(a, b)` of ints (a size's `sym_min`/`sym_max`): its
        far side is either operand's, its near side the nearer operand's where one is proven
        nearer (else either's: a bound of one operand bounds the extreme too)."""
        x, y = self.of(a), self.of(b)
        both = _union([x, y])
        if both is None:
            return None
        if least:  # min(x, y) <= each operand
            near = y if all(self.at_most(h, g) for h in y.highs for g in x.highs) else x
            return Range(both.lows, near.highs)
        near = y if all(self.at_most(g, h) for h in y.lows for g in x.lows) else x
        return Range(near.lows, both.highs)

    def at_most(self, a: sympy.Expr, b: sympy.Expr,
                ranges: dict[str, tuple[int, int]] | None = None) -> bool:
        """Whether a <= b for every value of the symbols in their declared ranges (or
        `ranges`)."""
        ranges = self.symbol_ranges if ranges is None else ranges
        gap = sympy.expand(b - a)
        if gap.is_number:
            return bool(gap >= 0)
        if not gap.is_polynomial():
            return False
        if sympy.Poly(gap).total_degree() > 1:  # the corners bound only a linear expression
            least = _least_of_polynomial(gap, ranges)
            return least is not None and bool(least >= 0)
        least = bounds(gap, ranges)
        return least is not None and least[0] >= 0

    # -- derivation ------------------------------------------------------------------------
    def of(self, value: ir.Value) -> Range | None:
        """`value`'s range, or None when nothing bounds it."""
        if value in self._memo:
            return self._memo[value]
        if value in self._active or len(self._active) >= _DEPTH or not _is_integer(value):
            return None
        self._active.add(value)
        try:
            found = self._derive(value)
            if self._naming_sizes and str(value.type) == "!torch.int":
                found = self._named_size(value, found)
        finally:
            self._active.discard(value)
        self._memo[value] = found
        return found

    def _named_size(self, value: ir.Value, found: Range | None) -> Range | None:
        """`value` as the symbol the trace names it where it is the length of what it makes
        (the end of an `arange`, of a slice from 0 of something at least as long), proven
        non-negative by `found`: an unbacked size (`count = mask.sum().item()`), which a
        table `count` long is indexed by. The symbol keeps `found`'s highs (a count of a mask
        of `n` elements is at most `n`), for `_nonempty`."""
        if found is None or not all(self.at_most(sympy.Integer(0), low) for low in found.lows):
            return found
        for use in value.uses:
            user, size = use.owner, None
            if user.name == "torch.aten.arange" and use.operand_number == 0:
                size = dim_size(user.results[0], 0)
            elif user.name == "torch.aten.slice.Tensor" and use.operand_number == 3 \
                    and constant_int(user.operands[2]) == 0 and constant_int(user.operands[4]) == 1:
                axis = constant_int(user.operands[1])
                length = None if axis is None else dim_size(user.operands[0], axis)
                if length is not None and all(self.at_most(h, length) for h in found.highs):
                    size = dim_size(user.results[0], axis)
            if isinstance(size, sympy.Symbol):
                self._symbol_highs.setdefault(size, found.highs)
                return Range.exactly(size)
        return found

    def _derive(self, value: ir.Value) -> Range | None:
        op = owner(value)
        if op is None:
            return self._argument(value)
        name, operands = op.name, list(op.operands)
        if name == "torch.operator":  # an op torch-mlir has no op of its own for
            name = ir.StringAttr(op.attributes["name"]).value
        if name in ("func.call", "torch.call"):
            return self._returned(op, ir.OpResult(value).result_number)
        if name == "torch.constant.int":
            return Range.exactly(constant_int(value))
        if name in ("scf.while", "scf.for"):
            return self._carried(op, ir.OpResult(value).result_number, result=True)
        if name in _FILLS:
            return self.of(operands[_FILLS[name]])
        if name in ("torch.aten.zeros", "torch.aten.zeros_like", "torch.aten.new_zeros"):
            return Range.exactly(0)
        if name in ("torch.aten.ones", "torch.aten.ones_like", "torch.aten.new_ones"):
            return Range.exactly(1)
        if name == "scf.if":
            position = ir.OpResult(value).result_number
            yields = [list(region.blocks[0].operations)[-1] for region in op.regions]
            if any(y.name != "scf.yield" for y in yields):
                return None
            return _union([self.of(y.operands[position]) for y in yields])
        if name == "torch.vtensor.literal":
            values = constant_ints(value) if _small_literal(op) else None
            return None if not values else Range((sympy.Integer(min(values)),),
                                                 (sympy.Integer(max(values)),))
        if name in ("torch.aten.clamp", "torch.aten.clamp_min", "torch.aten.clamp_max"):
            bound = (None if len(operands) < 2 or _is_none(operands[1]) else operands[1],
                     None if len(operands) < 3 or _is_none(operands[2]) else operands[2])
            if name == "torch.aten.clamp_max":
                bound = (None, bound[0])
            low, high = (None if b is None else self.of(b) for b in bound)
            if bound[0] is not None and low is None or bound[1] is not None and high is None:
                return None
            if low is not None and high is not None:
                # min(max(x, low), high): at most `high`; at least `low` unless low > high.
                return _union([Range(low.lows, high.highs), Range(high.lows, high.highs)])
            x = self.of(operands[0])
            if x is None:
                return None
            if low is not None:  # max(x, low)
                return _capped(low.lows, tuple(dict.fromkeys(x.highs + low.highs)))
            return _capped(tuple(dict.fromkeys(x.lows + high.lows)), high.highs)  # min(x, high)
        if name == "torch.symbolic_int":
            return Range.exactly(symbol(ir.StringAttr(op.attributes["symbol_name"]).value))
        if name == "torch.aten.size.int":
            axis = constant_int(operands[1])
            dim = None if axis is None else dim_size(operands[0], axis)
            return None if dim is None else Range.exactly(dim)
        if name in _MOVES:
            return self.of(operands[0])
        if name in _POSITIONS:
            result, dim_operand = _POSITIONS[name]
            if ir.OpResult(value).result_number != result:
                return self.of(operands[0])  # the values: some of the input's
            return self._positions(operands[0], operands[dim_operand])
        if name in ("torch.aten.remainder.Scalar", "torch.aten.remainder.int"):
            divisor = self.of(operands[1])
            if divisor is None or not all(self.at_most(sympy.Integer(1), e)
                                          for e in divisor.lows):
                return None
            return Range((sympy.Integer(0),), tuple(sympy.expand(e - 1) for e in divisor.highs))
        if name in ("torch.aten.add.Tensor", "torch.aten.add.Scalar", "torch.aten.sub.Tensor",
                    "torch.aten.sub.Scalar"):
            if constant_int(operands[2]) != 1:
                return None
            return _plus(self.of(operands[0]), self.of(operands[1]),
                         -1 if name.startswith("torch.aten.sub") else 1)
        if name in ("torch.aten.add.int", "torch.aten.sub.int"):
            return _plus(self.of(operands[0]), self.of(operands[1]),
                         -1 if name == "torch.aten.sub.int" else 1)
        if name in ("torch.aten.mul.Scalar", "torch.aten.mul.int"):
            return self._product(operands[0], operands[1])
        if name in ("torch.prim.min.int", "torch.prim.max.int"):
            return self._extreme(operands[0], operands[1], least=name == "torch.prim.min.int")
        if name.startswith("torch.aten.where."):
            from_end = self._from_end(operands)
            if from_end is not None:
                return from_end
            return _union([self.of(operands[1]), self.of(operands[2])])
        if name in ("torch.aten.cat", "torch.aten.stack"):
            listed = owner(operands[0])
            if listed is None or listed.name != "torch.prim.ListConstruct":
                return None
            return _union([self.of(v) for v in listed.operands])
        if name == "torch.prim.ListUnpack":
            return self._unbound(op, ir.OpResult(value).result_number)
        if name in ("torch.aten.sum", "torch.aten.sum.dim_IntList") \
                and element_type(operands[0].type) == "i1":
            return self._counted(operands[0], operands[1] if len(operands) > 2 else None)
        if name in _CONVERSIONS and element_type(value.type) in ("si64", "si32"):
            return self._elements(operands[0])  # integers keep their values
        if name == "torch.aten.cumsum":
            return self._running_sum(operands[0], operands[1])
        if name == "torch.aten.arange":
            end = self.of(operands[0])
            return None if end is None else Range(
                (sympy.Integer(0),), tuple(sympy.expand(e - 1) for e in end.highs))
        if name == "torch.aten.arange.start":
            start, end = self.of(operands[0]), self.of(operands[1])
            if start is None or end is None:
                return None
            return Range(start.lows, tuple(sympy.expand(e - 1) for e in end.highs))
        return None

    def _argument(self, value: ir.Value) -> Range | None:
        """A function argument: the union over the calls of the function (none for an entry
        point, which the host calls); a block argument of a loop: what the loop carries (none
        for any other region's block)."""
        position = function_argument(value)
        if position is None:
            block = value.owner
            parent = block.owner
            if parent.name not in ("scf.while", "scf.for"):
                return None
            region = next(i for i, r in enumerate(parent.regions) if r.blocks[0] == block)
            return self._carried(parent.operation, ir.BlockArgument(value).arg_number,
                                 region=region)
        func = value.owner.owner
        name = ir.StringAttr(func.attributes["sym_name"]).value
        sites = self._sites.get(name)
        if name in self._public or not sites:
            return None
        return _union([self.of(site.operands[position]) if position < len(site.operands)
                       else None for site in sites])

    def _carried(self, loop: ir.Operation, position: int, result: bool = False,
                 region: int = 0) -> Range | None:
        """A value an `scf.while` or `scf.for` carries: its result or a block argument of its
        `region` at `position`. A value carried into an iteration is the initial one or the one
        the last iteration yielded; where that depends on the carried value itself, no range
        (the cycle meets the value being derived)."""
        terminators = [list(r.blocks[0].operations)[-1] for r in loop.regions]
        if loop.name == "scf.for":
            if not result:
                if position == 0:
                    return None  # the induction variable
                position -= 1
            inits = list(loop.operands)[3:]
            yielded = terminators[0]
        else:
            condition, yielded = terminators
            if result or region == 1:  # what the condition forwards
                forwarded = list(condition.operands)[1:]
                return self.of(forwarded[position]) if position < len(forwarded) else None
            inits = list(loop.operands)
            if position < len(inits):
                counted = self._counter(loop, position, inits[position], condition)
                if counted is not None:
                    return counted
        if position >= len(inits) or position >= len(yielded.operands):
            return None
        return _union([self.of(inits[position]), self.of(yielded.operands[position])])

    def _counter(self, loop: ir.Operation, position: int, init: ir.Value,
                 condition: ir.Operation) -> Range | None:
        """A counter an `scf.while` with its body in the condition's region carries (dync's
        `for` over a dynamic range: `i + step` forwarded while `i + step < stop`, and maybe
        while no `break` was taken, a positive constant step): from its initial value up to
        `stop - 1`; None for any other value."""
        forwarded = list(condition.operands)[1:]
        after = loop.regions[1].blocks[0]
        yielded = list(list(after.operations)[-1].operands)
        if position >= len(forwarded) or position >= len(yielded) \
                or yielded[position] != after.arguments[position]:
            return None  # the body is not all in the condition's region
        following, calls = self._passed(forwarded[position])
        step = owner(following)
        if step is None or step.name != "torch.aten.add.Scalar":
            return None
        amount, alpha = constant_int(step.operands[1]), constant_int(step.operands[2])
        counter = loop.regions[0].blocks[0].arguments[position]
        if amount is None or alpha is None or amount * alpha <= 0 \
                or self._passed(step.operands[0], calls)[0] != counter:
            return None
        test = self._bounding_test(condition.operands[0], following)
        if test is None:
            return None
        start, stop = self.of(init), self.of(test.operands[1])
        if start is None or stop is None:
            return None
        return _capped(start.lows, tuple(dict.fromkeys(
            (*start.highs, *(sympy.expand(h - 1) for h in stop.highs)))))

    def _bounding_test(self, condition: ir.Value, counter: ir.Value) -> ir.Operation | None:
        """The `counter < stop` that `condition` requires (itself, or one side of a
        conjunction: a loop that `break` may also end); None if there is none."""
        todo: list[tuple[ir.Value, tuple]] = [(condition, ())]
        for _ in range(_CANDIDATES):
            if not todo:
                return None
            value, calls = self._passed(*todo.pop())
            test = owner(value)
            if test is None:
                continue
            if test.name in ("torch.aten.lt.Tensor", "torch.aten.lt.Scalar") \
                    and self._passed(test.operands[0], calls)[0] == counter:
                return test
            if test.name in _CONJUNCTIONS:
                todo += [(operand, calls) for operand in list(test.operands)[:2]]
        return None

    def _passed(self, value: ir.Value, calls: tuple = ()) -> tuple[ir.Value, tuple]:
        """`value` before what passes it on unchanged: the ops of `_SAME_VALUE`, a call (the
        value its callee returns) and a function's argument (the value the call it was
        reached through passes, or a private function's one call: the body of a loop split
        into a sub-DNN); with the calls entered and not yet left."""
        for _ in range(_DEPTH):
            op = owner(value)
            if op is not None and op.name in _SAME_VALUE:
                value = op.operands[0]
            elif op is not None and op.name in ("func.call", "torch.call"):
                returned = self._return_of(op)
                position = ir.OpResult(value).result_number
                if returned is None or position >= len(returned.operands):
                    break
                value, calls = returned.operands[position], (*calls, op)
            elif op is None and (position := function_argument(value)) is not None:
                name = ir.StringAttr(value.owner.owner.attributes["sym_name"]).value
                if calls and callee(calls[-1]) == name:
                    site, calls = calls[-1], calls[:-1]
                else:
                    sites = self._sites.get(name) or []
                    if name in self._public or len(sites) != 1:
                        break
                    site = sites[0]
                if position >= len(site.operands):
                    break
                value = site.operands[position]
            else:
                break
        return value, calls

    def _return_of(self, call: ir.Operation) -> ir.Operation | None:
        """The `func.return` of the single-block function `call` calls; None otherwise."""
        func = self._functions.get(callee(call))
        if func is None or len(func.regions[0].blocks) != 1:
            return None
        ret = list(func.regions[0].blocks[0].operations)[-1]
        return ret if ret.name == "func.return" else None

    def _returned(self, call: ir.Operation, position: int) -> Range | None:
        ret = self._return_of(call)
        if ret is None or position >= len(ret.operands):
            return None
        return self.of(ret.operands[position])

    def _positions(self, tensor: ir.Value, dim: ir.Value) -> Range | None:
        """[0, n - 1] for positions along `dim` of `tensor` (all its elements where `dim` is
        `none`)."""
        dims = tensor_dims(tensor)
        if dims is None:
            return None
        axis = constant_int(dim)
        if axis is None:
            if str(dim.type) != "!torch.none" or any(d is None for d in dims):
                return None
            n = sympy.Mul(*dims)
        else:
            if not dims:
                return None
            n = dims[axis % len(dims)]
            if n is None:
                return None
        return Range((sympy.Integer(0),), (sympy.expand(n - 1),))

    def _product(self, a: ir.Value, b: ir.Value) -> Range | None:
        factor = constant_int(b)
        if factor is not None:
            return _scaled(self.of(a), factor)
        x, y = self.of(a), self.of(b)
        exact = (x.exact() if x else None, y.exact() if y else None)
        if None not in exact:
            return Range.exactly(sympy.expand(exact[0] * exact[1]))
        # A range times a size (a row's start in a flattened table: `row * w + column`).
        for scaled, factor in ((x, exact[1]), (y, exact[0])):
            if scaled is not None and factor is not None \
                    and self.at_most(sympy.Integer(0), factor):
                return Range(tuple(sympy.expand(e * factor) for e in scaled.lows),
                             tuple(sympy.expand(e * factor) for e in scaled.highs))
        return None

    def _counted(self, mask: ir.Value, dims: ir.Value | None) -> Range | None:
        """A sum of booleans (`searchsorted`'s count of the boundaries below a value): from 0
        to the number of elements summed, the product of the dims `dims` lists (all when it
        is None or empty, as torch's `sum(dim=[])`)."""
        rank = len(type_dims(mask.type) or ())
        axes = None if dims is None or _is_none(dims) else constant_int_list(dims)
        if axes is None and dims is not None and not _is_none(dims):
            return None  # dims not known
        axes = axes or list(range(rank))
        count = sympy.Integer(1)
        for axis in axes:
            size = dim_size(mask, axis)
            if size is None:
                return None
            count *= size
        return Range((sympy.Integer(0),), (sympy.expand(count),))

    def _elements(self, tensor: ir.Value) -> Range | None:
        """The range of `tensor`'s elements, also of a boolean one: 0 or 1."""
        if element_type(tensor.type) == "i1":
            return Range((sympy.Integer(0),), (sympy.Integer(1),))
        return self.of(tensor)

    def _running_sum(self, tensor: ir.Value, dim: ir.Value) -> Range | None:
        """A cumulative sum of elements never negative (a running count of a mask): from 0
        to the dim's size times the largest element."""
        found, axis = self._elements(tensor), constant_int(dim)
        size = None if axis is None else dim_size(tensor, axis)
        if found is None or size is None \
                or not all(self.at_most(sympy.Integer(0), low) for low in found.lows):
            return None
        return _capped((sympy.Integer(0),), tuple(sympy.expand(size * h) for h in found.highs))

    def _unbound(self, unpack: ir.Operation, position: int) -> Range | None:
        """An element of `unbind(x, d)`: the `position`th tensor stacked along the same `d`
        when `x` is such a `stack`, else any value of `x`."""
        unbind = owner(unpack.operands[0])
        if unbind is None or unbind.name != "torch.aten.unbind.int":
            return None
        source, axis = unbind.operands[0], constant_int(unbind.operands[1])
        stack = owner(source)
        if stack is not None and stack.name == "torch.aten.stack" and axis is not None \
                and constant_int(stack.operands[1]) == axis:
            listed = owner(stack.operands[0])
            if listed is not None and listed.name == "torch.prim.ListConstruct" \
                    and position < len(listed.operands):
                return self.of(listed.operands[position])
        return self.of(source)


def _least_of_polynomial(gap: sympy.Expr,
                         ranges: dict[str, tuple[int, int]]) -> sympy.Expr | None:
    """A lower bound of the polynomial `gap` over symbols whose declared ranges are all
    non-negative (sizes): each monomial grows with every symbol in it, so a term is least at
    the symbols' lows where its coefficient is positive, at their highs where negative (the
    `b*n - 1 >= 0` of a flattened b x n table). None where a symbol may be negative or has no
    range."""
    free = sorted(gap.free_symbols, key=lambda s: s.name)
    if any(s.name not in ranges or ranges[s.name][0] < 0 for s in free):
        return None
    least = sympy.Integer(0)
    for monomial, coefficient in sympy.Poly(gap, *free).terms():
        at = 0 if coefficient > 0 else 1
        term = coefficient
        for s, power in zip(free, monomial, strict=True):
            term *= ranges[s.name][at] ** power
        least += term
    return least


def _is_none(value: ir.Value) -> bool:
    return str(value.type) == "!torch.none"


def _small_literal(literal: ir.Operation) -> bool:
    """Whether a literal is a splat or has few enough elements to read them all."""
    attr = literal.attributes["value"]
    return isinstance(attr, ir.DenseElementsAttr) and (
        attr.is_splat or len(attr) <= _LITERAL_ELEMENTS)


def _is_integer(value: ir.Value) -> bool:
    if str(value.type) == "!torch.int":
        return True
    element = element_type(value.type)
    return element is not None and element.startswith(("si", "ui", "i")) and element != "i1"


def tensor_dims(tensor: ir.Value) -> list[sympy.Expr | None] | None:
    """`tensor`'s dims: static sizes, else its shape binding's expressions."""
    static = type_dims(tensor.type)
    if static is None:
        return None
    found = bindings(tensor)[:1]
    bound = bound_dims(found[0]) if found and all(
        not isinstance(v.owner, ir.Block) and v.owner.name == "torch.symbolic_int"
        for v in list(found[0].operands)[1:]) else None
    if bound is not None and len(bound) != len(static):
        bound = None
    return [sympy.Integer(d) if d is not None else (bound[i] if bound else None)
            for i, d in enumerate(static)]


def largest_dims(tensor: ir.Value, ranges: dict[str, tuple[int, int]]) -> list[int] | None:
    """Each dim of `tensor` at its largest (its static size, or the most its binding's
    expression reaches over the symbols' `ranges`); None where a dim has no bound."""
    dims = tensor_dims(tensor)
    reach = [bounds(d, ranges) for d in dims] if dims is not None and None not in dims else [None]
    return None if None in reach else [high for _, high in reach]


def dim_size(tensor: ir.Value, axis: int) -> sympy.Expr | None:
    """The size of dim `axis` of `tensor`, static or from its shape binding, or None."""
    dims = tensor_dims(tensor)
    if not dims:
        return None
    return dims[axis % len(dims)] if -len(dims) <= axis < len(dims) else None
