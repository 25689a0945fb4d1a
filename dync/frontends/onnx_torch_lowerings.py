"""ONNX nodes IREE's importer cannot convert, written as torch ops before its conversion
(which fails the whole module on them, "failed to legalize operation 'torch.operator'"):

- `ScatterElements` with `reduction="max"` or `"min"` (opset 18; the importer lowers `none`,
  `add` and `mul` to `aten.scatter_reduce.two`): the same op with torch's `amax`/`amin`
  (`include_self`: the data's own values take part, as in ONNX), the indices made
  non-negative as the importer does for the others (`i + n` where `i < 0`);
- `Cast` (and `CastLike`) to INT16 or UINT16 (the importer maps neither type): torch's
  `to.dtype` to int16 (a float first to int32: truncated, then wrapped as numpy and ONNX's
  reference do, where a direct conversion out of range is undefined), to uint16 the same
  bits reinterpreted."""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import TorchBuilder, vtensor_of
from ..dialects.walk import ops_named
from .unsigned import narrowed

_REDUCTIONS = {"max": "amax", "min": "amin"}


def lower_for_importer(module: ir.Module) -> None:
    """The nodes of the module docstring, in place."""
    _lower_scatter_extremes(module)
    _lower_16_bit_casts(module)


def _lower_scatter_extremes(module: ir.Module) -> None:
    """Each `torch.operator "onnx.ScatterElements"` with a max or min reduction over data of
    known rank, in place, as `torch.aten.scatter_reduce.two`."""
    for op in ops_named(module.operation, "torch.operator"):
        if ir.StringAttr(op.attributes["name"]).value != "onnx.ScatterElements" \
                or "torch.onnx.reduction" not in op.attributes or len(op.operands) != 3:
            continue
        reduction = _REDUCTIONS.get(ir.StringAttr(op.attributes["torch.onnx.reduction"]).value)
        data, indices, updates = op.operands
        dims, index_dims = type_dims(data.type), type_dims(indices.type)
        if reduction is None or not dims or index_dims is None:
            continue  # unranked or 0-d: left to the importer, which names the node
        rank = len(dims)
        axis = ir.IntegerAttr(op.attributes["torch.onnx.axis"]).value \
            if "torch.onnx.axis" in op.attributes else 0
        axis += rank if axis < 0 else 0
        b = TorchBuilder(op)
        size = b.size(data, axis)
        shifted = b("torch.aten.add.Scalar", indices.type, indices, size, b.int(1))
        negative = b("torch.aten.lt.Scalar", vtensor_of(index_dims, "i1"), indices,
                     b.int(0))
        within = b("torch.aten.where.self", indices.type, negative, shifted, indices)
        result = b("torch.aten.scatter_reduce.two", op.results[0].type, data, b.int(axis),
                   within, updates, b.str(reduction), b.bool(True))
        op.results[0].replace_all_uses_with(result)
        op.erase()


_16_BIT = {"si16", "ui16"}


def _lower_16_bit_casts(module: ir.Module) -> None:
    """Each `onnx.Cast`/`onnx.CastLike` to a 16-bit integer as `torch.aten.to.dtype`."""
    for op in ops_named(module.operation, "torch.operator"):
        name = ir.StringAttr(op.attributes["name"]).value
        if name not in ("onnx.Cast", "onnx.CastLike") or len(op.results) != 1 \
                or element_type(op.results[0].type) not in _16_BIT \
                or type_dims(op.results[0].type) is None:
            continue
        b, x, result = TorchBuilder(op), op.operands[0], op.results[0]
        if element_type(x.type) in FLOAT_ELEMENTS:  # truncated in 32 bits: wraps, no poison
            x = b.convert(x, "si32")
        if element_type(result.type) == "si16":
            x = b.convert(x, "si16")
        else:  # torch-mlir aborts on a conversion to ui16: to si16, the bits kept
            x = narrowed(b, x, result.type)
        result.replace_all_uses_with(x)
        op.erase()
