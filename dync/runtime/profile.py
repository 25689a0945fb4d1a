"""Where a call of a compiled CPU module spends its time, dispatch by dispatch: IREE's own
benchmark tool runs the call (`iree-benchmark-module`, once as it is for the time of a call,
once under IREE's HAL profiler, `--device_profiling_mode=host-execution`) and IREE's
`iree-profile statistics` reads the profile back (JSON lines, parsed, never executed).
`dync profile MODULE.vmfb --input ...` prints it (`format_profile`).

What it separates: each dispatch's own time, the queue's operations (command buffers
executed, transient allocations), and the rest of a call, which is IREE's VM running the
module's host code (recording command buffers, waiting on fences, reading sizes back).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DyncError

# Drivers whose calls IREE's host-execution profiling covers.
_CPU_DRIVERS = ("local-sync", "local-task")
_UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
_REAL_TIME = re.compile(r"^BM_\S+/real_time\s+([\d.]+) (ns|us|ms|s)\b", re.MULTILINE)
_TIMEOUT_S = 600


@dataclass
class Profile:
    """Per call of `function`, in microseconds: `call_us` the whole call (without the
    profiler), `dispatches` {dispatch function: (dispatches, us)}, `queue` {queue operation:
    (operations, us)}."""

    function: str
    driver: str
    calls: int
    call_us: float
    dispatches: dict[str, tuple[float, float]] = field(default_factory=dict)
    queue: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def dispatch_us(self) -> float:
        return sum(us for _, us in self.dispatches.values())


def tool(name: str) -> Path:
    """The path of one of IREE's runtime tools, as the installed `iree-base-runtime` ships
    them."""
    from iree._runtime import libs

    path = Path(libs.library_path) / name
    if not path.is_file():
        raise DyncError(f"IREE's {name} is not in this installation ({path})")
    return path


def profile(vmfb: bytes, driver: str, allocators: tuple[str, ...], function: str,
            arrays: list[np.ndarray], calls: int = 100) -> Profile:
    """`function` of the module `vmfb` on `arrays`, `calls` times on `driver` (with the
    runtime's `allocators`), timed and profiled (module docstring)."""
    if driver not in _CPU_DRIVERS:
        raise DyncError(f"profiling covers CPU modules ({', '.join(_CPU_DRIVERS)}); this one "
                        f"runs on {driver!r}")
    if calls < 1:
        raise DyncError(f"calls must be at least 1, not {calls}")
    with tempfile.TemporaryDirectory(prefix="dync-profile-") as scratch:
        folder = Path(scratch)
        (folder / "module.vmfb").write_bytes(vmfb)
        command = [str(tool("iree-benchmark-module")), f"--module={folder / 'module.vmfb'}",
                   f"--device={driver}", f"--function={function}",
                   f"--benchmark_min_time={calls}x",
                   *(f"--device_allocator={a}" for a in allocators)]
        for k, array in enumerate(arrays):
            np.save(folder / f"input{k}.npy", array)
            command.append(f"--input=@{folder / f'input{k}.npy'}")
        timed = _run(command)
        found = _REAL_TIME.search(timed)
        if found is None:
            raise DyncError(f"iree-benchmark-module printed no time:\n{timed[-2000:]}")
        result = Profile(function, driver, calls, float(found[1]) * _UNITS[found[2]])
        recorded = folder / "call.ireeprof"
        _run([*command, "--device_profiling_mode=host-execution",
              f"--device_profiling_output={recorded}"])
        rows = _run([str(tool("iree-profile")), "statistics", "--format=jsonl", str(recorded)])
    _read_rows(rows, result)
    return result


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DyncError(f"{Path(command[0]).name} did not run: {e}") from None
    if done.returncode != 0:
        raise DyncError(f"{Path(command[0]).name} failed (exit {done.returncode}):\n"
                        f"{(done.stderr or done.stdout)[-2000:]}")
    return done.stdout


def _read_rows(text: str, into: Profile) -> None:
    """`iree-profile statistics --format=jsonl`'s rows, per call, into `into`: each dispatch
    function's (host_execution_function) and each queue operation's
    (host_execution_queue_operation, summed over the queue's submissions)."""
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(row, dict) or row.get("type") != "statistics_row":
            continue
        kind, ns = row.get("row_type"), row.get("total_duration_ns")
        count = row.get("operation_count") or row.get("sample_count") or 0
        if not isinstance(ns, int | float) or not isinstance(count, int | float):
            continue
        if kind == "host_execution_function" and isinstance(row.get("function_name"), str):
            table, key = into.dispatches, row["function_name"]
        elif kind == "host_execution_queue_operation" and isinstance(row.get("event_name"), str):
            table, key = into.queue, row["event_name"]
        else:
            continue
        old_count, old_us = table.get(key, (0.0, 0.0))
        table[key] = (old_count + count / into.calls, old_us + ns / 1e3 / into.calls)


def format_profile(p: Profile, top: int = 20) -> str:
    """The profile as a table for a terminal: the call, the dispatches by time, the queue."""
    execute = p.queue.get("execute", (0.0, 0.0))
    alloca = p.queue.get("alloca", (0.0, 0.0))
    dispatches = sum(n for n, _ in p.dispatches.values())
    rest = max(0.0, p.call_us - execute[1] - alloca[1])
    lines = [
        f"{p.function} on {p.driver}, {p.calls} calls: {p.call_us:.1f} us a call",
        f"  {dispatches:.0f} dispatches a call, {p.dispatch_us:.1f} us of work (under the "
        "profiler)",
        f"  {execute[0]:.0f} command buffers executed a call, {execute[1]:.1f} us (the "
        "dispatches in them included)",
        f"  {alloca[0]:.0f} transient allocations a call, {alloca[1]:.1f} us",
        f"  the rest, IREE's VM running the host code (recording, waits, reading sizes "
        f"back): about {rest:.1f} us",
        "",
        f"  {'us/call':>9} {'share':>6} {'count':>6}  dispatch",
    ]
    ranked = sorted(p.dispatches.items(), key=lambda item: -item[1][1])
    for name, (count, us) in ranked[:top]:
        share = 100 * us / p.call_us if p.call_us else 0.0
        lines.append(f"  {us:9.2f} {share:5.1f}% {count:6.0f}  {name}")
    if len(ranked) > top:
        left = sum(us for _, (_, us) in ranked[top:])
        lines.append(f"  {left:9.2f} {'':6} {'':6}  ({len(ranked) - top} more)")
    return "\n".join(lines)
