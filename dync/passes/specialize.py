"""`dync-specialize`: shape-specialized versions of the entry function.

Nimble's residue dispatch and SoD²'s multi-version code (digest-sod2.md §5, "multi-version
code generation"): for hot values of the dynamic dims, compile extra copies of the program
in which those dims are constants, so that IREE plans static tiles, static buffers and
static dispatch grids, and pick the copy by the arguments' shapes at run time. Inputs whose
dims match no version run the fully dynamic entry function, which stays as it is.

Reads: the module attribute ``dync.specialize``, a list of versions, each a dictionary
{symbol name: value} over the module's ``dync.symbols`` (put there by `dync.compile(...,
specialize=...)`); the entry function (``dync.entry``) with its ``dync.shape`` argument
attributes, `torch.symbolic_int` ops and `torch.bind_symbolic_shape` facts.

Writes, per version: a public copy of the entry function named
``<entry>__<symbol>_<value>...`` carrying ``dync.version`` = {symbol: value}, whose
arguments have the version's static types (and ``dync.shape``), each cast back to the
original dynamic type once at the top, so the body is unchanged IR; the functions it calls
are copied with the same suffix (RDP joins a callee's call sites: a callee shared with the
dynamic entry would stay dynamic, and its bindings over the specialized symbol would
contradict the version's). In the copies, every `torch.bind_symbolic_shape` over a
specialized symbol has it replaced by its value, and its `torch.symbolic_int` goes.
`dync-rdp`, which runs next, proves the dims that follow from the constants and writes them
into the types. Removes
``dync.specialize``; a version that names an unknown symbol or a value outside the
symbol's range fails the pass with the reason.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects import dync_ir
from ..dialects.versions import (
    VERSION_ATTR,
    check_request,
    read_requests,
    read_versions,
    requested_entry,
    specialize_binding,
    static_copy,
    version_name,
)
from ..dialects.walk import callee, functions, ops_named, reachable
from .pipeline import Pass


def _make_version(module: ir.Operation, entry: ir.Operation, values: dict[str, int]) -> None:
    entry_name = ir.StringAttr(entry.attributes["sym_name"]).value
    clone, _ = static_copy(entry, version_name(entry_name, values), VERSION_ATTR, values)

    # The functions the entry calls (branches, loop bodies) get their own copies too: RDP
    # joins a callee's call sites, so one shared with the dynamic entry would stay dynamic.
    suffix = version_name("", values)
    table = functions(module)
    callees = reachable(module, [entry_name], ("func.call",))[1:]
    copies = [clone] + [table[name].clone(ip=False) for name in callees]
    for func in copies[1:]:
        func.attributes["sym_name"] = ir.StringAttr.get(
            ir.StringAttr(func.attributes["sym_name"]).value + suffix)
    for func in copies:
        for call in ops_named(func, "func.call"):
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(callee(call) + suffix)
        for bind in ops_named(func, "torch.bind_symbolic_shape"):
            specialize_binding(bind, values)
        for op in ops_named(func, "torch.symbolic_int"):
            if ir.StringAttr(op.attributes["symbol_name"]).value in values:
                op.erase()  # no use is left: every binding over it now has its value
        module.regions[0].blocks[0].append(func)


class Specialize(Pass):
    name = "dync-specialize"
    summary = "static copies of the entry function for hot values of its dynamic dims"

    def run(self, module: ir.Operation) -> None:
        requests = read_requests(module)
        if not requests:
            return
        entry = requested_entry(module)
        symbols = dync_ir.read_symbols(module)
        existing = {name for name, _ in read_versions(module)}
        entry_name = ir.StringAttr(entry.attributes["sym_name"]).value
        for values in requests:
            check_request(values, symbols, "specialize")
            if values and version_name(entry_name, values) not in existing:
                _make_version(module, entry, values)
                existing.add(version_name(entry_name, values))


