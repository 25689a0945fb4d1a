"""ONNX sequence and optional values whose structure is known at compile time
(`dync/frontends/onnx_structure.py`, `onnx_sequences.py`): sequence inputs fixed at the
example's length, sequence ops evaluated, sequence outputs returned as lists."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dync
from dync.errors import InputError, OptionError

FLOATS = helper.make_tensor_type_proto(TensorProto.FLOAT, ["n"])


def _sequence_model() -> onnx.ModelProto:
    """y = [x_i * 2 for x_i in xs] (SequenceMap), count = len(xs), total = concat(xs)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["item", "item"], ["doubled"])], "double",
        [helper.make_tensor_value_info("item", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("doubled", TensorProto.FLOAT, ["n"])])
    graph = helper.make_graph(
        [helper.make_node("SequenceMap", ["xs"], ["ys"], body=body),
         helper.make_node("SequenceLength", ["xs"], ["count"]),
         helper.make_node("ConcatFromSequence", ["xs"], ["total"], axis=0)],
        "sequences",
        [helper.make_value_info("xs", helper.make_sequence_type_proto(FLOATS))],
        [helper.make_value_info("ys", helper.make_sequence_type_proto(FLOATS)),
         helper.make_tensor_value_info("count", TensorProto.INT64, []),
         helper.make_tensor_value_info("total", TensorProto.FLOAT, ["t"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_sequence_input_and_output_at_the_example_length():
    xs = [np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float32) - 2]
    compiled = dync.compile(_sequence_model(), (xs,), cache=False)
    ys, count, total = compiled(xs)
    assert isinstance(ys, list) and len(ys) == 2
    for y, x in zip(ys, xs, strict=True):
        np.testing.assert_array_equal(y, 2 * x)
    assert int(count) == 2
    np.testing.assert_array_equal(total, np.concatenate(xs))
    # Same length, other sizes: the tensors' dims stay dynamic.
    other = [np.ones(7, np.float32), np.zeros(1, np.float32)]
    np.testing.assert_array_equal(compiled(other)[0][0], 2 * other[0])
    with pytest.raises(InputError, match=r"expected 2 input\(s\) \(xs\.0, xs\.1\), got 3"):
        compiled(xs + xs[:1])


def test_sequence_input_needs_an_example():
    with pytest.raises(OptionError, match="'xs' are sequences or optionals"):
        dync.compile(_sequence_model(), cache=False)


@pytest.mark.parametrize("present", [True, False])
def test_optional_input_fixed_present_or_absent(present):
    optional = helper.make_optional_type_proto(FLOATS)
    graph = helper.make_graph(
        [helper.make_node("OptionalHasElement", ["maybe"], ["has"])], "optional",
        [helper.make_value_info("maybe", optional)],
        [helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    example = np.ones(3, np.float32) if present else None
    compiled = dync.compile(model, (example,), cache=False)
    (has,) = compiled(example)
    assert bool(has) is present
