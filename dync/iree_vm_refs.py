"""A workaround for an IREE 3.13 VM bug: one ref passed twice on one branch edge.

When two results of a region share one allocation (IREE packs a region's results into one
buffer), the VM module passes the same `!vm.ref` twice to one successor block:
``vm.br ^bb(%buf, %off0, %buf, %off1)``. The bytecode register allocator may coalesce one of
the two block arguments with the operand's register and mark the other remap a MOVE, which
clears that register: one of the two block arguments arrives null, and the first use of it
fails with ``ref is null`` (in ``hal.buffer_view.create`` when it is a result), on some
paths only. Upstream: iree-org/iree#24753, fix under review in iree-org/iree#24781; pinned
in ``lit/upstream/iree-vm-branch-repeated-ref.mlir``.

The workaround: compile to IREE's ``vm`` phase, give every repeated ref operand of a branch
a value of its own (``vm.select.ref %true, %v, %v``, a retained copy that no later pass folds:
the ``vm`` phase is the last before serialization), and serialize from there. With distinct
values the register allocator cannot alias a MOVE source with another argument.

This module imports iree.compiler and nothing of dync: `iree_worker.py`, run by path, uses it
too. Run as a script it reads VM-phase IR (text) on stdin and writes the mended IR to stdout,
for the lit test.
"""

from __future__ import annotations

import ctypes
import sys

from iree.compiler import ir
from iree.compiler.api import Session, ctypes_dl

_BRANCHES = ("vm.br", "vm.cond_br", "vm.br_table")


def set_phases(invocation, compile_from: str | None = None, compile_to: str | None = None) -> None:
    """Set an invocation's first and last pipeline phase (IREE's C API has them; the Python
    `Invocation` does not wrap them)."""
    dylib = ctypes_dl._dylib
    for name, phase in (("ireeCompilerInvocationSetCompileFromPhase", compile_from),
                        ("ireeCompilerInvocationSetCompileToPhase", compile_to)):
        if phase is None:
            continue
        function = getattr(dylib, name)
        function.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        function.restype = None
        function(invocation._inv_p, phase.encode())


def execute_through_vm(session: Session, invocation):
    """Run `invocation` (its input parsed or imported) to the ``vm`` phase, mend the module
    there, and run its serialization in a second invocation of `session`; returns that
    invocation, to write the vmfb from and close (None where the first phase failed). The
    caller closes `invocation`."""
    set_phases(invocation, compile_to="vm")
    if not invocation.execute():
        return None
    vm_module = invocation.export_module()
    copy_repeated_branch_refs(vm_module)
    serialize = session.invocation()
    serialize.import_module(vm_module)
    set_phases(serialize, compile_from="vm")
    if not serialize.execute():
        serialize.close()
        return None
    return serialize


def copy_repeated_branch_refs(module: ir.Operation) -> int:
    """Give each ref operand a branch passes more than once a copy of its own; returns how
    many copies were made."""
    branches: list[ir.Operation] = []

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if inner.name in _BRANCHES:
                        branches.append(inner.operation)
                    visit(inner.operation)

    visit(module)
    copies = 0
    for branch in branches:
        seen: set = set()
        for index, operand in enumerate(branch.operands):
            if not str(operand.type).startswith("!vm.ref"):
                continue
            if operand not in seen:
                seen.add(operand)
                continue
            with ir.InsertionPoint(branch), branch.location:
                true = ir.Operation.create(
                    "vm.const.i32", results=[ir.IntegerType.get_signless(32)],
                    attributes={"value": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)})
                copy = ir.Operation.create("vm.select.ref", results=[operand.type],
                                           operands=[true.result, operand, operand])
            branch.operands[index] = copy.result
            copies += 1
    return copies


def main() -> None:
    session = Session()  # its context knows IREE's dialects
    with session.context:
        module = ir.Module.parse(sys.stdin.read())
        copy_repeated_branch_refs(module.operation)
        sys.stdout.write(str(module))
    session.close()


if __name__ == "__main__":
    main()
