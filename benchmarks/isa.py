"""`--isa native|avx2` for the benchmarks that time dync against eager: `avx2` measures an AVX2
machine on an AVX-512 one — dync (and IREE alone) generate code for `x86-64-v3`, and eager's
oneDNN and MKL are held to AVX2 (`ONEDNN_MAX_CPU_ISA`, `MKL_ENABLE_INSTRUCTIONS`, which must
be set before torch loads them: the command runs again in a child process with them set)."""

from __future__ import annotations

import os
import subprocess
import sys

CHOICES = ("avx2", "native")
# dync's target preset for each choice (also IREE alone's `--iree-llvmcpu-target-cpu`).
TARGET = {"native": "host", "avx2": "x86-64-v3"}
_AVX2_ENV = {"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def rerun_held_to(isa: str, command: str, argv: list[str] | None) -> None:
    """For `avx2`, unless eager is already held to it, run `python -m benchmarks COMMAND
    ARGV` in a child process that is, and exit with its status."""
    if isa != "avx2" or all(os.environ.get(k) == v for k, v in _AVX2_ENV.items()):
        return
    argv = sys.argv[1:] if argv is None else [command, *argv]
    sys.exit(subprocess.run([sys.executable, "-m", "benchmarks", *argv],
                            env={**os.environ, **_AVX2_ENV}).returncode)


def code_for(isa: str) -> str:
    """What a section says about the code it measures."""
    return {"native": "`--iree-llvmcpu-target-cpu=host`",
            "avx2": "`x86-64-v3` (AVX2; eager held to AVX2 by `ONEDNN_MAX_CPU_ISA` and "
                    "`MKL_ENABLE_INSTRUCTIONS`)"}[isa]
