"""Tests of tests/aarch64.py: real aarch64 iree-run-module under qemu-user."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

try:
    from tests import aarch64
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    import aarch64

# @main adds; @sum_and_product has two results, to exercise num_outputs > 1.
MLIR = """
#id = affine_map<(i, j) -> (i, j)>

func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x4xf32>
  %init = tensor.empty(%n) : tensor<?x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%init : tensor<?x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %sum : tensor<?x4xf32>
}

func.func @sum_and_product(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x4xf32>
  %init = tensor.empty(%n) : tensor<?x4xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x4xf32>, tensor<?x4xf32>)
      outs(%init, %init : tensor<?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o0: f32, %o1: f32):
    %s = arith.addf %x, %y : f32
    %p = arith.mulf %x, %y : f32
    linalg.yield %s, %p : f32, f32
  } -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %r#0, %r#1 : tensor<?x4xf32>, tensor<?x4xf32>
}
"""


@pytest.fixture(scope="session")
def vmfb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from iree.compiler.tools import compile_str

    path = tmp_path_factory.mktemp("aarch64") / "add.vmfb"
    path.write_bytes(
        compile_str(MLIR, input_type="none", extra_args=list(aarch64.AARCH64_COMPILE_FLAGS))
    )
    return path


def _operands(rows: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, 4), dtype=np.float32)
    b = rng.standard_normal((rows, 4), dtype=np.float32)
    return a, b


@pytest.mark.parametrize("rows", [3, 129])
def test_dynamic_add_matches_numpy(
    qemu_runner: aarch64.Aarch64Runner, vmfb: Path, rows: int
) -> None:
    a, b = _operands(rows)
    (result,) = qemu_runner.run(vmfb, [a, b], num_outputs=1)
    assert result.shape == (rows, 4)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, a + b, rtol=1e-6)


def test_two_results_and_fortran_order_input(
    qemu_runner: aarch64.Aarch64Runner, vmfb: Path
) -> None:
    a, b = _operands(5)
    a = np.asfortranarray(a)
    total, product = qemu_runner.run(vmfb, [a, b], function="sum_and_product", num_outputs=2)
    np.testing.assert_allclose(total, a + b, rtol=1e-6)
    np.testing.assert_allclose(product, a * b, rtol=1e-6)


def _truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _flip_header(data: bytes) -> bytes:
    return bytes(byte ^ 0xFF for byte in data[:64]) + data[64:]


@pytest.mark.parametrize("corrupt", [_truncate, _flip_header])
def test_corrupted_vmfb_raises(
    qemu_runner: aarch64.Aarch64Runner, vmfb: Path, tmp_path: Path, corrupt
) -> None:
    bad = tmp_path / "bad.vmfb"
    bad.write_bytes(corrupt(vmfb.read_bytes()))
    with pytest.raises(RuntimeError, match="iree-run-module exited with status") as info:
        qemu_runner.run(bad, list(_operands(3)), num_outputs=1)
    message = str(info.value)
    assert f"--module={bad}" in message  # the command
    assert "bad.vmfb" in message.splitlines()[-1]  # stderr tail naming the module


def test_command_argv() -> None:
    runner = aarch64.Aarch64Runner(
        qemu=Path("/q/qemu-aarch64"), iree_run_module=Path("/c/iree-run-module")
    )
    argv = runner.command(
        Path("/m.vmfb"), [Path("/x0.npy"), Path("/x1.npy")], [Path("/y.npy")], function="f"
    )
    assert argv == [
        "/q/qemu-aarch64",
        "-L",
        "/usr/aarch64-linux-gnu",
        "/c/iree-run-module",
        "--module=/m.vmfb",
        "--device=local-sync",
        "--function=f",
        "--input=@/x0.npy",
        "--input=@/x1.npy",
        "--output=@/y.npy",
    ]


@pytest.mark.parametrize("breakage", ["not-an-aarch64-program", "missing"])
def test_a_broken_runner_fails_the_suite(
    qemu_runner: aarch64.Aarch64Runner, tmp_path: Path, breakage: str
) -> None:
    """With qemu here, an iree-run-module that does not start (or is not there) is an error
    of the tests that need it, not a skip: shown by running this file's tests on a cache
    holding a broken one."""
    cache = tmp_path / "cache"
    binary = qemu_runner.iree_run_module
    broken = cache / binary.parent.name / binary.name
    if breakage == "not-an-aarch64-program":
        broken.parent.mkdir(parents=True)
        broken.write_bytes(b"#!/bin/false\n")
        broken.chmod(0o755)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         f"{__file__}::test_dynamic_add_matches_numpy"],
        env={**os.environ, aarch64.CACHE_ENV_VAR: str(cache)},
        capture_output=True, text=True, timeout=600, check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "2 errors" in output and "skipped" not in output, output
    expected = "exited with status" if breakage != "missing" else "python tests/aarch64.py"
    assert expected in output, output
