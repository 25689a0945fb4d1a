"""`dync-bias-pointwise-convs`: every 1×1 convolution gets a bias, zeros where it had none.

Reads: `torch.aten.conv2d` and (not transposed) `torch.aten.convolution` with a static
`[F, C, 1, 1]` floating-point weight and no bias (`torch.constant.none`).
Writes: a `torch.vtensor.literal` of F zeros, through a `util.optimization_barrier`, as the
convolution's bias.

Why: IREE 3.13 compiles a bias-less 1×1 convolution 4-7x slower on the CPU than the same
convolution with a bias, even a zero one (one thread, AVX-512: 1024→256 at 14×14, 13.5 against
72.4 GFLOP/s; 512→128 at 28×28, 9.6 against 69.0; eager 76-81; 3×3 convolutions measured
alike with and without). A zero bias is exact and costs one broadcast into the accumulator,
which IREE needs anyway. ResNet's and MobileNet's pointwise convolutions have no bias (a batch
norm follows), so the slow form is the common one. No paper section: a workaround at the
boundary to IREE, measured with `python -m benchmarks ops`; for the host CPU (``dync.backend``
"llvm-cpu"), where it was measured.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.layout import maybe_transposed
from ..analysis.op_kinds import CONVOLUTIONS_2D
from ..dialects.literals import LITERAL
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import defining, through_barrier, vtensor_of
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass


def _pointwise_without_bias(op: ir.Operation) -> tuple[int, str] | None:
    """(filters, element type) of a bias-less 1×1 convolution; None for any other op."""
    if op.name not in CONVOLUTIONS_2D or maybe_transposed(op):
        return None
    weight = op.operands[1]
    dims, dtype = type_dims(weight.type), element_type(weight.type)
    if dims is None or len(dims) != 4 or dims[2:] != (1, 1) or dims[0] is None:
        return None
    if dtype not in FLOAT_ELEMENTS or defining(op.operands[2], "torch.constant.none") is None:
        return None
    return dims[0], dtype


def _zeros(filters: int, dtype: str, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    element = ir.Type.parse(dtype)
    splat = ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([filters], element),
                                           ir.FloatAttr.get(element, 0.0))
    zeros = ir.Operation.create(LITERAL, results=[vtensor_of([filters], dtype)],
                                attributes={"value": splat}, loc=loc, ip=ip).result
    # Behind a barrier: IREE folds a splat zero bias into the fill the slow form starts from.
    return through_barrier(zeros, ip, loc)


class BiasPointwiseConvs(HostCpuPass):
    name = "dync-bias-pointwise-convs"
    summary = "1×1 convolutions without a bias get a zero one (IREE's faster form)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            for op in list(nested_ops(module)):
                found = _pointwise_without_bias(op)
                if found is not None:
                    op.operands[2] = _zeros(*found, ir.InsertionPoint(op), op.location)
