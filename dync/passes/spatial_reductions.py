"""`dync-spatial-reductions`: on the CPU, a mean, sum or max over H and W of an NHWC tensor
with a dynamic batch is taken in two steps whose leading dim keeps the samples' rows.

Reads: `torch.aten.mean.dim`, `torch.aten.sum.dim_IntList` (no dtype) and `torch.aten.amax`
over dims 2 and 3 of a float rank-4 tensor whose batch (dim 0) is dynamic and whose C, H and
W are static, in a module whose convolutions IREE computes in NHWC (`dync-channels-last`
asked for it), where the tensor is computed from a convolution or an NHWC -> NCHW permute
through elementwise ops and batch norms (so that it lies in NHWC: IREE cancels the permute
below against its own); the module's backend (only ``llvm-cpu``). Global average pools are
such means after `dync-channels-last`.

Writes: in place of each, ``x.permute(0, 2, 3, 1).reshape(-1, W, C)`` reduced over dim 1
(W), that ``reshape(-1, H, C)`` reduced over dim 1 (H), divided by H x W for a mean, and
viewed as ``N x C x 1 x 1`` with ``keepdim``; shapes bound from the input's binding.

Why: IREE 3.13 fuses such a reduction into the packing of the next data-tiled matmul's
operand (a classifier after a global pool), whose inner tile is 16 rows of the batch, and
vectorizes the reduction 16 samples wide over the dynamic batch, masking the samples a
batch lacks (lit/upstream/iree-cpu-reduction-pack-vectorizes-small-batch.mlir): at batch 1
each step issues 16 loads 3.2 MB apart (one sample of ResNet-50's stage 1 each), 15 masked.
What those cost depends on what memory lies beyond the buffer: in a process whose heap torch
had fragmented, IREE's buffers came from that heap and the first exit of an early-exit
ResNet-50 at batch 1 ran 81-85 ms, against 14 where they were mapped fresh, 60% of the time
in this one dispatch (`perf record`: one loop of masked `vmovaps`); eager PyTorch 16.5 ms.
In two steps the first reduction's leading dim is N x H rows (full tiles but the last) and
the second reads N x H x C: 11.6-13.2 ms at batch 1 in either process, all four stages
100-133 -> 65 ms (eager 73), 52 -> 50 ms at batch 4. No paper section: a kernel choice at
the boundary to IREE (issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.layout import converts_to_channels_last
from ..analysis.op_kinds import BATCH_NORMS, CONVOLUTIONS_2D, ELEMENTWISE
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    bindings,
    constant_bool,
    constant_int_list,
    defining,
    float_constant,
    int_list,
    owner,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# op name -> (index of keepdim, whether a dtype operand must be None)
REDUCTIONS = {"torch.aten.mean.dim": (2, True), "torch.aten.sum.dim_IntList": (2, True),
              "torch.aten.amax": (2, False)}
NCHW_FROM_NHWC = [0, 3, 1, 2]


def _spatial(op: ir.Operation) -> bool:
    """Whether `op` is a reduction over H and W this pass takes in two steps."""
    if op.name not in REDUCTIONS:
        return False
    keep_at, has_dtype = REDUCTIONS[op.name]
    dims = type_dims(op.operands[0].type)
    axes = constant_int_list(op.operands[1])
    if dims is None or len(dims) != 4 or axes is None or dims[0] is not None \
            or None in dims[1:] or element_type(op.operands[0].type) not in FLOAT_ELEMENTS:
        return False
    if sorted(a % 4 for a in axes) != [2, 3] or constant_bool(op.operands[keep_at]) is None:
        return False
    if has_dtype and defining(op.operands[3], "torch.constant.none") is None:
        return False
    return _in_nhwc(op.operands[0])


def _in_nhwc(value: ir.Value) -> bool:
    """Whether `value` is computed from a convolution or an NHWC -> NCHW permute through
    elementwise ops and batch norms (IREE then holds it in NHWC)."""
    seen, todo = set(), [value]
    while todo:
        op = owner(todo.pop())
        if op is None or op in seen:
            continue
        seen.add(op)
        if op.name in CONVOLUTIONS_2D or (op.name == "torch.aten.permute"
                                          and constant_int_list(op.operands[1]) == NCHW_FROM_NHWC):
            return True
        if op.name in ELEMENTWISE or op.name in BATCH_NORMS:
            todo += [v for v in op.operands if type_dims(v.type) is not None
                     and len(type_dims(v.type)) == 4]
    return False


def _two_steps(op: ir.Operation) -> ir.Value:
    """The value of the reduction `op` (`_spatial`), reduced over W, then over H."""
    b = TorchBuilder(op)
    x = op.operands[0]
    _, c, h, w = type_dims(x.type)
    keep = constant_bool(op.operands[REDUCTIONS[op.name][0]])
    reduce = "torch.aten.amax" if op.name == "torch.aten.amax" else "torch.aten.sum.dim_IntList"

    def shaped(name: str, dims: list[int | None], *operands: ir.Value) -> ir.Value:
        """A new op's value, its shape bound from `x`'s: None is the batch, "rows" N x H."""
        value = b(name, vtensor_type(x.type, [None if d == "rows" else d for d in dims]),
                  *operands)
        bind_from(value, x, lambda e: [e[0] if d is None else e[0] * e[2] if d == "rows"
                                       else d for d in dims], b.ip)
        return value

    def ints(*values: int) -> ir.Value:
        return int_list(list(values), b.ip, b.loc)

    def reduced(y: ir.Value, dims: list[int | None]) -> ir.Value:
        tail = [] if reduce == "torch.aten.amax" else [b.none]
        return shaped(reduce, dims, y, ints(1), b.bool(False), *tail)

    nhwc = shaped("torch.aten.permute", [None, h, w, c], x, ints(0, 2, 3, 1))
    rows = shaped("torch.aten.reshape", ["rows", w, c], nhwc, ints(-1, w, c))
    per_row = reduced(rows, ["rows", c])
    per_sample = reduced(shaped("torch.aten.reshape", [None, h, c], per_row, ints(-1, h, c)),
                         [None, c])
    if op.name == "torch.aten.mean.dim":
        per_sample = shaped("torch.aten.div.Scalar", [None, c], per_sample,
                            float_constant(float(h * w), b.ip, b.loc))
    if keep:
        return b("torch.aten.reshape", op.results[0].type, per_sample, ints(-1, c, 1, 1))
    for bound in bindings(per_sample):  # it takes the op's binding with its uses
        bound.erase()
    return per_sample


class SpatialReductions(HostCpuPass):
    name = "dync-spatial-reductions"
    summary = "means, sums and maxes over H x W of NHWC tensors with a dynamic batch in two steps (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        if not converts_to_channels_last(module):
            return
        found = [op for op in nested_ops(module) if _spatial(op)]
        with module.context, ir.Location.unknown():
            for op in found:
                op.results[0].replace_all_uses_with(_two_steps(op))
                op.erase()
