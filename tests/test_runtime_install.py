"""`pip install dync` without the `compile` extra is what a deployment machine installs (as IREE
splits iree-base-runtime from iree-base-compiler): in a fresh virtual environment holding the
runtime alone, a saved module loads and runs from Python and from `dync run`, and
`dync.compile` says what to install."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from models import cond_inputs

ROOT = Path(__file__).resolve().parents[1]
COMPILE_SIDE = {"torch", "iree-base-compiler", "onnx"}


def _runtime_venv(where: Path) -> Path:
    """A fresh virtual environment with `pip install dync` (no extras) from a copy of the
    package's sources; its python."""
    source = where / "source"
    shutil.copytree(ROOT / "dync", source / "dync",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", str(source)],
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return python


def test_a_runtime_only_install_runs_a_saved_module(cond_compiled, cond_model, tmp_path):
    python = _runtime_venv(tmp_path)
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"],
                            capture_output=True, text=True, check=True, timeout=300)
    installed = {line.split("==")[0].lower() for line in listed.stdout.split()}
    assert {"dync", "iree-base-runtime", "numpy", "sympy"} <= installed, installed
    assert not installed & COMPILE_SIDE, installed & COMPILE_SIDE

    saved = cond_compiled.save(tmp_path / "cond.vmfb")
    x = cond_inputs(3, True)
    np.save(tmp_path / "x.npy", x.numpy())
    expected = cond_model(x).detach().numpy()
    script = (
        "import sys, numpy as np, dync\n"
        f"y = dync.load({str(saved)!r})(np.load({str(tmp_path / 'x.npy')!r}))\n"
        f"np.save({str(tmp_path / 'y.npy')!r}, y)\n"
        "try:\n"
        "    dync.compile\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-4, atol=1e-5)
    assert "pip install 'dync[compile]'" in done.stdout, done.stdout

    run = subprocess.run([str(python.parent / "dync"), "run", str(saved),
                          "--input", f"@{tmp_path / 'x.npy'}", "--output", str(tmp_path / "z.npy")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "z.npy"), expected, rtol=1e-4, atol=1e-5)
