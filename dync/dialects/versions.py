"""Versions of the entry function: static copies of it for chosen values of its dynamic dims.

The builders and readers that `dync-specialize`, `dync-bucket` and `dync-loop-batch` share
(and `dync.compile`, which asks for versions and reads back those compiled): a version request
is a module attribute holding a list of {symbol: value} dictionaries; a version is a copy of the
entry function whose arguments have those dims static.
"""

from __future__ import annotations

from iree.compiler import ir

from ..errors import PassFailure
from . import dync_ir
from .attributes import SPECIALIZE_REQUEST_ATTR, VERSION_ATTR
from .symbolic import bound_dims, declarations_first, parse_dim, symbol, to_affine, type_dims
from .walk import functions


def version_name(entry: str, values: dict[str, int]) -> str:
    return entry + "".join(f"__{name}_{value}" for name, value in sorted(values.items()))


def read_requests(module: ir.Operation,
                  attribute: str = SPECIALIZE_REQUEST_ATTR) -> list[dict[str, int]]:
    """The versions ({symbol: value} each) asked for in `attribute`, which is removed."""
    if attribute not in module.attributes:
        return []
    requests = [{named.name: ir.IntegerAttr(named.attr).value for named in ir.DictAttr(version)}
                for version in ir.ArrayAttr(module.attributes[attribute])]
    del module.attributes[attribute]
    return requests


def request_versions(module: ir.Module, versions: list[dict[str, int]],
                     attribute: str = SPECIALIZE_REQUEST_ATTR) -> None:
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
