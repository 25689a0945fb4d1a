"""`dync-exact-loops`: make every `torch.prim.Loop` honour both its trip count and its condition.

Reads: `torch.prim.Loop` ops (from ONNX `Loop` or `torch.while_loop`). Writes: loops that
carry their own trip counter. Runs before `convert-torch-to-scf`, which keeps only half of
a loop's semantics: a loop whose initial condition is the constant true becomes an
`scf.for` that ignores the body's condition (no early exit), and any other loop becomes an
`scf.while` that ignores the trip count and leaves uses of the iteration number dangling
("null operand found"). Each loop that has both a trip count and a condition is rewritten
to carry its own counter `k` (starting at 0) in front of its values: the iteration number
is `k`, and the loop continues while `cond and k + 1 < trip_count` (initially
`cond and 0 < trip_count`).

A loop with a constant-true condition becomes an exact `scf.for` and is left alone, unless it
grows a carried tensor (yields it concatenated to itself): IREE 3.13 gives an `scf.for` whose
carried tensor changes shape the shape it started with (an ONNX Loop that concatenates a row
per trip to an empty tensor returned it empty; `lit/upstream/iree-scf-for-growing-tensor.mlir`),
so such a loop gets the counter too and becomes an `scf.while`, which IREE gets right. (A
carried tensor that shrinks, by a slice, is not detected.) Also left alone:
loops with an unbounded trip count whose iteration number is unused (what `torch.while_loop`
produces).
No paper section: this repairs an upstream lowering so that dync IR's scf loops are exact.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import element_type, type_dims
from ..dialects.walk import ops_named
from .pipeline import Pass

INT64_MAX = 2**63 - 1


def _is_true(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation
    return op.name == "torch.constant.bool" and ir.BoolAttr(op.attributes["value"]).value


def _constant_int(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "torch.constant.int":
        return None
    return ir.IntegerAttr(owner.operation.attributes["value"]).value


def _grows(loop: ir.Operation) -> bool:
    """Whether a carried tensor with a dynamic dim is yielded concatenated to itself (the
    growing values `torch.cat` in a loop and ONNX Loop scan outputs make)."""
    body = loop.regions[0].blocks[0]
    condition = list(body.operations)[-1]
    carried = list(body.arguments)[1:]
    for arg, yielded in zip(carried, list(condition.operands)[1:], strict=True):
        if element_type(arg.type) is None or None not in (type_dims(arg.type) or [None]):
            continue
        owner = yielded.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "torch.aten.cat":
            continue
        pieces = owner.operation.operands[0].owner
        if not isinstance(pieces, ir.Block) and arg in list(pieces.operation.operands):
            return True
    return False


def _needs_counter(loop: ir.Operation) -> bool:
    body = loop.regions[0].blocks[0]
    condition = list(body.operations)[-1]
    if _is_true(loop.operands[1]) and _is_true(condition.operands[0]):
        return _grows(loop)
    unbounded = _constant_int(loop.operands[0]) == INT64_MAX
    return not (unbounded and not list(body.arguments[0].uses))


class ExactLoops(Pass):
    name = "dync-exact-loops"
    summary = "give torch.prim.Loop ops with a data-dependent condition their own trip counter"

    def run(self, module: ir.Operation) -> None:
        for loop in ops_named(module, "torch.prim.Loop", post_order=True):  # inner first
            if _needs_counter(loop):
                body = loop.regions[0].blocks[0]
                _count_trips(loop, body, list(body.operations)[-1])


def _count_trips(loop: ir.Operation, body: ir.Block, condition: ir.Operation) -> None:
    int_t = ir.Type.parse("!torch.int")
    bool_t = ir.Type.parse("!torch.bool")
    i64 = ir.IntegerType.get_signless(64)
    loc = loop.location

    def op(
        name: str, operands: list[ir.Value], result: ir.Type, ip: ir.InsertionPoint, **attrs
    ) -> ir.Value:
        return ir.Operation.create(
            name, results=[result], operands=operands, attributes=attrs, loc=loc, ip=ip
        ).result

    before = ir.InsertionPoint(loop)
    zero = op("torch.constant.int", [], int_t, before, value=ir.IntegerAttr.get(i64, 0))
    one = op("torch.constant.int", [], int_t, before, value=ir.IntegerAttr.get(i64, 1))
    trips = loop.operands[0]
    any_trip = op("torch.aten.lt.int", [zero, trips], bool_t, before)
    start = op("torch.aten.__and__.bool", [loop.operands[1], any_trip], bool_t, before)
    inits = list(loop.operands)[2:]
    new = ir.Operation.create(
        "torch.prim.Loop",
        results=[int_t] + [r.type for r in loop.results],
        operands=[trips, start, zero] + inits,
        regions=1,
        loc=loc,
        ip=before,
    )
    arg_types = [int_t, int_t] + [a.type for a in list(body.arguments)[1:]]
    new_body = new.regions[0].blocks.append(*arg_types, arg_locs=[loc] * len(arg_types))
    counter = new_body.arguments[1]
    body.arguments[0].replace_all_uses_with(counter)  # iteration number := counter
    for old_arg, new_arg in zip(
        list(body.arguments)[1:], list(new_body.arguments)[2:], strict=True
    ):
        old_arg.replace_all_uses_with(new_arg)
    for inner in list(body.operations)[:-1]:
        new_body.append(inner.operation)
    at_end = ir.InsertionPoint(new_body)
    next_count = op("torch.aten.add.int", [counter, one], int_t, at_end)
    more_trips = op("torch.aten.lt.int", [next_count, trips], bool_t, at_end)
    keep_going = op("torch.aten.__and__.bool", [condition.operands[0], more_trips], bool_t, at_end)
    ir.Operation.create(
        "torch.prim.Loop.condition",
        operands=[keep_going, next_count] + list(condition.operands)[1:],
        loc=loc,
        ip=at_end,
    )
    for old, replacement in zip(loop.results, list(new.results)[1:], strict=True):
        old.replace_all_uses_with(replacement)
    loop.erase()
