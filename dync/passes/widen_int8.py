"""`dync-widen-int8`: 8-bit integer arithmetic computed in int32.

Reads: `add`, `sub`, `rsub`, `mul`, `div`, `remainder`, `fmod` and `floor_divide` (their
`.Scalar`, `.Tensor`, `_mode` forms) whose result is an int8 or uint8 tensor, and the
whole-tensor `max` and `min` of one, in every function (after `dync-int-division`, whose
rewrites of `//` and `%` produce some of them); and each conversion (`to.dtype`,
`_to_copy`, `to.dtype_layout`) of a floating-point tensor to int8 or uint8.
Writes: each 8-bit tensor operand converted to int32 (`to.dtype`), the op on int32, and its
result converted back (`to.dtype`, which keeps the low 8 bits: sums, differences and
products wrap as eager's; quotients and remainders of 8-bit values are 8-bit values, but
for -128 // -1, which wraps to -128 in both). A conversion from floats goes to int32 first,
then to the 8-bit type (its low 8 bits).

Why: IREE 3.13's compiler crashed (SIGSEGV) on torch-mlir's lowering of these ops on 8-bit
tensors with a scalar or a 0-d operand (`x * 3`, `x - 5`, `7 - x`, `x % 5`, `x // 3`,
`torch.fmod(x, 5)`, `x.max()`): the whole model then ran in eager PyTorch. int16 and wider
compile as they are. torch-mlir converts floats to uint8 as to the signless i8, `fptosi`, which
has no value past 127: on x86 the SSE code saturated there (a QLinearMatMul's outputs of 128
to 255 came back 127 with the `generic` target, and on AVX-512 hosts in some compiles; on an
AVX2 AMD EPYC a `_to_copy` of 180 to uint8 gave 52).
No paper section: a repair at the boundary to IREE.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import TorchBuilder, vtensor_of
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

_NARROW = {"si8", "ui8"}
_ARITHMETIC = frozenset(
    f"torch.aten.{op}.{form}"
    for op in ("add", "sub", "mul", "div", "remainder", "fmod", "floor_divide")
    for form in ("Scalar", "Tensor", "Tensor_mode", "Scalar_mode")
) | {"torch.aten.rsub.Scalar", "torch.aten.max", "torch.aten.min"}
# Conversions of an element type: `.to(torch.uint8)` reaches dync as either, by the path
# torch.export took.
_CONVERSIONS = {"torch.aten.to.dtype", "torch.aten._to_copy", "torch.aten.to.dtype_layout"}


class WidenInt8(Pass):
    name = "dync-widen-int8"
    summary = "8-bit integer arithmetic in int32 (IREE crashed on it with a scalar operand)"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            for op in list(nested_ops(func)):
                if op.name in _CONVERSIONS:
                    _through_int32(op)
                    continue
                if op.name not in _ARITHMETIC or len(op.results) != 1:
                    continue
                result = op.results[0]
                narrow = element_type(result.type)
                if narrow not in _NARROW:
                    continue
                b = TorchBuilder(op)
                operands = [b.convert(v, "si32") if element_type(v.type) in _NARROW else v
                            for v in op.operands]
                wide = b(op.name, vtensor_of(type_dims(result.type), "si32"), *operands)
                narrowed = b.convert(wide, narrow)
                result.replace_all_uses_with(narrowed)
                op.erase()


def _through_int32(op: ir.Operation) -> None:
    """A conversion of floats to an 8-bit integer type as two: to int32, then to that type."""
    source, result = op.operands[0], op.results[0]
    narrow = element_type(result.type)
    if narrow not in _NARROW or element_type(source.type) not in FLOAT_ELEMENTS:
        return
    b = TorchBuilder(op)
    result.replace_all_uses_with(b.convert(b.convert(source, "si32"), narrow))
    op.erase()
