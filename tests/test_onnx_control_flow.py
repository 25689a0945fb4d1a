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
