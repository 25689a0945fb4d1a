"""Differential fuzzing: generated programs compiled by `dync.compile` with its defaults and
compared with eager PyTorch.

Each program runs in a process of its own (`child.run_forked`, forked from a server that has
imported torch and dync), so that a crash is a result, not a dead campaign. Outcomes:

- `correct`: compiled, and every input gives eager's results (the report's mode says how much
  was compiled: in-graph, host, or eager when `auto` fell back on everything);
- `error`: a dync error; `names_line` says whether it names a line of the program's file;
- `mismatch`: a result differs from eager's where eager in float64 agrees with eager in float32
  (a silent wrong answer: the worst outcome);
- `ill-conditioned`: a result differs, but so does eager in float64 from eager in float32 (a
  decision taken at rounding level, which no compiler owes: the program's, not dync's);
- `crash`: anything else (an exception that is no dync error, a signal, a timeout).
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import json
import multiprocessing
import multiprocessing.context
import re
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .generate import generate

OUTCOMES = ("correct", "error", "mismatch", "ill-conditioned", "crash")
CANDIDATES = 20  # per seed: the first program that runs in eager is the seed's
TIMEOUT_S = 900.0


@dataclass
class Result:
    seed: int
    path: str
    outcome: str
    constructs: list[str] = field(default_factory=list)
    mode: str = ""            # correct: in-graph, host or eager
    graph_breaks: int = 0
    detail: str = ""          # error / crash: the first line of the message
    names_line: bool = False  # error: names a line of the program's file
    seconds: float = 0.0
    breaks: list[dict] = field(default_factory=list)  # the report's graph breaks
    commit: str = ""          # the dync commit that compiled it
    arguments: str = ""       # correct: the report's `arguments` (imported, or copied and why)

    def to_json(self) -> dict:
        return dict(vars(self))


def write_program(seed: int, directory: Path) -> tuple[Path, list[str]]:
    """The program of `seed` written to `directory`: the first candidate that runs in eager
    on its example and all its inputs. Returns its path and constructs."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"prog_{seed}.py"
    for candidate in range(CANDIDATES):
        program = generate(seed, candidate)
        path.write_text(program.source, encoding="utf-8")
        if _runs_in_eager(path):
            return path, list(program.constructs)
    raise RuntimeError(f"seed {seed}: no candidate of {CANDIDATES} runs in eager")


def _runs_in_eager(path: Path) -> bool:
    from .child import load

    try:
        import torch

        module = load(path)
        model = module.build()
        with torch.no_grad():
            model(*module.example()[0])
            for args in module.inputs():
                model(*args)
    except Exception:
        return False
    return True


def run_one(path: Path, constructs: list[str], seed: int, timeout_s: float = TIMEOUT_S) -> Result:
    """Compile and compare the program at `path` in a child process."""
    from . import child

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dync-fuzz-") as tmp:
        result_path, log_path = Path(tmp, "result.json"), Path(tmp, "log")
        process = _children().Process(target=child.run_forked,
                                      args=(str(path), str(result_path), str(log_path)))
        process.start()
        process.join(timeout_s)
        if process.is_alive():
            process.kill()
            process.join()
            return Result(seed, str(path), "crash", constructs,
                          detail=f"timed out after {timeout_s:g} s",
                          seconds=time.perf_counter() - start)
        if process.exitcode != 0 or not result_path.exists():
            log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.exists() else ""
            return Result(seed, str(path), "crash", constructs,
                          detail=f"exit status {process.exitcode}: {' '.join(log.split())[-300:]}",
                          seconds=time.perf_counter() - start)
        data = json.loads(result_path.read_text(encoding="utf-8"))
    return Result(seed, str(path), data["outcome"], constructs, data.get("mode", ""),
                  data.get("graph_breaks", 0), data.get("detail", ""),
                  data.get("names_line", False), time.perf_counter() - start,
                  data.get("breaks", []), arguments=data.get("arguments", ""))


@functools.cache
def _children() -> multiprocessing.context.BaseContext:
    """Child processes forked from a server process that imported torch and dync once (a
    fresh interpreter per program spent 3-4.5 s of its ~12 on imports). The server is a new
    interpreter, not a fork of this one, whose threads a fork would not carry over; and each
    program still runs in a process of its own: a signal or a hang ends that child only."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch", "dync", "benchmarks.fuzz.child"])
    return context


def campaign(seeds: list[int], directory: Path, say=print, jobs: int = 1,
             finished=None) -> list[Result]:
    """Every seed's program generated, compiled and compared, `jobs` at a time (each in a
    process of its own); the results in seed order. `finished(result)` is called as each
    program's result comes (one at a time)."""

    writing = threading.Lock()  # candidates run in eager here, on torch's global seed
    reporting = threading.Lock()

    def one(seed: int) -> Result:
        with writing:
            path, constructs = write_program(seed, directory)
        result = run_one(path, constructs, seed)
        say(f"[fuzz] seed {seed}: {result.outcome}"
            + (f" ({result.mode}, {result.graph_breaks} graph breaks)" if result.mode else "")
            + (f": {result.detail[:160]}" if result.detail else "")
            + (f", arguments {result.arguments.partition(':')[0]}" if result.arguments else "")
            + f" [{result.seconds:.1f} s]")
        if finished is not None:
            with reporting:
                finished(result)
        return result

    if jobs <= 1:
        return [one(seed) for seed in seeds]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, seeds))


def summary(results: list[Result]) -> str:
    """The campaign as Markdown: outcomes, modes, and the errors grouped by message."""
    total = len(results) or 1
    counts = collections.Counter(r.outcome for r in results)
    modes = collections.Counter(r.mode for r in results if r.outcome == "correct")
    lines = ["| outcome | programs | share |", "|---|---|---|"]
    lines += [f"| {o} | {counts[o]} | {100 * counts[o] / total:.1f}% |" for o in OUTCOMES]
    lines += ["", "| correct, compiled as | programs |", "|---|---|"]
    lines += [f"| {m} | {modes[m]} |" for m in ("in-graph", "host", "eager")]
    problems = collections.Counter(
        (r.outcome, _gist(r.detail)) for r in results
        if r.outcome in ("error", "crash", "mismatch"))
    if problems:
        lines += ["", "| outcome | message (first words) | programs |", "|---|---|---|"]
        lines += [f"| {o} | {m} | {n} |" for (o, m), n in problems.most_common()]
    graph = collections.Counter(
        (b["stage"], b["construct"] or "-", _gist(b["reason"]))
        for r in results for b in r.breaks if b["region"] == "forward")
    if graph:
        lines += ["", "Why a whole program was not one graph (its first fallback):", "",
                  "| stage | construct | reason (first words) | programs |", "|---|---|---|---|"]
        lines += [f"| {s} | {c} | {g} | {n} |" for (s, c, g), n in graph.most_common()]
    fell_back = [str(r.seed) for r in results if any(b["region"] == "call" for b in r.breaks)]
    if fell_back:
        lines += ["", "Seeds with a call that failed in IREE and ran in eager (`auto`): "
                  + ", ".join(fell_back)]
    for outcome in ("mismatch", "crash"):
        seeds = [str(r.seed) for r in results if r.outcome == outcome]
        if seeds:
            lines += ["", f"Seeds with a {outcome}: " + ", ".join(seeds)]
    unnamed = [r for r in results if r.outcome == "error" and not r.names_line]
    if unnamed:
        lines += ["", "Errors naming no line of the program: "
                  + ", ".join(f"seed {r.seed}" for r in unnamed)]
    return "\n".join(lines) + "\n"


def _gist(reason: str) -> str:
    """A reason's first words, without the program's paths and numbers, for grouping."""
    text = re.sub(r"\S*prog_\d+\.py:\d+", "PROGRAM:LINE", reason)
    text = re.sub(r"\{u\d+(, u\d+)*\}", "{u...}", text)  # torch's unbacked symbols
    text = re.sub(r"\b([a-z]+)_\d+\b", r"\1_N", text)  # FX node names: ge_16
    text = re.sub(r"\b([su])\d+\b", r"\1N", text)  # torch's symbols: s53, u7
    text = re.sub(r"\[FakeTensor.*", "", text)
    text = re.sub(r"\b\d+(\.\d+)?(e-?\d+)?\b", "N", text)
    return " ".join(text.split()[:14]).replace("|", "/")
