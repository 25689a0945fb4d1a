"""`dync.analysis.value_ranges`: what it proves and, as much, what it refuses to — a proof
that an index is in range removes its run-time check, so every refusal below is a check
that must stay."""

import sympy
from iree.compiler import ir

from dync.analysis.value_ranges import ValueRanges, dim_size
from dync.dialects.symbolic import symbol
from dync.dialects.walk import functions, nested_ops

IR = """
func.func @f(%x: !torch.vtensor<[?,4],f32>, %keys: !torch.vtensor<[?],si64>,
             %logits: !torch.vtensor<[?,?],f32>, %n: !torch.int) -> () {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %t = torch.symbolic_int "t" {min_val = 1, max_val = 8} : !torch.int
  %u = torch.symbolic_int "u" {min_val = 0, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %x, [%s], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
  torch.bind_symbolic_shape %logits, [%s, %t], affine_map<()[s0, s1] -> (s0, s1)> : !torch.vtensor<[?,?],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %none = torch.constant.none
  %false = torch.constant.bool false
  %rows = torch.aten.size.int %x, %int0 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.int
  %row = torch.aten.remainder.Scalar %keys, %rows {name = "row"} : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %by_u = torch.aten.remainder.Scalar %keys, %u {name = "by_u"} : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %by_n = torch.aten.remainder.Scalar %keys, %n {name = "by_n"} : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %plus = torch.aten.add.Scalar %row, %int1, %int1 {name = "plus"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  %thrice = torch.aten.mul.Scalar %row, %int3 {name = "thrice"} : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %col = torch.aten.argmax %logits, %int1, %false {name = "col"} : !torch.vtensor<[?,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?],si64>
  %flat = torch.aten.argmax %logits, %none, %false {name = "flat"} : !torch.vtensor<[?,?],f32>, !torch.none, !torch.bool -> !torch.vtensor<[],si64>
  %held = torch.aten.clamp %keys, %int0, %rows {name = "held"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  %back = torch.aten.sub.Scalar %row, %int1, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  %from_0 = torch.aten.clamp %back, %int0, %none {name = "from_0"} : !torch.vtensor<[?],si64>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
  %last = torch.aten.sub.int %rows, %int1 : !torch.int, !torch.int -> !torch.int
  %to_last = torch.aten.clamp %plus, %none, %last {name = "to_last"} : !torch.vtensor<[?],si64>, !torch.none, !torch.int -> !torch.vtensor<[?],si64>
  %above = torch.aten.gt.Scalar %logits, %int0 : !torch.vtensor<[?,?],f32>, !torch.int -> !torch.vtensor<[?,?],i1>
  torch.bind_symbolic_shape %above, [%s, %t], affine_map<()[s0, s1] -> (s0, s1)> : !torch.vtensor<[?,?],i1>
  %dims1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %count = torch.aten.sum.dim_IntList %above, %dims1, %false, %none {name = "count"} : !torch.vtensor<[?,?],i1>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],si64>
  %no_dims = torch.prim.ListConstruct : () -> !torch.list<int>
  %all_dims = torch.aten.sum.dim_IntList %above, %no_dims, %false, %none {name = "all_dims"} : !torch.vtensor<[?,?],i1>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[],si64>
  %total = torch.aten.sum %above, %none {name = "total"} : !torch.vtensor<[?,?],i1>, !torch.none -> !torch.vtensor<[],si64>
  %true = torch.constant.bool true
  %argsorted = torch.aten.argsort %logits, %int1, %false {name = "argsorted"} : !torch.vtensor<[?,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?,?],si64>
  %stable = torch.operator "torch.aten.argsort.stable"(%logits, %true, %int1, %false) : (!torch.vtensor<[?,?],f32>, !torch.bool, !torch.int, !torch.bool) -> !torch.vtensor<[?,?],si64>
  %int4 = torch.constant.int 4
  %as_int = torch.aten.to.dtype %above, %int4, %false, %false, %none : !torch.vtensor<[?,?],i1>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?,?],si64>
  torch.bind_symbolic_shape %as_int, [%s, %t], affine_map<()[s0, s1] -> (s0, s1)> : !torch.vtensor<[?,?],si64>
  %running = torch.aten.cumsum %as_int, %int1, %none {name = "running"} : !torch.vtensor<[?,?],si64>, !torch.int, !torch.none -> !torch.vtensor<[?,?],si64>
  %keys_running = torch.aten.cumsum %keys, %int0, %none {name = "keys_running"} : !torch.vtensor<[?],si64>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
  %col_start = torch.aten.mul.Scalar %col, %rows : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %flat_at = torch.aten.add.Tensor %col_start, %row, %int1 {name = "flat_at"} : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %keys_from_0 = torch.aten.clamp %keys, %int0, %none {name = "keys_from_0"} : !torch.vtensor<[?],si64>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
  %one_or_rows = torch.prim.min.int %rows, %int1 : !torch.int, !torch.int -> !torch.int
  %rows_less = torch.aten.sub.int %rows, %one_or_rows : !torch.int, !torch.int -> !torch.int
  %to_rows_less = torch.aten.clamp %keys, %int0, %rows_less {name = "to_rows_less"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  %n_or_rows = torch.prim.min.int %n, %rows : !torch.int, !torch.int -> !torch.int
  %to_n_or_rows = torch.aten.clamp %keys, %int0, %n_or_rows {name = "to_n_or_rows"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  %three_or_rows = torch.prim.max.int %rows, %int3 : !torch.int, !torch.int -> !torch.int
  %to_three_or_rows = torch.aten.clamp %keys, %int0, %three_or_rows {name = "to_three_or_rows"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  return
}
"""


def _named(module) -> dict[str, ir.Value]:
    return {ir.StringAttr(op.attributes["name"]).value: op.results[0]
            for op in nested_ops(functions(module)["f"]) if "name" in op.attributes}


def test_what_is_proven_and_what_is_not():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(IR)
        ranges, v = ValueRanges(module), _named(module)
        s, t = symbol("s"), symbol("t")
        x, keys = list(functions(module)["f"].regions[0].blocks[0].arguments)[:2]
        assert dim_size(x, 0) == s
        assert ranges.within(v["row"], s)  # remainder by the size it indexes
        assert not ranges.within(v["row"], s - 1)
        assert not ranges.within(v["plus"], s)  # one past the end
        assert ranges.within(v["plus"], s + 1)
        assert ranges.within(v["thrice"], 3 * s - 2) and not ranges.within(v["thrice"], 3 * s - 3)
        assert ranges.within(v["col"], t) and not ranges.within(v["col"], s)
        assert ranges.within(v["flat"], s * t)
        # An unbacked symbol may be 0 (sympy's symbols are positive: not relied on), and an
        # int argument of an entry point may be anything: no range for their remainders.
        assert ranges.of(v["by_u"]) is None and ranges.of(v["by_n"]) is None
        # Clamped to [0, s]: s itself is one past the end of s rows.
        assert ranges.within(v["held"], s + 1) and not ranges.within(v["held"], s)
        # A clamp on one side bounds that side; the other is the clamped value's.
        assert ranges.within(v["from_0"], s) and not ranges.within(v["from_0"], s - 2)
        assert ranges.within(v["to_last"], s) and ranges.of(v["keys_from_0"]) is None
        # argsort's positions, also where torch-mlir knows the op only as a torch.operator.
        assert ranges.within(v["argsorted"], t) and not ranges.within(v["argsorted"], t - 1)
        stable = next(op.results[0] for op in nested_ops(functions(module)["f"])
                      if op.name == "torch.operator")
        assert ranges.within(stable, t) and not ranges.within(stable, t - 1)
        # A running count of a mask (converted to int64 first): 0 to the dim's size.
        assert ranges.within(v["running"], t + 1) and not ranges.within(v["running"], t)
        assert ranges.of(v["keys_running"]) is None
        # A position times a size plus a position below it: into a flattened t x s table.
        assert ranges.within(v["flat_at"], s * t) and not ranges.within(v["flat_at"], s * t - 1)
        # A count of booleans: from 0 to as many as were summed (a bucket of `bucketize`).
        assert ranges.within(v["count"], t + 1) and not ranges.within(v["count"], t)
        assert ranges.within(v["total"], s * t + 1) and not ranges.within(v["total"], s * t)
        assert not ranges.within(v["all_dims"], s * t)  # dim=[]: every element, as torch's
        # Linear bounds are decided at the corners of the declared ranges; polynomials in
        # sizes (never negative) term by term: s*t - 1 >= 0 proves a clamp to the last row of
        # a flattened s x t table in range.
        assert ranges.at_most(s, 64) and not ranges.at_most(s, 63)
        assert ranges.at_most(s * t, sympy.Integer(512))
        assert not ranges.at_most(s * t, sympy.Integer(511))
        assert ranges.at_most(sympy.Integer(0), s * t - 1)
        assert not ranges.at_most(sympy.Integer(0), s * t - 3)  # s=2, t=1: -1
        assert not ranges.at_most(sympy.Integer(0), symbol("u") * t - 1)  # u may be 0
        # `sym_min`/`sym_max` of sizes: s - min(s, 1) is s - 1 (s >= 2); min(n, s) is at
        # most s whatever n is; max(s, 3) is at most 64, not at most s (s may be 2).
        assert ranges.within(v["to_rows_less"], s) and not ranges.within(v["to_rows_less"], s - 1)
        assert ranges.of(v["to_n_or_rows"]) is None  # n (an argument) may be below 0
        assert ranges.within(v["to_three_or_rows"], sympy.Integer(65))
        assert not ranges.within(v["to_three_or_rows"], s + 1)
        # Nonzero (a divisor needing no check): one past a position is at least 1.
        assert ranges.nonzero(v["plus"]) and not ranges.nonzero(v["row"])
        assert not ranges.nonzero(keys)
        # The keys themselves come from the caller: nothing bounds them.
        assert ranges.of(keys) is None


def test_a_symbol_declared_narrower_elsewhere_keeps_its_widest_range():
    """A proof must hold in every function: where one function declares `s` in [2, 8] and
    another in [2, 64], bounds over `s` use [2, 64] (not the intersection)."""
    narrower = IR.replace("@f(", "@g(").replace("max_val = 64} : !torch.int\n  %t",
                                                "max_val = 8} : !torch.int\n  %t")
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(IR + narrower)
        ranges, v = ValueRanges(module), _named(module)
        s = symbol("s")
        assert ranges.symbol_ranges["s"] == (2, 64)
        assert not ranges.at_most(s, 8) and not ranges.at_most(s, 63)
        assert ranges.within(v["row"], s)
        # A literal's values bound it: a splat and a small array.
        literal = ir.Module.parse("""
func.func @h() -> (!torch.vtensor<[3],si64>, !torch.vtensor<[2],si64>) {
  %0 = torch.vtensor.literal(dense<[4, -1, 2]> : tensor<3xsi64>) : !torch.vtensor<[3],si64>
  %1 = torch.vtensor.literal(dense<7> : tensor<2xsi64>) : !torch.vtensor<[2],si64>
  return %0, %1 : !torch.vtensor<[3],si64>, !torch.vtensor<[2],si64>
}""")
        small, splat = list(functions(literal)["h"].regions[0].blocks[0].operations)[:2]
        found = ValueRanges(literal)
        assert found.of(small.result) is not None and found.of(small.result).lows == (-1,)
        assert found.of(small.result).highs == (4,) and found.of(splat.result).exact() == 7


UNBACKED = """
func.func @f(%mask: !torch.vtensor<[?],i1>, %keys: !torch.vtensor<[?],si64>,
             %wide: !torch.vtensor<[?],si64>) -> () {
  %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
  %u0 = torch.symbolic_int "u0" {min_val = 0, max_val = 9223372036854775806} : !torch.int
  %u1 = torch.symbolic_int "u1" {min_val = 0, max_val = 9223372036854775806} : !torch.int
  torch.bind_symbolic_shape %mask, [%t], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
  torch.bind_symbolic_shape %keys, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %wide, [%t], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %cpu = torch.constant.device "cpu"
  %total = torch.aten.sum %mask, %none : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
  %n = torch.aten.item %total : !torch.vtensor<[],si64> -> !torch.int
  %table = torch.aten.arange %n, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %table, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %last = torch.aten.sub.int %n, %int1 : !torch.int, !torch.int -> !torch.int
  %slot = torch.aten.clamp %keys, %int0, %last {name = "slot"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %slot, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %wide_slot = torch.aten.clamp %wide, %int0, %last {name = "wide_slot"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %wide_slot, [%t], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %kept = torch.aten.ne.Scalar %keys, %int0 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
  torch.bind_symbolic_shape %kept, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
  %kept_total = torch.aten.sum %kept, %none : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
  %m = torch.aten.item %kept_total : !torch.vtensor<[],si64> -> !torch.int
  %first = torch.aten.slice.Tensor %keys, %int0, %int0, %m, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %first, [%u1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %first_slot = torch.aten.clamp %first, %int0, %last {name = "first_slot"} : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %first_slot, [%u1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  return
}
"""


def test_an_unbacked_size_is_its_symbol_where_it_makes_a_length():
    """`n = mask.sum().item()` makes `arange(n)`, a table n long (the trace names its length
    u0): an index clamped to [0, n - 1] is in that table wherever the index has an element
    (`_true_positions`' second nonzero over a data-dependent length, CTC's collapse of
    repeats). An index as long as u0 has an element only where u0 >= 1; a count of a mask
    over u0 elements is at most u0, so one as long as that count too; one as long as t (at
    least 2) may have elements where the table is empty: unproven."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(UNBACKED)
        ranges, v = ValueRanges(module), _named(module)
        u0 = symbol("u0")
        assert ranges.within(v["slot"], u0)
        assert not ranges.within(v["slot"], u0 - 1)
        assert ranges.within(v["first_slot"], u0)
        assert not ranges.within(v["wide_slot"], u0)
