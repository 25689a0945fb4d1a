"""ONNX ops IREE's importer has no lowering for, defined by a function in their schema
(`dync/frontends/onnx_functions.py`): expanded into their bodies and compiled, matching ONNX's
reference evaluator — over a dynamic dim, inside a subgraph, and where the body holds another
such op. An op with neither keeps the error that names it and its node."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dync
from dync.errors import UnsupportedConstructError


def _model(nodes, inputs, outputs, opset: int) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _matches(model: onnx.ModelProto, compiled, *args: np.ndarray) -> None:
    names = [i.name for i in model.graph.input]
    want = ReferenceEvaluator(model).run(None, dict(zip(names, args, strict=True)))
    got = compiled(*args)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _float(name: str, shape: list) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_causal_attention_over_a_dynamic_length_is_expanded():
    """Attention (opset 23) with a causal mask and grouped key/value heads: no lowering in the
    importer; its body (66 nodes) is compiled once and right at every length."""
    model = _model(
        [helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1, q_num_heads=4,
                          kv_num_heads=2)],
        [_float("q", [2, "s", 32]), _float("k", [2, "s", 16]), _float("v", [2, "s", 16])],
        [_float("y", [2, "s", 32])], opset=23)
    compiled = dync.compile(model, cache=False)
    assert any("expanded ONNX Attention" in note for note in compiled.report.notes)
    rng = np.random.default_rng(0)
    for length in (1, 5, 17):
        q = rng.standard_normal((2, length, 32), dtype=np.float32)
        k, v = (rng.standard_normal((2, length, 16), dtype=np.float32) for _ in range(2))
        _matches(model, compiled, q, k, v)


def test_rms_normalization_in_a_branch_is_expanded():
    """RMSNormalization (opset 23) in both branches of an If whose condition is an input: the
    subgraphs' nodes are expanded too."""
    def branch(name: str, axis: int) -> onnx.GraphProto:
        return helper.make_graph(
            [helper.make_node("RMSNormalization", ["x", "scale"], [f"{name}_y"], axis=axis,
                              epsilon=1e-3)],
            name, [], [_float(f"{name}_y", [3, 4])])

    model = _model(
        [helper.make_node("If", ["c"], ["y"], then_branch=branch("then", -1),
                          else_branch=branch("else", 0))],
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []), _float("x", [3, 4]),
         _float("scale", [4])],
        [_float("y", [3, 4])], opset=23)
    compiled = dync.compile(model, cache=False)
    rng = np.random.default_rng(1)
    x, scale = rng.standard_normal((3, 4), dtype=np.float32), rng.random(4, dtype=np.float32)
    for condition in (True, False):
        _matches(model, compiled, np.array(condition), x, scale)


def test_a_body_holding_another_unlowered_op_is_expanded_in_turn():
    """SwiGLU's body computes Swish, which the importer does not lower either."""
    opset = max(v for v in onnx.defs.get_schema("SwiGLU").function_opset_versions)
    model = _model(
        [helper.make_node("SwiGLU", ["a", "b"], ["y"], alpha=1.5)],
        [_float("a", ["n", 8]), _float("b", ["n", 8])], [_float("y", ["n", 8])], opset=opset)
    compiled = dync.compile(model, cache=False)
    assert any("Swish" in note and "SwiGLU" in note for note in compiled.report.notes)
    rng = np.random.default_rng(2)
    for rows in (1, 6):
        a, b = (rng.standard_normal((rows, 8), dtype=np.float32) for _ in range(2))
        _matches(model, compiled, a, b)


def test_an_op_with_no_lowering_and_no_function_names_its_node():
    model = _model(
        [helper.make_node("CumProd", ["x", "axis"], ["y"], name="running_product")],
        [_float("x", [3, 4]), helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
        [_float("y", [3, 4])], opset=onnx.defs.get_schema("CumProd").since_version)
    with pytest.raises(UnsupportedConstructError, match="CumProd.*running_product.*no lowering"):
        dync.compile(model, cache=False)


def test_a_model_of_another_domain_alone_names_its_node_and_domain():
    """A model importing only `ai.onnx.ml` (the node tests of Binarizer, TreeEnsemble, the
    training ops): IREE's importer needs the default domain's opset to convert anything, and
    failed with "function is missing onnx opset version attribute", naming no node."""
    graph = helper.make_graph([helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml",
                                                threshold=0.5)],
                              "g", [_float("x", [3, 4])], [_float("y", [3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 1)])
    with pytest.raises(UnsupportedConstructError,
                       match=r"ai\.onnx\.ml\.Binarizer node 'Binarizer_0' has no lowering.*"
                             r"at ai\.onnx\.ml opset 1"):
        dync.compile(model, cache=False)


def _linear_attention(rule: str, length: int | str) -> onnx.ModelProto:
    heads, dk, dv = 2, 4, 3
    gated = rule == "gated_delta"
    return _model(
        [helper.make_node("LinearAttention", ["q", "k", "v", "", "decay", "beta"] if gated
                          else ["q", "k", "v"], ["y", "state"], q_num_heads=heads,
                          kv_num_heads=heads, update_rule=rule)],
        [_float("q", [1, length, heads * dk]), _float("k", [1, length, heads * dk]),
         _float("v", [1, length, heads * dv])]
        + ([_float("decay", [1, length, heads]), _float("beta", [1, length, heads])]
           if gated else []),
        [_float("y", [1, length, heads * dv]), _float("state", [1, heads, dk, dv])], opset=27)


@pytest.mark.parametrize("rule", ["gated_delta", "linear"])
def test_a_body_whose_scan_reads_the_functions_values(rule):
    """LinearAttention (opset 27): its body's Scan reads values the body defines outside the
    Scan (constants, the scale), renamed with the rest of the body when inlined; the Scan is
    then rewritten as the model's own are (its values typed, constants folded)."""
    rng = np.random.default_rng(1)
    for t in (1, 6):
        model = _linear_attention(rule, t)
        args = [rng.standard_normal((1, t, 2 * d), dtype=np.float32) * 0.5 for d in (4, 4, 3)]
        if rule == "gated_delta":
            args += [-rng.random((1, t, 2), dtype=np.float32),
                     rng.random((1, t, 2), dtype=np.float32)]
        _matches(model, dync.compile(model, cache=False), *args)


def test_a_body_scan_whose_outputs_have_no_known_dims_over_a_dynamic_length_is_refused():
    """Over a dynamic length the body's Scan outputs have dims inference cannot name (a
    Reshape by -1 of a symbolic size): refused naming the node, where the importer's lowering
    returned an empty output (shape [1, 0, 6] for any length)."""
    with pytest.raises(UnsupportedConstructError, match="Scan with scan outputs over a dynamic"):
        dync.compile(_linear_attention("linear", "t"), cache=False)


def test_a_reshape_to_the_shape_of_a_split_part_keeps_its_rank():
    """Interleaved RotaryEmbedding's body reshapes to the `Shape` of a Split's part, whose
    rank shape inference leaves out: the Shape's length is completed with the rank (the
    importer read a shape of unknown length as an empty one: IREE failed to compile)."""
    model = _model(
        [helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], interleaved=1)],
        [_float("x", [2, 4, 3, 8]), _float("cos", [50, 4]), _float("sin", [50, 4]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, [2, 3])],
        [_float("y", [2, 4, 3, 8])], opset=23)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 3, 8), dtype=np.float32)
    cos, sin = (rng.standard_normal((50, 4), dtype=np.float32) for _ in range(2))
    _matches(model, dync.compile(model, cache=False), x, cos, sin,
             rng.integers(0, 50, (2, 3), dtype=np.int64))
