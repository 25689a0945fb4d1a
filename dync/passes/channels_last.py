"""`dync-channels-last`: run 2-D convolutions in NHWC on the CPU.

Reads: convolutions (`torch.aten.conv2d`, `torch.aten.convolution`, with a rank-4 input) and
adaptive average pools (`torch.aten.adaptive_avg_pool2d`) in every function.

Writes:
* each global average pool becomes `torch.aten.mean.dim` over the two spatial dims with
  ``keepdim``, and an adaptive average pool whose static H x W divide evenly into its output
  becomes `torch.aten.avg_pool2d` with that window as kernel and stride (the same
  arithmetic). torch-mlir lowers adaptive pools to a padded window gather that IREE 3.13's
  transpose propagation cannot cross when the batch dim is dynamic ("'tensor.empty' op
  incorrect number of dynamic sizes"); a reduction or a pooling op it can;
* when the module has a 2-D convolution, the module attribute ``dync.iree_preprocessing``
  lists IREE's ``iree-preprocessing-convert-conv-to-channels-last``; the backend passes it as
  ``--iree-preprocessing-pass-pipeline``. IREE then computes every convolution in NHWC with
  HWCF filters and propagates the transposes away between consecutive convolutions;
* when it asks for that, each float `max_pool2d` with padding or in ceil mode, and each
  `constant_pad_nd` of H and W, over a rank-4 input with a dynamic dim pads in NHWC between
  two permutes (the pool with -inf, then pooling unpadded; in ceil mode `stride - 1` more at
  the end, then pooling in floor mode, where that gives the same windows): IREE's
  preprocessing moves its transposes through a `tensor.pad` over a dynamic dim into a
  `tensor.empty` missing that dim's size
  (lit/upstream/iree-channels-last-pad-dynamic-batch.mlir), and a convolution then a padded
  max pool or a zero pad over a dynamic batch (ResNet's stem) did not compile. The same
  result: a max pool pads with -inf itself. In ceil mode torch-mlir pads the end itself, and a
  ceil-mode pool after a squeeze-and-excitation product over a dynamic batch did not compile;
* each convolution (one group) under control flow — in an `scf` region, or in a function
  called from one — whose filter is a literal gets the filter stored in HWCF and read through
  `torch.aten.permute(·, [3, 2, 0, 1])`, both placed in the convolution's block. IREE's FCHW -> HWCF transpose then cancels against
  that permute. Without it the filter transpose stays in the region, where IREE's constant
  hoisting does not reach: the convolution is no longer a named NHWC convolution but a
  generic one with a transposed filter, and the CIFAR networks with gated blocks ran 3-9x
  (a two-branch test network 11x) slower than in NCHW. At the top level IREE folds that
  transpose itself and nothing is changed. If a filter under control flow is not a literal
  this module can read (a function argument: without `dync-split-subdnns`, torch.cond's
  branch functions get their weights as arguments), the module stays in NCHW.

Why: IREE's CPU code for NCHW convolutions is poor, worst with dynamic dims. SoD² (§5,
layout transformation) and TVM's NCHWc make the same choice. Measured on this host (IREE
3.13, local-sync): the YOLO backbone over a dynamic H x W 16.1 -> 4.6 ms (a static build
3.7 ms); the static-control ResNet with a dynamic batch 2.4x faster, with a static batch
7.5 -> 4.7 ms; the two-branch test network 3.80 (NCHW) -> 2.58 ms with HWCF filters under
its branches. The pass changes no numerics beyond summation order.

Cost: a copy IREE cannot cancel. A convolution reading the model's NCHW input reads an NHWC
copy of it, a dispatch of its own alive beside the convolution's output (`dync-plan-buffers`
counts it, ``dync.nhwc_input``): the captioner's 12 KiB input next to conv1's 16 KiB output
is its peak above eager's (28.8 vs 24.0 KiB). IREE's
``--iree-global-opt-enable-sink-transpose-through-pad`` folds that copy into the convolution
(full captioner 28.8 -> 24.8 KiB), but the convolution becomes a generic one reading NCHW:
the captioner's encoder ran 31 -> 75 us, BlockDrop 0.4-0.6 -> 2.2-4.9 ms. With padding fused,
``--iree-global-opt-propagate-transposes-through-conv`` crashes llvm-cpu codegen
(EliminateEmptyTensors). Neither is used.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.layout import CHANNELS_LAST, rank, relaid_by_iree
from ..analysis.op_kinds import CONVOLUTIONS_2D
from ..dialects.dync_ir import request_preprocessing
from ..dialects.literals import erase_if_unused, readable, transformed_literal
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import (
    bool_constant,
    constant_bool,
    constant_int_list,
    constant_number,
    constant_str,
    create,
    defining,
    float_constant,
    int_list,
    none_constant,
    vtensor_type,
)
from ..dialects.walk import functions_under_control_flow, nested_ops, under_control_flow
from .pipeline import Pass

FCHW_FROM_HWCF = [3, 2, 0, 1]


def _is_global_pool(op: ir.Operation) -> bool:
    """A pool over a rank-4 input whose result is N x C x 1 x 1."""
    out = type_dims(op.results[0].type)
    return rank(op.operands[0]) == 4 and out is not None and tuple(out[2:]) == (1, 1)


def _pool_to_mean(pool: ir.Operation) -> None:
    ip, loc = ir.InsertionPoint(pool), pool.location
    dim_list = int_list([2, 3], ip, loc)
    keep = bool_constant(True, ip, loc)
    none = none_constant(ip, loc)
    mean = create("torch.aten.mean.dim", pool.results[0].type, ip, loc,
                  operands=[pool.operands[0], dim_list, keep, none])
    pool.results[0].replace_all_uses_with(mean)
    pool.erase()


def _filter_in_hwcf(conv: ir.Operation, stored: dict) -> None:
    """Feed `conv` its literal FCHW filter as permute(HWCF literal); `stored` maps each
    filter already rewritten, per block, to its permuted value."""
    weight = conv.operands[1]
    key = (weight, conv.block)
    if key not in stored:
        # Next to the convolution, in its block: IREE's filter transpose meets the permute
        # there and the two cancel (a permute left at the top level is hoisted apart from it).
        hwcf = transformed_literal(weight, lambda w: w.transpose(2, 3, 1, 0), {}, before=conv)
        ip, loc = ir.InsertionPoint(conv), conv.location
        stored[key] = create("torch.aten.permute", weight.type, ip, loc,
                             operands=[hwcf, int_list(FCHW_FROM_HWCF, ip, loc)])
    conv.operands[1] = stored[key]
    erase_if_unused(weight)


def _even_windows(pool: ir.Operation) -> list[int] | None:
    """The window of an adaptive average pool whose static H x W divide evenly into its output
    (each output averages one kh x kw window), else None."""
    dims, out = type_dims(pool.operands[0].type), type_dims(pool.results[0].type)
    if dims is None or out is None or len(dims) != 4 or None in (*dims[2:], *out[2:]):
        return None
    if any(d % o for d, o in zip(dims[2:], out[2:], strict=True)):
        return None
    return [d // o for d, o in zip(dims[2:], out[2:], strict=True)]


def _pool_to_windows(pool: ir.Operation, window: list[int]) -> None:
    ip, loc = ir.InsertionPoint(pool), pool.location
    false, true = bool_constant(False, ip, loc), bool_constant(True, ip, loc)
    none = none_constant(ip, loc)
    operands = [pool.operands[0], int_list(window, ip, loc), int_list(window, ip, loc),
                int_list([0, 0], ip, loc), false, true, none]
    avg = create("torch.aten.avg_pool2d", pool.results[0].type, ip, loc, operands=operands)
    pool.results[0].replace_all_uses_with(avg)
    pool.erase()


def _dynamic_float_nchw(x: ir.Value) -> bool:
    """A float rank-4 tensor with a dynamic dim."""
    dims = type_dims(x.type)
    return dims is not None and len(dims) == 4 and None in dims \
        and element_type(x.type) in FLOAT_ELEMENTS


def _max_pool_padding(pool: ir.Operation) -> list[int] | None:
    """The [left, right, top, bottom] -inf padding after which a `max_pool2d` over a float
    rank-4 input with a dynamic dim pools unpadded and in floor mode: its own padding, and in
    ceil mode `stride - 1` more at the right and bottom (the same windows, where none would
    start past the input and its padding: `padding + stride <= kernel`, no dilation); None
    for any other op, nothing to pad, or another ceil mode."""
    if pool.name != "torch.aten.max_pool2d" or not _dynamic_float_nchw(pool.operands[0]):
        return None
    kernel, stride, padding, dilation = (_pair(constant_int_list(pool.operands[k]))
                                         for k in (1, 2, 3, 4))
    ceil = constant_bool(pool.operands[5])
    if not kernel or not padding or ceil is None:
        return None
    (kh, kw), (ph, pw) = kernel, padding
    if not ceil:
        return [pw, pw, ph, ph] if any(padding) else None
    stride = stride or kernel
    if dilation not in ((), (1, 1)) or ph + stride[0] > kh or pw + stride[1] > kw:
        return None
    return [pw, pw + stride[1] - 1, ph, ph + stride[0] - 1]


def _pair(values: list[int] | None) -> tuple[int, int] | None:
    """A pool's kernel, stride, padding or dilation list as (H, W); () for an empty list."""
    if values is None or len(values) > 2:
        return None
    return tuple(values * 2) if len(values) == 1 else tuple(values)


def _spatial_pad(pad: ir.Operation) -> tuple[list[int], float] | None:
    """([left, right, top, bottom], value) of a constant pad (`constant_pad_nd`, or `pad` in
    "constant" mode, whose value None is 0) of the H and W of a float rank-4 tensor with a
    dynamic dim; None for any other op."""
    if pad.name == "torch.aten.constant_pad_nd":
        value = constant_number(pad.operands[2])
    elif pad.name == "torch.aten.pad" and constant_str(pad.operands[2]) == "constant":
        none = defining(pad.operands[3], "torch.constant.none") is not None
        value = 0.0 if none else constant_number(pad.operands[3])
    else:
        return None
    widths = constant_int_list(pad.operands[1])
    if not _dynamic_float_nchw(pad.operands[0]) or widths is None or len(widths) != 4 \
            or value is None:
        return None
    return widths, value


def _padded_in_nhwc(x: ir.Value, widths: list[int], value: float, ip: ir.InsertionPoint,
                    loc: ir.Location) -> ir.Value:
    """NCHW `x` padded by [left, right, top, bottom] `widths` of `value`, the pad done in NHWC
    between two permutes. IREE 3.13's channels-last preprocessing moves its transposes through
    a `tensor.pad` over a dynamic dim into a `tensor.empty` without that dim's size
    ("'tensor.empty' op incorrect number of dynamic sizes",
    lit/upstream/iree-channels-last-pad-dynamic-batch.mlir): a convolution, then a padded max
    pool or a zero pad over a dynamic batch (ResNet's stem) failed to compile. Padded in NHWC,
    the pad reads the convolution's NHWC result and nothing moves."""
    n, c, h, w = type_dims(x.type)
    left, right, top, bottom = widths
    nhwc = create("torch.aten.permute", vtensor_type(x.type, (n, h, w, c)), ip, loc,
                  operands=[x, int_list([0, 2, 3, 1], ip, loc)])
    h, w = (None if d is None else d + a + b for d, a, b in ((h, top, bottom), (w, left, right)))
    padded = create("torch.aten.constant_pad_nd", vtensor_type(x.type, (n, h, w, c)), ip, loc,
                    operands=[nhwc, int_list([0, 0, left, right, top, bottom], ip, loc),
                              float_constant(value, ip, loc)])
    return create("torch.aten.permute", vtensor_type(x.type, (n, c, h, w)), ip, loc,
                  operands=[padded, int_list([0, 3, 1, 2], ip, loc)])


def _pads_in_nhwc(module: ir.Operation) -> None:
    """Every padded max pool and spatial zero (or other constant) pad over a dynamic dim padded
    in NHWC (`_padded_in_nhwc`); the pool then pools unpadded, as a max pool pads with -inf."""
    for op in list(nested_ops(module)):
        ip, loc = ir.InsertionPoint(op), op.location
        if widths := _max_pool_padding(op):
            op.operands[0] = _padded_in_nhwc(op.operands[0], widths, float("-inf"), ip, loc)
            op.operands[3] = int_list([0, 0], ip, loc)
            if constant_bool(op.operands[5]):  # ceil mode: the padding made it floor's
                op.operands[5] = bool_constant(False, ip, loc)
        elif found := _spatial_pad(op):
            op.results[0].replace_all_uses_with(_padded_in_nhwc(op.operands[0], *found, ip, loc))
            op.erase()


class ChannelsLast(Pass):
    name = "dync-channels-last"
    summary = "2-D convolutions in NHWC (IREE preprocessing); global average pools as means"

    def run(self, module: ir.Operation) -> None:
        convolutions = []
        for op in list(nested_ops(module)):
            if op.name == "torch.aten.adaptive_avg_pool2d" and _is_global_pool(op):
                _pool_to_mean(op)
            elif op.name == "torch.aten.adaptive_avg_pool2d" and (window := _even_windows(op)):
                _pool_to_windows(op, window)
            elif op.name in CONVOLUTIONS_2D and rank(op.operands[0]) == 4:
                convolutions.append(op)
        if not convolutions:
            return
        hot = functions_under_control_flow(module)
        relaid = [c for c in convolutions
                  if under_control_flow(c, hot) and relaid_by_iree(c)]
        if not all(readable(c.operands[1]) for c in relaid):
            return  # a filter under control flow that dync cannot store in HWCF: stay NCHW
        request_preprocessing(module, [CHANNELS_LAST])
        stored: dict = {}
        with module.context, ir.Location.unknown():
            _pads_in_nhwc(module)
            for conv in relaid:
                _filter_in_hwcf(conv, stored)
