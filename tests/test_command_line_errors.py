"""Bad input to `dync` and `dync-opt`, and a crashing IREE compiler worker, each end in a clear
dync error: for the command lines, one `dync: error: ...` line and exit status 1, before any
long compile or run; never a Python traceback."""

import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

import dync
from dync import targets
from dync.backend import CompilerSession
from dync.dialects.assembly import module_text

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
FACTORY = "examples/early_exit.py:build"
AS_ROOT = os.geteuid() == 0


def run(*args, stdin=None):
    return subprocess.run([str(BIN / args[0]), *map(str, args[1:])], capture_output=True,
                          cwd=ROOT, timeout=600, input=stdin, text=stdin is None)


def error_line(result, prog="dync") -> str:
    """The one line a failed command wrote, checked to be a dync error, not a traceback."""
    stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode()
    assert result.returncode == 1, stderr
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), stderr
    return lines[0]


def under_a_file(tmp_path: Path, name: str) -> Path:
    (tmp_path / "file.txt").write_text("a regular file\n")
    return tmp_path / "file.txt" / name


# --- dync compile: every file it writes is checked before it compiles ---

@pytest.mark.parametrize("where, reason", [
    ("under-a-file", "is not a directory"),
    ("/proc/out.vmfb", "cannot create a file in /proc"),
    ("/proc/no-such-dir/out.vmfb", "cannot create the directory /proc/no-such-dir"),
    ("a-directory", "it is a directory"),
    pytest.param("read-only", "Permission denied",
                 marks=pytest.mark.skipif(AS_ROOT, reason="root writes whatever the mode")),
])
def test_compile_to_an_unwritable_output_fails_before_compiling(tmp_path, where, reason):
    if where == "under-a-file":
        out = under_a_file(tmp_path, "out.vmfb")
    elif where == "a-directory":
        out = tmp_path
    elif where == "read-only":
        (tmp_path / "ro").mkdir(mode=0o500)
        out = tmp_path / "ro" / "out.vmfb"
    else:
        out = Path(where)
    result = run("dync", "compile", FACTORY, "-o", out)
    line = error_line(result)
    assert line.startswith(f"dync: error: cannot write the output {out}: ") and reason in line
    assert "import" not in result.stderr  # no progress: nothing was compiled


@pytest.mark.parametrize("flag", ["--dump-ir", "--dump-rewritten"])
def test_compile_to_an_unwritable_dump_fails_before_compiling(tmp_path, flag):
    target = under_a_file(tmp_path, "dump.txt")
    result = run("dync", "compile", FACTORY, "-o", tmp_path / "m.vmfb", flag, target)
    line = error_line(result)
    assert line == (f"dync: error: cannot write the {flag} file {target}: "
                    f"{tmp_path / 'file.txt'} is not a directory")
    assert not (tmp_path / "m.vmfb").exists()


def test_compile_creates_a_missing_output_directory(tmp_path):
    out = tmp_path / "new" / "sub" / "m.vmfb"
    result = run("dync", "compile", FACTORY, "-o", out, "-q")
    assert result.returncode == 0, result.stderr
    assert out.is_file() and (out.parent / "m.manifest.json").is_file()
    assert not list(out.parent.glob(".dync-probe-*"))  # the probe file was removed


# --- dync run: inputs are read and outputs checked before the module runs ---

@pytest.fixture(scope="module")
def module_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli-errors") / "early_exit.vmfb"
    result = run("dync", "compile", FACTORY, "-o", out, "-q")
    assert result.returncode == 0, result.stderr
    return out


def _write_input(kind: str, path: Path) -> None:
    if kind == "text":
        path.write_text("1 2 3\n4 5 6\n")
    elif kind == "random-bytes":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "object-array":
        np.save(path, np.array([1, "two", None], dtype=object), allow_pickle=True)
    elif kind == "truncated":
        np.save(path, np.zeros((3, 3, 16, 16), np.float32))
        path.write_bytes(path.read_bytes()[:200])


@pytest.mark.parametrize("kind, reason", [
    ("missing", "No such file or directory"),
    ("text", "not a .npy file"),
    ("random-bytes", "not a .npy file"),
    ("object-array", "an array of Python objects, which dync does not load"),
    ("truncated", "not a valid .npy file"),
])
def test_run_with_an_unreadable_input_file(module_path, tmp_path, kind, reason):
    path = tmp_path / "x.npy"
    _write_input(kind, path)
    result = run("dync", "run", module_path, "--input", f"@{path}")
    line = error_line(result)
    assert line.startswith(f"dync: error: --input @{path}: cannot read {path}: ")
    assert reason in line
    assert "output 0" not in result.stdout


@pytest.mark.parametrize("spec, reason", [
    ("2x3xf99=1", "unknown element type 'f99' (one of f32, "),
    ("2x3xf32=abc", "the value 'abc' is not a number"),
    ("2x3xi8=300", "300 is not a value of int8"),
    ("2x3xi1=0.5", "0.5 is not a value of bool"),
    ("3x3x16x16", "expected @FILE.npy or SHAPExDTYPE=VALUE"),
])
def test_run_with_a_malformed_input_spec(module_path, spec, reason):
    line = error_line(run("dync", "run", module_path, "--input", spec))
    assert line.startswith(f"dync: error: --input {spec}: ") and reason in line


def test_run_to_an_unwritable_output_fails_before_running(module_path, tmp_path):
    target = under_a_file(tmp_path, "y.npy")
    result = run("dync", "run", module_path, "--input", "3x3x16x16xf32=0.5", "--output", target)
    line = error_line(result)
    assert line == (f"dync: error: cannot write the --output file {target}: "
                    f"{tmp_path / 'file.txt'} is not a directory")
    assert "output 0" not in result.stdout


# --- dync-opt ---

@pytest.mark.parametrize("kind, reason", [
    ("missing", "No such file or directory"),
    ("random-bytes", "a binary file"),
    ("latin-1", "not UTF-8 text (byte 0xe9 at offset 17)"),
    ("directory", "Is a directory"),
    ("vmfb", "a binary file"),
])
def test_dync_opt_with_an_unreadable_input(tmp_path, module_path, kind, reason):
    path = {"directory": tmp_path, "vmfb": module_path}.get(kind, tmp_path / "in.mlir")
    if kind == "random-bytes":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "latin-1":
        path.write_bytes("// a comment, café\nmodule {}\n".encode("latin-1"))
    line = error_line(run("dync-opt", path, "--dync-check-ir"), "dync-opt")
    assert line.startswith(f"dync-opt: error: cannot read {path}: ") and reason in line


def test_dync_opt_with_unreadable_standard_input():
    result = run("dync-opt", "--dync-check-ir", stdin=b"module {}\n// caf\xe9\n")
    assert "cannot read standard input: not UTF-8 text" in error_line(result, "dync-opt")


def test_dync_opt_on_text_that_is_not_mlir_gives_mlir_diagnostics(tmp_path):
    (tmp_path / "notes.txt").write_text("hello world\n")
    result = run("dync-opt", tmp_path / "notes.txt")
    assert result.returncode == 1
    assert "error: custom op 'hello' is unknown" in result.stderr
    assert "Traceback" not in result.stderr


def test_dync_opt_to_an_unwritable_output(tmp_path):
    (tmp_path / "in.mlir").write_text("module {}\n")
    target = under_a_file(tmp_path, "out.mlir")
    line = error_line(run("dync-opt", tmp_path / "in.mlir", "-o", target), "dync-opt")
    assert line == (f"dync-opt: error: cannot write the output {target}: "
                    f"{tmp_path / 'file.txt'} is not a directory")


# --- the IREE compiler worker ---

def _compile_tiny(tmp_path: Path, **options) -> dync.CompilationError:
    """Compile a Linear layer for llvm-cpu (whose thread-count flag is process-wide, so IREE
    runs in the worker) in graph mode (`auto` would fall back past IREE's failure),
    expecting a CompilationError; the dync IR handed to IREE is dumped to
    tmp_path/dumped.mlir."""
    torch.manual_seed(0)
    with pytest.raises(dync.CompilationError) as info:
        dync.compile(torch.nn.Linear(4, 3), (torch.randn(2, 4),), progress=False,
                     dump_ir=tmp_path / "dumped.mlir", mode="graph", **options)
    return info.value


def _reproducer(error: dync.CompilationError, folder: Path, prefix: str) -> Path:
    path = Path(re.search(r" is in (\S+\.mlir)", str(error)).group(1))
    assert path.parent == folder and path.name.startswith(prefix)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    return path


@pytest.mark.parametrize("signal_name, cache", [("SIGSEGV", "on"), ("SIGABRT", "off")])
def test_a_crashed_iree_worker_is_reported_with_a_reproducer(tmp_path, monkeypatch,
                                                             signal_name, cache):
    monkeypatch.setenv("DYNC_TEST_WORKER_SIGNAL", signal_name)
    if cache == "on":
        monkeypatch.setenv("DYNC_CACHE_DIR", str(tmp_path / "cache"))
        folder = tmp_path / "cache" / "crashes"
    else:
        monkeypatch.setenv("DYNC_CACHE", "0")
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
        folder = tmp_path / "dync-crashes"
    error = _compile_tiny(tmp_path)
    message = str(error)
    assert message.startswith(f"the IREE compiler crashed ({signal_name}) compiling for "
                              "llvm-cpu/host with the flags --iree-input-type=torch ")
    assert "--iree-llvmcpu-number-of-threads=1" in message
    assert "rejected the flags" not in message

    path = _reproducer(error, folder, "dync-iree-crash-")
    header, _, body = path.read_text().partition("\n")
    assert header.startswith("// iree-compile flags: --iree-input-type=torch ")
    flags = header.removeprefix("// iree-compile flags: ").split()
    assert " ".join(flags) in message
    # The body is the module the worker was given: the dumped dync IR, with its locations.
    session = CompilerSession(targets.resolve("llvm-cpu"))
    try:
        from iree.compiler import ir

        parsed = ir.Module.parse(body, session.context)
        assert module_text(parsed, debug_info=True) == body
        assert module_text(parsed) == (tmp_path / "dumped.mlir").read_text()
    finally:
        session.close()
    # ... and iree-compile, given the header's flags, compiles it.
    monkeypatch.delenv("DYNC_TEST_WORKER_SIGNAL")
    done = subprocess.run([str(BIN / "iree-compile"), *flags, str(path),
                           "-o", str(tmp_path / "repro.vmfb")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_ir_of_a_failed_iree_compile_is_saved_in_the_crash_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNC_CACHE_DIR", str(tmp_path / "cache"))
    error = _compile_tiny(tmp_path, extra_flags=("--iree-hal-target-device=no-such-device",))
    assert "IR at the point of failure is in" in str(error)
    path = _reproducer(error, tmp_path / "cache" / "crashes", "dync-iree-failure-")
    assert "no-such-device" in path.read_text().splitlines()[0]


def test_a_failed_compile_saves_its_ir_without_the_weights_and_the_folder_is_capped(
        tmp_path, monkeypatch):
    """A failure of an ImageNet-sized model once wrote 220 MB of inlined weights to /tmp:
    the reproducer elides large constants, and the crash folder keeps the newest 20."""
    from dync import backend

    monkeypatch.setenv("DYNC_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "crashes"
    folder.mkdir(parents=True, mode=0o700)
    for k in range(backend.KEEP_REPRODUCERS + 5):
        (folder / f"dync-iree-failure-old{k}.mlir").write_text("old")
    torch.manual_seed(0)
    with pytest.raises(dync.CompilationError) as info:  # 1 MiB of weights
        dync.compile(torch.nn.Linear(512, 512), (torch.randn(2, 512),), mode="graph",
                     extra_flags=("--iree-hal-target-device=no-such-device",))
    path = _reproducer(info.value, folder, "dync-iree-failure-")
    assert path.stat().st_size < 64 * 1024  # the weights alone are 1 MiB
    assert "dense_resource<" in path.read_text()
    assert len(list(folder.glob("dync-iree-*.mlir"))) == backend.KEEP_REPRODUCERS
    assert path.exists()
