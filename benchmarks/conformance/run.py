"""Run conformance cases in worker processes (`child.py`), `jobs` at a time. A worker runs one
case after another so that the import of torch and dync is paid once; a case that kills its
worker (a signal, an exit, a time-out) is recorded as a crash and a fresh worker goes on with
the next case."""

from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from .cases import Case

OUTCOMES = ("pass", "error", "mismatch", "internal", "crash")
TIMEOUT_S = 600.0  # one case: the slowest node tests compile in under a minute here
START_S = 300.0  # a worker's import of torch and dync
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    name: str
    outcome: str          # one of OUTCOMES
    stage: str = ""       # compile, run or compare
    detail: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


class _Worker:
    """One `child.py` process and a thread reading its lines."""

    def __init__(self):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.conformance.child"], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=40)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        try:
            self.ready = self.lines.get(timeout=START_S) is not None
        except queue.Empty:
            self.ready = False

    def _read(self):
        for line in self.process.stdout:
            if line.startswith("{"):
                self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr.append(line.rstrip("\n"))

    def run(self, case: Case, timeout_s: float) -> Result | None:
        """The case's result; None when the worker died (a time-out kills it)."""
        if not self.ready:
            return None
        self.process.stdin.write(f"{case.name}\t{case.rtol}\t{case.atol}\t{case.directory}\n")
        self.process.stdin.flush()
        try:
            while (line := self.lines.get(timeout=timeout_s)) is not None:
                data = json.loads(line)
                if "outcome" in data:
                    return Result(**data)
        except queue.Empty:
            self.process.kill()
            self.process.wait()
            return Result(case.name, "crash", detail=f"timed out after {timeout_s:g} s")
        return None

    def death(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait()
        cause = (f"killed by {signal.Signals(-code).name}" if code < 0
                 else f"exit status {code}")
        tail = " ".join(" ".join(self.stderr).split())[-300:]
        return f"{cause}: {tail}"

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()


def run(cases: list[Case], jobs: int = 1, say=print, timeout_s: float = TIMEOUT_S) -> list[Result]:
    """Every case's result, in the order of `cases`."""
    todo: queue.Queue[Case] = queue.Queue()
    for case in cases:
        todo.put(case)
    results: dict[str, Result] = {}

    def work():
        worker = _Worker()
        try:
            while True:
                try:
                    case = todo.get_nowait()
                except queue.Empty:
                    return
                result = worker.run(case, timeout_s)
                if result is None or (result.outcome == "crash" and "timed out" in result.detail):
                    if result is None:
                        result = Result(case.name, "crash", detail=worker.death())
                    worker = _Worker()
                results[case.name] = result
                say(f"[onnx] {case.name}: {result.outcome}"
                    + (f" ({result.stage}) {result.detail[:160]}" if result.detail else "")
                    + f" [{result.seconds:.1f} s]")
        finally:
            worker.close()

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for future in [pool.submit(work) for _ in range(max(1, jobs))]:
            future.result()
    return [results[case.name] for case in cases]
