"""Which code a figure was measured on: the git commit (and whether the tree had changes to
what is measured), so that BENCHMARKS.md's sections name it and one older than the code it
describes is marked stale."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the figures depend on: the compiler, its targets, the models and their harness.
MEASURED = ("dync", "benchmarks")


def _git(*args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None


def commit() -> str | None:
    """The checked-out commit (short hash), "+changes" appended where the tree differs from it
    in what is measured; None outside a git checkout."""
    head = _git("rev-parse", "--short", "HEAD")
    if head is None or head.returncode != 0:
        return None
    status = _git("status", "--porcelain", "--untracked-files=no", "--", *MEASURED)
    dirty = status is not None and bool(status.stdout.strip())
    return head.stdout.strip() + ("+changes" if dirty else "")


def stamp() -> str:
    """'commit abc1234, 2026-11-25' for a section's text."""
    return f"commit {commit() or 'unknown'}, {time.strftime('%Y-%m-%d')}"


def stale(measured_commit: str | None) -> bool:
    """Whether what is measured changed after `measured_commit` (True when it is unknown or
    not in this checkout's history)."""
    if not measured_commit:
        return True
    base = measured_commit.split("+", 1)[0]
    diff = _git("diff", "--quiet", base, "HEAD", "--", *MEASURED)
    return diff is None or diff.returncode != 0 or measured_commit.endswith("+changes")


def replace_section(text: str, heading: str, new: str) -> str:
    """`text` (BENCHMARKS.md) with its section `heading` ("## CUDA") replaced by `new`, or
    `new` appended where it has none."""
    start = text.find(f"\n{heading}\n")
    if start < 0:
        return text.rstrip("\n") + "\n\n" + new
    end = text.find("\n## ", start + 1)
    return text[:start + 1] + new + (text[end:] if end >= 0 else "")


def write_section(path: Path, heading: str, new: str) -> None:
    """Put `new` into the file `path` (BENCHMARKS.md) as its section `heading`, the file's other
    sections kept (`replace_section`); the file is made if it does not exist."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(replace_section(text, heading, new), encoding="utf-8")


def with_sections_kept(new: str, old: str, owned: frozenset[str]) -> str:
    """`new` (BENCHMARKS.md as one command writes it) followed by the sections of `old` that
    command does not own (`owned`: their headings, "## Kernels") and `new` lacks, in their
    order: what other commands measured survives a run of this one."""
    present = set(re.findall(r"(?m)^## .+$", new))
    kept = []
    for part in re.split(r"(?m)^(?=## )", old)[1:]:
        heading = part.split("\n", 1)[0].strip()
        if heading not in owned and heading not in present:
            kept.append(part.rstrip("\n"))
    if not kept:
        return new
    return new.rstrip("\n") + "\n\n" + "\n\n".join(kept) + "\n"


def host_cpu() -> str:
    """The CPU the figures come from: its model name, core count and widest vector ISA
    (IREE's code generation, and so dync's speed, depends on it)."""
    from dync import targets

    name = targets.host_cpu()[0]
    isa = {"avx512": "AVX-512", "avx2": "AVX2", "neon": "NEON"}.get(targets.host_vector_isa())
    return f"{name}, {os.cpu_count()} cores" + (f", {isa}" if isa else "")
