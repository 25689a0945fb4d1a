"""IREE's bundled FX importer, extended for dync.

Upstream (`iree.compiler.extras.fx_importer`, i.e. torch-mlir's) lacks a `cond` handler and
imports `while_loop` with the wrong region arity when the body captures parameters (the HOP's
`additional_inputs` are treated as loop-carried values). This subclass fixes both and turns
import failures into errors that name the user's source line.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
from iree.compiler.extras import fx_importer as fx
from iree.compiler.ir import (
    AffineMap,
    AffineMapAttr,
    AffineSymbolExpr,
    Block,
    FlatSymbolRefAttr,
    FunctionType,
    InsertionPoint,
    Location,
    Operation,
    TypeAttr,
)
from iree.compiler.ir import Type as IrType

from ...errors import UnsupportedConstructError
from .shape_exprs import NotAffine, to_affine
from .source import user_frame_from_stack_trace


def _call(callee: str, results: list, operands: list, loc: Location) -> Operation:
    return Operation.create(
        "func.call",
        attributes={"callee": FlatSymbolRefAttr.get(callee)},
        results=results,
        operands=operands,
        loc=loc,
    )


class DyncGraphNodeImporter(fx.GraphNodeImporter):
    def _child_func(self, node: torch.fx.Node, graph_ref: torch.fx.Node) -> str:
        module = getattr(node.graph.owning_module, graph_ref.target)
        return self.fx_importer._graph_module_to_func_name[id(module)]

    def _result_types(self, node: torch.fx.Node) -> list:
        return [self._cc.value_info_to_type(v) for v in node.meta["val"]]

    def _call_as(self, callee: str, result_types: list, operands: list, loc: Location) -> list:
        """Call `callee` and cast its results to `result_types` where they differ: a branch
        may know a dim statically that the HOP's result (joined over branches) does not."""
        func = self.fx_importer.symbol_table[callee]
        declared = list(FunctionType(TypeAttr(func.attributes["function_type"]).value).results)
        call = _call(callee, declared, operands, loc)
        results = []
        for value, want in zip(call.results, result_types, strict=True):
            if value.type != want:
                value = Operation.create(
                    "torch.tensor_static_info_cast", results=[want], operands=[value], loc=loc
                ).result
            results.append(value)
        return results

    def _to_bool(self, tensor_value: Any, loc: Location) -> Any:
        return Operation.create(
            "torch.aten.Bool.Tensor",
            results=[self._cc.torch_bool_type],
            operands=[tensor_value],
            loc=loc,
        ).result

    def _bind_results(self, node: torch.fx.Node, values) -> None:
        self._multi_result_nodes.add(node)
        for i, value in enumerate(values):
            self.bind_node_value(node, value, i)

    def _import_hop_cond(self, loc: Location, node: torch.fx.Node, hop) -> None:
        """`cond(pred, true_fn, false_fn, operands)` -> `torch.prim.If` calling the branch funcs."""
        pred, true_ref, false_ref, operands = node.args
        if not isinstance(pred, torch.fx.Node):
            raise NotImplementedError("cond with a constant predicate should have been folded")
        pred_value = self._import_argument(loc, pred)
        if str(pred_value.type) != "!torch.bool":
            pred_value = self._to_bool(pred_value, loc)
        args = [self._import_argument(loc, a) for a in operands]
        result_types = self._result_types(node)
        if_op = Operation.create(
            "torch.prim.If", results=result_types, operands=[pred_value], regions=2, loc=loc
        )
        for region, ref in zip(if_op.regions, (true_ref, false_ref), strict=True):
            with InsertionPoint(Block.create_at_start(region, [])):
                results = self._call_as(self._child_func(node, ref), result_types, args, loc)
                Operation.create("torch.prim.If.yield", results=[], operands=results, loc=loc)
        self._bind_results(node, if_op.results)

    def _import_hop_while_loop(self, loc: Location, node: torch.fx.Node, hop) -> None:
        """`while_loop(cond_fn, body_fn, carried, additional)` -> `torch.prim.Loop`.

        Only `carried` values are loop-carried; `additional` (captured parameters and
        free tensors) are passed to every call of the cond/body functions from outside.
        """
        cond_ref, body_ref, carried, additional = node.args
        cond_fn, body_fn = self._child_func(node, cond_ref), self._child_func(node, body_ref)
        carried_values = [self._import_argument(loc, a) for a in carried]
        extra_values = [self._import_argument(loc, a) for a in additional]
        result_types = self._result_types(node)
        bool_tensor = self._cc.get_vtensor_type(torch.Size([]), torch.bool)

        first = _call(cond_fn, [bool_tensor], carried_values + extra_values, loc)
        with loc:
            max_trip = fx._make_constant_op(
                "torch.constant.int",
                self._cc.integer_attr(torch.iinfo(torch.int64).max, 64),
                self._cc.torch_int_type,
            )
        loop = Operation.create(
            "torch.prim.Loop",
            results=result_types,
            operands=[max_trip.result, self._to_bool(first.result, loc)] + carried_values,
            regions=1,
            loc=loc,
        )
        with loc:
            block = Block.create_at_start(loop.regions[0], [self._cc.torch_int_type] + result_types)
        with InsertionPoint(block):
            state = list(block.arguments[1:])
            step = self._call_as(body_fn, result_types, state + extra_values, loc)
            again = _call(cond_fn, [bool_tensor], step + extra_values, loc)
            Operation.create(
                "torch.prim.Loop.condition",
                results=[],
                operands=[self._to_bool(again.result, loc)] + step,
                loc=loc,
            )
        self._bind_results(node, loop.results)

    def _create_bind_symbolic_shape_ops(self, loc: Location, node: torch.fx.Node) -> None:
        """Bind a value's dims to the shape symbols (`torch.bind_symbolic_shape`).

        Replaces upstream's version, which cannot translate floor/ceil division (every
        conv/pool output size) and fails the whole import on any expression it does not
        know; here a non-affine dim leaves only that value unbound.
        """
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or not val._has_symbolic_sizes_strides:
            return
        exprs = [s.node.expr if isinstance(s, torch.SymInt) else int(s) for s in val.shape]
        free = sorted({str(f) for e in exprs if not isinstance(e, int) for f in e.free_symbols})
        symbols = {name: AffineSymbolExpr.get(i) for i, name in enumerate(free)}
        try:
            affine = [to_affine(e, symbols) for e in exprs]
        except NotAffine:
            return
        Operation.create(
            "torch.bind_symbolic_shape",
            attributes={"shape_expressions": AffineMapAttr.get(AffineMap.get(0, len(free), affine))},
            operands=[self.resolve_node_value(node)] + [self.resolve_symbol_value(n) for n in free],
            loc=loc,
        )

    def _import_list_argument(self, loc, arg, expected_jit_type):
        """A tensor list holding a constant (`torch.cat([x, TABLE])`, `torch.einsum(eq, x, W)`
        with `TABLE`/`W` module-level tensors, lifted by torch.export and handed to the
        importer as values): each element imported on its own, a literal for the constant.
        Upstream requires every element to be a node of the list's element type."""
        if not any(isinstance(a, torch.Tensor) for a in arg):
            return super()._import_list_argument(loc, arg, expected_jit_type)
        optional = any(a is None for a in arg)
        operands = [self._import_default_value(loc, None, torch.NoneType.get()) if a is None
                    else self._import_argument(loc, a) for a in arg]
        kind = "!torch.list<optional<vtensor>>" if optional else "!torch.list<vtensor>"
        return Operation.create("torch.prim.ListConstruct",
                                results=[IrType.parse(kind, context=self._c)],
                                operands=operands, loc=loc).result

    # Failures inside upstream handlers become errors naming the user's line.
    def _import_torch_op_overload(self, loc, node, concrete_target=None):
        concrete_target = concrete_target or _ALIASES.get(node.target)
        with _naming(node):
            return super()._import_torch_op_overload(loc, node, concrete_target)

    def _import_hop(self, loc, node, hop):
        with _naming(node):
            return super()._import_hop(loc, node, hop)

    def _import_symbolic_torch_op(self, loc, node, target):
        with _naming(node):
            logical = _LOGICAL.get(target)
            if logical is not None and all(_is_bool(a) for a in node.args):
                # `a & b` of two symbolic bools (torch's runtime check that a shape is in
                # range, in a branch over a pooled image); upstream maps arithmetic only.
                return self._import_torch_op_overload(loc, node, logical)
            return super()._import_symbolic_torch_op(loc, node, target)


# Python operator overloads that torch-mlir does not lower, mapped to the ops it does.
_ALIASES = {
    torch.ops.aten.__and__.Tensor: torch.ops.aten.bitwise_and.Tensor,
    torch.ops.aten.__or__.Tensor: torch.ops.aten.bitwise_or.Tensor,
    torch.ops.aten.__xor__.Tensor: torch.ops.aten.bitwise_xor.Tensor,
}


# `and`/`or` of symbolic bools, which upstream's table of Python builtins lacks.
_LOGICAL = {operator.and_: torch.ops.aten.__and__.bool, operator.or_: torch.ops.aten.__or__.bool}


def _is_bool(arg: Any) -> bool:
    if isinstance(arg, torch.fx.Node):
        value = arg.meta.get("val")
        return isinstance(value, torch.SymBool | bool)
    return isinstance(arg, bool)


class _naming:
    def __init__(self, node: torch.fx.Node):
        self.node = node

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, UnsupportedConstructError):
            return False
        if not isinstance(exc, NotImplementedError | KeyError | AssertionError | RuntimeError):
            return False
        target = getattr(self.node.target, "__name__", str(self.node.target))
        source = user_frame_from_stack_trace(self.node.meta.get("stack_trace"))
        raise UnsupportedConstructError(target, f"{type(exc).__name__}: {exc}", source) from exc
