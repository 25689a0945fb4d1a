"""`dync-depthwise-nhwc`: on the CPU, a depthwise convolution runs in NHWC, as IREE's
`linalg.depthwise_conv_2d_nhwc_hwc` (`..._hwcm` with a channel multiplier).

Reads: 2-D convolutions (`torch.aten.conv2d`, `torch.aten.convolution`, not transposed) of a
float rank-4 input whose channels C are static, with groups = C > 1, C x M filters of one
input channel each (M, the channel multiplier, from 1), a literal weight dync can read and
constant stride, padding and dilation, in every function; the module's backend (only
``llvm-cpu``).

Writes: in place of each, the input permuted to NHWC and zero-padded there
(`torch.aten.constant_pad_nd`), into a builtin tensor (`torch_c.to_builtin_tensor`); the
linalg depthwise convolution over the filter as a kh x kw x C (x M) literal, into a
zero-filled `tensor.empty` sized from the input (`tensor.dim`, `arith` for a dynamic H or
W); for M > 1 its C x M channels collapsed into C*M (torch's order: filter o reads channel
o // M); back to torch, permuted to NCHW, the bias added.

Why: torch-mlir lowers a depthwise convolution to `linalg.depthwise_conv_2d_nchw_chw`, which
IREE 3.13's channels-last preprocessing leaves in NCHW, and IREE's CPU code for it is slow:
3x3 over 32 channels at 112x112, one thread, AVX-512 (iree-benchmark-module): NCHW 1.33 ms,
NHWC 0.052 ms (`python -m benchmarks ops`: 5 GFLOP/s, 0.12-0.21x eager, for every
depthwise shape of MobileNet-v2). Between two 1x1 convolutions (a MobileNet block, 16 -> 32
channels at 112x112, the depthwise 3x3) the permutes cancel against IREE's: 1.61 ms against
eager's 3.0; and the NCHW form over a dynamic batch did not compile there (IREE's
channels-last preprocessing moves a transpose through the depthwise convolution's padding
into a `tensor.empty` without the batch's size, the bug
lit/upstream/iree-channels-last-pad-dynamic-batch.mlir pins). No paper section: a kernel
choice at the boundary to IREE (issue 33), the layout TVM and oneDNN choose for depthwise
convolutions on CPUs.

A 3x3 one with an odd static output width (`ODD_WIDTH_TILES`) also gets its tile sizes, an
`#iree_codegen.compilation_info` on the linalg op: IREE 3.13 vectorizes 3x3 depthwise
convolutions on AVX2 and SSE two output columns at a time, and where that leaves a column
over in each row its code is 5-12x slower. One thread, AVX2, ms (eager / IREE's tiles / these):
960 channels at 7x7 (MobileNet-v2's last stage), batch 8, 0.53 / 3.48 / 0.47, batch 1 0.15 /
0.41 / 0.067; 576 at 14x14 stride 2 (into 7x7), batch 8, 0.59 / 3.31 / 1.17; 144 at 75x75,
batch 8, 9.2 / 101 / 33. The columns a vector takes are the largest divisor of the width up to
7, the channels the target's f32 lanes (the others as IREE's own choice: 64 images, the whole
height and width, the largest multiple of the lanes up to 64 that divides C).
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import arith, linalg, tensor

from ..analysis.layout import constant_window
from ..dialects.dync_ir import read_vector_isa
from ..dialects.literals import erase_if_unused, readable, transformed_literal
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    builtin_type,
    create,
    defining,
    float_constant,
    int_list,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass


def _depthwise(conv: ir.Operation) -> tuple[list[int], list[int], list[int]] | None:
    """(stride, padding, dilation) of a depthwise convolution this pass rewrites, else None."""
    found = constant_window(conv)
    if found is None:
        return None
    channels, weight = type_dims(conv.operands[0].type)[1], type_dims(conv.operands[1].type)
    if found.groups < 2 or found.groups != channels or weight[1] != 1 \
            or weight[0] % found.groups or not readable(conv.operands[1]):
        return None
    return found.stride, found.padding, found.dilation


#: f32 lanes of a vector register by the target's vector extension: where dync sets the tile
#: sizes of a 3x3 depthwise convolution of an odd output width (`_odd_width_tiles`).
ODD_WIDTH_TILES = {"avx512": 16, "avx2": 8, "sse": 4}
_MOST_COLUMNS = 7


def _odd_width_tiles(lanes: int | None, channels: int, out: tuple, kernel: tuple,
                     element: ir.Type) -> ir.Attribute | None:
    """IREE's tile sizes for a depthwise convolution writing an NHWC `out` of f32 with a 3x3
    `kernel`, where its static width is odd and `lanes` divides the channels; else None."""
    _, ho, wo, _ = out
    if lanes is None or ho is None or wo is None or wo % 2 == 0 or tuple(kernel) != (3, 3) \
            or channels % lanes or str(element) != "f32":
        return None
    columns = max(k for k in range(1, _MOST_COLUMNS + 1) if wo % k == 0)
    tile = next(k for k in range(64 - 64 % lanes, 0, -lanes) if channels % k == 0)
    return ir.Attribute.parse(
        "#iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<"
        f"distribution = [64, {ho}, {wo}, {tile}, 0, 0], "
        f"vector_common_parallel = [1, 1, {columns}, {lanes}, 0, 0], "
        "vector_reduction = [0, 0, 0, 0, 1, 3]>, translation_info = "
        "#iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<"
        "ConvTileAndDecomposeExpert>>>")


def _in_nhwc(conv: ir.Operation, stride: list[int], padding: list[int], dilation: list[int],
             made: dict, lanes: int | None) -> ir.Value:
    b = TorchBuilder(conv)
    x, weight, bias = conv.operands[0], conv.operands[1], conv.operands[2]
    like = conv.results[0].type
    n, c, h, w = type_dims(x.type)
    f, _, kh, kw = type_dims(weight.type)
    multiplier = f // c
    _, _, ho, wo = type_dims(like)

    nhwc = b("torch.aten.permute", vtensor_type(like, (n, h, w, c)), x,
             int_list([0, 2, 3, 1], b.ip, b.loc))
    bind_from(nhwc, x, lambda e: [e[0], e[2], e[3], e[1]], b.ip)
    if any(padding):
        ph, pw = padding
        hp, wp = (None if d is None else d + 2 * p for d, p in ((h, ph), (w, pw)))
        padded = b("torch.aten.constant_pad_nd", vtensor_type(like, (n, hp, wp, c)), nhwc,
                   int_list([0, 0, pw, pw, ph, ph], b.ip, b.loc), float_constant(0.0, b.ip, b.loc))
        bind_from(padded, x, lambda e: [e[0], e[2] + 2 * ph, e[3] + 2 * pw, e[1]], b.ip)
        nhwc = padded

    def hwc(array):  # C*M x 1 x kh x kw -> kh x kw x C (x M)
        hwcm = array.reshape(c, multiplier, kh, kw).transpose(2, 3, 0, 1)
        return hwcm.reshape(kh, kw, c) if multiplier == 1 else hwcm

    filt = transformed_literal(weight, hwc, made, before=conv)
    element = ir.RankedTensorType(builtin_type(like, dynamic=True)).element_type
    with b.ip, b.loc:
        xb = create("torch_c.to_builtin_tensor", builtin_type(nhwc.type, dynamic=True), b.ip,
                    b.loc, operands=[nhwc])
        wb = create("torch_c.to_builtin_tensor", builtin_type(filt.type), b.ip, b.loc,
                    operands=[filt])
        sizes = [_size(xb, 0, n), _out_size(xb, 1, ho, kh, stride[0], dilation[0]),
                 _out_size(xb, 2, wo, kw, stride[1], dilation[1]), c]
        if multiplier > 1:
            sizes.append(multiplier)
        zero = arith.ConstantOp(element, 0.0)
        init = linalg.fill(zero, outs=[tensor.EmptyOp(sizes, element)])
        op = linalg.depthwise_conv_2d_nhwc_hwc if multiplier == 1 \
            else linalg.depthwise_conv_2d_nhwc_hwcm
        y = op(xb, wb, outs=[init], strides=stride, dilations=dilation)
        tiles = None if multiplier > 1 else _odd_width_tiles(lanes, c, (n, ho, wo, c),
                                                              (kh, kw), element)
        if tiles is not None:
            y.owner.attributes["compilation_info"] = tiles
        if multiplier > 1:
            collapsed = builtin_type(vtensor_type(like, (n, ho, wo, f)), dynamic=True)
            y = tensor.CollapseShapeOp(collapsed, y, [[0], [1], [2], [3, 4]]).result
    out = create("torch_c.from_builtin_tensor", vtensor_type(like, (n, ho, wo, f)), b.ip, b.loc,
                 operands=[y])
    bind_from(out, conv.results[0], lambda e: [e[0], e[2], e[3], e[1]], b.ip)
    result = b("torch.aten.permute", like, out, int_list([0, 3, 1, 2], b.ip, b.loc))
    if defining(bias, "torch.constant.none") is None:
        bind_from(result, conv.results[0], lambda e: e, b.ip)  # the sum takes the op's
        column = b("torch.aten.view", vtensor_type(bias.type, (f, 1, 1)), bias,
                   int_list([f, 1, 1], b.ip, b.loc))
        result = b("torch.aten.add.Tensor", like, result, column, b.int(1))
    return result


def _size(x: ir.Value, axis: int, static: int | None) -> int | ir.Value:
    if static is not None:
        return static
    return tensor.DimOp(x, arith.ConstantOp(ir.IndexType.get(), axis)).result


def _out_size(x: ir.Value, axis: int, static: int | None, k: int, stride: int,
              dilation: int) -> int | ir.Value:
    """The output size along `axis` of a window of `k` taps over padded `x`."""
    if static is not None:
        return static
    index = ir.IndexType.get()
    span = arith.SubIOp(_size(x, axis, None),
                        arith.ConstantOp(index, dilation * (k - 1) + 1).result)
    steps = arith.DivUIOp(span.result, arith.ConstantOp(index, stride).result)
    return arith.AddIOp(steps.result, arith.ConstantOp(index, 1).result).result


class DepthwiseNhwc(HostCpuPass):
    name = "dync-depthwise-nhwc"
    summary = "depthwise convolutions in NHWC, as linalg's depthwise_conv_2d_nhwc_hwc(m) (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [(op, w) for op in nested_ops(module) if (w := _depthwise(op))]
        lanes = ODD_WIDTH_TILES.get(read_vector_isa(module))
        made: dict = {}
        with module.context, ir.Location.unknown():
            for conv, (stride, padding, dilation) in found:
                weight = conv.operands[1]
                conv.results[0].replace_all_uses_with(_in_nhwc(conv, stride, padding, dilation,
                                                               made, lanes))
                conv.erase()
                erase_if_unused(weight)
