"""The ONNX backend node tests, generated from the installed `onnx` wheel's own case definitions
(`onnx/backend/test/case/node`, no download), written to disk in the backend-test layout
(`model.onnx`, `test_data_set_0/input_<i>.pb`, `output_<i>.pb`) for a worker to read back
without running any code of the wheel's."""

from __future__ import annotations

import contextlib
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from dync.frontends.onnx_graphs import subgraphs

# Ops whose tests are control flow in the sense of dync: regions, and the sequence and optional
# values that flow through them.
CONTROL_FLOW_OPS = frozenset({
    "If", "Loop", "Scan", "SequenceMap", "SequenceConstruct", "SequenceInsert", "SequenceAt",
    "SequenceLength", "SequenceErase", "SequenceEmpty", "ConcatFromSequence", "SplitToSequence",
    "Optional", "OptionalGetElement", "OptionalHasElement",
})


@dataclass(frozen=True)
class Case:
    name: str
    directory: Path
    ops: frozenset[str]       # every op type of the graph and its subgraphs
    control_flow: bool
    rtol: float
    atol: float


def _ops(graph: onnx.GraphProto) -> set[str]:
    found = set()
    for node in graph.node:
        found.add(node.op_type)
        for sub in subgraphs(node):
            found |= _ops(sub)
    return found


def _non_tensor(graph: onnx.GraphProto) -> bool:
    return any(v.type.WhichOneof("value") != "tensor_type"
               for v in list(graph.input) + list(graph.output))


def _proto(value, type_proto: onnx.TypeProto, name: str):
    """A test value as the backend tests store it: a TensorProto, SequenceProto or OptionalProto."""
    if hasattr(value, "SerializeToString"):  # some cases give their values as protos
        return value
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list([np.asarray(v) for v in value], name)
    if kind == "optional_type":
        return numpy_helper.from_optional(value, name)
    return numpy_helper.from_array(np.asarray(value), name)


def generate(directory: Path) -> list[Case]:
    """Every node test of the installed wheel, written under `directory` (reused where it is
    there already: generating them all runs the wheel's reference code for half a minute)."""
    from onnx.backend.test.case import node

    directory.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        tests = node.collect_testcases(None)
    cases = []
    for test in sorted(tests, key=lambda t: t.name):
        graph = test.model.graph
        ops = frozenset(_ops(graph))
        here = directory / test.name
        data = here / "test_data_set_0"
        if not (here / "model.onnx").exists():
            data.mkdir(parents=True, exist_ok=True)
            (inputs, outputs), = test.data_sets[:1]
            for prefix, values, declared in (("input", inputs, graph.input),
                                             ("output", outputs, graph.output)):
                for i, (value, info) in enumerate(zip(values, declared, strict=False)):
                    proto = _proto(value, info.type, info.name)
                    (data / f"{prefix}_{i}.pb").write_bytes(proto.SerializeToString())
            onnx.save(test.model, here / "model.onnx")
        cases.append(Case(test.name, here, ops,
                          bool(ops & CONTROL_FLOW_OPS) or _non_tensor(graph),
                          test.rtol, test.atol))
    return cases


def ci_slice(cases: list[Case]) -> list[Case]:
    """The slice CI runs: every control-flow test, and for each op the first test (by name)
    whose graph is that op alone."""
    chosen, seen = [], set()
    for case in cases:
        single = len(case.ops) == 1 and next(iter(case.ops))
        if case.control_flow or (single and single not in seen):
            chosen.append(case)
            if single:
                seen.add(single)
    return chosen
