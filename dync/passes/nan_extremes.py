"""`dync-nan-extremes`: elementwise maxima, minima and clamps of floats are NaN where their
input is, as PyTorch's are.

Reads: `torch.aten.maximum`, `minimum`, `clamp`, `clamp_min`, `clamp_max` (their `.Tensor`
forms too), `hardtanh` and `relu6` whose first operand and result are tensors of one
floating-point type, in every function (`torch.maximum`, `x.clamp(0, 1)`, `nn.ReLU6`,
`nn.Hardtanh`, ONNX `Max`/`Min`/`Clip`, dync's own rewrites: `dync-max-pool-slices`).
Writes: in place of each, `where(isnan(x), x, op(x, ...))` (`torch.aten.isnan`, `where.self`;
elementwise, fused by IREE into the op's dispatch).

Why: torch-mlir (IREE 3.13's importer) lowers `maximum(a, b)` to `select(a > b, a, b)`,
`minimum` to `select(a < b, a, b)` — a NaN in `b` comes through, a NaN in `a` does not — and
a clamp to `select(x <u lo, lo, x)` then `select(x >u hi, hi, x)`, unordered comparisons
that turn a NaN into the bound: `clamp(NaN, -1, 1)` gave -1, `relu6(NaN)` 6, where
PyTorch's results are NaN (`lit/upstream/torch-maximum-nan.mlir`). A max pool as slices lost
the NaN of a window. `relu` and `fmax`/`fmin` are right and left alone.
No paper section: correctness at the boundary to IREE.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import TorchBuilder, vtensor_of
from ..dialects.walk import nested_ops
from .pipeline import Pass

_EXTREMES = frozenset(f"torch.aten.{name}" for name in (
    "maximum", "minimum", "clamp", "clamp.Tensor", "clamp_min", "clamp_min.Tensor", "clamp_max",
    "clamp_max.Tensor", "hardtanh", "relu6"))


def _mend(op: ir.Operation) -> None:
    """`op` as `where(isnan(x), x, op(...))`, `x` its first operand (a float tensor)."""
    a, out = op.operands[0].type, op.results[0].type
    dims = type_dims(a)
    if dims is None or type_dims(out) is None or element_type(out) not in FLOAT_ELEMENTS \
            or element_type(a) != element_type(out):
        return
    b = TorchBuilder(op)
    extreme = b(op.name, out, *op.operands)
    nan = b("torch.aten.isnan", vtensor_of(dims, "i1"), op.operands[0])
    mended = b("torch.aten.where.self", out, nan, op.operands[0], extreme)
    op.results[0].replace_all_uses_with(mended)
    op.erase()


class NanExtremes(Pass):
    name = "dync-nan-extremes"
    summary = "elementwise maximum/minimum/clamp of floats NaN where their input is, as eager"

    def run(self, module: ir.Operation) -> None:
        extremes = [op for op in nested_ops(module) if op.name in _EXTREMES]
        with module.context, ir.Location.unknown():
            for op in extremes:
                _mend(op)
