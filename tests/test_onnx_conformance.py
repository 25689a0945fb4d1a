"""ONNX conformance (`benchmarks.conformance`): the ONNX backend node tests of the installed
wheel through `dync.compile`, each outcome held to the side table of expected failures.

CI runs a fixed slice — every control-flow test and, per op, the first test whose graph is that
op alone — and fails on any test whose outcome differs from the table (one that newly passes
too: the table must be updated with it). `python -m benchmarks conformance` runs them all."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from benchmarks.conformance import expect
from benchmarks.conformance.cases import Case, ci_slice, generate
from benchmarks.conformance.child import _differs
from benchmarks.conformance.run import run


@pytest.fixture(scope="session")
def cases(tmp_path_factory) -> list[Case]:
    return generate(tmp_path_factory.mktemp("onnx-node-tests"))


def test_every_node_test_of_the_wheel_is_generated(cases):
    names = {c.name for c in cases}
    assert len(cases) > 1500 and {"test_abs", "test_if", "test_loop11", "test_scan9_sum"} <= names
    control_flow = {c.name for c in cases if c.control_flow}
    assert {"test_if_seq", "test_loop13_seq", "test_split_to_sequence_1"} <= control_flow
    assert "test_abs" not in control_flow


def test_the_side_table_names_real_tests_with_a_reason(cases):
    names = {c.name for c in cases}
    for name, entry in expect.load().items():
        assert name in names, f"{name} is in the side table but not among the wheel's tests"
        assert entry["outcome"] in ("error", "mismatch", "internal", "crash"), name
        assert entry["reason"].strip(), name


def test_comparison_holds_dtype_shape_and_values():
    want = np.array([1, 2], dtype=np.uint8)
    assert _differs(np.array([1, 2], dtype=np.int8), want, 1e-3, 1e-5).startswith("dtype int8")
    assert _differs(np.array([[1, 2]], dtype=np.uint8), want, 1e-3, 1e-5).startswith("shape")
    assert _differs(np.array([1, 3], dtype=np.uint8), want, 1e-3, 1e-5) == "1 of 2 values differ"
    floats = np.array([1.0, np.nan], dtype=np.float32)
    assert _differs(floats.copy(), floats, 1e-3, 1e-5) is None
    assert _differs(floats + np.float32(0.01), floats, 1e-3, 1e-5).startswith("1 of 2")
    assert _differs([want], [want], 1e-3, 1e-5) is None


def test_a_hung_case_is_a_crash_and_the_next_case_still_runs(tmp_path: Path):
    """A case that never finishes (its model is a FIFO nobody writes) is killed at the time-out
    and reported as a crash; a fresh worker runs the next case."""
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Neg", ["x"], ["y"])], "neg",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])]),
        opset_imports=[helper.make_opsetid("", 17)])
    good, hung = tmp_path / "test_neg", tmp_path / "test_hang"
    for d in (good, hung):
        (d / "test_data_set_0").mkdir(parents=True)
    onnx.save(model, good / "model.onnx")
    os.mkfifo(hung / "model.onnx")
    x = np.array([1.0, -2.0], dtype=np.float32)
    for name, value in (("input_0", x), ("output_0", -x)):
        (good / "test_data_set_0" / f"{name}.pb").write_bytes(
            onnx.numpy_helper.from_array(value).SerializeToString())
    cases = [Case(d.name, d, frozenset({"Neg"}), False, 1e-3, 1e-7) for d in (hung, good)]
    first, second = run(cases, timeout_s=5, say=print)
    assert first.outcome == "crash" and "timed out" in first.detail, first
    assert second.outcome == "pass", second


def test_the_ci_slice_matches_the_side_table(cases):
    chosen = ci_slice(cases)
    results = run(chosen, jobs=2, say=print)
    differ = expect.surprises(results, expect.load())
    assert not differ, "\n".join(differ)
