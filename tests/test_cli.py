"""The `dync` and `dync-opt` command lines, run as a user runs them."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.export import Dim

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*args, cwd=ROOT):
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.mark.parametrize("argv", [["dync", "--help"], ["dync", "compile", "--help"],
                                  ["dync", "run", "--help"], ["dync", "targets", "--help"],
                                  ["dync", "profile", "--help"],
                                  ["dync-opt", "--help"]])
def test_help_everywhere(argv):
    result = run(*argv)
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout


def test_dync_opt_splits_input_on_separator_lines_only(tmp_path):
    """As mlir-opt: `// -----` splits only as a line of its own, not inside a comment (a lit
    file's `// CHECK: // -----`)."""
    path = tmp_path / "two.mlir"
    path.write_text("// CHECK: // -----\nmodule {\n}\n  // -----  \n"
                    "// one // ----- more\nmodule {\n}\n")
    result = run("dync-opt", str(path), "--split-input-file", "--dync-canonicalize")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("module {") == 2 and result.stdout.count("// -----") == 1


def test_dync_opt_help_lists_passes():
    out = run("dync-opt", "--help").stdout
    assert "--dync-check-ir" in out and "--dync-canonicalize" in out and "--dync-rdp" in out
    assert "--dync-split-subdnns" in out


def test_targets_lists_presets():
    out = run("dync", "targets").stdout
    for name in ("jetson-orin", "jetson-xavier", "a100", "h100", "generic", "host"):
        assert name in out


@pytest.fixture(scope="module")
def compiled_example(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "early_exit.vmfb"
    result = run("dync", "compile", "examples/early_exit.py:build", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "import done" in result.stderr  # progress on stderr
    assert "dync report" in result.stdout
    return out


def test_compile_factory_and_run(compiled_example, tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 3, 16, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = run("dync", "run", str(compiled_example), "--input", f"@{tmp_path / 'x.npy'}",
                 "--output", str(tmp_path / "y.npy"))
    assert result.returncode == 0, result.stderr
    assert "output 0: float32[3, 10]" in result.stdout

    sys.path.insert(0, str(ROOT / "examples"))
    from early_exit import build

    model = build()[0]
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-4, atol=1e-5)


class _AuxiliaryOnOnePath(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.aux = nn.Linear(8, 8), nn.Linear(8, 2)

    def forward(self, x):
        out, aux = self.lin(x), None
        if x.mean() > 0:
            aux = self.aux(out)
        return out, aux


def test_run_prints_an_output_the_path_taken_leaves_none(tmp_path):
    """An output returned on one path only is `None` in its place, not dropped (the outputs
    after it would be numbered wrong and matched with the wrong --output files)."""
    import dync

    compiled = dync.compile(_AuxiliaryOnOnePath(), (torch.rand(2, 8) + 0.1,),
                            dynamic_shapes=({0: Dim("batch", max=8)},), mode="graph", cache=False)
    compiled.save(tmp_path / "aux.vmfb")
    files = [str(tmp_path / "out.npy"), str(tmp_path / "aux.npy")]
    absent = run("dync", "run", str(tmp_path / "aux.vmfb"), "--input", "2x8xf32=-1",
                 "--output", files[0], "--output", files[1])
    assert absent.returncode == 0, absent.stderr
    assert "output 0: float32[2, 8]" in absent.stdout
    assert f"output 1: None (nothing written to {files[1]})" in absent.stdout
    present = run("dync", "run", str(tmp_path / "aux.vmfb"), "--input", "3x8xf32=1")
    assert present.returncode == 0, present.stderr
    assert "output 1: float32[3, 2]" in present.stdout


def test_run_rejects_out_of_range_input(compiled_example):
    result = run("dync", "run", str(compiled_example), "--input", "40x3x16x16xf32=0.5")
    assert result.returncode == 1
    assert "outside its declared range" in result.stderr
    assert "Traceback" not in result.stderr


def test_profile_times_each_dispatch_of_a_call(compiled_example):
    """`dync profile`: IREE's benchmark tool runs the function a call on these inputs runs,
    and IREE's profiler's rows say what each dispatch took; bad counts and inputs are clear
    errors."""
    result = run("dync", "profile", str(compiled_example), "--input", "2x3x16x16xf32=0.5",
                 "--calls", "5")
    assert result.returncode == 0, result.stderr
    head = result.stdout.splitlines()[0]
    assert head.startswith("main") and "on local-sync, 5 calls:" in head and "us a call" in head
    times = [float(line.split()[0]) for line in result.stdout.splitlines()
             if "$async_dispatch_" in line]
    assert times and all(t >= 0 for t in times) and sum(times) > 0
    for argv, message in [(["2x3x16x16xf32=0.5", "--calls", "0"], "calls must be at least 1"),
                          (["40x3x16x16xf32=0.5"], "outside its declared range")]:
        bad = run("dync", "profile", str(compiled_example), "--input", *argv)
        assert bad.returncode == 1 and message in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr


def test_compile_arm_cross(tmp_path):
    out = tmp_path / "m_arm.vmfb"
    result = run("dync", "compile", "examples/early_exit.py:build", "-o", str(out),
                 "--backend", "arm", "--target", "jetson-orin", "-q")
    assert result.returncode == 0, result.stderr
    assert out.is_file() and (tmp_path / "m_arm.manifest.json").is_file()


def test_bad_factory_is_a_clear_error():
    result = run("dync", "compile", "examples/early_exit.py:nope")
    assert result.returncode == 1
    assert "has no attribute 'nope'" in result.stderr and "Traceback" not in result.stderr


def test_lit_suite_passes():
    """The lit + FileCheck tests of every pass and frontend (`lit lit/`)."""
    result = subprocess.run([str(BIN / "lit"), "-q", str(ROOT / "lit")], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dump_ir_writes_dync_ir(tmp_path):
    ir_path, source_path = tmp_path / "ee.mlir", tmp_path / "ee_rewritten.py"
    result = run("dync", "compile", "examples/early_exit.py:build", "-o", str(tmp_path / "ee.vmfb"),
                 "-q", "--dump-ir", str(ir_path), "--dump-rewritten", str(source_path))
    assert result.returncode == 0, result.stderr
    source = source_path.read_text()
    assert "__dync__.if_(" in source and "forward (rewritten by dync)" in source
    compile(source, str(source_path), "exec")  # readable, valid Python
    text = ir_path.read_text()
    assert "dync.entry" in text and "scf.if" in text and 'torch.symbolic_int "batch"' in text
    # what was dumped is valid dync IR for dync-opt
    check = run("dync-opt", str(ir_path), "--dync-check-ir")
    assert check.returncode == 0, check.stderr


def test_compile_package_module_factory(tmp_path):
    """`pkg.module:factory` is imported relative to the current directory."""
    out = tmp_path / "pkg.vmfb"
    result = run("dync", "compile", "examples.early_exit:build", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    assert out.is_file()


def test_compile_for_two_threads(tmp_path):
    """`--threads 2`: the saved module's manifest names IREE's local-task device; a bad
    count is a clear error."""
    out = tmp_path / "t.vmfb"
    result = run("dync", "compile", "examples/early_exit.py:build", "-o", str(out), "-q",
                 "--threads", "2")
    assert result.returncode == 0, result.stderr
    assert json.loads(out.with_suffix(".manifest.json").read_text())["driver"] == "local-task"
    bad = run("dync", "compile", "examples/early_exit.py:build", "--threads", "0")
    assert bad.returncode == 1 and "threads must be an int" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_compile_with_specialized_versions(tmp_path):
    result = run("dync", "compile", "examples/early_exit.py:build", "-o", str(tmp_path / "v.vmfb"),
                 "--specialize", "batch=1,3")
    assert result.returncode == 0, result.stderr
    assert "versions: main__batch_1 (batch=1), main__batch_3 (batch=3)" in result.stdout
    bad = run("dync", "compile", "examples/early_exit.py:build", "--specialize", "batch=one")
    assert bad.returncode == 1 and "expected NAME=SIZE[,SIZE...]" in bad.stderr
    assert "Traceback" not in bad.stderr
