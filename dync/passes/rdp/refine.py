"""How `dync-rdp` writes what it proved back into the IR: refined result and argument types
(with casts where a use needs the old type), function signatures, the `scf.if` results both
branches agree on, and `torch.bind_symbolic_shape` facts (``dync.dims`` where not affine).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import sympy
from iree.compiler import ir

from ...analysis.tensor_sizes import terminator
from ...dialects.attributes import DIMS_ATTR, RDP_ATTR
from ...dialects.symbolic import declarations_first, to_affine, type_dims
from ...dialects.torch_ops import vtensor_type
from ...dialects.walk import call_sites, exported, nested_ops, ops_named
from .rules import Fact

if TYPE_CHECKING:
    from . import Analysis


def _write_back(module: ir.Operation, analysis: Analysis) -> None:
    with module.context, ir.Location.unknown():
        for func in analysis.functions.values():
            _refine_types(func, analysis)
        _refine_signatures(module, analysis)
        for func in analysis.functions.values():
            _fold_casts(func)
            _bind_dims(func, analysis)
        i64 = ir.IntegerType.get_signless(64)
        counts = {k: ir.IntegerAttr.get(i64, v) for k, v in analysis.coverage().items()}
        classes = {k: ir.IntegerAttr.get(i64, v) for k, v in sorted(analysis.classes.items())}
        counts["classes"] = ir.DictAttr.get(classes)
        module.attributes[RDP_ATTR] = ir.DictAttr.get(counts)


def _refine_types(func, analysis: Analysis) -> None:
    """Results of torch.aten ops whose `?` dims RDP proved constant get static types; a value
    they read that keeps its `?` (a block argument, a call's result) is cast to the proven
    type for them, since some torch-to-linalg lowerings (transpose) reject a static result
    of a dynamic operand."""
    dead: list[ir.Operation] = []
    for op in nested_ops(func, post_order=True):
        aten = op.name.startswith("torch.aten.")
        for i, result in enumerate(op.results):
            if op.name == "scf.if":
                _refine_if_result(op, i, analysis, dead)
            else:
                _refine(result, analysis, lambda op=op: _after(op), in_place=aten)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    _refine(arg, analysis, lambda block=block: declarations_first(block),
                            in_place=False)
    entry = func.regions[0].blocks[0]
    for arg in entry.arguments:
        _refine(arg, analysis, lambda: declarations_first(entry), in_place=False)
    for op in dead:
        op.erase()


def _refine(value: ir.Value, analysis: Analysis, before: Callable[[], ir.Operation],
            in_place: bool) -> None:
    """Give `value` the dims RDP proved constant. `in_place` (a torch.aten result): it changes
    type and its uses outside torch.aten read it through a cast back to the old type; else
    (a block argument, a call's result) it keeps its type and its torch.aten uses read a cast
    to the refined one. The cast goes before `before()`, looked up only when one is made
    (finding an op's place in its block is linear)."""
    refined = _proven_dims(value.type, [analysis.fact(value)]) \
        if str(value.type).startswith("!torch.vtensor") else None
    if refined is None:
        return
    old_type, new_type = value.type, vtensor_type(value.type, refined)
    moved = [u for u in value.uses if u.owner.name.startswith("torch.aten.") != in_place]
    if in_place:
        value.set_type(new_type)
    if moved:
        cast = _cast(value, old_type if in_place else new_type, before())
        for use in moved:
            use.owner.operands[use.operand_number] = cast
        analysis.facts[cast] = analysis.fact(value)


def _cast(value: ir.Value, to: ir.Type, before: ir.Operation) -> ir.Value:
    return ir.Operation.create("torch.tensor_static_info_cast", results=[to], operands=[value],
                               ip=ir.InsertionPoint(before)).result


def _refine_if_result(if_op: ir.Operation, index: int, analysis: Analysis,
                      dead: list[ir.Operation]) -> None:
    """Give `if_op`'s result `index` the dims RDP proved constant: both branches yield the
    new type and the result's uses read it through a cast back to the old one (a value the
    branches cast to the old type is yielded uncast). torch.cond's `scf.if`s carry builtin
    tensors between `torch_c` conversions; their casts stay on the torch side (IREE 3.13's
    torch input rewrites a `tensor.cast` to a static shape into a `tensor.collapse_shape`
    without reassociation and fails to verify), so such a result is refined only where the
    branches convert a vtensor and every use converts it back. Conversions it replaces after
    `if_op` go to `dead`, for the caller to erase once its walk is over."""
    result = if_op.results[index]
    old = result.type
    refined = _proven_dims(old, [analysis.fact(result)])
    if refined is None:
        return
    yielded = [terminator(region.blocks[0]).operands[index] for region in if_op.regions]
    if not isinstance(old.maybe_downcast(), ir.RankedTensorType):
        _retype_if_result(if_op, index, vtensor_type(old, refined), yielded)
        return
    uses = [u.owner for u in result.uses]
    if not all(_defined_by(v, "torch_c.to_builtin_tensor") for v in yielded) or not all(
            u.operation.name == "torch_c.from_builtin_tensor" for u in uses):
        return
    dims = [ir.ShapedType.get_dynamic_size() if d is None else d for d in refined]
    result.set_type(ir.RankedTensorType.get(dims, ir.RankedTensorType(old).element_type))
    for region, value in zip(if_op.regions, yielded, strict=True):
        convert = value.owner
        vt = convert.operands[0]
        static_vt = vtensor_type(vt.type, refined)
        source = _as_type(vt, static_vt, convert)
        terminator(region.blocks[0]).operands[index] = ir.Operation.create(
            "torch_c.to_builtin_tensor", results=[result.type], operands=[source],
            ip=ir.InsertionPoint(convert)).result
        if not list(value.uses):
            dead.append(convert)
    for use in uses:
        old_vt = use.results[0].type
        static = ir.Operation.create("torch_c.from_builtin_tensor",
                                     results=[vtensor_type(old_vt, refined)],
                                     operands=[result], ip=ir.InsertionPoint(use)).result
        _reroute(use.results[0], static, use)
        dead.append(use)


def _retype_if_result(if_op: ir.Operation, index: int, new: ir.Type,
                      yielded: list[ir.Value]) -> None:
    result = if_op.results[index]
    old = result.type
    result.set_type(new)
    _reroute(result, result, _after(if_op), old)
    for region, value in zip(if_op.regions, yielded, strict=True):
        end = terminator(region.blocks[0])
        end.operands[index] = _as_type(value, new, end)


def _reroute(old: ir.Value, new: ir.Value, before: ir.Operation,
             old_type: ir.Type | None = None) -> None:
    """Point `old`'s torch.aten uses at `new` (same dims, fewer `?`), and the others (returns,
    calls, yields, conversions to builtin tensors, bindings: ops whose operand types must match
    something else) at one cast to `old`'s type (or `old_type`), placed before `before`."""
    old_type = old_type or old.type
    back = None
    for use in list(old.uses):
        if not use.owner.name.startswith("torch.aten."):
            back = back or _cast(new, old_type, before)
            use.owner.operands[use.operand_number] = back
        elif old != new:
            use.owner.operands[use.operand_number] = new


def _refine_signatures(module: ir.Operation, analysis: Analysis) -> None:
    """Private functions take and return the static types RDP proved at every call site and
    every return (a specialized version's branch functions keep the fallback's `?`
    signature otherwise: the sub-DNNs `dync-split-subdnns` makes of them inherit it, and a
    dynamic argument gets no barrier or NHWC crossing in `dync-isolate-subdnns`). Callers
    cast operands to the new types and read the new results through a cast back to the old
    type where a typed use needs it; inside, the same for the arguments."""
    sites, public = call_sites(module), set(exported(module))
    for name, func in analysis.functions.items():
        calls = sites.get(name, [])
        if not calls or name in public or any(c.name != "func.call" for c in calls):
            continue
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs, results = list(ftype.inputs), list(ftype.results)
        entry = func.regions[0].blocks[0]
        for i, arg in enumerate(entry.arguments):
            new = _proven_type(arg.type, [analysis.fact(arg)])
            if new is None:
                continue
            old = arg.type
            arg.set_type(new)
            inputs[i] = new
            _drop_static_binds(arg)
            _reroute(arg, arg, declarations_first(entry), old)
            for call in calls:
                call.operands[i] = _as_type(call.operands[i], new, call)
        returns = ops_named(func, "func.return")
        for j in range(len(results)):
            new = _proven_type(results[j], [analysis.fact(r.operands[j]) for r in returns])
            if new is None:
                continue
            for ret in returns:
                ret.operands[j] = _as_type(ret.operands[j], new, ret)
            for call in calls:
                result = call.results[j]
                result.set_type(new)
                _drop_static_binds(result)
                _reroute(result, result, _after(call), results[j])
            results[j] = new
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _drop_static_binds(value: ir.Value) -> None:
    """Erase the shape bindings of `value` once its type has no `?` left: they say nothing
    more, and IREE's torch-iree-bind-symbolic-shapes fails on an all-constant binding it
    meets after a use ("operand does not dominate")."""
    if None in (type_dims(value.type) or (None,)):
        return
    for use in list(value.uses):
        if use.owner.name == "torch.bind_symbolic_shape":
            use.owner.erase()


def _proven_type(old: ir.Type, facts: list[Fact]) -> ir.Type | None:
    """The `!torch.vtensor` type `old` with the dims every fact in `facts` proves constant;
    None if it is not a vtensor or no `?` dim is proven."""
    refined = _proven_dims(old, facts) if str(old).startswith("!torch.vtensor") else None
    return None if refined is None else vtensor_type(old, refined)


def _proven_dims(old: ir.Type, facts: list[Fact]) -> list[int | None] | None:
    """The dims of tensor type `old` with each `?` that every fact in `facts` proves one
    constant replaced by it; None if there is none."""
    tdims = type_dims(old)
    if tdims is None or None not in tdims or not facts:
        return None
    refined = list(tdims)
    for k, t in enumerate(tdims):
        dims = {f.shape[k] if f.shape is not None and len(f.shape) == len(tdims) else None
                for f in facts}
        if t is None and len(dims) == 1 and isinstance(d := dims.pop(), sympy.Integer):
            refined[k] = int(d)
    return None if refined == list(tdims) else refined


def _fold_casts(func) -> None:
    """Drop the casts write-back left that change nothing: to the type they read, or back to
    the type the cast they read started from."""
    for op in ops_named(func, "torch.tensor_static_info_cast"):
        source = op.operands[0]
        if op.results[0].type != source.type:
            source = _uncast(source, op.results[0].type)
        if source is not None:
            op.results[0].replace_all_uses_with(source)
    for op in reversed(ops_named(func, "torch.tensor_static_info_cast")):
        if not list(op.results[0].uses):
            op.erase()


def _defined_by(value: ir.Value, name: str) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.operation.name == name


def _as_type(value: ir.Value, to: ir.Type, before: ir.Operation) -> ir.Value:
    """`value` as type `to`: the source of the cast it is, if that has the type, else a new
    cast placed before `before`."""
    return _uncast(value, to) or _cast(value, to, before)


def _uncast(value: ir.Value, wanted: ir.Type) -> ir.Value | None:
    """The source of `value` when it is a `torch.tensor_static_info_cast` from `wanted`."""
    if (_defined_by(value, "torch.tensor_static_info_cast")
            and value.owner.operands[0].type == wanted):
        return value.owner.operands[0]
    return None


def _after(op: ir.Operation) -> ir.Operation:
    """The op following `op` in its block (binds stay right after what they bind)."""
    ops = list(op.block.operations)
    return ops[ops.index(op) + 1].operation


def _symbol_values(func) -> dict[str, ir.Value]:
    entry = func.regions[0].blocks[0]
    found = {}
    for op in entry.operations:
        if op.operation.name == "torch.symbolic_int":
            found[ir.StringAttr(op.attributes["symbol_name"]).value] = op.result
    return found


def _bind_dims(func, analysis: Analysis) -> None:
    """A `torch.bind_symbolic_shape` for each dynamic vtensor RDP can express and torch did
    not bind; `dync.dims` on the defining op for the rest."""
    symbols = _symbol_values(func)
    entry = func.regions[0].blocks[0]
    first = declarations_first(entry)
    for arg in entry.arguments:
        _bind(arg, analysis, symbols, entry, ir.InsertionPoint(first))
    for op in nested_ops(func):
        if op.name in ("torch.bind_symbolic_shape", "torch.symbolic_int") or not op.results:
            continue
        unexpressed = [_bind(r, analysis, symbols, entry, ir.InsertionPoint(_after(op)))
                       for r in op.results]
        if any(u is not None for u in unexpressed):
            op.attributes[DIMS_ATTR] = ir.ArrayAttr.get(
                [u or ir.ArrayAttr.get([]) for u in unexpressed])


def _bind(value: ir.Value, analysis: Analysis, symbols: dict[str, ir.Value], entry: ir.Block,
          ip: ir.InsertionPoint) -> ir.ArrayAttr | None:
    """Bind `value`'s dims when they are affine; returns them as strings when they are not."""
    tdims = type_dims(value.type) if str(value.type).startswith("!torch.vtensor") else None
    shape = analysis.fact(value).shape
    if (tdims is None or None not in tdims or value in analysis.bound or shape is None
            or any(analysis.kind(d) == "unknown" for d in shape)):
        return None
    names = sorted({s.name for d in shape for s in d.free_symbols})
    exprs = [to_affine(d, names) for d in shape]
    if any(e is None for e in exprs):
        return ir.ArrayAttr.get([ir.StringAttr.get(str(d)) for d in shape])
    i64 = ir.IntegerType.get_signless(64)
    for name in names:
        if name not in symbols:
            lo, hi = analysis.ranges[name]
            symbols[name] = ir.Operation.create(
                "torch.symbolic_int", results=[ir.Type.parse("!torch.int")],
                attributes={"symbol_name": ir.StringAttr.get(name),
                            "min_val": ir.IntegerAttr.get(i64, lo),
                            "max_val": ir.IntegerAttr.get(i64, hi)},
                ip=ir.InsertionPoint.at_block_begin(entry)).result
    ir.Operation.create(
        "torch.bind_symbolic_shape", operands=[value] + [symbols[n] for n in names],
        attributes={"shape_expressions": ir.AffineMapAttr.get(ir.AffineMap.get(0, len(names),
                                                                               exprs))},
        ip=ip)
    analysis.bound[value] = shape
    return None
