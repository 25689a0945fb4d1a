"""`dync-pretranspose-weights`: linear weights transposed at compile time where IREE would
transpose them on every call — under control flow.

Reads: `torch.aten.linear` with a literal weight, and the `scf` regions around it.

Writes: `torch.aten.linear(x, W, b)` over a batched `x` (rank 3 or more) with a literal `W` that
runs inside an `scf` region (directly, or in a function called from one) becomes
``matmul(x, Wᵀ) + b`` with ``Wᵀ`` a new literal computed here. IREE 3.13 lowers such a `linear`
to a transpose of `W` feeding a batched matmul; its constant hoisting folds that transpose only
for ops at a function's top level, so in a gated block, a loop body or an early-exit tail the
weight was transposed again, as its own dispatch, on every call (18 of early_exit_bert's 112
dispatches). Where IREE needs no transpose it is not done: at the top level, and for a 2-D `x`
(IREE fuses the transpose into the matmul; the pre-transposed layout measured no faster there).

Follows DyCL's sub-DNN compilation (the regions are where dync differs from a static compiler).
Attention is not fused here (an earlier version of this pass, `dync-fuse`, formed SDPA): IREE
3.13's fused attention dispatch measured 15-25x slower on the CPU than the chain it replaces, so
the PyTorch frontend decomposes SDPA instead (`frontends.pytorch.decompositions`).
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.literals import erase_if_unused, transformed_literal
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import BIND, bindings, create, defining, int_constant
from ..dialects.walk import functions_under_control_flow, nested_ops, under_control_flow
from .pipeline import Pass


# -- weight layouts --------------------------------------------------------------------------
def _copy_bindings(source: ir.Value, target: ir.Value, ip: ir.InsertionPoint) -> None:
    for bind in bindings(source):
        ir.Operation.create(BIND, operands=[target] + list(bind.operands)[1:],
                            attributes={"shape_expressions": bind.attributes["shape_expressions"]},
                            loc=bind.location, ip=ip)


def _pretranspose_linear(linear: ir.Operation, transposed: dict) -> bool:
    x, weight, bias = linear.operands
    if len(type_dims(weight.type) or ()) != 2 or element_type(weight.type) not in FLOAT_ELEMENTS:
        return False
    if len(type_dims(x.type) or ()) < 3:
        return False  # IREE fuses the transpose into a 2-D matmul itself
    weight_t = transformed_literal(weight, lambda w: w.T, transposed)
    if weight_t is None:
        return False
    ip, loc = ir.InsertionPoint(linear), linear.location
    result = linear.results[0]
    product = create("torch.aten.matmul", result.type, ip, loc, operands=[x, weight_t])
    if defining(bias, "torch.constant.none") is None:
        _copy_bindings(result, product, ip)
        product = create("torch.aten.add.Tensor", result.type, ip, loc,
                         operands=[product, bias, int_constant(1, ip, loc)])
    result.replace_all_uses_with(product)
    linear.erase()
    erase_if_unused(weight)
    return True


class PretransposeWeights(Pass):
    name = "dync-pretranspose-weights"
    summary = "linear weights transposed at compile time under control flow"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            hot = functions_under_control_flow(module)
            transposed: dict = {}
            for op in list(nested_ops(module)):
                if op.name == "torch.aten.linear" and under_control_flow(op, hot):
                    _pretranspose_linear(op, transposed)
