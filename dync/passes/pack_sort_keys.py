"""`dync-pack-sort-keys`: a sort carries each element's index inside its key.

Reads: `torch.aten.sort`, `sort.stable`, `argsort`, `argsort.stable`, `msort` and `topk` over
f32, f16, bf16, si32, si16, si8, i1, si64 or f64 tensors, along a constant dim.
Writes: in place of each, one `torch.aten.sort` of int64 keys, `order(x) * 2**32 + i` (with
`2**32 - 1 - i` when descending), where `order` maps each value to an int32 that sorts like
eager PyTorch's values: -0.0 ties with 0.0, and every NaN ties with every other above +inf.
The indices are the low 32 bits of the sorted keys (the first k for `topk`) and the values a
`gather` of the input at them: bit for bit eager's stable sort, for every input. The new
`sort.stable`, `argsort.stable` and `msort` lower in IREE, where the ops they replace did not.
A `topk` of a constant k of at most 32, and a sort whose results are read only through leading
slices along its dim of constant lengths (the longest is k), take their first k in k rounds
of reductions instead of a sort: each round the least (greatest) key past the last round's
(keys already taken read as the row's worst key), or, for 64-bit values, the least order not
taken yet and then its first position; each reduction, and the tensor it reads, behind a
`util.optimization_barrier`. A sort's slices then read the rounds' results cut to the length.
int64 values that `analysis.value_ranges` proves within int32's range (positions) pack as
int32s do. A sort along a static dim longer than `_NETWORK_FROM` (48) is a bitonic sorting
network over the keys instead (`_network_positions`): padded to a power of two, log2(n)
(log2(n) + 1) / 2 compare-exchange steps, each elementwise. A sort along a dynamic dim
chooses at run time by its length (`scf.if`s, `_plan`): up to 48 elements the sort of keys
(up to 64 where it sorts at most 16 rows, up to 128 at most 2, by ranks: `_rank_positions`,
each key's count of the keys below it, then each place's position of that rank, two
reductions over all pairs),
then a network padded to each power of two up to `_NETWORK_UNTIL` (4096), past it a radix
sort of the 32-bit order (`_radix_positions`): 8 rounds of a stable counting sort of 4 bits,
each a one-hot running sum along the dim, a scatter of the positions and a gather of the next
digits; eager's stable order, as the keys give. Only the ways a length the declared range
allows takes (`analysis.value_ranges`), and networks over dynamic lengths only while the
module's budget of `_DYNAMIC_NETWORK_STEPS` lasts (IREE compiles each step): a sort past it
takes the radix sort from 49 elements.

Why: IREE 3.13 lowers a sort's indices to an iota that the sort overwrites in place. Two sorts
of the same shape whose iotas cannot be hoisted into a constant (a dynamic batch, or inside a
branch or a loop) get one iota: copy-on-write gives each sort a dispatch of its own, then CSE
merges the two dispatches again, and the second sort starts from the first one's permutation.
Its indices come out wrong, silently (`lit/upstream/iree-sort-shared-iota.mlir`): two top-k
routings over a dynamic batch, or two `topk` in one branch. A key sort needs no indices, so
what the shared iota holds no longer matters. int64 and float64 inputs leave no room for the
index in one key: they are sorted by two keys, the low 32 bits of their order first, then,
stably, the high 32 (a two-digit radix sort; IREE's own 64-bit sort also failed to compile
over a dynamic size when only its indices were used: "unbounded stack allocations"). Unsigned
inputs are left alone. The rounds: IREE 3.13's sort is a bubble sort on the CPU, O(n^2) —
`topk(16)` of 128 rows of 1000 took 36.5 ms against eager's 0.64 (now 0.40), and a ball query's
sort of 1000 points per row kept PointNet++ out of one graph. The barriers: fused, a reduction
whose consumer also reads its input kept a whole row on the stack ("exceeded stack allocation
limit"), and a producer with an iota (the ball query's `where(mask, n, arange(n))`) fused into
the reductions gave wrong values past 64 elements. The radix sort: IREE's sort, a bubble sort,
took 0.57 ms for 1000 floats (eager 0.025) and 142 ms for 16000 (eager 1.1); the radix sort
0.48 and 3.6 ms. The network: two sorts of 4 x 500 floats 1.17 -> 0.15 ms, of 4 x 16000
~33 -> 10.8 ms (eager 2.9); below 48 elements the bubble sort is faster (18 against 26 us for
two sorts of 33). Over a dynamic length, a network padded to a static width for each power of
two (a network stepped at run time over a padded length was a submission per step and 7x
slower): argsort of 4 x n, n up to any length, at 500 and 1000: 0.57, 1.05 ms (the bubble
sort) -> 0.11, 0.23 (eager 0.031, 0.116); at 4000, with networks up to 4096, 3.3 -> 0.96 ms
(eager 0.59), but compiling it took 3.4 -> 14.6 s, and a model of eight such sorts 55 s: the
cause of the budget. The ranks: a choice at run time ends a command buffer (a submission)
and each network step is a dispatch, which at a few rows costs more than the O(n^2) compares:
a stable sort of 4 rows of at most 64, 17.7, 23.4, 35.4 us at 6, 40, 64 elements (38
dispatches, 3 submissions) -> 16.3, 21.7, 27.8 (4 dispatches, 1 submission; eager 9-11).

The digits are exact divisions (`arith.divsi`) of what is a multiple: torch-mlir computes a
floor division in f32 (`dync-int-division` makes those exact, but it runs before this pass),
and the high digit of an int64 just below a multiple of 2**32 past 2**24 came out one too
high, and its sort wrong. No paper section: a workaround at the
boundary to IREE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy
from iree.compiler import ir

from ..analysis.value_ranges import ValueRanges, dim_size
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import (
    SCALAR_TYPES,
    TorchBuilder,
    bindings,
    builtin_type,
    constant_bool,
    constant_int,
    owner,
    through_barrier,
    users,
    vtensor_of,
    vtensor_type,
)
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

_LOW = 2 ** 32  # the index's room in the key
_ROUNDS_MAX = 32  # the largest k taken in rounds (`_top_positions`) rather than by a sort
_RADIX_BITS = 4  # 8 rounds; 8 bits (4 rounds) took 20x longer: a running sum 256 wide
# Sorts along a dim longer than this are sorting networks (`_network_positions`), up to
# `_NETWORK_UNTIL` elements where the dim is dynamic (a network for each power of two it may
# reach).
_NETWORK_FROM, _NETWORK_UNTIL = 48, 4096
# A dynamic length up to a width here, in at most its rows, is sorted by ranks
# (`_rank_positions`): no branch and two dispatches, where the sort of keys up to 48 and a
# network of 64 took a branch and 22 dispatches (a network of 128, 28). The ranks' work grows
# as rows x n^2, a network's as rows x n log^2 n: past 16 rows of 64 the network is the
# faster (1000 rows of 64: 1.2 ms, the ranks 2.7; of 40, the ranks 1.1 ms, the sort of keys
# 1.4), and past 2 rows of 128 (4 rows of 100: the network 48 us, the ranks 46; of 128, 48
# and 59; one row of 128, 38 and 25).
_RANK_ROWS = {128: 2, 64: 16}
# The most steps of networks over dynamic lengths in a module (a network for each width a
# length may reach, each step a dispatch IREE compiles: 30-40 ms each on this machine): the
# networks of 64 to 1024 elements take 185 (after ranks up to 64, 164; up to 128, 136).
_DYNAMIC_NETWORK_STEPS = 200
# Above every value's order (+inf is 0x7f800000), and times `_LOW` still an int64: 2**31
# overflowed to the least key, and NaNs sorted first.
_NAN_KEY = 2 ** 31 - 1
# A quiet NaN's bits: above +inf's, and exact as a float (torch-mlir fills through one: 2**63 - 1
# became 2**63, the least int64, and NaNs sorted first).
_NAN_KEY64 = 0x7FF8 << 48
_WIDE = {"si64", "f64"}
_FLOATS = set(FLOAT_ELEMENTS) - _WIDE  # those whose order fits an int32
_INTS = {"si32", "si16", "si8", "i1"}


@dataclass(frozen=True)
class _Sort:
    """Where a sorting op keeps its operands (`None`: a fixed value) and which results it has."""

    dim: int | None
    descending: int | None
    values: int | None
    indices: int | None
    k: int | None = None


_SORTS = {
    "torch.aten.sort": _Sort(dim=1, descending=2, values=0, indices=1),
    "torch.aten.sort.stable": _Sort(dim=2, descending=3, values=0, indices=1),
    "torch.aten.argsort": _Sort(dim=1, descending=2, values=None, indices=0),
    "torch.aten.argsort.stable": _Sort(dim=2, descending=3, values=None, indices=0),
    "torch.aten.msort": _Sort(dim=None, descending=None, values=0, indices=None),
    "torch.aten.topk": _Sort(dim=2, descending=3, values=0, indices=1, k=1),
}


def _op_name(op: ir.Operation) -> str:
    """An op's torch name, also when torch-mlir knows it only as a `torch.operator`."""
    if op.name == "torch.operator":
        return ir.StringAttr(op.attributes["name"]).value
    return op.name


class PackSortKeys(Pass):
    name = "dync-pack-sort-keys"
    summary = ("sort int64 keys that carry each element's index (IREE shares sorts' index iotas); "
               "a small top k in k rounds of reductions")

    def run(self, module: ir.Operation) -> None:
        ranges = ValueRanges(module)
        budget = _Budget(_DYNAMIC_NETWORK_STEPS)
        for func in functions(module).values():
            # Collected first: a rewrite erases ops after the sort (its shape bindings).
            for op in [op for op in nested_ops(func) if _op_name(op) in _SORTS]:
                _rewrite(op, _SORTS[_op_name(op)], ranges, budget)


def _order(b: TorchBuilder, x: ir.Value) -> ir.Value:
    """Each element of `x` as an int64 that sorts like eager sorts the values."""
    dims, element = type_dims(x.type), element_type(x.type)
    if element not in _FLOATS:
        return b.convert(x, "si64")
    keys, flags = vtensor_of(dims, "si64"), vtensor_of(dims, "i1")
    floats = b.convert(x, "f32") if element != "f32" else x
    bits = b.convert(b("torch.aten.view.dtype", vtensor_of(dims, "si32"), floats, b.int(SCALAR_TYPES["si32"])),
                    "si64")
    # A negative float's bits, as an int, grow with its magnitude: its order is -magnitude,
    # which also puts -0.0 (bits -2**31) at 0, beside 0.0.
    negative = b("torch.aten.lt.Scalar", flags, bits, b.int(0))
    flipped = b("torch.aten.rsub.Scalar", keys, bits, b.int(-(2 ** 31)), b.int(1))
    order = b("torch.aten.where.self", keys, negative, flipped, bits)
    nan = b("torch.aten.isnan", flags, floats)
    return b("torch.aten.masked_fill.Scalar", keys, order, nan, b.int(_NAN_KEY))


def _order64(b: TorchBuilder, x: ir.Value) -> ir.Value:
    """`_order` of a 64-bit tensor: int64 itself, float64's bits ordered as its values."""
    if element_type(x.type) == "si64":
        return x
    dims = type_dims(x.type)
    keys, flags = vtensor_of(dims, "si64"), vtensor_of(dims, "i1")
    bits = b("torch.aten.view.dtype", keys, x, b.int(SCALAR_TYPES["si64"]))
    negative = b("torch.aten.lt.Scalar", flags, bits, b.int(0))
    flipped = b("torch.aten.rsub.Scalar", keys, bits, b.int(-(2 ** 63)), b.int(1))
    order = b("torch.aten.where.self", keys, negative, flipped, bits)
    nan = b("torch.aten.isnan", flags, x)
    return b("torch.aten.masked_fill.Scalar", keys, order, nan, b.int(_NAN_KEY64))


def _digits(b: TorchBuilder, order: ir.Value) -> tuple[ir.Value, ir.Value]:
    """An int64 tensor's high and low 32-bit digits, each an int64 in int32's range that
    sorts as the digit does (the high one signed, the low one unsigned)."""
    low = b("torch.aten.remainder.Scalar", order.type, order, b.int(_LOW))
    high = _exact_quotient(b, b("torch.aten.sub.Tensor", order.type, order, low, b.int(1)), _LOW)
    return high, b("torch.aten.sub.Scalar", order.type, low, b.int(2 ** 31), b.int(1))


def _exact_quotient(b: TorchBuilder, x: ir.Value, divisor: int) -> ir.Value:
    """`x / divisor` rounded toward zero (`arith.divsi`): a floor division, which
    `dync-int-division` runs before this pass to make exact, torch-mlir computes in f32, wrong
    past 2**24 (`lit/upstream/torch-int-floor-divide-f32.mlir`)."""
    return b("torch.aten.div.Scalar_mode", x.type, x, b.int(divisor), b.str("trunc"))


def _sorted_positions(b: TorchBuilder, order: ir.Value, x: ir.Value, dim: int,
                      descending: bool, plan: list[tuple[int | None, str | int]]) -> ir.Value:
    """The positions along `dim` that stably sort `order` (int64 in int32's range, the shape
    of `x`): a sorting network where the dim is static and longer than `_NETWORK_FROM`, else
    as `plan` (`_plan`) says, chosen at run time (`scf.if`s on the length) where it has
    several ways."""
    length = type_dims(x.type)[dim]
    if length is not None and length > _NETWORK_FROM:
        return _network_positions(b, order, x, dim, descending, width=_width(length))
    (limit, way), rest = plan[0], plan[1:]
    if rest:
        return _by_length(b, x, dim, limit, lambda inner: _sorted_positions(
            inner, order, x, dim, descending, plan[:1]), lambda inner: _sorted_positions(
            inner, order, x, dim, descending, rest))
    if way == "radix":
        return _radix_positions(b, order, x, dim, descending)
    if way == "rank":
        return _rank_positions(b, order, x, dim, descending)
    if isinstance(way, int):
        return _network_positions(b, order, x, dim, descending, width=way)
    picked, _ = b.sort(_keys(b, order, _positions(b, x, dim, descending)), dim, descending)
    return _index_of(b, picked, descending)


class _Budget:
    """The steps of networks over dynamic lengths a module may still take. (Counted at each
    sort: the networks of two sorts of one shape share few dispatches, their first and last
    steps fused with what each sort reads and writes, and IREE took 31 s, against 11, for
    a model of eight sorts that shared their networks' budget.)"""

    def __init__(self, steps: int):
        self.steps = steps

    def spend(self, width: int, passes: int) -> bool:
        """Whether `passes` networks over `width` elements fit, taken from the budget where
        they do."""
        levels = width.bit_length() - 1
        steps = passes * levels * (levels + 1) // 2
        if steps > self.steps:
            return False
        self.steps -= steps
        return True


def _plan(ranges: ValueRanges, x: ir.Value, dim: int, budget: _Budget,
          passes: int) -> list[tuple[int | None, str | int]]:
    """How a sort along dim `dim` of `x` sorts at each length it may have, as (the longest
    length the way takes, the way), the last way taking any length: IREE's sort ("sort") up to
    `_NETWORK_FROM` elements, sorting networks padded to each power of two up to
    `_NETWORK_UNTIL` (the width), the radix sort ("radix") past them; only the ways a length
    the declared ranges allow takes (`analysis.value_ranges`), networks over a dynamic length
    while the module's `budget` lasts (`passes`: the sort's networks), the narrowest first."""
    if type_dims(x.type)[dim] is not None:
        return [(None, "sort")]  # a static length: the network past 48, `_sorted_positions`
    size = dim_size(x, dim)
    ranked = _rank_until(ranges, x, dim)
    first = (ranked, "rank") if ranked else (_NETWORK_FROM, "sort")
    widths = range(_width(first[0] + 1).bit_length() - 1, _NETWORK_UNTIL.bit_length())
    ways = [first, *((2 ** e, 2 ** e) for e in widths), (None, "radix")]
    plan: list[tuple[int | None, str | int]] = []
    for limit, way in ways:
        if limit is not None and size is not None \
                and ranges.at_most(sympy.Integer(limit + 1), size):
            continue  # always longer
        if isinstance(way, int) and not budget.spend(way, passes):
            continue
        plan.append((limit, way))
        if limit is None or size is not None and ranges.at_most(size, sympy.Integer(limit)):
            break
    return plan


def _rank_until(ranges: ValueRanges, x: ir.Value, dim: int) -> int | None:
    """The longest length a sort of `x` along `dim` takes by ranks: the widest of
    `_RANK_ROWS` whose rows the rows sorted at once (the other dims) are proven within, where
    the ranks' O(n^2) work costs less than a network's steps; None where none is."""
    sizes = [dim_size(x, i) for i in range(len(type_dims(x.type))) if i != dim]
    if None in sizes:
        return None
    rows = sympy.Mul(*sizes)
    return next((width for width, most in _RANK_ROWS.items()
                 if ranges.at_most(rows, sympy.Integer(most))), None)


def _width(length: int) -> int:
    """The power of two a sorting network over `length` elements is padded to."""
    return 1 << (length - 1).bit_length()


def _by_length(b: TorchBuilder, x: ir.Value, dim: int, limit: int,
               short: Callable[[TorchBuilder], ir.Value],
               long: Callable[[TorchBuilder], ir.Value]) -> ir.Value:
    """`short`'s positions where dim `dim` of `x` is at most `limit` long, else `long`'s: an
    `scf.if` on the length (known on the host), each branch built by its function in a
    builder of its own."""
    result = vtensor_of(type_dims(x.type), "si64")
    builtin = builtin_type(result, dynamic=True)
    flag = b("torch.aten.le.int", ir.Type.parse("!torch.bool"), b.size(x, dim), b.int(limit))
    choice = ir.Operation.create("scf.if", results=[builtin], regions=2, loc=b.loc, ip=b.ip,
                                 operands=[b("torch_c.to_i1", ir.IntegerType.get_signless(1), flag)])
    for region, build in zip(choice.regions, (short, long), strict=True):
        block = region.blocks.append()
        end = ir.Operation.create("scf.yield", operands=[], loc=b.loc, ip=ir.InsertionPoint(block))
        inner = TorchBuilder(end)
        positions = inner("torch_c.to_builtin_tensor", builtin, build(inner))
        ir.Operation.create("scf.yield", operands=[positions], loc=b.loc, ip=ir.InsertionPoint(end))
        end.erase()
    return b("torch_c.from_builtin_tensor", result, choice.results[0])


def _radix_positions(b: TorchBuilder, order: ir.Value, x: ir.Value, dim: int,
                     descending: bool) -> ir.Value:
    """`_sorted_positions` by a least-significant-digit radix sort of `order`'s 32 bits,
    `_RADIX_BITS` a round, each round a stable counting sort: a digit's destination is the
    count of smaller digits in the row plus the count of equal ones before it (a running sum
    of the digits one-hot along `dim`). The positions are permuted each round and the next
    digits gathered through them. O(n) a round, where IREE's sort is O(n^2)."""
    dims = list(type_dims(x.type))
    rank, buckets = len(dims), 2 ** _RADIX_BITS
    full, flags = vtensor_of(dims, "si64"), vtensor_of([*dims, buckets], "i1")
    wide, wide64 = vtensor_of([*dims, buckets], "si32"), vtensor_of([*dims, 1], "si64")
    row = vtensor_of([*(1 if i == dim else d for i, d in enumerate(dims)), buckets], "si32")
    one = b.int(1)
    # Unsigned, in [0, 2**32): ascending order's (descending: its complement's) stable sort.
    unsigned = (b("torch.aten.rsub.Scalar", full, order, b.int(2 ** 31 - 1), one) if descending
                else b("torch.aten.add.Scalar", full, order, b.int(2 ** 31), one))
    digits = b("torch.aten.arange", vtensor_of([buckets], "si64"), b.int(buckets),
               b.int(SCALAR_TYPES["si64"]), b.none, b.none, b.none)
    positions = b("torch.aten.add.Tensor", full, b("torch.aten.zeros_like", full, order, b.none,
                                                     b.none, b.none, b.none, b.none),
                  _positions(b, x, dim, descending=False), one)
    length = b.size(x, dim)
    keys, last = unsigned, b("torch.aten.sub.int", ir.Type.parse("!torch.int"), length, one)
    for shift in range(0, 32, _RADIX_BITS):
        shifted = _exact_quotient(b, keys, 2 ** shift) if shift else keys
        digit = b("torch.aten.remainder.Scalar", full, shifted, b.int(buckets))
        column = b("torch.aten.unsqueeze", wide64, digit, b.int(rank))
        onehot = b.convert(b("torch.aten.eq.Tensor", flags, column, digits), "si32")
        running = b("torch.aten.cumsum", wide, onehot, b.int(dim), b.int(SCALAR_TYPES["si32"]))
        counts = b("torch.aten.slice.Tensor", row, running, b.int(dim), last, length, one)
        before = b("torch.aten.sub.Tensor", row, b("torch.aten.cumsum", row, counts, b.int(rank),
                                                   b.int(SCALAR_TYPES["si32"])), counts, one)
        # The running count includes the element itself: its destination is one less.
        slots = b("torch.aten.sub.Scalar", wide, b("torch.aten.add.Tensor", wide, running,
                                                   before, one), one, one)
        taken = b("torch.aten.gather", vtensor_of([*dims, 1], "si32"), slots, b.int(rank),
                  column, b.bool(False))
        destination = b.convert(b("torch.aten.squeeze.dim", vtensor_of(dims, "si32"), taken,
                                  b.int(rank)), "si64")
        positions = b("torch.aten.scatter.src", full,
                      b("torch.aten.zeros_like", full, positions, b.none, b.none, b.none, b.none,
                        b.none), b.int(dim), destination, positions)
        if shift + _RADIX_BITS < 32:
            keys = b("torch.aten.gather", full, unsigned, b.int(dim), positions, b.bool(False))
    return positions


def _network_positions(b: TorchBuilder, order: ir.Value, x: ir.Value, dim: int,
                       descending: bool, width: int) -> ir.Value:
    """`_sorted_positions` along dim `dim` (static, or dynamic of at most `width` elements) by
    a bitonic sorting network over the keys `order * 2**32 + position` (unique: the network
    gives the stable order), padded to `width`, a power of two, with keys above every other.
    Each of its log2(width) (log2(width) + 1) / 2 steps compares each key with its partner at
    a distance and keeps the least or the greatest: about one elementwise dispatch over the
    rows (the partner a flip of a view), O(n log^2 n) work in all where IREE's sort is
    O(n^2)."""
    dims = list(type_dims(x.type))
    rank, length = len(dims), dims[dim]
    if descending:  # ascending order of the complement
        order = b("torch.aten.bitwise_not", order.type, order)
    padded = vtensor_of([width if i == dim else d for i, d in enumerate(dims)], "si64")
    positions = _positions(b, x, dim, descending=False, width=width)
    keys = order
    if length != width:
        # A static width over a length known at run time: the pad's own length is dynamic.
        size = b.size(x, dim) if length is None else b.int(length)
        pads = [b.int(0)] * (2 * (rank - dim))
        pads[-1] = b("torch.aten.sub.int", ir.Type.parse("!torch.int"), b.int(width), size) \
            if length is None else b.int(width - length)
        keys = b("torch.aten.constant_pad_nd", padded, order, b.ints(pads), b.int(0))
        past = b("torch.aten.ge.Scalar", vtensor_of(type_dims(positions.type), "i1"), positions,
                 size)
        keys = b("torch.aten.masked_fill.Scalar", padded, keys, past, b.int(_NAN_KEY))
    keys = _keys(b, keys, positions)
    for level in range(1, width.bit_length()):
        for step in reversed(range(level)):
            keys = _merge_step(b, keys, positions, dim, 2 ** level, 2 ** step)
    if length != width:
        keys = b("torch.aten.slice.Tensor", vtensor_of(dims, "si64"), keys, b.int(dim), b.int(0),
                 size, b.int(1))
    return _index_of(b, keys, descending=False)


def _rank_positions(b: TorchBuilder, order: ir.Value, x: ir.Value, dim: int,
                    descending: bool) -> ir.Value:
    """`_sorted_positions` along dim `dim` by ranks: each key of `order * 2**32 + position`
    (unique) counts the keys below it, which is where it goes, and each place then takes the
    position whose rank it is. O(n^2) work a row, like IREE's sort, in two reductions over
    all pairs, where a network takes a dispatch a step and the choice of its width a branch
    (for a few rows of a short length, `_RANK_ROWS`)."""
    dims = list(type_dims(x.type))
    if descending:  # ascending order of the complement
        order = b("torch.aten.bitwise_not", order.type, order)
    positions = _positions(b, x, dim, descending=False)
    keys = _keys(b, order, positions)

    def along(value: ir.Value, axis: int) -> ir.Value:  # a dim of 1 inserted at `axis`
        shape = type_dims(value.type)
        return b("torch.aten.unsqueeze", vtensor_of([*shape[:axis], 1, *shape[axis:]], "si64"),
                 value, b.int(axis))

    # dim `dim` holds each element (its place, for the second), dim `dim + 1` the others
    pairs = [*dims[:dim + 1], dims[dim], *dims[dim + 1:]]
    below = b("torch.aten.lt.Tensor", vtensor_of(pairs, "i1"), along(keys, dim),
              along(keys, dim + 1))
    taken = b("torch.aten.eq.Tensor", vtensor_of(pairs, "i1"),
              along(_count(b, below, dims, dim), dim), along(positions, dim + 1))
    chosen = b("torch.aten.where.ScalarOther", vtensor_of(pairs, "si64"), taken,
               along(positions, dim), b.int(0))
    return _count(b, chosen, dims, dim)


def _count(b: TorchBuilder, x: ir.Value, dims: list, dim: int) -> ir.Value:
    """The int64 sum of `x` over dim `dim + 1`."""
    return b("torch.aten.sum.dim_IntList", vtensor_of(dims, "si64"), x,
             b.ints([b.int(dim + 1)]), b.bool(False), b.int(SCALAR_TYPES["si64"]))


def _merge_step(b: TorchBuilder, keys: ir.Value, positions: ir.Value, dim: int, size: int,
                distance: int) -> ir.Value:
    """One compare-exchange step of the bitonic network: the key at position i against the
    one at i ^ distance, the least kept at the lower position of the pair where the block of
    `size` holding them sorts ascending (its position's `size` bit clear), else the greatest.
    `positions`: 0, 1, ... along `dim`, shaped to broadcast."""
    flags = vtensor_of(type_dims(positions.type), "i1")
    # The partner at i ^ distance: the pairs as a dim of 2 in a view, flipped. (Gathered
    # through an `index_select` of i ^ distance instead, 20% faster, the steps fused into
    # the next step's gathers, recomputed at every gathered position: IREE took 16 GB and
    # did not finish compiling a network of 64. Behind a barrier, as fast as the flip, and
    # two or three steps a dispatch, gathering each key at i ^ each sum of their distances,
    # slower: 0.21 -> 0.23, 0.33 ms for 4 x 1000 keys.)
    dims = list(type_dims(keys.type))
    sizes = [b.size(keys, i) for i in range(len(dims))]  # the other dims may be dynamic
    pair = [dims[dim] // (2 * distance), 2, distance]
    split = [*dims[:dim], *pair, *dims[dim + 1:]]
    pairs = b("torch.aten.view", vtensor_of(split, "si64"), keys,
              b.ints([*sizes[:dim], *(b.int(d) for d in pair), *sizes[dim + 1:]]))
    swapped = b("torch.aten.flip", pairs.type, pairs, b.ints([b.int(dim + 1)]))
    partner = b("torch.aten.view", keys.type, swapped, b.ints(sizes))

    def clear(bit: int) -> ir.Value:
        masked = b("torch.aten.bitwise_and.Scalar", positions.type, positions, b.int(bit))
        return b("torch.aten.eq.Scalar", flags, masked, b.int(0))

    least = b("torch.aten.eq.Tensor", flags, clear(distance), clear(size))
    return b("torch.aten.where.self", keys.type, least,
             b("torch.aten.minimum", keys.type, keys, partner),
             b("torch.aten.maximum", keys.type, keys, partner))


def _keys(b: TorchBuilder, order: ir.Value, positions: ir.Value) -> ir.Value:
    """`order * 2**32 + positions` (`order` in int32's range; `positions` from `_positions`):
    unique keys that sort as a stable sort does."""
    return b("torch.aten.add.Tensor", order.type,
             b("torch.aten.mul.Scalar", order.type, order, b.int(_LOW)), positions, b.int(1))


def _index_of(b: TorchBuilder, keys: ir.Value, descending: bool) -> ir.Value:
    """The positions the keys of `_keys` carry."""
    indices = b("torch.aten.remainder.Scalar", keys.type, keys, b.int(_LOW))
    if descending:
        indices = b("torch.aten.rsub.Scalar", indices.type, indices, b.int(_LOW - 1), b.int(1))
    return indices


def _positions(b: TorchBuilder, x: ir.Value, dim: int, descending: bool,
               width: int | None = None) -> ir.Value:
    """0, 1, ... along `dim` of `x`, or up to `width` where given (n - 1 - i from the top when
    `descending`: among equal values the lower index gets the larger key), shaped to broadcast
    against `x`."""
    dims = type_dims(x.type)
    n = dims[dim] if width is None else width
    length = b.size(x, dim) if width is None else b.int(width)
    iota = b("torch.aten.arange", vtensor_of([n], "si64"), length, b.int(SCALAR_TYPES["si64"]),
             b.none, b.none, b.none)
    along = [1] * len(dims)
    along[dim] = n
    shape = b.ints([b.int(d) if d is not None else length for d in along])
    iota = b("torch.aten.view", vtensor_of(along, "si64"), iota, shape)
    if descending:
        iota = b("torch.aten.rsub.Scalar", iota.type, iota, b.int(_LOW - 1), b.int(1))
    return iota


def _rewrite(op: ir.Operation, sort: _Sort, ranges: ValueRanges, budget: _Budget) -> None:
    x = op.operands[0]
    dims, element = type_dims(x.type), element_type(x.type)
    dim = 0 if sort.dim is None else constant_int(op.operands[sort.dim])
    descending = False if sort.descending is None else constant_bool(op.operands[sort.descending])
    if not dims or dim is None or descending is None:
        return
    dim %= len(dims)
    packable = element in _FLOATS | _INTS or element == "si64" and _int32_range(ranges, x)
    if not packable and element not in _WIDE and op.name != "torch.operator":
        return  # IREE lowers it: keep it
    b = TorchBuilder(op)
    k = _small_k(op, sort, dim)
    if k is not None and (packable or element in _WIDE):
        order = _order(b, x) if packable else _order64(b, x)
        _take_top(b, op, sort, dim, _top_positions(b, order, x, dim, descending, k, packable))
        return
    plan = _plan(ranges, x, dim, budget, passes=1 if packable else 2)
    if packable:
        indices = _sorted_positions(b, _order(b, x), x, dim, descending, plan)
        values = None
    elif element in _WIDE:
        # 64 bits leave no room for the index: two sorts of 32-bit digits, the low digit
        # first, then (stably: the keys carry the positions of the first sort) the high one.
        high, low = _digits(b, _order64(b, x))
        first = _sorted_positions(b, low, x, dim, descending, plan)
        second = _sorted_positions(b, b("torch.aten.gather", high.type, high, b.int(dim), first,
                                        b.bool(False)), x, dim, descending, plan)
        indices = b("torch.aten.gather", first.type, first, b.int(dim), second, b.bool(False))
        values = None
    else:  # IREE's own sort, which it lowers
        values, indices = b.sort(x, dim, descending)
        if sort.k is not None:
            values = None  # the first k, gathered below
    if sort.k is not None:
        indices = b("torch.aten.slice.Tensor", op.results[sort.indices].type, indices,
                    b.int(dim), b.int(0), op.operands[sort.k], b.int(1))
    if sort.values is not None:
        result = op.results[sort.values]
        if values is None:
            values = b("torch.aten.gather", result.type, x, b.int(dim), indices, b.bool(False))
        result.replace_all_uses_with(values)
    if sort.indices is not None:
        op.results[sort.indices].replace_all_uses_with(indices)
        # A binding right after what it binds (`dync-tie-region-shapes` ties a tensor leaving
        # a branch, the choice of `_by_length`, there, and its uses read the tie).
        for binding in bindings(indices):
            binding.move_after(owner(indices))
    op.erase()


def _int32_range(ranges: ValueRanges, x: ir.Value) -> bool:
    """Whether every element of the int64 tensor `x` is proven to fit an int32 (a ball query's
    positions), so that it packs with its index into one key."""
    found = ranges.of(x)
    low, high = sympy.Integer(-(2 ** 31)), sympy.Integer(2 ** 31 - 1)
    return found is not None and all(ranges.at_most(low, e) for e in found.lows) \
        and all(ranges.at_most(e, high) for e in found.highs)


def _small_k(op: ir.Operation, sort: _Sort, dim: int) -> int | None:
    """How many leading elements along `dim` are used, when that is a constant of at most
    `_ROUNDS_MAX`: a `topk`'s k, or the longest of the leading slices a sort's results are
    only used through (a ball query's `sort(...)[0][..., :nsample]`)."""
    if sort.k is not None:
        k = constant_int(op.operands[sort.k])
        return k if k is not None and 0 < k <= _ROUNDS_MAX else None
    ends = []
    for index in (sort.values, sort.indices):
        for user in [] if index is None else users(op.results[index]):
            if user.name != "torch.aten.slice.Tensor" or user.operands[0] != op.results[index]:
                return None
            along, start, end, step = (constant_int(v) for v in list(user.operands)[1:5])
            rank = len(type_dims(op.operands[0].type))
            if along is None or along % rank != dim or start != 0 or step != 1 or end is None:
                return None
            ends.append(end)
    return max(ends) if ends and 0 < max(ends) <= _ROUNDS_MAX else None


class _Rounds:
    """What the k rounds of `_top_positions` share: the reductions along `dim` of tensors of
    `x`'s shape, each a dispatch of its own."""

    def __init__(self, b: TorchBuilder, x: ir.Value, dim: int, descending: bool):
        self.b = b
        dims = list(type_dims(x.type))
        self.full, self.flags = vtensor_of(dims, "si64"), vtensor_of(dims, "i1")
        self.one = vtensor_of([1 if i == dim else d for i, d in enumerate(dims)], "si64")
        self.along, self.keep = b.ints([b.int(dim)]), b.bool(True)
        self.best, self.worst = ("torch.aten.amax", "torch.aten.amin") if descending else (
            "torch.aten.amin", "torch.aten.amax")

    def fenced(self, value: ir.Value) -> ir.Value:
        # A reduction fused with a consumer that also reads its input keeps a whole row on
        # the stack in IREE ("exceeded stack allocation limit"), and IREE 3.13 miscomputed a
        # producer with an iota (a ball query's `where(mask, n, arange(n))`) fused into these
        # reductions past 64 elements: inputs and results go through barriers.
        return through_barrier(value, self.b.ip, self.b.loc)

    def reduce(self, name: str, x: ir.Value) -> ir.Value:
        return self.fenced(self.b(name, self.one, x, self.along, self.keep))

    def where(self, cond: ir.Value, x: ir.Value, y: ir.Value) -> ir.Value:
        return self.b("torch.aten.where.self", self.full, cond, x, y)

    def compare(self, name: str, x: ir.Value, y: ir.Value) -> ir.Value:
        return self.b(name, self.flags, x, y)


def _top_positions(b: TorchBuilder, order: ir.Value, x: ir.Value, dim: int, descending: bool,
                   k: int, packed: bool) -> ir.Value:
    """The positions along `dim` of the first `k` elements of a stable sort of `order` (int64,
    the shape of `x`), in k rounds: O(k n) where IREE's sort, a bubble sort on the CPU, is
    O(n^2). `packed` (`order` in int32's range): each round takes the least (greatest,
    `descending`) key `order * 2**32 + position` past the last round's, one reduction;
    else the least order not taken yet, then its first position, two."""
    r = _Rounds(b, x, dim, descending)
    picks = []
    if packed:
        keys = r.fenced(_keys(b, order, _positions(b, x, dim, descending)))
        # Keys already taken read as the row's worst: no sentinel is out of every key's range.
        hidden = r.reduce(r.worst, keys)
        after = "torch.aten.lt.Tensor" if descending else "torch.aten.gt.Tensor"
        for _ in range(k):
            left = keys if not picks else r.where(r.compare(after, keys, picks[-1]), keys, hidden)
            picks.append(r.reduce(r.best, left))
        return _index_of(b, _along(b, picks, x, dim), descending)
    positions = _positions(b, x, dim, descending=False)
    last = b("torch.aten.sub.int", ir.Type.parse("!torch.int"), b.size(x, dim), b.int(1))
    order = r.fenced(order)
    hidden = r.reduce(r.worst, order)
    taken = None
    for _ in range(k):
        left = order if taken is None else r.where(taken, hidden, order)
        chosen = r.compare("torch.aten.eq.Tensor", left, r.reduce(r.best, left))
        if taken is not None:
            chosen = b("torch.aten.logical_and", r.flags, chosen,
                       b("torch.aten.logical_not", r.flags, taken))
        # None chosen only once every element is taken (a sort's first k past its length,
        # which the slices after it drop): then the last position, never one out of range.
        first = b("torch.aten.where.ScalarOther", r.full, chosen, positions, last)
        pick = r.reduce("torch.aten.amin", first)
        hit = r.compare("torch.aten.eq.Tensor", positions, pick)
        taken = hit if taken is None else b("torch.aten.logical_or", r.flags, taken, hit)
        picks.append(pick)
    return _along(b, picks, x, dim)


def _along(b: TorchBuilder, picks: list[ir.Value], x: ir.Value, dim: int) -> ir.Value:
    """The rounds' picks (each 1 long along `dim`) concatenated along `dim`."""
    dims = list(type_dims(x.type))
    dims[dim] = len(picks)
    return b("torch.aten.cat", vtensor_of(dims, "si64"), b.tensors(picks), b.int(dim))


def _take_top(b: TorchBuilder, op: ir.Operation, sort: _Sort, dim: int,
              top: ir.Value) -> None:
    """Replace the results of `op` by the first elements at the positions `top`: a `topk`'s
    results as they are, a sort's through its leading slices, which read the first
    min(k, n) (a slice clamps at the length)."""
    x = op.operands[0]
    for index, positions in ((sort.values, False), (sort.indices, True)):
        if index is None:
            continue
        result = op.results[index]
        if not users(result):
            for binding in bindings(result):
                binding.erase()
            continue
        made = top if positions else b("torch.aten.gather", vtensor_type(x.type, type_dims(top.type)),
                                       x, b.int(dim), top, b.bool(False))
        if sort.k is not None:
            result.replace_all_uses_with(made)
            continue
        dims = list(type_dims(made.type))
        dims[dim] = None
        clamped = b("torch.aten.slice.Tensor", vtensor_type(made.type, dims), made, b.int(dim),
                    b.int(0), b.size(x, dim), b.int(1))
        for user in users(result):
            user.operands[0] = clamped
        for binding in bindings(result):
            binding.erase()
    op.erase()
