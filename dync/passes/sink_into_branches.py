"""`dync-sink-into-branches`: work that only an `scf.if`'s branches read runs inside them
(DyCL §5.3: a sub-DNN per branch of the host skeleton; SoD² §4.3: control flow bounds the
execution plan).

Reads (before `dync-split-subdnns`): every block's `scf.if` ops and the ops before them.

IREE forms its execution regions by data dependence alone: work before a branch that the
condition does not need still runs in the region that computes the condition, and IREE
allocates that region's results together, in one buffer that lives as long as the
longest-lived of them. Measured on BlockDrop: the policy network (read by every later block)
and the ResNet stem (read by the first block only) shared one allocation, so the stem's
64 KiB output stayed allocated through all nine blocks.

Writes: for each `scf.if`, the movable ops before it (`analysis.movable.fixed` ops,
host reads excepted, bound the search) whose results are read only inside the `scf.if`'s
regions or by other such ops are cloned, in their order, to the top of each branch that
reads them (with the bindings of their results), and erased before the `scf.if`. A branch
that does not read them does not compute them; one that does computes them after the
condition is read, in its own execution region. Constants stay where they are.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.movable import fixed
from ..analysis.op_kinds import CONSTANT_OPS, HOST_READS
from ..analysis.tensor_sizes import TensorSizes
from ..dialects.torch_ops import BIND, owner, users
from ..dialects.walk import functions, nested_ops, ops_named
from .pipeline import Pass


class SinkIntoBranches(Pass):
    name = "dync-sink-into-branches"
    summary = "move the work only an scf.if's branches read into those branches"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            sizes = TensorSizes(func)
            # (gathered first: sinking erases ops a walk would visit)
            for if_op in ops_named(func, "scf.if", post_order=True):
                if _sink(if_op, sizes):
                    sizes = TensorSizes(func)   # its cache holds values of erased ops


def _sinkable(if_op: ir.Operation, sizes: TensorSizes,
              inside: set[ir.Operation]) -> list[ir.Operation]:
    """The ops before `if_op` in its block, up to the previous fixed op, whose results are
    read only `inside` it or by other such ops (program order)."""
    ops = [op.operation for op in if_op.block.operations]
    before: list[ir.Operation] = []
    for op in reversed(ops[:ops.index(if_op)]):
        if fixed(op, sizes) and op.name not in HOST_READS:
            break
        before.append(op)
    chosen: set[ir.Operation] = set()
    for op in before:   # last first: a user is decided before what it reads
        if op.name in CONSTANT_OPS or op.name in HOST_READS or op.name == BIND \
                or not op.operands or not op.results:
            continue
        if all(u.operation in chosen or u.operation in inside
               for r in op.results for u in users(r)):
            chosen.add(op)
    chosen.update(op for op in before if op.name == BIND and owner(op.operands[0]) in chosen)
    return [op for op in reversed(before) if op in chosen]


def _sink(if_op: ir.Operation, sizes: TensorSizes) -> bool:
    """Sink what only `if_op`'s branches read into them; whether anything moved."""
    # Decided before anything changes: an op's hash follows its operands.
    branches = [{op for block in region.blocks for top in block.operations
                 for op in [top.operation, *nested_ops(top.operation)]}
                for region in if_op.regions]
    ops = _sinkable(if_op, sizes, set().union(*branches))
    plans = []
    for region, inside in zip(if_op.regions, branches, strict=True):
        needed = _needed(ops, inside)
        uses = [(op_index, k, use.owner, use.operand_number)
                for op_index, op in enumerate(needed) for k, r in enumerate(op.results)
                for use in r.uses if use.owner.operation in inside]
        plans.append((region.blocks[0], needed, uses))
    for block, needed, uses in plans:
        if not needed:
            continue
        ip = ir.InsertionPoint(block.operations[0])
        mapping: dict[ir.Value, ir.Value] = {}
        clones = []
        for op in needed:
            clone = op.clone(ip=ip)
            for i, v in enumerate(clone.operands):
                if v in mapping:
                    clone.operands[i] = mapping[v]
            mapping.update(zip(op.results, clone.results, strict=True))
            clones.append(clone)
        for op_index, k, user, operand in uses:
            user.operands[operand] = clones[op_index].results[k]
    for op in reversed(ops):
        op.erase()
    return bool(ops)


def _needed(ops: list[ir.Operation], inside: set[ir.Operation]) -> list[ir.Operation]:
    """The ops of `ops` whose results ops `inside` read, directly or through each other,
    with the bindings of their results (program order)."""
    members = set(ops)
    stack = [op for op in ops for r in op.results for u in r.uses
             if u.owner.operation in inside]
    needed: set[ir.Operation] = set()
    while stack:
        op = stack.pop()
        if op not in needed:
            needed.add(op)
            stack.extend(d for v in op.operands if (d := owner(v)) in members)
    needed.update(op for op in ops if not op.results
                  and any(owner(v) in needed for v in op.operands))
    return [op for op in ops if op in needed]
