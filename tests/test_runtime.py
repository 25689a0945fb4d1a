"""save()/load() round trip, and clear errors for bad inputs and damaged files."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from models import cond_inputs

import dync
from dync.runtime.module import _fast_key


@pytest.fixture
def saved(cond_compiled, tmp_path):
    return cond_compiled.save(tmp_path / "cond.vmfb")


def test_save_writes_vmfb_and_manifest(saved):
    manifest = json.loads(saved.with_name("cond.manifest.json").read_text())
    assert manifest["entry"] == "main"
    assert manifest["backend"] == "llvm-cpu" and manifest["target"] == "host"
    assert manifest["signature"]["symbols"]["batch"] == {"name": "batch", "min": 1, "max": 64}
    assert manifest["signature"]["inputs"][0]["shape"] == ["batch", 8]
    assert any(f.startswith("--iree-hal-target-device=") for f in manifest["flags"])
    assert manifest["dync_version"] == dync.__version__


def test_load_round_trip(cond_model, saved):
    loaded = dync.load(saved)
    for batch, positive in ((2, True), (9, False)):
        x = cond_inputs(batch, positive)
        torch.testing.assert_close(loaded(x), cond_model(x), rtol=1e-4, atol=1e-5)


def test_a_saved_module_runs_without_the_compiler(cond_model, saved):
    """A deployment machine has iree-base-runtime only: `dync.load` and the call must not
    import iree.compiler (a fresh process where importing it fails)."""
    x = cond_inputs(3, True)
    np.save(saved.with_name("x.npy"), x.numpy())
    script = (
        "import sys; sys.modules['iree.compiler'] = None\n"
        "import numpy as np, dync\n"
        f"y = dync.load({str(saved)!r})(np.load({str(saved.with_name('x.npy'))!r}))\n"
        f"np.save({str(saved.with_name('y.npy'))!r}, y)\n"
        "print(sorted(m for m in sys.modules if m.startswith('iree.compiler.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
    y = np.load(saved.with_name("y.npy"))
    np.testing.assert_allclose(y, cond_model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_results_kept_to_exit_leave_no_runtime_object_behind(saved):
    """A result the program keeps until it exits, its storage handed to Python (which torch
    then keeps until exit), holds no IREE object: nanobind reports none as leaked."""
    x = cond_inputs(3, True)
    torch.save(x, saved.with_name("x.pt"))
    script = (
        "import torch, dync\n"
        f"y = dync.load({str(saved)!r})(torch.load({str(saved.with_name('x.pt'))!r}))\n"
        "y.untyped_storage()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "leaked" not in done.stderr, done.stderr[-2000:]


def test_numpy_in_numpy_out(cond_model, cond_compiled):
    x = cond_inputs(3, True).numpy()
    out = cond_compiled(x)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, cond_model(torch.from_numpy(x)).detach().numpy(), rtol=1e-4)


def test_results_belong_to_the_caller(cond_model, saved):
    """Results are copied out of IREE's buffers: they own their memory, stay valid after the
    module is gone and writing into them changes no later call."""
    import gc

    x = cond_inputs(3, True)
    loaded = dync.load(saved)
    first = loaded(x.numpy())
    assert first.flags.owndata and first.flags.writeable
    del loaded
    gc.collect()
    expected = cond_model(x).detach().numpy()
    np.testing.assert_allclose(first, expected, rtol=1e-4, atol=1e-5)
    again = dync.load(saved)
    out = again(x)
    out.fill_(0)
    torch.testing.assert_close(again(x), torch.from_numpy(expected), rtol=1e-4, atol=1e-5)


def test_wrong_rank_is_a_clear_error(cond_compiled):
    with pytest.raises(dync.InputError, match=r"expected rank 2 \[batch, 8\], got rank 3"):
        cond_compiled(torch.randn(2, 3, 8))


def test_dim_outside_range_is_a_clear_error(cond_compiled):
    with pytest.raises(dync.InputError, match=r"dim 0 \(batch\) = 65 is outside .*\[1, 64\]"):
        cond_compiled(torch.randn(65, 8))


def test_static_dim_mismatch_and_dtype(cond_compiled):
    with pytest.raises(dync.InputError, match="dim 1: expected 8, got 9"):
        cond_compiled(torch.randn(2, 9))
    with pytest.raises(dync.InputError, match="expected dtype float32, got int64"):
        cond_compiled(torch.ones(2, 8, dtype=torch.int64))
    with pytest.raises(dync.InputError, match="expected 1 input"):
        cond_compiled(torch.randn(2, 8), torch.randn(2, 8))


def test_corrupted_vmfb_is_detected(saved):
    data = bytearray(saved.read_bytes())
    data[len(data) // 2] ^= 0xFF
    saved.write_bytes(bytes(data))
    with pytest.raises(dync.ModuleFormatError, match="corrupted"):
        dync.load(saved)


def test_truncated_vmfb_with_matching_manifest_fails_cleanly(cond_compiled, tmp_path):
    from dync.runtime import CompiledModule

    broken = CompiledModule(cond_compiled.vmfb[:100], cond_compiled.manifest.__class__(
        **{**cond_compiled.manifest.__dict__, "sha256": ""}))
    with pytest.raises(dync.ModuleFormatError, match="IREE cannot load"):
        broken(torch.randn(2, 8))


def test_missing_or_damaged_manifest(saved):
    manifest = saved.with_name("cond.manifest.json")
    manifest.write_text("{not json")
    with pytest.raises(dync.ModuleFormatError, match="not valid JSON"):
        dync.load(saved)
    manifest.write_text("[" * 200_000 + "]" * 200_000)  # deeper than Python's stack
    with pytest.raises(dync.ModuleFormatError, match="not valid JSON"):
        dync.load(saved)
    manifest.write_text(json.dumps({"format_version": 1, "backend": "llvm-cpu"}))
    with pytest.raises(dync.ModuleFormatError, match="malformed manifest"):
        dync.load(saved)
    manifest.unlink()
    with pytest.raises(dync.ModuleFormatError, match="no manifest"):
        dync.load(saved)
    with pytest.raises(dync.ModuleFormatError, match="no such module"):
        dync.load(saved.with_name("absent.vmfb"))


def test_derived_dims_are_solved_for_their_symbol():
    """`32*h` with no input giving `h` directly: the size must be 32 times an h in range."""
    from dync.signature import Signature, SymbolSpec, TensorSpec

    signature = Signature([TensorSpec("image", "float32", (1, 3, "32*h", "32*w"))], [],
                          {"h": SymbolSpec("h", 2, 10), "w": SymbolSpec("w", 2, 10)})
    assert signature.check_inputs([np.zeros((1, 3, 64, 320), np.float32)]) == {"h": 2, "w": 10}
    for height in (65, 32, 352):
        with pytest.raises(dync.InputError, match=rf"dim 2 = {height} is not 32\*h for any h"):
            signature.check_inputs([np.zeros((1, 3, height, 64), np.float32)])


def test_accepted_shapes_are_remembered_and_rejected_ones_are_not():
    """The runtime's fast path: a (dtype, shape) accepted once is not re-derived, and a bad
    one raises every time (it is never remembered)."""
    from dync.signature import Signature, SymbolSpec, TensorSpec

    signature = Signature([TensorSpec("x", "float32", ("n", 4))], [], {"n": SymbolSpec("n", 1, 8)})
    good = np.zeros((3, 4), np.float32)
    assert signature.check_inputs([good]) == {"n": 3}
    bound = signature.check_inputs([good])
    assert bound == {"n": 3}
    bound["n"] = 99  # callers get a copy
    assert signature.check_inputs([good]) == {"n": 3}
    for _ in range(2):
        with pytest.raises(dync.InputError, match=r"outside its declared range \[1, 8\]"):
            signature.check_inputs([np.zeros((9, 4), np.float32)])
        with pytest.raises(dync.InputError, match="expected dtype float32"):
            signature.check_inputs([good.astype(np.float64)])


class _PassThrough(torch.nn.Module):
    def forward(self, x):
        return x, x * 2


@pytest.fixture(scope="module")
def pass_through():
    return dync.compile(_PassThrough(), (torch.randn(256, 1024),))


def test_outputs_never_alias_the_arguments(pass_through):
    """An output IREE passes through from the argument's buffer comes back as a copy, never
    sharing the caller's memory."""
    x = torch.randn(256, 1024)
    same, doubled = pass_through(x)
    torch.testing.assert_close(same, x, rtol=0, atol=0)
    torch.testing.assert_close(doubled, 2 * x)
    assert not np.shares_memory(same.numpy(), x.numpy())


class _SortsItsArgument(torch.nn.Module):
    def forward(self, x):
        return x.sort()[0]


@pytest.mark.parametrize("dtype", [torch.int64, torch.float32])
def test_a_call_never_writes_into_its_arguments(dtype):
    """IREE sorts in place: with the caller's tensor imported as the argument's buffer itself
    (zero-copy on the CPU) an integer sort was written into the caller's tensor, the example
    input included (by the first-call check inside `dync.compile`)."""
    example = torch.tensor([200, 255, 9, 130], dtype=dtype)
    compiled = dync.compile(_SortsItsArgument(), (example,), mode="graph")
    torch.testing.assert_close(example, torch.tensor([200, 255, 9, 130], dtype=dtype))
    x = torch.tensor([7, 3, 5, 1], dtype=dtype)
    got = compiled(x)
    torch.testing.assert_close(x, torch.tensor([7, 3, 5, 1], dtype=dtype), rtol=0, atol=0)
    torch.testing.assert_close(got, x.sort()[0], rtol=0, atol=0)


class _PadBy(torch.nn.Module):
    """A 0-d input that is data: the width to pad by (its `.item()` a size, which the
    rewrite's 0-d tensor cannot be, so it exports as written)."""

    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 0)
        torch._check(k <= 8)
        return torch.nn.functional.pad(x, (0, k)) * 2


def test_a_0d_input_read_as_a_size_compiles_and_matches_eager():
    model, x = _PadBy(), torch.randn(3, 5)
    compiled = dync.compile(model, (x, torch.tensor(3)))
    assert compiled.signature.inputs[1].shape == ()
    for k in (0, 3, 8):
        n = torch.tensor(k)
        got = compiled(x, n)
        assert got.shape == (3, 5 + k)
        torch.testing.assert_close(got, model(x, n), rtol=0, atol=0)
        np.testing.assert_array_equal(compiled(x.numpy(), n.numpy()), got.numpy())
    with pytest.raises(dync.InputError, match="expected rank 0"):
        compiled(x, torch.tensor([3]))


class _Unsigned(torch.nn.Module):
    def forward(self, x):
        return x // 3, x.float() / 255, torch.maximum(x, torch.full_like(x, 7))


def test_an_op_iree_computes_signed_runs_exact_on_unsigned_in_graph():
    """uint8 // 3 is computed as signed by IREE (200 // 3 came out -18, viewed as 238): the
    import computes it in int64 and truncates back, so every result is exact in graph mode."""
    x = torch.tensor([200, 255, 9, 130], dtype=torch.uint8)
    compiled = dync.compile(_Unsigned(), (x,), mode="graph")
    for got, want in zip(compiled(x), _Unsigned()(x), strict=True):
        assert got.dtype == want.dtype and torch.equal(got, want)


class _EveryKindOfResult(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(6, dtype=torch.float32))

    def forward(self, x):
        return (x > 0, x.to(torch.int64), x.to(torch.float16), x.abs().to(torch.uint8),
                x.sum(), x[:0], self.table)


def test_results_of_every_kind_are_the_callers_own():
    """Results come out through DLPack on the CPU: every dtype, a 0-d and an empty result,
    and a constant the module returns as it is are equal to eager, and each is a copy the
    caller owns: writing into one changes no later call (the constant's buffer is IREE's)."""
    model = _EveryKindOfResult()
    x = torch.tensor([[1.5, -2.0, 3.0], [0.0, 7.0, -1.0]])
    compiled = dync.compile(model, (x,), mode="graph", cache=False)
    for as_numpy in (False, True):
        got = compiled(x.numpy() if as_numpy else x)
        for out, want in zip(got, model(x), strict=True):
            out = torch.from_numpy(out) if as_numpy else out
            assert out.dtype == want.dtype and out.shape == want.shape
            torch.testing.assert_close(out, want, rtol=0, atol=0)
            out.zero_()  # the caller's memory: nothing of the module's
    torch.testing.assert_close(compiled(x)[-1], model.table, rtol=0, atol=0)


def test_a_repeated_shape_takes_any_layout_and_kind_of_argument(cond_model, cond_compiled):
    """Once a shape has run, later calls on it go through the module's cached path: a
    transposed view, a tensor that needs grad, a numpy array and a tensor of another layout
    than the first call's all give eager's result, torch in, torch out and numpy in, numpy
    out."""
    x = cond_inputs(4, True)
    want = cond_model(x).detach()
    torch.testing.assert_close(cond_compiled(x), want, rtol=1e-4, atol=1e-5)
    # Tensors in, torch results through DLPack: the path with everything looked up before.
    assert "tensor_runner" in cond_compiled._fast[_fast_key((x,))].__qualname__
    transposed = x.t().contiguous().t()
    assert not transposed.is_contiguous()
    for again in (transposed, x.clone().requires_grad_(True), x.clone()):
        out = cond_compiled(again)
        assert isinstance(out, torch.Tensor)
        torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-5)
    out = cond_compiled(np.asfortranarray(x.numpy()))
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(dync.InputError, match="expected dtype float32"):
        cond_compiled(x.double())
