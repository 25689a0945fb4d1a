"""ONNX nodes IREE's importer lowers to other values than the ONNX spec
(`dync/frontends/onnx_rewrites.py`): each rewritten one matches ONNX's reference evaluator on
the inputs that went wrong, each refused one is an error naming the op and the node."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import dync
from dync.errors import InputError, UnsupportedConstructError


def _model(nodes, inputs, outputs, opset: int = 22) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model: onnx.ModelProto, *args: np.ndarray, atol: float = 1e-6) -> None:
    names = [i.name for i in model.graph.input]
    want = ReferenceEvaluator(model).run(None, dict(zip(names, args, strict=True)))[0]
    compiled = dync.compile(model, cache=False)
    for _ in range(3):  # the unfixed GridSample read whatever memory held: not every call
        got = compiled(*args)
        got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_outside_the_input_is_zero_and_nearest_rounds_half_to_even(
        mode, align_corners):
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 3, 2) + 1
    # Points far outside, just outside, on halves and inside.
    grid = np.array([[[[-9.0, -9.0], [5.0, 0.3], [0.0, 0.0], [-0.5, -0.5]],
                      [[1.2, 1.1], [0.2, -1.4], [1.0, 1.0], [0.5, 0.25]]]], np.float32)
    model = _model(
        [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                          align_corners=align_corners)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 2]),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 2, 4, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 4])])
    _check(model, x, grid)


@pytest.mark.parametrize("padding", ["border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_border_and_reflection_padding(padding, mode, align_corners):
    """Not lowered by the importer: the points clamped into the image (reflected first)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    # Far outside (several reflections), just outside, on the edges and inside.
    grid = np.concatenate([rng.uniform(-4.5, 4.5, (2, 3, 6, 2)),
                           np.tile([[-1.0, 1.0], [1.1, -1.05], [0.0, 0.3]], (2, 1, 2, 1))
                           .reshape(2, 1, 6, 2)], axis=1).astype(np.float32)
    model = _model(
        [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding,
                          align_corners=align_corners)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 4]),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, 4, 6, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 6])])
    _check(model, x, grid)


@pytest.mark.parametrize("spatial", [[5, 6], [2, 3, 4]])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_affine_grid_of_a_size_given_as_an_input(spatial, align_corners):
    """Not lowered by the importer: the base grid times each theta; the size, a graph input,
    fixed at the example's value (another is refused: it sets the output's shape)."""
    k = len(spatial)
    model = _model(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"],
                          align_corners=align_corners)],
        [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [2, k, k + 1]),
         helper.make_tensor_value_info("size", TensorProto.INT64, [k + 2])],
        [helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, *spatial, k])],
        opset=20)
    rng = np.random.default_rng(1)
    size = np.array([2, 3, *spatial], np.int64)
    compiled = dync.compile(model, (rng.standard_normal((2, k, k + 1)).astype(np.float32), size),
                            cache=False)
    for _ in range(2):
        theta = rng.standard_normal((2, k, k + 1)).astype(np.float32)
        want = ReferenceEvaluator(model).run(None, {"theta": theta, "size": size})[0]
        np.testing.assert_allclose(np.asarray(compiled(theta, size)[0]), want, rtol=1e-5,
                                   atol=1e-6)
    with pytest.raises(InputError):
        compiled(theta, np.array([2, 3, *[d + 1 for d in spatial]], np.int64))


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_by_negative_or_width_or_more(direction):
    x = np.array([-8, 4, -1, 7, -128, 1], np.int8)
    amount = np.array([-1, 8, 9, 127, 3, 7], np.int8)
    model = _model(
        [helper.make_node("BitShift", ["x", "s"], ["y"], direction=direction)],
        [helper.make_tensor_value_info("x", TensorProto.INT8, [6]),
         helper.make_tensor_value_info("s", TensorProto.INT8, [6])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [6])], opset=24)
    _check(model, x, amount)


def test_lp_normalization_of_a_zero_slice_is_zero():
    x = np.array([[1.0, 0.0, 3.0], [2.0, 0.0, -4.0]], np.float32)
    model = _model(
        [helper.make_node("LpNormalization", ["x"], ["y"], axis=0, p=2)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    _check(model, x)


def test_weighted_mean_softmax_cross_entropy_is_expanded():
    rng = np.random.default_rng(0)
    model = _model(
        [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["loss"],
                          reduction="mean")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5]),
         helper.make_tensor_value_info("t", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], opset=17)
    _check(model, rng.random((3, 5), dtype=np.float32), np.array([1, 4, 3]),
           np.array([0.9, 0.7, 0.8, 0.9, 0.9], np.float32))


@pytest.mark.parametrize("op,reduction", [("NegativeLogLikelihoodLoss", "mean"),
                                          ("SoftmaxCrossEntropyLoss", "none")])
def test_losses_over_extra_dims_are_expanded(op, reduction):
    """Over [N, C, d1, d2] the lowering gives torch's nll_loss_forward, which IREE does not
    compile; the softmax cross entropy's body holds the NLL loss, expanded in turn."""
    rng = np.random.default_rng(3)
    model = _model(
        [helper.make_node(op, ["x", "t"], ["loss"], reduction=reduction, ignore_index=2)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3, 2]),
         helper.make_tensor_value_info("t", TensorProto.INT64, [2, 3, 2])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT,
                                       [] if reduction == "mean" else [2, 3, 2])])
    _check(model, rng.standard_normal((2, 4, 3, 2), dtype=np.float32),
           rng.integers(0, 4, (2, 3, 2)))


@pytest.mark.parametrize("a_shape,b_shape,y_shape", [([3], [2, 3, 4], [2, 4]),
                                                     ([2, 1, 4, 3], [3], [2, 1, 4])])
def test_a_vector_times_a_batch_of_matrices(a_shape, b_shape, y_shape):
    rng = np.random.default_rng(4)
    model = _model(
        [helper.make_node("MatMul", ["a", "b"], ["y"])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)])
    _check(model, rng.standard_normal(a_shape, dtype=np.float32),
           rng.standard_normal(b_shape, dtype=np.float32))


def test_det_pivots_and_of_a_dynamic_size_is_refused_naming_the_node():
    """[[0, 1], [2, 3]] has a zero leading minor (unpivoted elimination: NaN); singular and
    batched matrices too."""
    x = np.array([[[0, 1, 0], [2, 3, 1], [1, 0, 4]], [[1, 2, 3], [2, 4, 6], [0, 1, 1]],
                  [[0, 0, 1], [0, 2, 0], [3, 0, 0]]], np.float32)
    model = _model(
        [helper.make_node("Det", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    _check(model, x)
    dynamic = _model(
        [helper.make_node("Det", ["x"], ["y"], name="determinant")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    with pytest.raises(UnsupportedConstructError, match="without pivoting") as info:
        dync.compile(dynamic, cache=False)
    assert info.value.source == "node 'determinant'"


@pytest.mark.parametrize("mode,extra", [("linear", {}), ("cubic", {"exclude_outside": 1}),
                                        ("cubic", {"cubic_coeff_a": -0.5})])
def test_resize_align_corners_downsamples_and_upsamples_like_onnx(mode, extra):
    """Scales given at run time (the output size too), down on one axis and up on another;
    the coordinate transform uses `scale * size`, not the rounded size."""
    x = np.arange(1, 1 + 4 * 5, dtype=np.float32).reshape(1, 1, 4, 5) ** 1.5
    model = _model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode,
                          coordinate_transformation_mode="align_corners", **extra)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 5]),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)])
    _check(model, x, np.array([1, 1, 0.6, 1.7], np.float32))


def test_resize_align_corners_to_sizes_of_one():
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    model = _model(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear",
                          coordinate_transformation_mode="align_corners")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 7])])
    model.graph.initializer.append(onnx.numpy_helper.from_array(
        np.array([1, 1, 7], np.int64), "sizes"))
    _check(model, x)


@pytest.mark.parametrize("pads,w_zero", [([1, 0, 1, 2], "scalar"), ([0, 0, 0, 0], "channel"),
                                         ([1, 1, 1, 1], "channel")])
def test_conv_integer_with_pads_or_a_zero_point_per_channel(pads, w_zero):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (1, 2, 4, 4), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 2, 2, 2), dtype=np.uint8)
    zero = np.array(200, np.uint8) if w_zero == "scalar" else np.array([0, 130, 255], np.uint8)
    model = _model(
        [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=pads)],
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 4, 4]),
         helper.make_tensor_value_info("w", TensorProto.UINT8, [3, 2, 2, 2]),
         helper.make_tensor_value_info("xz", TensorProto.UINT8, []),
         helper.make_tensor_value_info("wz", TensorProto.UINT8, list(zero.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [None] * 4)], opset=10)
    _check(model, x, w, np.array(129, np.uint8), zero)


@pytest.mark.parametrize("elem,axis", [(TensorProto.UINT16, None), (TensorProto.INT16, 0)])
def test_dequantize_linear_of_16_bit_integers(elem, axis):
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    info = np.iinfo(dtype)
    x = np.array([[info.min, 0, 1], [info.max, 1000, info.max - 1]], dtype)
    scale = np.array([0.5, 0.25], np.float32) if axis is not None else np.array(0.5, np.float32)
    zero = np.full(scale.shape, info.max // 2 + 1, dtype)
    model = _model(
        [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"],
                          **({} if axis is None else {"axis": axis}))],
        [helper.make_tensor_value_info("x", elem, [2, 3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, list(scale.shape)),
         helper.make_tensor_value_info("z", elem, list(zero.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    _check(model, x, scale, zero)


@pytest.mark.parametrize("shape,time_axis,batch_axis", [([4, 4], 0, 1), ([4, 4], 1, 0),
                                                      ([5, 4, 2], 1, 0)])
def test_reverse_sequence_compiles_and_reverses_each_prefix(shape, time_axis, batch_axis):
    """IREE 3.13 fails to compile its own lowering of the 4x4 cases (a vector.gather)."""
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    lengths = np.array([1, 4, 0, 3, 2], np.int64)[: shape[batch_axis]]
    model = _model(
        [helper.make_node("ReverseSequence", ["x", "lens"], ["y"], time_axis=time_axis,
                          batch_axis=batch_axis)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("lens", TensorProto.INT64, list(lengths.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    _check(model, x, lengths)


def _suppression_model(batches: int, classes: int, boxes: int) -> onnx.ModelProto:
    """NonMaxSuppression with every input, a score threshold among them."""
    return _model(
        [helper.make_node("NonMaxSuppression", ["b", "s", "n", "iou", "min"], ["y"])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [batches, boxes, 4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [batches, classes, boxes]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("min", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [None, 3])])


def test_non_max_suppression_drops_boxes_under_the_score_threshold():
    """The lowering refuses a threshold above the least score at run time; the rewrite runs
    without it and filters: boxes 2 and 4 score under it, box 1 overlaps box 0."""
    boxes = np.array([[[0, 0, 1, 1], [0, 0.05, 1, 1.05], [0, 2, 1, 3], [0, 5, 1, 6],
                       [0, 8, 1, 9]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.3, 0.6, 0.1]]], np.float32)
    model = _suppression_model(1, 1, 5)
    _check(model, boxes, scores, np.array([5]), np.array([0.5], np.float32),
           np.array([0.3], np.float32))


def test_non_max_suppression_over_batches_and_classes():
    """2 batches x 3 classes (IREE 3.13 failed to compile the lowering for more than one of
    either), with a score threshold: one suppression per (batch, class), in ONNX's order.
    (A dynamic number of boxes fails in IREE with one batch and class too: "'tensor.dim' op
    unexpected during shape cleanup".)"""
    model = _suppression_model(2, 3, 9)
    rng = np.random.default_rng(7)
    compiled = dync.compile(model, cache=False)
    reference = ReferenceEvaluator(model)
    for _ in range(3):
        corners = rng.random((2, 9, 2), np.float32) * 4
        boxes = np.concatenate([corners, corners + 0.5 + rng.random((2, 9, 2), np.float32)], -1)
        args = {"b": boxes, "s": rng.random((2, 3, 9), np.float32),
                "n": np.array([3]), "iou": np.array([0.4], np.float32),
                "min": np.array([0.2], np.float32)}
        want = reference.run(None, args)[0]
        np.testing.assert_array_equal(np.asarray(compiled(*args.values())[0]), want)


def test_average_pool_ceil_mode_counting_pads_with_dilations():
    """Ceil-mode windows over the end pads averaged over the pads but not past them; a last
    window that would start in the end pads (ONNX drops it) is refused instead."""
    x = np.arange(1, 50, dtype=np.float32).reshape(1, 1, 7, 7)

    def pool(pads, strides, shape):
        return _model(
            [helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                              dilations=[2, 2], strides=strides, pads=pads, ceil_mode=1,
                              count_include_pad=1)],
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)])

    _check(pool([1, 0, 1, 1], [2, 2], [1, 1, 7, 7]), x)
    with pytest.raises(UnsupportedConstructError, match="wrong count") as info:
        dync.compile(pool([0, 0, 1, 3], [2, 2], [1, 1, 4, 4]), cache=False)
    assert info.value.source == "node 'pool'"


def _slice_model(shape, starts, ends, axes, steps, name="cut") -> onnx.ModelProto:
    constants = [helper.make_node("Constant", [], [n], value=helper.make_tensor(
        n, TensorProto.INT64, [len(v)], v)) for n, v in
        (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))]
    return _model(
        [*constants, helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"],
                                      name=name)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * len(shape))])


INT64_MIN_PLUS_1 = -(2**63) + 1


@pytest.mark.parametrize("shape,starts,ends,axes,steps", [
    ([20], [-1], [INT64_MIN_PLUS_1], [0], [-1]),  # torch.flip as exported
    ([20], [20], [0], [0], [-1]),  # a start past the end (was a wrong value)
    ([10], [10], [0], [0], [-3]),  # (IREE refused a negative offset)
    ([7, 9], [-1, 8], [INT64_MIN_PLUS_1, -20], [-1, 0], [-1, -2]),
    ([7, 9], [1, 8], [5, 0], [0, 1], [2, -2]),  # one axis forward, one backward
    ([7, 9], [100, 8], [-100, 0], [1, 0], [-4, 1]),
    ([4, 5], [3], [3], [0], [-1]),  # empty
])
def test_slice_with_negative_steps(shape, starts, ends, axes, steps):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    _check(_slice_model(shape, starts, ends, axes, steps), x)


def test_slice_with_a_negative_step_over_a_dynamic_dim():
    model = _slice_model(["n", 3], [-2], [INT64_MIN_PLUS_1], [0], [-2])
    compiled = dync.compile(model, dynamic_shapes={"x": {0: ("n", 1, 64)}}, cache=False)
    for n in (1, 2, 3, 9, 64):  # a start of -2 is before the first row at n = 1
        x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        np.testing.assert_array_equal(np.asarray(compiled(x)[0]), want)


def test_slice_with_steps_known_only_at_run_time_is_refused_naming_the_node():
    model = _model(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"],
                          name="cut")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8]),
         *(helper.make_tensor_value_info(n, TensorProto.INT64, [1])
           for n in ("starts", "ends", "axes", "steps"))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
    with pytest.raises(UnsupportedConstructError, match="steps or axes known only at run") as info:
        dync.compile(model, cache=False)
    assert info.value.source == "node 'cut'"


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_range_with_an_empty_result(dtype):
    """A limit behind the start: the unfixed module aborted the process (malloc)."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model([helper.make_node("Range", ["a", "b", "d"], ["y"])],
                   [helper.make_tensor_value_info(n, elem, []) for n in "abd"],
                   [helper.make_tensor_value_info("y", elem, [None])])
    compiled = dync.compile(model, tuple(np.array(v, dtype) for v in (0, 5, 1)), cache=False)
    for values in ((0, 5, 1), (5, 0, 1), (0, 5, -1), (5, 0, -2), (3, 3, 1), (0, 5.5, 2)):
        args = [np.array(v, dtype) for v in values]
        want = ReferenceEvaluator(model).run(None, dict(zip("abd", args, strict=True)))[0]
        np.testing.assert_array_equal(np.asarray(compiled(*args)[0]), want)


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap"])
@pytest.mark.parametrize("pads", [[0, 1, 2, 0, 2, 1], [1, 0, 0, 1, 3, 5]])
def test_pad_in_edge_reflect_and_wrap_modes(mode, pads):
    """Reflect failed IREE's codegen on the first pads; wrap never finished importing."""
    model = _model(
        [helper.make_node("Constant", [], ["pads"], value=helper.make_tensor(
            "pads", TensorProto.INT64, [6], pads)),
         helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 3)], opset=19)
    _check(model, np.arange(24, dtype=np.float32).reshape(2, 3, 4))


def test_pad_in_wrap_mode_over_a_dynamic_dim_is_refused_naming_the_node():
    model = _model(
        [helper.make_node("Constant", [], ["pads"], value=helper.make_tensor(
            "pads", TensorProto.INT64, [2], [1, 1])),
         helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap", name="wrap")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])], opset=19)
    with pytest.raises(UnsupportedConstructError, match="wrap mode over a dynamic") as info:
        dync.compile(model, cache=False)
    assert info.value.source == "node 'wrap'"


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("dtype,axis", [(np.float32, 1), (np.int32, -1), (np.float32, 0)])
def test_cum_prod(exclusive, reverse, dtype, axis):
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model(
        [helper.make_node("Constant", [], ["axis"], value=helper.make_tensor(
            "axis", TensorProto.INT64, [], [axis])),
         helper.make_node("CumProd", ["x", "axis"], ["y"], exclusive=exclusive,
                          reverse=reverse)],
        [helper.make_tensor_value_info("x", elem, [3, 4])],
        [helper.make_tensor_value_info("y", elem, [3, 4])], opset=26)
    _check(model, np.array([[1, -2, 3, 0], [2, 2, -1, 5], [0.5, 4, 1, -3]]).astype(dtype))


@pytest.mark.parametrize("attributes,scales,sizes", [
    ({"axes": [3, 2]}, [2.0, 1.5], None),
    ({"axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}, None, [7, 8]),
    ({"axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller"}, None, [2, 3]),
    ({"coordinate_transformation_mode": "align_corners", "nearest_mode": "floor"}, None,
     [1, 2, 7, 3]),
    ({"axes": [3], "coordinate_transformation_mode": "half_pixel_symmetric",
      "nearest_mode": "ceil"}, [0.6], None),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_nearest_resize_with_axes_aspect_policy_or_align_corners(attributes, scales, sizes,
                                                                 dtype):
    """Attributes IREE's importer does not lower: Gathers of the reference's indices."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    operands = [helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, kind, [len(v)], v)) for name, kind, v in (
            ("scales", TensorProto.FLOAT, scales), ("sizes", TensorProto.INT64, sizes)) if v]
    model = _model(
        [*operands, helper.make_node("Resize", ["x", "", "scales" if scales else "",
                                                *(["sizes"] if sizes else [])], ["y"],
                                     mode="nearest", **attributes)],
        [helper.make_tensor_value_info("x", elem, [1, 2, 4, 5])],
        [helper.make_tensor_value_info("y", elem, [None] * 4)], opset=19)
    _check(model, np.arange(40).reshape(1, 2, 4, 5).astype(dtype))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_along_an_axis_or_flattened(axis):
    """IREE failed to compile the lowering (a cast between a dynamic and a static count)."""
    attributes = {} if axis is None else {"axis": axis}
    model = _model(
        [helper.make_node("Compress", ["x", "c"], ["y"], **attributes)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * (1 if axis is None
                                                                          else 2))])
    compiled = dync.compile(model, (np.zeros((3, 4), np.float32), np.ones(3, bool)),
                            cache=False)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for condition in ([True, False, True], [False] * 3, [True] * 3, [False, True, False]):
        c = np.array(condition)
        want = ReferenceEvaluator(model).run(None, {"x": x, "c": c})[0]
        np.testing.assert_array_equal(np.asarray(compiled(x, c)[0]), want)


def _dropout_model(name="drop") -> onnx.ModelProto:
    return _model(
        [helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], name=name)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("t", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3])])


def test_training_dropout_of_ratio_zero_is_the_identity_and_of_another_ratio_refused(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    example = (x, np.array(0.0, np.float32), np.array(True))
    compiled = dync.compile(_dropout_model(), example, cache=False)
    y, mask = compiled(*example)
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.bool_ and mask.all()
    compiled.save(tmp_path / "dropout.vmfb")  # the fixed training mode is a bool
    np.testing.assert_array_equal(dync.load(tmp_path / "dropout.vmfb")(*example)[0], x)
    with pytest.raises(UnsupportedConstructError, match="training mode") as info:
        dync.compile(_dropout_model(), (x, np.array(0.5, np.float32), np.array(True)),
                     cache=False)
    assert info.value.source == "node 'drop'"
    inference = dync.compile(_dropout_model(), (x, np.array(0.5, np.float32),
                                                np.array(False)), cache=False)
    np.testing.assert_array_equal(inference(x, np.array(0.5, np.float32),
                                            np.array(False))[0], x)


def test_a_nearest_resize_the_reference_refuses_is_left_to_the_importer():
    """Antialiasing in nearest mode: ONNX's reference raises; the error is the importer's, a
    dync error naming the node, not the reference's exception."""
    model = _model(
        [helper.make_node("Constant", [], ["scales"], value=helper.make_tensor(
            "scales", TensorProto.FLOAT, [2], [2.0, 2.0])),
         helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest", axes=[2, 3],
                          antialias=1, name="resize")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)], opset=19)
    with pytest.raises(UnsupportedConstructError, match="Resize"):
        dync.compile(model, cache=False)


@pytest.mark.parametrize("opset,attributes,length,parts,shape", [
    (17, {"axis": 1}, None, 1, [8, 3]),
    (20, {"onesided": 1}, 10, 1, [8, 3]),                # zero-padded to 10, 6 frequencies
    (20, {"inverse": 1}, 5, 2, [3, 8]),                  # along axis -2, truncated to 5
    (17, {"axis": 1, "inverse": 1, "onesided": 1}, 8, 2, [5, 3]),  # one-sided back to real
])
def test_dft_over_a_dynamic_batch(opset, attributes, length, parts, shape):
    """IREE 3.13 legalizes no `aten.fft_fft`: a MatMul by the transform's matrix."""
    constants = [helper.make_node("Constant", [], ["length"], value=helper.make_tensor(
        "length", TensorProto.INT64, [], [length]))] if length else []
    inputs = ["x", "length" if length else ""]
    if opset >= 20:
        constants.append(helper.make_node("Constant", [], ["axis"], value=helper.make_tensor(
            "axis", TensorProto.INT64, [], [-2])))
        inputs.append("axis")
    model = _model(
        [*constants, helper.make_node("DFT", inputs, ["y"], **attributes)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", *shape, parts])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)], opset=opset)
    rng = np.random.default_rng(0)
    example = rng.standard_normal((2, *shape, parts)).astype(np.float32)
    compiled = dync.compile(model, (example,), cache=False)
    for batch in (2, 5):
        x = rng.standard_normal((batch, *shape, parts)).astype(np.float32)
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        got = np.asarray(compiled(x)[0])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("source,target", [(np.float32, np.int32), (np.uint16, np.int16),
                                           (np.int64, np.float64), (np.int8, np.uint8)])
def test_bitcast_between_types_of_one_width_over_a_dynamic_dim(source, target):
    """torch-mlir lowers no BitCast: the same bits in the other type, signedness included."""
    elem, to = (helper.np_dtype_to_tensor_dtype(np.dtype(t)) for t in (source, target))
    model = _model([helper.make_node("BitCast", ["x"], ["y"], to=to)],
                   [helper.make_tensor_value_info("x", elem, ["n", 3])],
                   [helper.make_tensor_value_info("y", to, ["n", 3])], opset=26)
    raw = np.random.default_rng(0).integers(0, 256, size=(5, 3 * np.dtype(source).itemsize))
    compiled = dync.compile(model, (raw[:2].astype(np.uint8).view(source),), cache=False)
    for rows in (2, 5):
        x = raw[:rows].astype(np.uint8).view(source)
        got = np.asarray(compiled(x)[0])
        assert got.dtype == np.dtype(target)
        np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))


def test_bitcast_of_bool_to_a_byte_is_refused_naming_the_node():
    model = _model([helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.UINT8,
                                     name="flags")],
                   [helper.make_tensor_value_info("x", TensorProto.BOOL, [3])],
                   [helper.make_tensor_value_info("y", TensorProto.UINT8, [3])], opset=26)
    with pytest.raises(UnsupportedConstructError) as info:
        dync.compile(model, cache=False)
    assert info.value.source == "node 'flags'"


@pytest.mark.parametrize("attributes, masked", [
    ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, False),
    ({"kernel_shape": [3, 2], "pads": [2, 1, 0, 1], "strides": [2, 1], "dilations": [1, 2],
      "group": 2, "offset_group": 2}, True),
], ids=["padded", "strided-dilated-grouped-masked"])
def test_deform_conv_reads_offset_points_bilinearly_zero_outside(attributes, masked):
    """Offsets of a few pixels either way, so that points fall between pixels and outside
    the input on every side; a dynamic batch."""
    kh, kw = attributes["kernel_shape"]
    og, groups = attributes.get("offset_group", 1), attributes.get("group", 1)
    sh, sw = attributes.get("strides", [1, 1])
    dh, dw = attributes.get("dilations", [1, 1])
    pads = attributes["pads"]
    h, w, c, m = 6, 7, 4, 6
    oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1) // sw + 1
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", c, h, w]),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, [m, c // groups, kh, kw]),
              helper.make_tensor_value_info("offset", TensorProto.FLOAT,
                                            ["n", 2 * og * kh * kw, oh, ow]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [m])]
    if masked:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT,
                                                    ["n", og * kh * kw, oh, ow]))
    model = _model([helper.make_node("DeformConv", [i.name for i in inputs], ["y"],
                                     **attributes)],
                   inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                          ["n", m, oh, ow])])
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((2, c, h, w)), rng.standard_normal((m, c // groups, kh, kw)),
            rng.uniform(-3, 3, (2, 2 * og * kh * kw, oh, ow)), rng.standard_normal(m)]
    if masked:
        args.append(rng.uniform(0, 1, (2, og * kh * kw, oh, ow)))
    # Sums of 20-50 products of values of order 1, in another order than the reference's.
    _check(model, *(a.astype(np.float32) for a in args), atol=1e-5)


@pytest.mark.parametrize("a_type,shapes", [
    (TensorProto.INT8, ([2, 3, 4], [2, 4, 5])), (TensorProto.UINT8, ([2, 3, 4], [4, 5])),
    (TensorProto.UINT8, ([3, 4], [2, 2, 4, 5]))])
def test_qlinear_matmul_of_rank_above_two(a_type, shapes):
    """Batched QLinearMatMul (wrong values from the lowering): as ONNX's reference computes it,
    saturating, with scales that put results on halves and past the type's range."""
    dtype = helper.tensor_dtype_to_np_dtype(a_type)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    a, b = (rng.integers(info.min, info.max + 1, shape, dtype=dtype) for shape in shapes)
    zero = np.array([3 if a_type == TensorProto.UINT8 else -2], dtype)

    def scale(v: float) -> onnx.TensorProto:
        return helper.make_tensor("s", TensorProto.FLOAT, [1], [v])

    nodes = [helper.make_node("Constant", [], [name], value=value) for name, value in [
        ("a_s", scale(0.02)), ("b_s", scale(0.5)), ("y_s", scale(0.25)),
        ("z", helper.make_tensor("z", a_type, [1], zero.tolist()))]]
    nodes.append(helper.make_node("QLinearMatMul", ["a", "a_s", "z", "b", "b_s", "z", "y_s", "z"],
                                  ["y"]))
    out_shape = list(np.broadcast_shapes(shapes[0][:-2], shapes[1][:-2])) + [
        shapes[0][-2], shapes[1][-1]]
    model = _model(nodes, [helper.make_tensor_value_info("a", a_type, shapes[0]),
                           helper.make_tensor_value_info("b", a_type, shapes[1])],
                   [helper.make_tensor_value_info("y", a_type, out_shape)])
    _check(model, a, b, atol=0)


@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_unique_without_an_axis_over_a_dynamic_length(sorted_, dtype):
    """Unique (IREE failed to compile the lowering): all four outputs, sorted or in order of
    first occurrence, with many repeats, at several lengths of one compiled model."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model(
        [helper.make_node("Unique", ["x"], ["y", "first", "inverse", "counts"], sorted=sorted_)],
        [helper.make_tensor_value_info("x", elem, ["n"])],
        [helper.make_tensor_value_info("y", elem, ["u"])]
        + [helper.make_tensor_value_info(name, TensorProto.INT64, [d])
           for name, d in [("first", "u"), ("inverse", "n"), ("counts", "u")]], opset=11)
    compiled = dync.compile(model, cache=False)
    rng = np.random.default_rng(4)
    for n in (1, 2, 9, 40):
        x = rng.integers(-3, 4, n).astype(dtype)
        want = ReferenceEvaluator(model).run(None, {"x": x})
        got = compiled(x)
        for g, w in zip(got, want, strict=True):
            g = np.asarray(g)
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter_writes_each_batch_from_its_index_over_a_dynamic_length(mode):
    """TensorScatter (opset 24, not lowered): a KV-cache update at each batch's write index,
    wrapping around the cache in circular mode, for updates of several lengths."""
    model = _model(
        [helper.make_node("TensorScatter", ["cache", "update", "at"], ["y"], mode=mode)],
        [helper.make_tensor_value_info("cache", TensorProto.FLOAT, [3, 2, 8, 4]),
         helper.make_tensor_value_info("update", TensorProto.FLOAT, [3, 2, "t", 4]),
         helper.make_tensor_value_info("at", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2, 8, 4])], opset=24)
    compiled = dync.compile(model, cache=False)
    rng = np.random.default_rng(5)
    cache = rng.standard_normal((3, 2, 8, 4), dtype=np.float32)
    for t in (1, 3):
        update = rng.standard_normal((3, 2, t, 4), dtype=np.float32)
        at = np.array([0, 8 - t, 6 if mode == "circular" else 2], np.int64)
        want = ReferenceEvaluator(model).run(None, {"cache": cache, "update": update, "at": at})
        got = compiled(cache, update, at)
        np.testing.assert_array_equal(np.asarray(got[0] if isinstance(got, list) else got),
                                      want[0])


@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize("shape,axis", [([6, 3], 0), ([2, 5, 2], 1), ([4, 3], -1)])
def test_unique_along_an_axis_ranks_slices_lexicographically(sorted_, shape, axis):
    """Unique of slices (IREE did not legalize the lowering's scatter): slices that share a
    first element, repeated slices, all four outputs."""
    rng = np.random.default_rng(6)
    x = rng.integers(0, 2, shape).astype(np.float32)
    x = np.concatenate([x, np.take(x, [0], axis=axis)], axis=axis)  # one slice repeated
    model = _model(
        [helper.make_node("Unique", ["x"], ["y", "first", "inverse", "counts"], axis=axis,
                          sorted=sorted_)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * x.ndim)]
        + [helper.make_tensor_value_info(name, TensorProto.INT64, [None])
           for name in ("first", "inverse", "counts")], opset=11)
    y, first, inverse, counts = np.unique(x, True, True, True, axis=axis)
    if not sorted_:  # the reference takes the slices along axis 0 whatever the axis
        order = np.argsort(first)
        y, first, counts = np.take(x, first[order], axis=axis), first[order], counts[order]
        inverse = np.argsort(order)[inverse]
    for got, w in zip(dync.compile(model, cache=False)(x), (y, first, inverse, counts),
                      strict=True):
        np.testing.assert_array_equal(np.asarray(got), w)
        assert np.asarray(got).dtype == w.dtype


@pytest.mark.parametrize("attributes", [
    {"auto_pad": "SAME_UPPER", "p": 2}, {"auto_pad": "SAME_LOWER", "p": 3},
    {"dilations": [2, 1], "strides": [1, 2], "pads": [1, 0, 0, 1], "p": 1}])
def test_lp_pool_with_dilations_or_same_padding(attributes):
    """LpPool the importer does not lower: `|x|^p` summed by a depthwise Conv of ones."""
    x = np.random.default_rng(7).standard_normal((2, 3, 7, 6)).astype(np.float32)
    model = _model([helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 2], **attributes)],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 7, 6])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)])
    _check(model, x, atol=1e-5)


@pytest.mark.parametrize("attributes,w_shape,bias", [
    ({"group": 2}, [4, 3, 3, 3], True), ({"group": 3, "strides": [2, 1]}, [6, 1, 2, 3], False),
    ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, [6, 2, 3, 3], True),
    ({"auto_pad": "SAME_LOWER", "strides": [3, 2], "group": 2}, [6, 2, 3, 3], False),
    ({"pads": [1, 0, 0, 2], "strides": [2, 1]}, [4, 2, 3, 3], True)])
def test_conv_transpose_in_groups_or_with_same_padding(attributes, w_shape, bias):
    """ConvTranspose in groups (IREE failed to compile it), with a SAME auto_pad or pads that
    differ at the two ends (not lowered): one per group, concatenated; the spec's pads made
    explicit, the difference sliced off."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, w_shape[0], 4, 5)).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    groups = attributes.get("group", 1)
    b = rng.standard_normal(w_shape[1] * groups).astype(np.float32)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, w_shape)]
    if bias:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b.shape)))
    names = ["x", "w", "b"] if bias else ["x", "w"]

    def conv_transpose(**attributes):
        return _model([helper.make_node("ConvTranspose", names, ["y"], **attributes)], inputs,
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)])

    # The reference has no groups: each group's channels through it alone.
    one = {name: value for name, value in attributes.items() if name != "group"}
    per_x, per_y = w_shape[0] // groups, w_shape[1]
    want = np.concatenate([ReferenceEvaluator(conv_transpose(**one)).run(None, dict(zip(
        names, [x[:, i * per_x:(i + 1) * per_x], w[i * per_x:(i + 1) * per_x],
                b[i * per_y:(i + 1) * per_y]], strict=False)))[0] for i in range(groups)], axis=1)
    got = np.asarray(dync.compile(conv_transpose(**attributes), cache=False)(
        *([x, w, b] if bias else [x, w]))[0])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv_transpose_with_same_padding_and_a_stride_past_the_kernel_is_refused():
    """The spec's output (size × stride) is longer than the one ONNX shape inference gives."""
    model = _model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad="SAME_UPPER",
                                     strides=[3, 3])],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4]),
                    helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 2, 2, 2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)])
    with pytest.raises(dync.UnsupportedConstructError, match="give the pads explicitly"):
        dync.compile(model, cache=False)


@pytest.mark.parametrize("elem", [TensorProto.FLOAT16, TensorProto.BFLOAT16])
def test_range_in_sixteen_bit_floats(elem):
    """Range in float16 and bfloat16 (not lowered): in float32, then rounded."""
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    model = _model([helper.make_node("Range", ["a", "b", "d"], ["y"])],
                   [helper.make_tensor_value_info(n, elem, []) for n in "abd"],
                   [helper.make_tensor_value_info("y", elem, [None])])
    compiled = dync.compile(model, cache=False)
    for a, b, d in [(1.0, 5.0, 0.5), (10.0, 2.0, -3.0), (0.0, 1.0, 0.25), (3.0, 1.0, 1.0)]:
        args = [np.array(v, dtype) for v in (a, b, d)]
        want = ReferenceEvaluator(model).run(None, dict(zip("abd", args, strict=True)))[0]
        got = np.asarray(compiled(*args)[0])
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


@pytest.mark.parametrize("attributes,image,block", [
    ({}, [5, 5], [1, 5]), ({"pads": [0, 1, 0, 1], "strides": [2, 1]}, [5, 6], [2, 3]),
    ({"dilations": [2, 1]}, [6, 4], [2, 2]), ({}, [3, 4, 2], [1, 2, 2])])
def test_col2im_over_a_dynamic_batch(attributes, image, block):
    """Col2Im (IREE failed to compile the lowering), its shapes given as graph inputs (fixed
    at the example's value): overlapping blocks summed, blocks in the padding dropped; one
    compiled model at several batch sizes."""
    spatial = len(image)
    pads = attributes.get("pads", [0] * 2 * spatial)
    strides = attributes.get("strides", [1] * spatial)
    dilations = attributes.get("dilations", [1] * spatial)
    blocks = int(np.prod([(image[i] + pads[i] + pads[spatial + i] - dilations[i]
                           * (block[i] - 1) - 1) // strides[i] + 1 for i in range(spatial)]))
    channels = 2 * int(np.prod(block))
    model = _model(
        [helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attributes)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", channels, blocks]),
         helper.make_tensor_value_info("image", TensorProto.INT64, [spatial]),
         helper.make_tensor_value_info("block", TensorProto.INT64, [spatial])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * (2 + spatial))], opset=18)
    shapes = (np.array(image, np.int64), np.array(block, np.int64))
    rng = np.random.default_rng(9)
    compiled = dync.compile(model, (rng.standard_normal((1, channels, blocks),
                                                        dtype=np.float32), *shapes), cache=False)
    for n in (1, 3):
        x = rng.standard_normal((n, channels, blocks), dtype=np.float32)
        want = ReferenceEvaluator(model).run(None, {"x": x, "image": shapes[0],
                                                    "block": shapes[1]})[0]
        np.testing.assert_allclose(np.asarray(compiled(x, *shapes)[0]), want, rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("mode,attributes,roi", [
    ("linear", {"antialias": 1}, None), ("cubic", {"antialias": 1, "cubic_coeff_a": -0.5}, None),
    ("cubic", {"exclude_outside": 1, "cubic_coeff_a": -0.5}, None),
    ("linear", {"coordinate_transformation_mode": "tf_crop_and_resize",
                "extrapolation_value": 10.0}, [0, 0, 0.4, 0.6, 1, 1, 1.2, 0.9])])
@pytest.mark.parametrize("scales", [[1, 1, 0.6, 0.8], [1, 1, 1.7, 0.5]])
def test_interpolating_resize_the_importer_does_not_lower_over_a_dynamic_batch(
        mode, attributes, roi, scales):
    """Resize with antialias, cubic exclude_outside or tf_crop_and_resize (not lowered): one
    MatMul per resized axis by the reference's own interpolation matrix, extrapolated points
    set; the batch (scale 1) left dynamic."""
    inputs = ["x", "roi", "scales"] if roi else ["x", "", "scales"]
    nodes = [helper.make_node("Constant", [], ["scales"], value=helper.make_tensor(
        "s", TensorProto.FLOAT, [4], scales))]
    if roi:
        nodes.append(helper.make_node("Constant", [], ["roi"], value=helper.make_tensor(
            "r", TensorProto.FLOAT, [8], roi)))
    nodes.append(helper.make_node("Resize", inputs, ["y"], mode=mode, **attributes))
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2, 9, 7])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)], opset=19)
    compiled = dync.compile(model, cache=False)
    rng = np.random.default_rng(10)
    for n in (1, 3):
        x = rng.standard_normal((n, 2, 9, 7)).astype(np.float32)
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        got = np.asarray(compiled(x)[0])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding,mode,spatial,align_corners", [
    ("zeros", "cubic", [5, 4], 0), ("border", "cubic", [5, 4], 1), ("border", "cubic", [5, 4], 0),
    ("reflection", "cubic", [5, 4], 0), ("reflection", "cubic", [5, 4], 1),
    ("zeros", "linear", [3, 5, 4], 1), ("border", "linear", [3, 5, 4], 0),
    ("reflection", "nearest", [3, 5, 4], 0), ("zeros", "nearest", [3, 5, 4], 1),
    ("border", "cubic", [3, 4, 3], 0)])
def test_grid_sample_in_cubic_mode_or_in_three_dims(padding, mode, spatial, align_corners):
    """GridSample with no lowering (cubic, volumetric): points inside, on halves, just and far
    outside, matched against the reference for each padding."""
    rng = np.random.default_rng(11)
    k = len(spatial)
    x = rng.standard_normal((2, 3, *spatial)).astype(np.float32)
    points = np.concatenate([rng.uniform(-1.0, 1.0, (2, 6, k)), rng.uniform(-3.0, 3.0, (2, 4, k)),
                             np.full((2, 2, k), 0.25)], axis=1).astype(np.float32)
    grid = points.reshape(2, *([1] * (k - 1)), 12, k)
    model = _model(
        [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding,
                          align_corners=align_corners)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, list(grid.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * (2 + k))])
    _check(model, x, grid, atol=1e-5)


@pytest.mark.parametrize("reduction", ["max", "min"])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.INT32])
def test_scatter_elements_keeps_the_extreme_of_duplicates_and_of_the_data(reduction, dtype):
    """ScatterElements with a max or min reduction (the importer fails the whole conversion
    on them): duplicate and negative indices along the last axis, rows of a dynamic count,
    the data's own values taking part."""
    model = _model(
        [helper.make_node("ScatterElements", ["data", "i", "u"], ["y"], axis=-1,
                          reduction=reduction)],
        [helper.make_tensor_value_info("data", dtype, ["rows", 5]),
         helper.make_tensor_value_info("i", TensorProto.INT64, ["rows", 4]),
         helper.make_tensor_value_info("u", dtype, ["rows", 4])],
        [helper.make_tensor_value_info("y", dtype, ["rows", 5])], opset=18)
    numpy_type = helper.tensor_dtype_to_np_dtype(dtype)
    rng = np.random.default_rng(4)
    compiled = dync.compile(model, cache=False)
    reference = ReferenceEvaluator(model)
    for rows in (1, 3, 7):
        data = (rng.standard_normal((rows, 5)) * 10).astype(numpy_type)
        indices = rng.integers(-5, 5, (rows, 4))
        indices[:, 1] = indices[:, 0]  # a duplicate in every row
        updates = (rng.standard_normal((rows, 4)) * 10).astype(numpy_type)
        want = reference.run(None, {"data": data, "i": indices, "u": updates})[0]
        np.testing.assert_array_equal(compiled(data, indices, updates)[0], want)


@pytest.mark.parametrize("given_shape", [False, True], ids=["derived", "given"])
def test_max_unpool_puts_each_value_back_at_its_pooling_index(given_shape):
    """MaxPool's values and indices (over the whole tensor, a dynamic batch) unpooled: zeros
    elsewhere; with an output shape given, the derived one padded at the end up to it."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2, 4, 4])]
    unpool = ["values", "indices"]
    if given_shape:
        inputs.append(helper.make_tensor_value_info("shape", TensorProto.INT64, [4]))
        unpool.append("shape")
    model = _model(
        [helper.make_node("MaxPool", ["x"], ["values", "indices"], kernel_shape=[2, 2],
                          strides=[2, 2]),
         helper.make_node("MaxUnpool", unpool, ["y"], kernel_shape=[2, 2], strides=[2, 2])],
        inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 2, "h", "w"])],
        opset=22)
    rng = np.random.default_rng(5)
    compiled = dync.compile(model, cache=False)
    reference = ReferenceEvaluator(model)
    for n in (1, 3):
        args = [rng.standard_normal((n, 2, 4, 4)).astype(np.float32)]
        if given_shape:
            args.append(np.array([n, 2, 6, 5], np.int64))
        want = reference.run(None, dict(zip(["x", "shape"], args, strict=False)))[0]
        got = np.asarray(compiled(*args)[0])
        assert got.shape == want.shape == ((n, 2, 6, 5) if given_shape else (n, 2, 4, 4))
        np.testing.assert_array_equal(got, want)


def _max_pool_by_definition(x: np.ndarray, kernel, strides, begins, ends, column_major=False):
    """MaxPool's values and Indices as the ONNX spec defines them, window by window (ONNX's
    reference evaluator reads 2-D pads in another order and counts indices in the padded
    input): the first greatest element of each window's positions inside the input, its index
    over the whole tensor (column-major within a plane for `storage_order=1`)."""
    n, c, *sizes = x.shape
    counts = [(s + b + e - k) // t + 1
              for s, k, t, b, e in zip(sizes, kernel, strides, begins, ends, strict=True)]
    values = np.empty((n, c, *counts), x.dtype)
    indices = np.empty((n, c, *counts), np.int64)
    for b, ch, *out in itertools.product(range(n), range(c), *(range(k) for k in counts)):
        best = None
        for offset in itertools.product(*(range(k) for k in kernel)):
            at = [o * t - p + f for o, t, p, f in zip(out, strides, begins, offset, strict=True)]
            if all(0 <= a < s for a, s in zip(at, sizes, strict=True)) and (
                    best is None or x[(b, ch, *at)] > x[(b, ch, *best)]):
                best = at
        values[(b, ch, *out)] = x[(b, ch, *best)]
        within = np.ravel_multi_index(best, sizes, order="F" if column_major else "C")
        indices[(b, ch, *out)] = (b * c + ch) * int(np.prod(sizes)) + within
    return values, indices


@pytest.mark.parametrize("spatial,attributes,pads", [
    ([5, 6], {"kernel_shape": [2, 3], "strides": [2, 1], "pads": [1, 0, 0, 1]}, ([1, 0], [0, 1])),
    ([5, 5], {"kernel_shape": [2, 2], "strides": [2, 2], "storage_order": 1}, ([0, 0], [0, 0])),
    ([5, 6], {"kernel_shape": [2, 2], "strides": [1, 1], "auto_pad": "SAME_UPPER"},
     ([0, 0], [1, 1])),
    ([5, 6], {"kernel_shape": [3, 2], "strides": [1, 1], "auto_pad": "SAME_LOWER",
              "storage_order": 1}, ([1, 1], [1, 0])),
    ([6, 6], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, ([1, 1], [1, 1])),
    ([9], {"kernel_shape": [3], "strides": [2]}, ([0], [0])),
    ([4, 4, 4], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}, ([0] * 3, [0] * 3)),
], ids=["2d-pads", "2d-column-major", "same-upper", "same-lower-column-major", "2d-symmetric",
        "1d", "3d"])
def test_max_pool_indices_count_over_the_whole_tensor(spatial, attributes, pads):
    """MaxPool's Indices over a dynamic batch of 3 channels: the lowering counted within each
    (batch, channel) plane, silently (ONNX: `[0, N * C * plane)`), and in the padded input
    where an axis's pads differ at its two ends (asymmetric pads, an odd SAME padding)."""
    rank = 2 + len(spatial)
    model = _model(
        [helper.make_node("MaxPool", ["x"], ["values", "indices"], **attributes)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, *spatial])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [None] * rank),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [None] * rank)])
    rng = np.random.default_rng(6)
    compiled = dync.compile(model, cache=False)
    for n in (1, 2):
        x = rng.standard_normal((n, 3, *spatial)).astype(np.float32)
        want = _max_pool_by_definition(x, attributes["kernel_shape"], attributes["strides"],
                                       *pads, attributes.get("storage_order", 0) == 1)
        for got, expected in zip(compiled(x), want, strict=True):
            np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("mode,transform,ratio", [
    ("avg", "half_pixel", 2), ("avg", "output_half_pixel", 3), ("max", "half_pixel", 2)])
def test_roi_align_over_a_dynamic_number_of_rois(mode, transform, ratio):
    """RoiAlign (IREE 3.13 does not legalize the lowering's `torchvision.roi_align`): ROIs of
    two images, some reaching past the image's edges or collapsed to a point, a non-square
    output, a spatial scale."""
    model = _model(
        [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], mode=mode,
                          coordinate_transformation_mode=transform, output_height=3,
                          output_width=4, sampling_ratio=ratio, spatial_scale=0.5)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 11]),
         helper.make_tensor_value_info("rois", TensorProto.FLOAT, ["r", 4]),
         helper.make_tensor_value_info("batch", TensorProto.INT64, ["r"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["r", 3, 3, 4])])
    rng = np.random.default_rng(8)
    compiled = dync.compile(model, cache=False)
    reference = ReferenceEvaluator(model)
    for count in (1, 5):
        x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
        corners = rng.uniform(-6, 24, (count, 2)).astype(np.float32)
        rois = np.concatenate([corners, corners + rng.uniform(0, 14, (count, 2))], 1)
        rois[0, 2:] = rois[0, :2]  # a point
        batch = rng.integers(0, 2, count)
        want = reference.run(None, {"x": x, "rois": rois.astype(np.float32), "batch": batch})[0]
        np.testing.assert_allclose(np.asarray(compiled(x, rois.astype(np.float32), batch)[0]),
                                   want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("source", [TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64])
@pytest.mark.parametrize("target", [TensorProto.INT16, TensorProto.UINT16])
def test_cast_to_a_16_bit_integer_truncates_and_wraps(source, target):
    """The importer maps neither 16-bit type (and torch-mlir aborts on a conversion to ui16):
    values in range, negative ones and ones past the range, as ONNX's reference casts them."""
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=target)],
                   [helper.make_tensor_value_info("x", source, ["n"])],
                   [helper.make_tensor_value_info("y", target, ["n"])])
    x = np.array([1.7, -2.9, 300.5, 3, 65535, 40000.9, -32768, 70000])
    _check(model, x.astype(helper.tensor_dtype_to_np_dtype(source)))


@pytest.mark.parametrize("block", [2, 3])
def test_quantize_and_dequantize_in_blocks(block):
    """QuantizeLinear to uint16 per block (the importer lowers neither blocks nor uint16) and
    DequantizeLinear of uint8 per block along axis 1 of a 2 x 5 x 3 tensor, the last block
    short where 5 is not a multiple of the block; values that saturate at both ends."""
    blocks = -(-5 // block)

    def blocked(op: str, x_type: int, zero_type: int, out_type: int) -> onnx.ModelProto:
        return _model(
            [helper.make_node(op, ["x", "scale", "zero"], ["y"], axis=1, block_size=block)],
            [helper.make_tensor_value_info("x", x_type, [2, 5, 3]),
             helper.make_tensor_value_info("scale", TensorProto.FLOAT, [2, blocks, 3]),
             helper.make_tensor_value_info("zero", zero_type, [2, blocks, 3])],
            [helper.make_tensor_value_info("y", out_type, [2, 5, 3])], opset=21)

    quantize = blocked("QuantizeLinear", TensorProto.FLOAT, TensorProto.UINT16,
                       TensorProto.UINT16)
    dequantize = blocked("DequantizeLinear", TensorProto.UINT8, TensorProto.UINT8,
                         TensorProto.FLOAT)
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((2, 5, 3)) * 40000).astype(np.float32)
    scale = rng.uniform(0.5, 2, (2, blocks, 3)).astype(np.float32)
    _check(quantize, x, scale, rng.integers(0, 60000, (2, blocks, 3)).astype(np.uint16))
    _check(dequantize, rng.integers(0, 256, (2, 5, 3)).astype(np.uint8), scale,
           rng.integers(0, 256, (2, blocks, 3)).astype(np.uint8))


@pytest.mark.parametrize("kernel,stride,pads,output_padding,group", [
    (4, 2, [1, 1, 1, 1], [0, 0], 1), (3, 2, [1, 0, 1, 2], [1, 0], 1),
    (2, 3, [0, 0, 0, 0], [0, 2], 1), (5, 2, [3, 4, 3, 4], [1, 1], 1),
    (4, 2, [1, 1, 1, 1], [0, 0], 3)])
def test_conv_transpose_as_one_convolution_over_its_phases(kernel, stride, pads,
                                                           output_padding, group, tmp_path):
    """A strided ConvTranspose with a constant weight over a dynamic H x W: per group one Conv
    whose outputs are each channel's phases, then DepthToSpace (no transposed convolution
    reaches IREE), against the reference at several sizes; pads that differ at the two ends,
    a stride past the kernel, pads past it, groups (against torch: the reference's grouped
    ConvTranspose fails to reshape its weight)."""
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(9)
    w = rng.standard_normal((6, 4 if group == 1 else 2, kernel, kernel)).astype(np.float32)
    b = rng.standard_normal(w.shape[1] * group).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[stride] * 2,
                            pads=pads, output_padding=output_padding, group=group)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = dync.compile(model, cache=False, dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    assert "ConvTranspose" not in text and "%true" not in " ".join(
        line for line in text.splitlines() if "torch.aten.convolution " in line)
    for size in ((5, 7), (3, 3), (12, 9)):
        x = rng.standard_normal((1, 6, *size)).astype(np.float32)
        if group == 1:
            want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        else:  # symmetric pads and output padding only
            want = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w),
                                      torch.from_numpy(b), stride, pads[0], output_padding[0],
                                      group).numpy()
        got = np.asarray(compiled(x)[0])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
