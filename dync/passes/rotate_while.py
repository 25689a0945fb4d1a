"""`dync-rotate-while`: rewrite forwarding `scf.while` loops as `scf.if (cond) { do-while }`.

Reads: `scf.while` ops whose "before" region only forwards its arguments (what
`convert-torch-to-scf` makes of a while-like `torch.prim.Loop`). Writes the equivalent
guarded do-while, whose before region is the loop body.

Why: such a before region carries one value (the i1 condition) more than the loop's
results, and IREE 3.13's stream conversion mis-assigns the region arguments of such loops
when they carry scalars ("failed to legalize unresolved target materialization from
('i64') to ('!stream.resource<*>', 'index')", the family of iree-org/iree#24722). In the
rotated form all regions carry the same values. No paper section: a lowering repair.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.walk import ops_named
from .pipeline import Pass


class RotateWhile(Pass):
    name = "dync-rotate-while"
    summary = "turn forwarding scf.while loops into scf.if + do-while (a form IREE compiles)"

    def run(self, module: ir.Operation) -> None:
        for loop in ops_named(module, "scf.while", post_order=True):  # inner loops first
            _rotate_while(loop)


def _rotate_while(loop: ir.Operation) -> None:
    before = loop.regions[0].blocks[0]
    after = loop.regions[1].blocks[0]
    before_ops = list(before.operations)
    if len(before_ops) != 1:
        return  # the before region does real work: already a do-while
    forwarded = list(before_ops[0].operands)
    if forwarded != list(before.arguments):
        return
    loc = loop.location
    types = [r.type for r in loop.results]
    inits = list(loop.operands)
    # The do-while carries values of static shape first, those of a dynamic shape after them.
    order = sorted(range(len(types)), key=lambda i: _dynamic(types[i]))
    where = {k: j for j, k in enumerate(order)}  # original position -> carried position
    guard = ir.Operation.create(
        "scf.if", results=types, operands=[inits[0]], regions=2, loc=loc, ip=ir.InsertionPoint(loop)
    )
    then_block = guard.regions[0].blocks.append()
    else_block = guard.regions[1].blocks.append()
    carried = [types[k] for k in order]
    rotated = ir.Operation.create(
        "scf.while",
        results=carried,
        operands=[inits[1 + k] for k in order],
        regions=2,
        loc=loc,
        ip=ir.InsertionPoint(then_block),
    )
    ir.Operation.create(
        "scf.yield", operands=[rotated.results[where[k]] for k in range(len(types))], loc=loc,
        ip=ir.InsertionPoint(then_block)
    )
    ir.Operation.create("scf.yield", operands=inits[1:], loc=loc, ip=ir.InsertionPoint(else_block))
    body = rotated.regions[0].blocks.append(*carried, arg_locs=[loc] * len(types))
    forward = rotated.regions[1].blocks.append(*carried, arg_locs=[loc] * len(types))
    ir.Operation.create(
        "scf.yield", operands=list(forward.arguments), loc=loc, ip=ir.InsertionPoint(forward)
    )
    for k, old in enumerate(after.arguments):
        old.replace_all_uses_with(body.arguments[where[k]])
    after_ops = list(after.operations)
    for op in after_ops[:-1]:
        body.append(op.operation)
    condition, *nexts = after_ops[-1].operands
    ir.Operation.create(
        "scf.condition", operands=[condition, *(nexts[k] for k in order)], loc=loc,
        ip=ir.InsertionPoint(body)
    )
    for old, new in zip(loop.results, guard.results, strict=True):
        old.replace_all_uses_with(new)
    loop.erase()


def _dynamic(type_: ir.Type) -> bool:
    return isinstance(type_, ir.ShapedType) and not ir.ShapedType(type_).has_static_shape
