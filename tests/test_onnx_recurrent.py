"""ONNX `RNN`/`GRU`/`LSTM` layers IREE's importer does not lower, or lowers wrong
(`dync/frontends/onnx_recurrent.py`), and `Scan` over a dynamic length (`onnx_loops`): each
compiled over a dynamic sequence length and batch, checked against ONNX's reference evaluator
at several lengths."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dync

INPUT, HIDDEN = 3, 4
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _layer(op: str, direction: str, layout: int, lengths: bool = False, peepholes: bool = False,
           opset: int = 14, **attributes) -> onnx.ModelProto:
    """One layer over X [seq, batch, input] (batch first for layout 1), with initial states
    (and `sequence_lens`, peepholes) as graph inputs and every output."""
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(len(op) + dirs)
    g = GATES[op]
    weights = {"W": (dirs, g * HIDDEN, INPUT), "R": (dirs, g * HIDDEN, HIDDEN),
               "B": (dirs, 2 * g * HIDDEN)}
    if peepholes:
        weights["P"] = (dirs, 3 * HIDDEN)
    initializers = [onnx.numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.7).astype(np.float32), name)
        for name, shape in weights.items()]
    x = ["seq", "batch", INPUT] if layout == 0 else ["batch", "seq", INPUT]
    state = [dirs, "batch", HIDDEN] if layout == 0 else ["batch", dirs, HIDDEN]
    states = ["h0", "c0"] if op == "LSTM" else ["h0"]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x)]
    if lengths:
        inputs.append(helper.make_tensor_value_info("lengths", TensorProto.INT32, ["batch"]))
    inputs += [helper.make_tensor_value_info(s, TensorProto.FLOAT, state) for s in states]
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(
        op, ["X", "W", "R", "B", "lengths" if lengths else "", *states]
        + (["P"] if peepholes else []), outputs, hidden_size=HIDDEN, direction=direction,
        layout=layout, **attributes)
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in outputs], initializers)
    return onnx.shape_inference.infer_shapes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))


def _feeds(model: onnx.ModelProto, seq: int, batch: int, rng) -> dict[str, np.ndarray]:
    feeds = {}
    for value in model.graph.input:
        dims = [d.dim_value or {"seq": seq, "batch": batch}[d.dim_param]
                for d in value.type.tensor_type.shape.dim]
        if value.name == "lengths":
            feeds["lengths"] = rng.integers(1, seq + 1, size=batch).astype(np.int32)
            feeds["lengths"][0] = seq
        else:
            feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def _compare(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction,layout", [("forward", 0), ("reverse", 1),
                                              ("bidirectional", 0), ("bidirectional", 1)])
def test_layer_over_a_dynamic_sequence_length(op, direction, layout):
    """Reverse and bidirectional layers are not lowered by the importer; RNN and GRU over a
    dynamic length fail IREE's compile (a buffer sized -1); the importer's LSTM batch-first in
    two directions came out wrong in the reverse half."""
    model = _layer(op, direction, layout)
    rng = np.random.default_rng(0)
    compiled = dync.compile(model, tuple(_feeds(model, 4, 2, rng).values()), cache=False)
    reference = ReferenceEvaluator(model)
    for seq, batch in ((4, 2), (7, 3), (1, 1)):
        feeds = _feeds(model, seq, batch, rng)
        _compare(compiled(*feeds.values()), reference.run(None, feeds))


@pytest.mark.parametrize("op,direction,layout", [("GRU", "bidirectional", 0),
                                                 ("LSTM", "reverse", 1), ("RNN", "forward", 0)])
def test_sequence_lengths_stop_each_sequence(op, direction, layout):
    """With `sequence_lens`, sequence b stops at its own length: its states stay, Y is zero
    past it, and the reverse direction starts at its last step. ONNX's reference ignores
    `sequence_lens`; each sequence is checked against the reference run on it alone."""
    model = _layer(op, direction, layout, lengths=True)
    plain = ReferenceEvaluator(_layer(op, direction, layout))
    rng = np.random.default_rng(1)
    compiled = dync.compile(model, tuple(_feeds(model, 5, 3, rng).values()), cache=False)
    batch_axis = 1 if layout == 0 else 0
    for seq, batch in ((5, 3), (8, 4)):
        feeds = _feeds(model, seq, batch, rng)
        got = [np.asarray(v) for v in compiled(*feeds.values())]
        for b, length in enumerate(feeds["lengths"]):
            alone = {k: np.take(v, [b], axis=batch_axis) for k, v in feeds.items()
                     if k != "lengths"}
            alone["X"] = np.take(alone["X"], range(length), axis=1 - batch_axis)
            want = plain.run(None, alone)
            y = np.take(got[0], [b], axis=2 if layout == 0 else 0)
            time_axis = 0 if layout == 0 else 1
            np.testing.assert_allclose(np.take(y, range(length), axis=time_axis), want[0],
                                       rtol=1e-4, atol=1e-5)
            assert not np.take(y, range(length, seq), axis=time_axis).any()
            for state, expected in zip(got[1:], want[1:], strict=True):
                np.testing.assert_allclose(np.take(state, [b], axis=batch_axis), expected,
                                           rtol=1e-4, atol=1e-5)


def test_lstm_peepholes_are_applied():
    """The importer's lowering ignores the peephole weights `P` (it was refused before)."""
    model = _layer("LSTM", "bidirectional", 0, peepholes=True)
    rng = np.random.default_rng(2)
    compiled = dync.compile(model, tuple(_feeds(model, 4, 2, rng).values()), cache=False)
    without = ReferenceEvaluator(_layer("LSTM", "bidirectional", 0))
    for seq, batch in ((4, 2), (6, 1)):
        feeds = _feeds(model, seq, batch, rng)
        want = ReferenceEvaluator(model).run(None, feeds)
        _compare(compiled(*feeds.values()), want)
        assert not np.allclose(want[0], without.run(None, feeds)[0], atol=1e-3)


@pytest.mark.parametrize("op,attributes", [
    ("RNN", {"activations": ["Affine"], "activation_alpha": [0.5], "activation_beta": [0.2]}),
    ("GRU", {"linear_before_reset": 1}),
])
def test_cell_variants_over_a_dynamic_length(op, attributes):
    model = _layer(op, "forward", 0, **attributes)
    rng = np.random.default_rng(3)
    compiled = dync.compile(model, tuple(_feeds(model, 3, 2, rng).values()), cache=False)
    for seq, batch in ((3, 2), (6, 3)):
        feeds = _feeds(model, seq, batch, rng)
        _compare(compiled(*feeds.values()), ReferenceEvaluator(model).run(None, feeds))


@pytest.mark.parametrize("input_direction,output_direction,output_axis",
                         [(0, 0, 0), (1, 0, 1), (0, 1, 0)])
def test_scan_over_a_dynamic_length_returns_every_step(input_direction, output_direction,
                                                       output_axis):
    """The importer sized a Scan's outputs by the length at import (1 row) and wrote the other
    rows past the buffer: a running sum over n steps came back with one row. Each scanned
    direction and output axis is read or written by the Loop that replaces it."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]),
         helper.make_node("Mul", ["s2", "x"], ["y"])], "body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("s2", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    scan = helper.make_node("Scan", ["init", "X"], ["final", "ys"], num_scan_inputs=1,
                            body=body, scan_input_directions=[input_direction],
                            scan_output_directions=[output_direction],
                            scan_output_axes=[output_axis])
    graph = helper.make_graph(
        [scan], "g", [helper.make_tensor_value_info("init", TensorProto.FLOAT, [2]),
                      helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 2])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, None)])
    model = onnx.shape_inference.infer_shapes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]))
    rng = np.random.default_rng(4)
    compiled = dync.compile(model, (np.zeros(2, np.float32), np.ones((3, 2), np.float32)),
                            cache=False)
    for n in (3, 6, 1):
        init = rng.standard_normal(2).astype(np.float32)
        x = rng.standard_normal((n, 2)).astype(np.float32)
        # ONNX's reference runs no reversed direction: the spec's loop, in numpy.
        state, ys = init, []
        for element in x[::-1] if input_direction else x:
            state = state + element
            ys.append(state * element)
        ys = np.stack(ys[::-1] if output_direction else ys)
        _compare(compiled(init, x), [state, ys.T if output_axis else ys])
