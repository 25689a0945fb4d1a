"""ONNX control flow through `dync.compile` with its defaults (import, dync's whole default
pipeline, IREE), against `onnx.reference`: each case's inputs take every path it has (both
branches of an If, zero, one and many trips of a Loop), and the paths taken are asserted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

import dync
from dync.passes import DEFAULT_PIPELINE

try:
    import onnx_models as om  # tests/ is on sys.path (conftest.py)
except ImportError:
    from tests import onnx_models as om

BATCHES = (1, 7, 33)
DYNAMIC_BATCH = {"x": {0: ("batch", 1, 64)}}
Feeds = dict[str, np.ndarray]


def _x(batch: int, seed: int, scale: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (scale * rng.standard_normal((batch, om.IN_FEATURES))).astype(np.float32)


def _signed(batch: int) -> list[Feeds]:
    """Inputs summing to more and to less than zero, and one random."""
    base = np.abs(_x(batch, batch)) + 0.1
    return [{"x": base}, {"x": -base}, {"x": _x(batch, 100 + batch)}]


def _scaled(*scales: float) -> Callable[[int], list[Feeds]]:
    return lambda batch: [{"x": _x(batch, batch, scale)} for scale in scales]


def _positive(feeds: Feeds) -> bool:
    return bool(feeds["x"].sum() > 0)


@dataclass(frozen=True)
class Case:
    build: Callable[[], onnx.ModelProto]
    inputs: Callable[[int], list[Feeds]]
    #: Which path a run takes (a numpy re-implementation of the model's control flow).
    path: Callable[[Feeds], object]
    #: What the set of paths the inputs took must satisfy.
    covers: Callable[[set], bool]
    what: str


CASES = {
    "if": Case(om.if_model, _signed, _positive, lambda paths: paths == {True, False},
               "both branches"),
    "if_with_differently_shaped_branches": Case(
        om.if_shapes_model, _signed, _positive, lambda paths: paths == {True, False},
        "both branches (outputs [batch, 16] and [batch, 4])"),
    "loop_constant_trip_count": Case(
        om.loop_model, _scaled(1.0), lambda feeds: 3, lambda paths: paths == {3}, "3 trips"),
    # An scf.for whose body's function gets the carried h and a value computed before the
    # loop, both of the batch's size (see dync-inline-subdnns).
    "loop_reading_the_graph_input": Case(
        lambda: om.loop_model(reads_input=True), _scaled(1.0), lambda feeds: 3,
        lambda paths: paths == {3}, "3 trips"),
    "loop_trip_count_input": Case(
        lambda: om.loop_model(trip_count=None),
        lambda batch: [{"x": _x(batch, batch), "n": np.array(n, np.int64)} for n in (0, 1, 4)],
        lambda feeds: int(feeds["n"]), lambda paths: paths == {0, 1, 4}, "0, 1 and 4 trips"),
    "while": Case(
        om.while_model, _scaled(0.1, 1.0, 4.0), lambda feeds: om.while_trips(feeds["x"]),
        lambda paths: 0 in paths and len(paths) >= 3, "zero trips and at least two others"),
    "do_while": Case(
        lambda: om.while_model(check_first=False), _scaled(0.1, 4.0),
        lambda feeds: om.while_trips(feeds["x"], check_first=False),
        lambda paths: len(paths) >= 2 and max(paths) < 100, "an early exit, two trip counts"),
    "while_ended_by_its_trip_count": Case(
        lambda: om.while_model(threshold=0.0, max_trips=3), _scaled(1.0),
        lambda feeds: om.while_trips(feeds["x"], threshold=0.0, max_trips=3),
        lambda paths: paths == {3}, "the trip count, never the condition, ends it"),
    "if_inside_loop": Case(
        om.if_in_loop_model, _scaled(0.1, 1.0, -1.0, 3.0, -3.0),
        lambda feeds: om.if_in_loop_path(feeds["x"]),
        lambda paths: (any("t" in p and "e" in p for p in paths)
                       and {"t", "e"} <= {p[:1] for p in paths} and len(paths) >= 4),
        "runs starting in either branch, one switching branch between trips"),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def compiled_case(request):
    case = CASES[request.param]
    model = case.build()
    return case, model, dync.compile(model, dynamic_shapes=DYNAMIC_BATCH)


def test_compiled_with_the_default_pipeline(compiled_case):
    _, _, compiled = compiled_case
    assert compiled.report.frontend == "onnx"
    assert compiled.report.mode == "in-graph"
    assert compiled.report.passes == list(DEFAULT_PIPELINE)


def test_matches_the_reference_on_every_path(compiled_case):
    case, model, compiled = compiled_case
    reference = ReferenceEvaluator(model)
    names = [value.name for value in model.graph.input]
    paths = set()
    for batch in BATCHES:
        for feeds in case.inputs(batch):
            paths.add(case.path(feeds))
            got = compiled(*(feeds[name] for name in names))
            want = reference.run(None, feeds)
            assert len(got) == len(want)
            for index, (g, w) in enumerate(zip(got, want, strict=True)):
                where = f"output {index}, batch {batch}, path {case.path(feeds)!r}"
                assert g.shape == w.shape and g.dtype == w.dtype, where
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=where)
    assert case.covers(paths), f"the inputs must take {case.what}; they took {sorted(paths)}"


def _scan_reading_an_outer_constant(steps: int) -> onnx.ModelProto:
    """A running sum over `steps` rows and each step's (sum ⊗ row) read back: the body
    unsqueezes by an axes constant of the outer graph, which the body's shape inference does
    not see (dync copies it in), and the scan output is written once per step."""
    from onnx import TensorProto, helper

    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]),
         helper.make_node("Unsqueeze", ["s2", "last"], ["column"]),
         helper.make_node("Unsqueeze", ["x", "first"], ["row"]),
         helper.make_node("MatMul", ["column", "row"], ["outer"]),
         helper.make_node("ReduceSum", ["outer", "last"], ["y"], keepdims=0)], "body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("s2", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["last"], value_ints=[-1]),
         helper.make_node("Constant", [], ["first"], value_ints=[0]),
         helper.make_node("Scan", ["init", "xs"], ["final", "ys"], num_scan_inputs=1,
                          body=body)], "g",
        [helper.make_tensor_value_info("init", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, [steps, 3])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, [steps, 3])])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


@pytest.mark.parametrize("steps", [1, 4])
def test_scan_outputs_of_one_and_more_steps(steps):
    """One step: torch-mlir's Scan lowering writes a scan output row by an empty
    slice_scatter, a no-op once the one-trip loop is unrolled (the output stayed zero)."""
    model = _scan_reading_an_outer_constant(steps)
    init = np.array([1.0, -2.0, 0.5], np.float32)
    xs = np.arange(1, 1 + 3 * steps, dtype=np.float32).reshape(steps, 3)
    want = ReferenceEvaluator(model).run(None, {"init": init, "xs": xs})
    got = dync.compile(model, cache=False)(init, xs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_a_one_step_scan_writes_its_scan_output():
    """Without an outer constant (so this compiled before dync mended the scatter): the one
    scan output row came back zero."""
    from onnx import TensorProto, helper

    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Mul", ["s2", "x"], ["y"])],
        "body", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("s", "x")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("s2", "y")])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["init", "xs"], ["final", "ys"], num_scan_inputs=1,
                          body=body)], "g",
        [helper.make_tensor_value_info("init", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, [1, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    init, xs = np.array([1.0, 2.0], np.float32), np.array([[1.0, 2.0]], np.float32)
    final, ys = dync.compile(model, cache=False)(init, xs)
    np.testing.assert_array_equal(final, [2.0, 4.0])
    np.testing.assert_array_equal(ys, [[2.0, 8.0]])
