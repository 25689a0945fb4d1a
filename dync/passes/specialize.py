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

from ..dialects import dync as dync_ir
from ..dialects.symbolic import (
    bound_dims,
    declarations_first,
    parse_dim,
    symbol,
    to_affine,
    type_dims,
)
from ..dialects.walk import callee, functions, ops_named, reachable
from .pipeline import Pass, PassFailure

REQUEST_ATTR = "dync.specialize"
VERSION_ATTR = "dync.version"


def version_name(entry: str, values: dict[str, int]) -> str:
    return entry + "".join(f"__{name}_{value}" for name, value in sorted(values.items()))


def read_requests(module: ir.Operation, attribute: str = REQUEST_ATTR) -> list[dict[str, int]]:
    """The versions ({symbol: value} each) asked for in `attribute`, which is removed."""
    if attribute not in module.attributes:
        return []
    requests = [{named.name: ir.IntegerAttr(named.attr).value for named in ir.DictAttr(version)}
                for version in ir.ArrayAttr(module.attributes[attribute])]
    del module.attributes[attribute]
    return requests


def request_versions(module: ir.Module, versions: list[dict[str, int]],
                     attribute: str = REQUEST_ATTR) -> None:
    """Ask `dync-specialize` (or, with `attribute` ``dync.bucket``, `dync-bucket`) for these
    versions ({symbol: value} each) of `module`'s entry."""
    if not versions:
        return
    with module.context:
        i64 = ir.IntegerType.get_signless(64)
        module.operation.attributes[attribute] = ir.ArrayAttr.get([
            ir.DictAttr.get({k: ir.IntegerAttr.get(i64, v) for k, v in sorted(version.items())})
            for version in versions])


def read_versions(module: ir.Operation) -> list[tuple[str, dict[str, int]]]:
    """(function name, {symbol: value}) of each version in `module`."""
    return [(name, {n.name: ir.IntegerAttr(n.attr).value
                    for n in ir.DictAttr(func.attributes[VERSION_ATTR])})
            for name, func in functions(module).items() if VERSION_ATTR in func.attributes]


def _specialized_dim(dim: dync_ir.Dim, values: dict[str, int]) -> dync_ir.Dim:
    if isinstance(dim, int):
        return dim
    expr = parse_dim(dim).subs({symbol(n): v for n, v in values.items()})
    return int(expr) if expr.is_Integer else str(expr)


def static_type(old: ir.Type, dims: tuple[dync_ir.Dim, ...]) -> ir.Type:
    """`old` (a !torch.vtensor) with the dims that became integers made static."""
    text = str(old)
    current = type_dims(old)
    if current is None or len(current) != len(dims):
        return old
    new = [str(d) if isinstance(d, int) else ("?" if c is None else str(c))
           for c, d in zip(current, dims, strict=True)]
    head, _, tail = text.partition("]")
    return ir.Type.parse(head[:head.index("[") + 1] + ",".join(new) + "]" + tail)


def static_copy(entry: ir.Operation, name: str, attribute: str, values: dict[str, int],
                cast_back: bool = True) -> tuple[ir.Operation, dict[int, ir.Type]]:
    """A detached copy of `entry` named `name`, marked with `attribute` = {symbol: value},
    whose arguments have their dims over `values` static (the dims written with the values
    substituted); with `cast_back`, each is cast back to its dynamic type once at the top so
    that the body is unchanged IR. Also returns the dynamic types of the arguments made
    static, by argument index."""
    clone = entry.clone(ip=False)
    clone.attributes["sym_name"] = ir.StringAttr.get(name)
    del clone.attributes[dync_ir.ENTRY_ATTR]
    i64 = ir.IntegerType.get_signless(64)
    clone.attributes[attribute] = ir.DictAttr.get(
        {k: ir.IntegerAttr.get(i64, v) for k, v in sorted(values.items())})

    block = clone.regions[0].blocks[0]
    arg_attrs = list(ir.ArrayAttr(clone.attributes["arg_attrs"])) \
        if "arg_attrs" in clone.attributes else [ir.DictAttr.get({})] * len(block.arguments)
    new_attrs, new_types, dynamic_types = [], [], {}
    # Casts go after the symbol declarations, moved to the top, where bindings of the
    # arguments go (a copy binds or crops its arguments there: dync-rdp, dync-bucket).
    first = declarations_first(block)
    for index, (arg, attrs) in enumerate(zip(block.arguments, arg_attrs, strict=True)):
        attrs = ir.DictAttr(attrs)
        if dync_ir.SHAPE_ATTR not in attrs:
            new_attrs.append(attrs)
            new_types.append(arg.type)
            continue
        dims = tuple(_specialized_dim(d, values)
                     for d in dync_ir.read_shape(attrs[dync_ir.SHAPE_ATTR]))
        entries = {n.name: n.attr for n in attrs}
        entries[dync_ir.SHAPE_ATTR] = dync_ir.shape_attr(dims)
        new_attrs.append(ir.DictAttr.get(entries))
        static = static_type(arg.type, dims)
        if static != arg.type:
            dynamic_types[index] = arg.type
            arg.set_type(static)
            if cast_back:
                cast = ir.Operation.create("torch.tensor_static_info_cast",
                                           results=[dynamic_types[index]], operands=[arg],
                                           loc=clone.location, ip=ir.InsertionPoint(first))
                arg.replace_all_uses_except(cast.result, cast)
        new_types.append(arg.type)
    clone.attributes["arg_attrs"] = ir.ArrayAttr.get(new_attrs)
    old = ir.FunctionType(ir.TypeAttr(clone.attributes["function_type"]).value)
    clone.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(new_types, list(old.results)))
    return clone, dynamic_types


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


def specialize_binding(bind: ir.Operation, values: dict[str, int]) -> None:
    """Replace the specialized symbols of a `torch.bind_symbolic_shape` by their values."""
    operands = list(bind.operands)
    names = [ir.StringAttr(v.owner.attributes["symbol_name"]).value for v in operands[1:]]
    if not any(n in values for n in names):
        return
    kept = [(v, n) for v, n in zip(operands[1:], names, strict=True) if n not in values]
    dims = [d.subs({symbol(n): v for n, v in values.items()}) for d in bound_dims(bind)]
    exprs = [to_affine(d, [n for _, n in kept]) for d in dims]
    if any(e is None for e in exprs):
        raise PassFailure(f"cannot write {dims} as affine dims for a binding")
    ir.Operation.create(
        "torch.bind_symbolic_shape", operands=[operands[0]] + [v for v, _ in kept],
        attributes={"shape_expressions": ir.AffineMapAttr.get(
            ir.AffineMap.get(0, len(kept), exprs))},
        loc=bind.location, ip=ir.InsertionPoint(bind))
    bind.erase()


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


def requested_entry(module: ir.Operation) -> ir.Operation:
    entry = dync_ir.entry_function(module)
    if entry is None:
        raise PassFailure(f"no function carries {dync_ir.ENTRY_ATTR}")
    return entry


def check_request(values: dict[str, int], symbols: dict, verb: str) -> None:
    """Fail the pass when a version names an unknown symbol or a value outside its range."""
    for name, value in values.items():
        if name not in symbols:
            raise PassFailure(f"cannot {verb} on {name!r}: the model's dynamic dims are "
                              f"{', '.join(sorted(symbols)) or 'none'}")
        spec = symbols[name]
        if not spec.min <= value <= spec.max:
            raise PassFailure(f"cannot {verb} {name} = {value}: outside its declared "
                              f"range [{spec.min}, {spec.max}]")
