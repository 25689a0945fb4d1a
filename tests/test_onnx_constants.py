"""Values known at compile time computed there (`dync/frontends/onnx_constants.py`): an If on
a static shape becomes the branch it takes (its branches may differ in rank, which IREE's
importer cannot type), shape arithmetic becomes constants; a value that depends on an input's
values is left to run time."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dync
from dync.frontends.onnx_constants import fold_constants


def _rank_switch(rank: int) -> onnx.ModelProto:
    """y = x flattened to 2-D when x has 3 dims, else x + 1: the branches' ranks differ."""
    flatten = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["flat"], axis=1)], "then", [],
        [helper.make_tensor_value_info("flat", TensorProto.FLOAT, [None, None])])
    plus_one = helper.make_graph(
        [helper.make_node("Constant", [], ["one"], value_float=1.0),
         helper.make_node("Add", ["x", "one"], ["added"])], "else", [],
        [helper.make_tensor_value_info("added", TensorProto.FLOAT, [None] * rank)])
    shape = [2, 3, 4][:rank]
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Size", ["shape"], ["rank"]),
         helper.make_node("Constant", [], ["three"], value_int=3),
         helper.make_node("Equal", ["rank", "three"], ["is_3d"]),
         helper.make_node("If", ["is_3d"], ["y"], then_branch=flatten, else_branch=plus_one)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("rank", [2, 3])
def test_an_if_on_a_static_rank_becomes_the_branch_it_takes(rank):
    model = _rank_switch(rank)
    x = np.arange(np.prod([2, 3, 4][:rank]), dtype=np.float32).reshape([2, 3, 4][:rank])
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    compiled = dync.compile(model, cache=False)
    assert any("replaced by the branch taken" in n for n in compiled.report.notes)
    np.testing.assert_array_equal(compiled(x)[0], want)


def test_shape_arithmetic_is_folded_and_input_values_are_not():
    """Squeeze's axes come from a static shape (folded); the Add of an input stays."""
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Constant", [], ["one"], value_ints=[1]),
         helper.make_node("Sub", ["shape", "one"], ["less"]),
         helper.make_node("Slice", ["less", "one", "shape"], ["axes"]),
         helper.make_node("Squeeze", ["x", "axes"], ["squeezed"]),
         helper.make_node("Add", ["squeezed", "b"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2, 4]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model = onnx.shape_inference.infer_shapes(model)
    folded, inlined, localized = fold_constants(model)
    assert sorted(folded) == ["Shape", "Slice", "Sub"] and not inlined and not localized
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("Constant") == 4 and "Squeeze" in ops and "Add" in ops


def test_an_if_on_an_input_value_stays():
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["a"])], "then", [],
                             [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["b"])], "else", [],
                              [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], "g",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert fold_constants(model) == ([], [], [])
    assert [n.op_type for n in model.graph.node] == ["If"]
