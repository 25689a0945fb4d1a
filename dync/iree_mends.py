"""Workarounds for IREE 3.13 bugs and costs, applied to the module between IREE's compile phases.

**One value under two workload ordinals** (``flow`` phase). When a dispatch's workload lists one
value twice (a copy into a slice, a `cat`, a `pad` or a `slice_scatter` whose two dynamic dims
are the same symbols in source and destination: ``[b, n, b, n]``), IREE's
``iree-stream-fold-uniform-operands`` drops the repeats and renumbers the workload ordinals in
the executable, but gives every dropped ordinal the new number 0 instead of its survivor's: the
`n` of ``[b, n, b, n]`` is read as `b`, the workgroup count covers `b` tiles of `n`, and the
rest of the result is never written (zeros, or garbage in a reused buffer). DGCNN's edge
features, ``torch.cat((feature - x, x), dim=3)`` over a dynamic batch and point count, came out
wrong past 64 points. Pinned in ``lit/upstream/iree-fold-uniform-workload-ordinals.mlir``.
The workaround: compile to the ``flow`` phase and pass each repeat of a dispatch's workload
through a `util.optimization_barrier` of its own. The values then differ, IREE folds none of
them, and every ordinal keeps its number; the cost is one more push constant per repeat.

**One ref passed twice on one branch edge** (``vm`` phase). When two results of a region share
one allocation (IREE packs a region's results into one buffer), the VM module passes the same
`!vm.ref` twice to one successor block: ``vm.br ^bb(%buf, %off0, %buf, %off1)``. The bytecode
register allocator may coalesce one of the two block arguments with the operand's register
and mark the other remap a MOVE, which clears that register: one of the two block arguments
arrives null, and the first use of it fails with ``ref is null`` (in
``hal.buffer_view.create`` when it is a result), on some paths only. Upstream:
iree-org/iree#24753, fix under review in iree-org/iree#24781; pinned in
``lit/upstream/iree-vm-branch-repeated-ref.mlir``. The workaround: compile to IREE's ``vm``
phase, give every repeated ref operand of a branch a value of its own (``vm.select.ref %true,
%v, %v``, a retained copy that no later pass folds: the ``vm`` phase is the last before
serialization), and serialize from there. With distinct values the register allocator cannot
alias a MOVE source with another argument.

**An export looked up by name at every dispatch** (``hal`` phase). A command buffer IREE
cannot memoize (any dispatch of a dynamic shape) is recorded at every call, and each of its
dispatches first resolves its function with ``hal.executable.lookup.function``: a linear scan
of the executable's exports comparing names (`strlen` and `memcmp` over every name). With all
of a module's dispatches linked into one executable, the scan grows with the module: one
bucket version of yolo_nms ran 0.87 ms alone in a module and 1.96 ms among 16 versions (2054
exports; `perf`: `strlen` 36% and `memcmp` 11% of the time, under
``iree_hal_executable_library_lookup_export_by_name``). The mend: each (executable, function)
a function body looks up becomes a global that an initializer right after the executable's own
sets once (before the initializers that record memoized command buffers through functions),
and the body loads the global.

**f64 literals truncated** (before import). Without f64 in a module's interface IREE demotes
f64 to f32 (`--iree-input-demote-f64-to-f32`), and converts each f64 constant rounding toward
zero: a Python float in the model (`x * 0.1`, `x + 43758.5453`, the literals of torch's own
decompositions) became the float32 just below eager's (round to nearest), 1 ulp off in most
results (`x * 0.1`: 120 of 128 elements), which a hash-style noise `frac(sin(x) * 43758.5)`
magnified to 1.8. The mend (`nearest_f32_literals`): each `torch.constant.float` that is not a
float32 already becomes its nearest float32 first, which the demotion keeps exactly.

This module imports iree.compiler and nothing of dync: `iree_worker.py`, run by path, uses it
too. Run as a script, ``python -m dync.iree_mends flow|hal|vm``, it reads that phase's IR (text)
on stdin and writes the mended IR to stdout, for the lit tests.
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
    """Run `invocation` (its input parsed or imported) to the ``vm`` phase, with the mends of
    the module docstring at the end of the ``flow``, ``hal`` and ``vm`` phases, and run its
    serialization in a last invocation of `session`; returns that invocation, to write the
    vmfb from and close (None where a phase failed). The caller closes `invocation`."""
    set_phases(invocation, compile_to="flow")
    if not invocation.execute():
        return None
    module = invocation.export_module()  # each later invocation borrows it and works in place
    distinct_workloads(module)
    for phase, next_phase, mend in (("flow", "hal", hoist_function_lookups),
                                    ("hal", "vm", copy_repeated_branch_refs)):
        step = session.invocation()
        try:
            step.import_module(module)
            set_phases(step, compile_from=phase, compile_to=next_phase)
            if not step.execute():
                return None
        finally:
            step.close()
        mend(module)
    serialize = session.invocation()
    serialize.import_module(module)
    set_phases(serialize, compile_from="vm")
    if not serialize.execute():
        serialize.close()
        return None
    return serialize


def _nested(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _nested(inner.operation)


def nearest_f32_literals(module: ir.Operation) -> int:
    """Round each `torch.constant.float` to the nearest float32 (kept as an f64 attribute);
    returns how many changed."""
    import struct

    changed = 0
    f64 = ir.F64Type.get()
    for op in _nested(module):
        if op.name != "torch.constant.float":
            continue
        value = ir.FloatAttr(op.attributes["value"]).value
        nearest = struct.unpack("f", struct.pack("f", value))[0] if abs(value) <= _F32_MAX \
            else value
        if nearest != value:
            op.attributes["value"] = ir.FloatAttr.get(f64, nearest)
            changed += 1
    return changed


_F32_MAX = 3.4028234663852886e38


def distinct_workloads(module: ir.Operation) -> int:
    """Pass each repeat of a value in a `flow.dispatch`'s workload through a
    `util.optimization_barrier` of its own; returns how many were."""
    dispatches = [op for op in _nested(module) if op.name == "flow.dispatch"]
    repeats = 0
    for dispatch in dispatches:
        count = list(dispatch.attributes["operandSegmentSizes"])[0]
        seen: set = set()
        for index in range(count):
            value = dispatch.operands[index]
            if value not in seen:
                seen.add(value)
                continue
            with ir.InsertionPoint(dispatch), dispatch.location:
                barrier = ir.Operation.create("util.optimization_barrier",
                                              results=[value.type], operands=[value])
            dispatch.operands[index] = barrier.result
            repeats += 1
    return repeats


def hoist_function_lookups(module: ir.Operation) -> int:
    """Set each (executable global, function) that a function body looks up once, in an
    initializer right after the executable's own, and have the bodies load it; returns how
    many lookups now load a global."""
    with module.context:
        return _hoist_function_lookups(module.regions[0].blocks[0])


def _hoist_function_lookups(body: ir.Block) -> int:
    setters = _global_setters(body)
    found: dict[tuple[str, str], ir.Attribute] = {}  # -> the global holding the function id
    initializers: dict[str, ir.Block] = {}  # executable global -> the initializer of its ids
    hoisted = 0
    for func in [op.operation for op in body.operations if op.operation.name == "util.func"]:
        for lookup in [op for op in _nested(func) if op.name == "hal.executable.lookup.function"]:
            source = lookup.operands[0].owner
            if isinstance(source, ir.Block) or source.name != "util.global.load":
                continue
            source = source.operation
            executable = str(source.attributes["global"])
            if executable not in setters:
                continue
            key = (executable, str(lookup.attributes["entry_point"]))
            if key not in found:
                if executable not in initializers:
                    initializers[executable] = _initializer_after(body, setters[executable])
                found[key] = _function_id_global(body, initializers[executable], source,
                                                 lookup, len(found))
            with ir.InsertionPoint(lookup), lookup.location:
                load = ir.Operation.create(
                    "util.global.load", results=[lookup.results[0].type],
                    attributes={"global": found[key], "is_immutable": ir.UnitAttr.get()})
            lookup.results[0].replace_all_uses_with(load.results[0])
            lookup.erase()
            hoisted += 1
    return hoisted


def _global_setters(body: ir.Block) -> dict[str, ir.Operation]:
    """Global symbol -> the initializer that stores it."""
    setters: dict[str, ir.Operation] = {}
    for op in body.operations:
        if op.operation.name == "util.initializer":
            for inner in _nested(op.operation):
                if inner.name == "util.global.store":
                    setters.setdefault(str(inner.attributes["global"]), op.operation)
    return setters


def _initializer_after(body: ir.Block, setter: ir.Operation) -> ir.Block:
    """An empty initializer right after `setter` (initializers run in order: after the
    executable is made, before any later initializer records a command buffer through a
    function that loads an id); its block, ending in its return."""
    with ir.InsertionPoint(body), setter.location:
        init = ir.Operation.create("util.initializer", regions=1, attributes={
            "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))})
    init.move_after(setter)
    block = init.regions[0].blocks.append()
    with ir.InsertionPoint(block), setter.location:
        ir.Operation.create("util.return")
    return block


def _function_id_global(body: ir.Block, initializer: ir.Block, executable: ir.Operation,
                        lookup: ir.Operation, index: int) -> ir.Attribute:
    """A global `@__dync_function_id_<index>` that `initializer` sets to what `lookup` returns
    for the executable `executable` loads; its symbol."""
    i64 = lookup.results[0].type
    name = f"__dync_function_id_{index}"
    symbol = ir.FlatSymbolRefAttr.get(name)
    with ir.InsertionPoint.at_block_begin(body), lookup.location:
        ir.Operation.create("util.global", attributes={
            "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private"),
            "type": ir.TypeAttr.get(i64)})
    with ir.InsertionPoint.at_block_terminator(initializer), lookup.location:
        loaded = ir.Operation.create("util.global.load", results=[executable.results[0].type],
                                     attributes={"global": executable.attributes["global"]})
        function_id = ir.Operation.create(
            "hal.executable.lookup.function", results=[i64], operands=[loaded.results[0]],
            attributes={"entry_point": lookup.attributes["entry_point"]})
        ir.Operation.create("util.global.store", operands=[function_id.results[0]],
                            attributes={"global": symbol})
    return symbol


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


_MENDS = {"flow": distinct_workloads, "hal": hoist_function_lookups,
          "vm": copy_repeated_branch_refs}


def main() -> None:
    mend = _MENDS[sys.argv[1]]
    session = Session()  # its context knows IREE's dialects
    with session.context:
        module = ir.Module.parse(sys.stdin.read())
        mend(module.operation)
        sys.stdout.write(str(module))
    session.close()


if __name__ == "__main__":
    main()
