"""ONNX `ScatterElements` with `reduction="max"` or `"min"` (opset 18) as torch ops, before
IREE's importer converts the module: its conversion lowers the `none`, `add` and `mul`
reductions to `aten.scatter_reduce.two` and fails the whole conversion on these two
("failed to legalize operation 'torch.operator'"). They become the same op with torch's
`amax`/`amin` (`include_self`: the data's own values take part, as in ONNX), the indices
made non-negative as the importer does for the others (`i + n` where `i < 0`)."""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import TorchBuilder, vtensor_of
from ..dialects.walk import ops_named

_REDUCTIONS = {"max": "amax", "min": "amin"}


def lower_scatter_extremes(module: ir.Module) -> None:
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

