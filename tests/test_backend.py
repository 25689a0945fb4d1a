"""The IREE stage: flags IREE's session refuses because they are process-wide (the CPU
targets' thread count for codegen) are parsed in a worker process, never in the caller's."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import dync
from dync import targets
from dync.backend import CompilerSession


class Conv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x).relu()


def compile_conv(**options):
    torch.manual_seed(0)
    model = Conv().eval()
    h, w = Dim("h", min=8, max=64), Dim("w", min=8, max=64)
    compiled = dync.compile(model, (torch.randn(1, 3, 24, 40),), dynamic_shapes=({2: h, 3: w},),
                            cache=False, **options)
    return model, compiled


@pytest.mark.parametrize("backend, process_wide", [
    ("llvm-cpu", ("--iree-llvmcpu-number-of-threads=1", "--iree-llvmcpu-vector-pproc-strategy=peel")),
    ("arm", ("--iree-llvmcpu-number-of-threads=1",)),
    ("cuda", ()),
])
def test_only_process_wide_flags_go_to_the_worker(backend, process_wide):
    session = CompilerSession(targets.resolve(backend))
    try:
        assert session.process_wide == process_wide
        assert set(process_wide) <= set(session.flags)
    finally:
        session.close()


def test_the_worker_compiles_for_one_thread(tmp_path):
    """With IREE's default of 8 threads, a convolution over a dynamic H x W got vector tiles
    of 1 on every dim (lit/upstream/iree-cpu-conv-dynamic-width-scalar.mlir); for one thread
    its output channels are vectorized."""
    model, compiled = compile_conv(
        extra_flags=[f"--iree-hal-dump-executable-configurations-to={tmp_path}"])
    configs = "".join(p.read_text() for p in tmp_path.glob("*.mlir"))
    conv = re.search(r"ConvTileAndDecomposeExpert.*?vector_common_parallel = \[([0-9, ]+)\]",
                     configs, re.S)
    assert conv is not None
    assert [int(v) for v in conv.group(1).split(",")][3] > 1  # N, OH, OW, OC
    x = torch.randn(1, 3, 37, 50)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def test_the_callers_process_never_parses_irees_global_options():
    """IREE parses its process-wide options once per process and aborts on a second parse;
    after dync compiled, the caller can still parse its own."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from test_backend import compile_conv
        compile_conv()
        from iree.compiler.api import ctypes_dl
        ctypes_dl._init_dylib()
        ctypes_dl._initializeGlobalCL("caller", "--iree-llvmcpu-number-of-threads=2")
        print("parsed")
    """)
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("parsed")


def test_an_unknown_process_wide_flag_is_a_clear_error():
    with pytest.raises(dync.CompilationError,
                       match="Unknown command line argument '--iree-llvmcpu-no-such-flag=1'"):
        compile_conv(extra_flags=["--iree-llvmcpu-no-such-flag=1"])


def test_python_float_literals_are_eagers_float32s():
    """IREE's f64 demotion truncated literals toward zero (1 ulp off eager in most elements);
    dync rounds them to the nearest float32 first: the results are eager's, bit for bit."""
    from models import FloatLiterals

    x = torch.linspace(1, 4, 128).reshape(2, 64)
    model = FloatLiterals()
    compiled = dync.compile(model, (x,), dynamic_shapes=({1: Dim("n", min=2, max=64)},),
                            cache=False, mode="graph")
    for got, want in zip(compiled(x), model(x), strict=True):
        assert torch.equal(got, want)


class _Normalized(torch.nn.Module):
    def forward(self, x):
        return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1.0)


def test_dispatch_functions_are_looked_up_once_at_initialization(tmp_path):
    """IREE resolves each dispatch's function by name (a scan of the executable's exports)
    wherever its command buffer is recorded: at every call, for dynamic shapes. dync's
    `vm`-phase mend moves every lookup into the initializer (`dync/iree_mends.py`): the
    module's bytecode calls `hal.executable.lookup.function` in `__init` only."""
    model = _Normalized()
    compiled = dync.compile(model, (torch.randn(3, 16),), mode="graph", cache=False,
                            dynamic_shapes=({0: Dim("rows", min=1, max=64)},))
    x = torch.randn(7, 16)
    torch.testing.assert_close(compiled(x), model(x))
    path = compiled.save(tmp_path / "normalized.vmfb")
    dump = subprocess.run([str(Path(sys.executable).with_name("iree-dump-module")), str(path)],
                          capture_output=True, text=True, check=True).stdout
    bodies = dict(re.findall(r"^vm\.func @([\w$.]+)\(.*?\n(.*?)(?=^vm\.func @|\Z)", dump,
                             re.MULTILINE | re.DOTALL))
    dispatching = [name for name, body in bodies.items() if "command_buffer.dispatch" in body]
    assert dispatching and compiled.report.iree["dispatches"] >= 2
    looking_up = {name for name, body in bodies.items() if "lookup.function" in body}
    assert looking_up == {"__init"}
