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

**A generator left outside every execution region** (``flow`` phase). A dispatch that reads no
tensor (an `arange(n)` a compaction scatters, the row iota of a gather `h[:, idx]`) of a dynamic
shape is not a constant, and IREE's CSE merges all of one shape into one, in the outermost
block, read by the regions of the `scf.if`s nested below (a loop with `break`, unrolled). Stream
partitioning clones such a generator into each partition of its own block that reads it, but
leaves the original, still read by the nested regions' partitions, outside every execution
region: "'stream.async.dispatch' op : streamable op expected to be in an execution region"
(compactions before and in a loop of three steps with `break`; 7 of 150 fresh fuzz programs
ran eager). Pinned in ``lit/upstream/iree-stream-generator-outside-region.mlir``. The
workaround: each block of an `scf.if` that reads it (not one in a loop, where a copy would run
at every step) gets a copy of the dispatch of its own, before its first
reader there, whose scalar operands (the workload, the result's dims) pass through
`util.optimization_barrier`s of their own at the block's start, so that no later CSE merges the
copies back; the cost is one more small dispatch per such block.

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

**An export looked up by name at every dispatch** (``vm`` phase). A command buffer IREE cannot
memoize (any dispatch of a dynamic shape) is recorded at every call, and each of its dispatches
first resolves its function with ``hal.executable.lookup.function``: a linear scan of the
executable's exports comparing names (pinned in
``lit/upstream/iree-export-lookup-per-dispatch.mlir``). One bucket version of yolo_nms ran 0.87
ms alone in a module and 1.96 ms among 16 versions (2054 exports; AVX2 machine); a call of the
7-dispatch `StatsUnfold` program 7.8 -> 7.1 us with the lookups gone (AVX-512). A first mend,
at the ``flow`` phase, set each lookup once into a global the bodies loaded, and gave wrong
answers: with the lookups gone, the two branches of a `cond` whose tails dispatched different
functions were identical but for those ids, IREE merged the tails into one block taking the ids
as block arguments, and the bytecode's branch into it copied its registers in an order that
overwrote one source before reading it (``%i37->%i52``, then ``%i52->%i48``): one branch's
compaction took its size from another value, and fuzz seed 1044 came out wrong
(``tests/test_runtime_results.py::test_branches_that_dispatch_alike_stay_apart``). The mend
(`export_ids_once`) is therefore at the ``vm`` phase, after IREE's last merging of blocks: the
initializer looks each (executable, name) up once, right after it creates the executable, into
a global of its own, and each lookup in a function body becomes a load of that global. Two
tails that dispatch different functions load different globals (a symbol, not an operand), so
nothing later can merge them.

**f64 literals truncated** (before import). Without f64 in a module's interface IREE demotes
f64 to f32 (`--iree-input-demote-f64-to-f32`), and converts each f64 constant rounding toward
zero: a Python float in the model (`x * 0.1`, `x + 43758.5453`, the literals of torch's own
decompositions) became the float32 just below eager's (round to nearest), 1 ulp off in most
results (`x * 0.1`: 120 of 128 elements), which a hash-style noise `frac(sin(x) * 43758.5)`
magnified to 1.8. The mend (`nearest_f32_literals`): each `torch.constant.float` that is not a
float32 already becomes its nearest float32 first, which the demotion keeps exactly.

**Arguments IREE writes** (``stream`` phase; read, not mended). IREE may compute an in-place
op in the buffer of an argument it imported (``y = x.clone(); y[:, 0] = 5`` wrote the slice into
`x`'s buffer and returned it), and may return an argument's buffer as a result (`return x`):
both are allowed of its ABI, and the same class as iree-org/iree#16168 (an input overwritten by
a tied op). dync therefore copies each argument into a buffer of IREE's, unless
`argument_writes` finds, at the end of the ``stream`` phase, that no command of the module
writes a resource that may alias an imported argument and no argument reaches a result: then
the runtime imports arguments as they are (`dync.runtime.invoke`).

This module imports iree.compiler and nothing of dync: `iree_worker.py`, run by path, uses it
too. Run as a script, ``python -m dync.iree_mends flow|vm``, it reads that phase's IR (text)
on stdin and writes the mended IR to stdout, for the lit tests; ``argument-writes`` reads a
``stream``-phase module and writes `argument_writes`' verdict ("none" where it finds none).
"""

from __future__ import annotations

import ctypes
import sys

from iree.compiler import ir
from iree.compiler.api import Session, ctypes_dl

_BRANCHES = ("vm.br", "vm.cond_br", "vm.br_table")

_RESOURCE = "!stream.resource"
_WRITE = 2  # in a command's `resource_accesses`: read 1, write 2
# Ops that may take a value aliasing an imported argument without writing it, outside the
# commands `argument_writes` reads the accesses of. Any other op taking one is taken to write.
_ALIAS_SAFE = frozenset((
    "stream.cmd.execute", "stream.cmd.flush", "stream.cmd.invalidate", "stream.timepoint.await",
    "stream.resource.subview", "stream.resource.load", "stream.tensor.load",
    "stream.resource.size", "stream.resource.retain", "stream.resource.release",
    "stream.resource.is_terminal", "util.optimization_barrier", "arith.select", "cf.br",
    "cf.cond_br", "cf.switch", "scf.yield", "scf.condition", "scf.if", "scf.while", "scf.for",
    "util.call", "util.return"))
# What an argument's buffer view may be used by: anything else may hand it out as a result.
_VIEW_SAFE = frozenset((
    "hal.buffer_view.assert", "stream.tensor.import", "hal.buffer_view.dim",
    "hal.buffer_view.rank", "hal.buffer_view.element_type", "hal.buffer_view.encoding_type",
    "util.call"))


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


def execute_through_vm(session: Session, invocation, facts: dict | None = None):
    """Run `invocation` (its input parsed or imported) to the ``vm`` phase, with the mends of
    the module docstring at the end of the ``flow`` and ``vm`` phases, and run its
    serialization in a last invocation of `session`; returns that invocation, to write the
    vmfb from and close (None where a phase failed). The caller closes `invocation`. `facts`,
    when given, gets ``"argument_writes"``: `argument_writes` of the ``stream`` phase, or ""."""
    set_phases(invocation, compile_to="flow")
    if not invocation.execute():
        return None
    module = invocation.export_module()  # each later invocation borrows it and works in place
    mend_flow(module)
    for start, end in (("flow", "stream"), ("stream", "vm")):
        step = session.invocation()
        try:
            step.import_module(module)
            set_phases(step, compile_from=start, compile_to=end)
            if not step.execute():
                return None
        finally:
            step.close()
        if end == "stream" and facts is not None:
            facts["argument_writes"] = argument_writes(module) or ""
    mend_vm(module)
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


_LOOKUP = "hal.executable.lookup.function"


def export_ids_once(module: ir.Operation) -> int:
    """Look each (executable, export name) a function body looks up once, in the initializer
    right after the executable is created, into a global of its own, and load that global in
    place of each lookup; returns how many lookups were replaced. A lookup whose executable is
    not a global the initializer stores a created executable into, or whose name is not a
    rodata constant, stays."""
    with module.context:
        return _export_ids_once(module)


def _export_ids_once(module: ir.Operation) -> int:
    for vm_module in _nested(module):
        if vm_module.name == "vm.module":
            break
    else:
        return 0
    functions = {_symbol(op): op for op in vm_module.regions[0].blocks[0].operations
                 if op.name == "vm.func"}
    init = functions.get("__init")
    if init is None:
        return 0
    created: dict[str, list[ir.Operation]] = {}  # executable global -> its stores in __init
    for op in _nested(init.operation):
        if (op.name == "vm.global.store.ref"
                and _defined_by(op.operands[0], "vm.call") == "hal.executable.create"):
            created.setdefault(ir.FlatSymbolRefAttr(op.attributes["global"]).value, []).append(op)
    lookups: dict[tuple[str, str], list[ir.Operation]] = {}
    for name, function in functions.items():
        if name == "__init":
            continue
        for op in _nested(function.operation):
            if op.name != "vm.call" or _callee(op) != _LOOKUP:
                continue
            executable, export = (_global_symbol(op.operands[0], "vm.global.load.ref"),
                                  _global_symbol(op.operands[1], "vm.const.ref.rodata"))
            if executable in created and export is not None:
                lookups.setdefault((executable, export), []).append(op)
    first = vm_module.regions[0].blocks[0].operations[0]
    i64 = ir.IntegerType.get_signless(64)
    after = {store: store for stores in created.values() for store in stores}
    replaced = 0
    for k, ((executable, export), calls) in enumerate(sorted(lookups.items())):
        id_global = f"__dync_export_id_{k}"
        with ir.InsertionPoint(first), vm_module.location:
            ir.Operation.create("vm.global.i64", attributes={
                "sym_name": ir.StringAttr.get(id_global),
                "sym_visibility": ir.StringAttr.get("private"),
                "type": ir.TypeAttr.get(i64), "is_mutable": ir.UnitAttr.get()})
        for store in created[executable]:
            with ir.InsertionPoint.after(after[store]), store.location:
                name = ir.Operation.create(
                    "vm.const.ref.rodata", results=[calls[0].operands[1].type],
                    attributes={"rodata": ir.FlatSymbolRefAttr.get(export)})
                looked_up = ir.Operation.create(
                    "vm.call", results=[i64], operands=[store.operands[0], name.result],
                    attributes={"callee": ir.FlatSymbolRefAttr.get(_LOOKUP),
                                "nosideeffects": ir.UnitAttr.get()})
                after[store] = ir.Operation.create(
                    "vm.global.store.i64", operands=[looked_up.result],
                    attributes={"global": ir.FlatSymbolRefAttr.get(id_global)})
        for call in calls:
            with ir.InsertionPoint(call), call.location:
                load = ir.Operation.create(
                    "vm.global.load.i64", results=[i64],
                    attributes={"global": ir.FlatSymbolRefAttr.get(id_global)})
            call.results[0].replace_all_uses_with(load.result)
            name = call.operands[1].owner
            call.erase()
            if not list(name.result.uses):
                name.erase()
            replaced += 1
    return replaced


def _symbol(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _defined_by(value: ir.Value, op_name: str) -> str | None:
    """The callee of the `op_name` call defining `value`, if it is one."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != op_name:
        return None
    return _callee(owner)


def _global_symbol(value: ir.Value, op_name: str) -> str | None:
    """The symbol the `op_name` op defining `value` names (`vm.global.load.ref`'s global,
    `vm.const.ref.rodata`'s rodata), if `value` is defined by one."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != op_name:
        return None
    attribute = "global" if "global" in owner.attributes else "rodata"
    return ir.FlatSymbolRefAttr(owner.attributes[attribute]).value


def generators_per_block(module: ir.Operation) -> int:
    """Give each block of an `scf.if` (nested in others, no loop between) that reads the result
    of a `flow.dispatch` with no tensor operand made further out a copy of that dispatch of
    its own, before its first reader there, whose scalar operands pass through
    `util.optimization_barrier`s of their own at the block's start; returns how many copies
    were made."""
    copies = 0
    for dispatch in [op for op in _nested(module) if op.name == "flow.dispatch"]:
        operands = list(dispatch.operands)
        if not operands or any(str(v.type).startswith("tensor") for v in operands):
            continue
        readers: dict = {}
        for result in dispatch.results:
            for use in result.uses:
                block = use.owner.operation.block
                if block != dispatch.block and _in_branches_below(block, dispatch.block):
                    readers.setdefault(block, []).append(use.owner.operation)
        for block, ops in readers.items():
            first = next(op.operation for op in block.operations if op.operation in ops)
            start = ir.InsertionPoint.at_block_begin(block)
            barriers = {}
            for value in dict.fromkeys(operands):
                with start, dispatch.location:
                    barriers[value] = ir.Operation.create(
                        "util.optimization_barrier", results=[value.type], operands=[value]).result
            copy = dispatch.clone(ip=ir.InsertionPoint(first))
            for index, value in enumerate(operands):
                copy.operands[index] = barriers[value]
            for original, copied in zip(dispatch.results, copy.results, strict=True):
                for use in list(original.uses):
                    if use.owner.operation.block == block:
                        use.owner.operands[use.operand_number] = copied
            copies += 1
        if readers and not any(list(r.uses) for r in dispatch.results):
            dispatch.erase()
    return copies


def _in_branches_below(block: ir.Block, home: ir.Block) -> bool:
    """Whether `block` lies in `scf.if` regions nested in `home`, no loop between (a copy in a
    loop's body would run at every step)."""
    while block != home:
        parent = block.owner
        if parent is None or parent.name != "scf.if":
            return False
        block = parent.operation.block
    return True


def argument_writes(module: ir.Operation) -> str | None:
    """Where a ``stream``-phase `module` may write an imported argument or return one (the
    module docstring's "Arguments IREE writes"); None where it provably does neither. A value
    may alias an argument when it is an import, or comes from one through any op (a command
    region's capture maps one to one); an op that takes such a value and is not known to
    leave it alone counts as a write."""
    hosts = [op.operation for op in module.regions[0].blocks[0].operations
             if op.operation.name in ("util.func", "util.initializer")]  # not the executables
    ops = [inner for host in hosts for inner in (host, *_nested(host))]
    functions = {op.attributes["sym_name"].value: op for op in hosts if op.name == "util.func"}
    calls: dict[str, list[ir.Operation]] = {}
    for op in ops:
        if op.name == "util.call":
            calls.setdefault(_callee(op), []).append(op)
    aliases = {op.results[0] for op in ops if op.name == "stream.tensor.import"}
    while True:
        grown = set()
        for op in ops:
            grown.update(v for v in _aliased_through(op, aliases, functions, calls)
                         if _is_resource(v))
        if grown <= aliases:
            break
        aliases |= grown
    escape = _argument_view_escape(functions)
    if escape is not None:
        return escape
    for op in ops:
        taken = [v for v in op.operands if v in aliases]
        if not taken:
            continue
        resources = [v for v in op.operands if _is_resource(v)]
        if op.name in ("stream.cmd.dispatch", "stream.cmd.call"):
            accesses = [int(a) for a in ir.ArrayAttr(op.attributes["resource_accesses"])]
            written = ([v for v, a in zip(resources, accesses, strict=True) if a & _WRITE]
                       if len(accesses) == len(resources) else taken)
        elif op.name == "stream.cmd.copy":
            written = resources[1:]
        elif op.name == "util.call" and not _has_body(functions.get(_callee(op))):
            written = taken
        elif op.name == "stream.resource.dealloca" and "prefer_origin" in op.attributes:
            # a loop-carried value that is the import on the first step and an alloca after
            # it: released where it came from, its contents untouched (13 of 60 fuzz programs)
            written = []
        elif op.name in _ALIAS_SAFE:
            written = []
        else:
            written = taken
        if any(v in aliases for v in written):
            what = ("returns an argument's buffer" if op.name == "stream.tensor.export"
                    else "may write an argument")
            return f"{op.name} {what} ({op.location})"
    return None


def _argument_view_escape(functions: dict) -> str | None:
    """Where an argument's ``!hal.buffer_view`` is used by an op that may hand it out (return
    it): anything but a query, an import, or a call of a function with a body (whose own
    arguments are read in turn)."""
    for function in functions.values():
        if not _has_body(function):
            continue
        for argument in function.regions[0].blocks[0].arguments:
            if str(argument.type) != "!hal.buffer_view":
                continue
            for use in argument.uses:
                user = use.owner.operation
                if user.name not in _VIEW_SAFE or (
                        user.name == "util.call" and not _has_body(functions.get(_callee(user)))):
                    return f"{user.name} takes an argument ({user.location})"
    return None


def _has_body(function: ir.Operation | None) -> bool:
    return function is not None and bool(function.regions[0].blocks)


def _callee(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _is_resource(value: ir.Value) -> bool:
    return str(value.type).startswith(_RESOURCE)


def _aliased_through(op: ir.Operation, aliases: set, functions: dict, calls: dict) -> list:
    """The values `op` may make alias one of `aliases` (a set of resources aliasing imports)."""
    if op.name == "stream.cmd.execute":
        captured = [v for v in op.operands if _is_resource(v)]
        inside = list(op.regions[0].blocks[0].arguments)
        if len(captured) != len(inside):  # not the form known: every capture may alias
            return inside if any(v in aliases for v in captured) else []
        return [a for v, a in zip(captured, inside, strict=True) if v in aliases]
    if not any(v in aliases for v in op.operands):
        return []
    out = list(op.results)
    for region in op.regions:
        for block in region.blocks:
            out.extend(block.arguments)
    for block in op.successors:
        out.extend(block.arguments)
    if op.name == "util.call" and _has_body(functions.get(_callee(op))):
        out.extend(functions[_callee(op)].regions[0].blocks[0].arguments)
    if op.name == "util.return" and op.parent.name == "util.func":  # its callers' results
        for call in calls.get(op.parent.attributes["sym_name"].value, []):
            out.extend(call.results)
    if op.name in ("scf.yield", "scf.condition", "stream.yield"):
        out.extend(op.parent.results)
    return out


def mend_flow(module: ir.Operation) -> None:
    """The ``flow``-phase mends of the module docstring."""
    generators_per_block(module)
    distinct_workloads(module)


def mend_vm(module: ir.Operation) -> None:
    """The ``vm``-phase mends of the module docstring."""
    copy_repeated_branch_refs(module)
    export_ids_once(module)


_MENDS = {"flow": mend_flow, "vm": mend_vm}


def main() -> None:
    session = Session()  # its context knows IREE's dialects
    with session.context:
        module = ir.Module.parse(sys.stdin.read())
        if sys.argv[1] == "argument-writes":
            sys.stdout.write((argument_writes(module.operation) or "none") + "\n")
        else:
            _MENDS[sys.argv[1]](module.operation)
            sys.stdout.write(str(module))
    session.close()


if __name__ == "__main__":
    main()
