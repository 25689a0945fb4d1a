"""The ONNX frontend: import -> dync IR -> IREE (llvm-cpu) -> run, against onnx.reference."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import iree.runtime as rt
import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from dync import targets
from dync.backend import CompilerSession
from dync.errors import DyncError, UnsupportedConstructError
from dync.frontends import onnx as onnx_frontend
from dync.frontends.onnx import import_onnx
from dync.passes import lower_control_flow
from dync.signature import Signature, SymbolSpec

try:
    import onnx_models  # tests/ is on sys.path (conftest.py)
except ImportError:
    from tests import onnx_models

BATCHES = (1, 7, 33)
INT31_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


@dataclass
class Compiled:
    signature: Signature
    notes: list[str]
    ir: str
    vmfb: bytes

    def load(self):
        cfg = rt.Config("local-sync")
        return rt.load_vm_module(rt.VmModule.copy_buffer(cfg.vm_instance, self.vmfb), cfg)


def compile_onnx(model, dynamic_shapes=None) -> Compiled:
    session = CompilerSession(targets.resolve("llvm-cpu"))
    try:
        program = import_onnx(model, session.context, lower=lower_control_flow,
                              dynamic_shapes=dynamic_shapes)
        text = str(program.module)
        vmfb = session.compile(program.module)
        return Compiled(program.signature, list(program.notes), text, vmfb)
    finally:
        session.close()


def import_only(model, dynamic_shapes=None):
    """(signature, notes, IR text) of an import, without compiling."""
    session = CompilerSession(targets.resolve("llvm-cpu"))
    try:
        program = import_onnx(model, session.context, lower=lower_control_flow,
                              dynamic_shapes=dynamic_shapes)
        return program.signature, list(program.notes), str(program.module)
    finally:
        session.close()


def run(module, *args: np.ndarray) -> np.ndarray:
    return np.asarray(module.main(*args))


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    return ReferenceEvaluator(model).run(None, feeds)[0]


def check(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def rand(batch: int, seed: int, scale: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (scale * rng.standard_normal((batch, onnx_models.IN_FEATURES))).astype(np.float32)


# --------------------------------------------------------------------------- If


@pytest.fixture(scope="module")
def if_compiled() -> Compiled:
    return compile_onnx(onnx_models.if_model(), {"x": {0: ("batch", 1, 64)}})


def test_if_model_matches_reference_on_both_branches(if_compiled):
    model = onnx_models.if_model()
    module = if_compiled.load()
    taken = []
    for batch in BATCHES:
        base = np.abs(rand(batch, seed=batch)) + 0.1
        for x in (base, -base, rand(batch, seed=100 + batch)):
            positive = bool(x.sum() > 0)
            taken.append(positive)
            got = run(module, x)
            check(got, reference(model, {"x": x}))
            then_out, else_out = onnx_models.if_branches(x)
            assert not np.allclose(then_out, else_out, rtol=1e-2)
            np.testing.assert_allclose(
                got, then_out if positive else else_out, rtol=1e-4, atol=1e-5
            )
    assert set(taken) == {True, False}, "inputs must take both If branches"


def test_if_model_ir(if_compiled):
    ir_text = if_compiled.ir
    assert "torch.operator" not in ir_text
    assert "scf.if" in ir_text
    assert "func.func @main(" in ir_text
    assert 'torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int' in ir_text
    assert re.search(
        r"torch\.bind_symbolic_shape %arg0, \[%\w+\], affine_map<\(\)\[s0\] -> \(s0, 8\)>",
        ir_text,
    )
    assert 'dync.shape = ["batch", 8]' in ir_text
    assert 'dync.shape = ["batch", 4]' in ir_text
    assert "torch.onnx_meta" not in ir_text


def _lowered_torch_ir(model: onnx.ModelProto) -> str:
    """The module right after the ONNX -> torch lowering (before control flow goes to scf)."""
    session = CompilerSession(targets.resolve("llvm-cpu"))
    try:
        proto = onnx.shape_inference.infer_shapes(model, data_prop=True)
        onnx_frontend._require_dialects(session.context)
        _, module = onnx_frontend._imported(proto, session.context, [])
        return str(module)
    finally:
        session.close()


def test_onnx_if_and_loop_lower_to_torch_prim_ops():
    if_ir = _lowered_torch_ir(onnx_models.if_model())
    assert "torch.operator" not in if_ir
    assert "torch.prim.If " in if_ir
    assert "torch.aten.mm" in if_ir
    loop_ir = _lowered_torch_ir(onnx_models.loop_model())
    assert "torch.operator" not in loop_ir
    assert "torch.prim.Loop " in loop_ir


# --------------------------------------------------------------------------- MLP


def test_mlp_matches_reference():
    model = onnx_models.mlp_model()
    compiled = compile_onnx(model)
    assert "scf." not in compiled.ir
    module = compiled.load()
    for batch in BATCHES:
        x = rand(batch, seed=batch)
        check(run(module, x), reference(model, {"x": x}))


def test_legacy_model_is_upgraded_and_initializer_inputs_are_not_arguments():
    model = onnx_models.legacy_mlp_model()
    assert [i.name for i in model.graph.input] == ["x", "W1", "b1", "W2", "b2"]
    compiled = compile_onnx(model)
    assert [t.name for t in compiled.signature.inputs] == ["x"]
    assert any("opset from 13 to 17" in note for note in compiled.notes)
    header = next(line for line in compiled.ir.splitlines() if "func.func @main(" in line)
    assert "%arg0" in header and "%arg1" not in header
    module = compiled.load()
    for batch in BATCHES:
        x = rand(batch, seed=batch)
        check(run(module, x), reference(model, {"x": x}))


def test_model_from_file(tmp_path: Path):
    model = onnx_models.mlp_model()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, path)
    for source in (path, str(path)):
        signature, _, ir_text = import_only(source)
        assert [t.name for t in signature.inputs] == ["x"]
        assert "torch.operator" not in ir_text


# --------------------------------------------------------------------------- Loop
# Running loops (and ifs) through dync's default pipeline: test_onnx_control_flow.py.


@pytest.mark.parametrize("model, construct", [
    (onnx_models.loop_model(trip_count=3), "scf.for"),
    (onnx_models.loop_model(trip_count=None), "scf.for"),
    (onnx_models.while_model(), "scf.while"),
    (onnx_models.while_model(check_first=False), "scf.while"),
    (onnx_models.if_in_loop_model(), "scf.while"),
], ids=["constant-trips", "trip-count-input", "while", "do-while", "if-in-loop"])
def test_loops_import_as_scf(model, construct):
    """A Loop with a constant `true` condition and no condition update is a counted loop."""
    _, _, ir_text = import_only(model)
    assert construct in ir_text
    assert "torch.operator" not in ir_text


def test_loop_trip_count_input_is_a_scalar_argument():
    signature, _, _ = import_only(onnx_models.loop_model(trip_count=None))
    assert [(t.name, t.dtype, t.shape) for t in signature.inputs] == [
        ("x", "float32", ("batch", 8)),
        ("n", "int64", ()),
    ]


# --------------------------------------------------------------------------- signature


def test_signature_default_symbol_range():
    signature, _, ir_text = import_only(onnx_models.if_model())
    assert signature.symbols == {"batch": SymbolSpec("batch", 1, INT31_MAX)}
    assert [(t.name, t.dtype, t.shape) for t in signature.inputs] == [
        ("x", "float32", ("batch", 8))
    ]
    assert [(t.name, t.dtype, t.shape) for t in signature.outputs] == [
        ("y", "float32", ("batch", 4))
    ]
    assert signature.output_tree is None
    assert f'torch.symbolic_int "batch" {{min_val = 1, max_val = {INT31_MAX}}}' in ir_text


def test_signature_overridden_range(if_compiled):
    assert if_compiled.signature.symbols == {"batch": SymbolSpec("batch", 1, 64)}


def test_signature_renamed_symbol():
    signature, _, ir_text = import_only(onnx_models.mlp_model(), {"x": {0: "n"}})
    assert signature.symbols == {"n": SymbolSpec("n", 1, INT31_MAX)}
    assert signature.inputs[0].shape == ("n", 8)
    assert signature.outputs[0].shape == ("n", 4)
    assert 'torch.symbolic_int "n"' in ir_text


def test_unnamed_and_output_only_dims():
    model = onnx_models.concat_model()
    compiled = compile_onnx(model)
    signature = compiled.signature
    assert signature.inputs[0].shape == ("x_d0", 8)
    assert signature.outputs[0].shape == ("out0_d0", 8)
    assert signature.symbols == {
        "x_d0": SymbolSpec("x_d0", 1, INT31_MAX),
        "out0_d0": SymbolSpec("out0_d0", 0, INT64_MAX),
    }
    module = compiled.load()
    for batch in BATCHES:
        x = rand(batch, seed=batch)
        got = run(module, x)
        assert got.shape == (2 * batch, 8)
        check(got, reference(model, {"x": x}))


@pytest.mark.parametrize(
    ("dynamic_shapes", "message"),
    [
        ({"z": {0: "batch"}}, "names input 'z'"),
        ({"x": {1: "feat"}}, "is static (8)"),
        ({"x": {2: "batch"}}, "no axis 2"),
        ({"x": {0: ("batch", 10, 5)}}, "empty or negative range"),
        ({"x": {0: ("batch", 1)}}, "must be a symbol name or (name, min, max)"),
        ({"x": {0: "not a name"}}, "not an identifier"),
    ],
)
def test_bad_dynamic_shapes(dynamic_shapes, message):
    with pytest.raises(DyncError) as info:
        import_only(onnx_models.mlp_model(), dynamic_shapes)
    assert message in str(info.value)


# --------------------------------------------------------------------------- errors


def test_missing_file(tmp_path: Path):
    with pytest.raises(DyncError, match="not found"):
        import_only(tmp_path / "nope.onnx")


def test_corrupted_file(tmp_path: Path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07\x12\xff\xfe this is not an ONNX model \x00\x01" * 8)
    with pytest.raises(DyncError):
        import_only(garbage)
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(onnx_models.mlp_model().SerializeToString()[:-37])
    with pytest.raises(DyncError):
        import_only(truncated)


def test_invalid_model():
    model = onnx_models.mlp_model()
    model.graph.node[0].input[1] = "no_such_value"
    with pytest.raises(DyncError, match="invalid ONNX model"):
        import_only(model)


def test_unsupported_op_names_the_node():
    with pytest.raises(UnsupportedConstructError) as info:
        import_only(onnx_models.custom_op_model())
    message = str(info.value)
    assert "Frobnicate" in message
    assert "'frob'" in message
    assert info.value.source == "node 'frob'"


def test_not_a_model():
    with pytest.raises(DyncError, match="ONNX file path or an onnx.ModelProto"):
        import_only(42)


# --------------------------------------------------------------------------- ranks


def _split_by_computed_sizes() -> onnx.ModelProto:
    """x[2, 3, 8] split on its last axis at half its (computed) width, the halves swapped and
    scaled: ONNX shape inference gives the Split's outputs, and everything after, no shape."""
    h = onnx.helper
    nodes = [
        h.make_node("Shape", ["x"], ["width"], start=2, end=3),
        h.make_node("Constant", [], ["two"], value=h.make_tensor("two", onnx.TensorProto.INT64,
                                                                  [1], [2])),
        h.make_node("Div", ["width", "two"], ["half"]),
        h.make_node("Concat", ["half", "half"], ["sizes"], axis=0),
        h.make_node("Split", ["x", "sizes"], ["a", "b"], axis=-1),
        h.make_node("Mul", ["a", "a"], ["a2"]),
        h.make_node("Concat", ["b", "a2"], ["joined"], axis=-1),
        h.make_node("Relu", ["joined"], ["y"]),
    ]
    graph = h.make_graph(
        nodes, "split", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 8])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3, 8])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def test_ranks_shape_inference_leaves_out_are_completed():
    # Before: the importer typed the Split's outputs as scalars and torch-mlir's Split lowering
    # dereferenced their missing dims (SIGSEGV, ONNX test_rotary_embedding_expanded).
    model = _split_by_computed_sizes()
    compiled = compile_onnx(model)
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    check(run(compiled.load(), x), reference(model, {"x": x}))


def test_a_tensor_of_unknowable_rank_is_refused_naming_its_node():
    h = onnx.helper
    graph = h.make_graph(
        [h.make_node("Reshape", ["x", "shape"], ["r"], name="reshape_by_input"),
         h.make_node("Relu", ["r"], ["y"])],
        "reshape",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [24]),
         h.make_tensor_value_info("shape", onnx.TensorProto.INT64, ["n"])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["m"])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    with pytest.raises(UnsupportedConstructError, match="no rank for 'r'") as info:
        import_only(model)
    assert info.value.source == "node 'reshape_by_input'"


def test_loop_scan_outputs_stack_every_trip():
    # IREE's importer lowers no Loop scan output: they become growing loop-carried values.
    # (onnx's ReferenceEvaluator concatenates scan outputs instead of stacking them.)
    model = onnx_models.loop_model(trip_count=None, scan_output=True)
    w = next(onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.name == "W")
    module = compile_onnx(model).load()
    for batch, trips in ((1, 0), (3, 1), (2, 4)):
        h = x = rand(batch, seed=trips)
        steps = []
        for _ in range(trips):
            h = np.tanh(h @ w)
            steps.append(h)
        stacked = np.stack(steps) if steps else np.zeros((0, batch, w.shape[1]), np.float32)
        got = module.main(x, np.array(trips, np.int64))
        check(np.asarray(got[0].to_host()), h)
        check(np.asarray(got[1].to_host()), stacked)
