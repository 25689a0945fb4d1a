"""The fuzzing campaign's results (`benchmarks/fuzz.json`) and BENCHMARKS.md's section on them."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import provenance
from .run import Result, summary

RESULTS = Path("benchmarks/fuzz.json")
SECTION = "## Fuzzing"


def results_json(results: list[Result], first: int) -> dict:
    commits = list(dict.fromkeys(r.commit for r in results if r.commit))
    return {"commit": ", ".join(commits) or provenance.commit(), "date": time.strftime("%Y-%m-%d"),
            "machine": provenance.host_cpu(), "first": first, "count": len(results),
            "results": [r.to_json() for r in results]}


def kept(path: Path, seeds: list[int]) -> list[Result]:
    """The results of `seeds` an earlier (interrupted or partial) campaign wrote to `path`."""
    if not path.exists():
        return []
    wanted = set(seeds)
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Result(**r) for r in data["results"] if r["seed"] in wanted]


def _measured_on(results: list[Result], default: str | None) -> str:
    """'commit abc' or, for a campaign resumed on later commits, each commit with its seeds."""
    by_commit: dict[str, list[int]] = {}
    for r in results:
        by_commit.setdefault(r.commit or default or "unrecorded", []).append(r.seed)
    if len(by_commit) <= 1:
        return f"commit {next(iter(by_commit), default or 'unrecorded')}"
    return "commits " + ", ".join(f"{c} (seeds {min(s)}–{max(s)}, {len(s)} program{'s' * (len(s) != 1)})"
                                  for c, s in by_commit.items())


def section(data: dict) -> str:
    results = [Result(**r) for r in data["results"]]
    measured = data.get("commit")
    commits = {r.commit or measured for r in results}
    where = _measured_on(results, measured)
    warning = ([f"**Stale**: measured on {where}; dync or the fuzzer changed since. Re-run "
                "`python -m benchmarks fuzz` to refresh.", ""]
               if any(provenance.stale(c) for c in commits) else [])
    last = data["first"] + data["count"] - 1
    return "\n".join([
        SECTION, "", *warning,
        f"{data['machine']}, measured {data['date']} on {where} with "
        f"`python -m benchmarks fuzz --first {data['first']} --count {data['count']}` "
        f"(seeds {data['first']}–{last}): generated dynamic programs "
        "(`benchmarks/fuzz/generate.py`), each run in eager, then compiled with dync's defaults "
        "in a process of its own and compared with eager on 12 inputs of different sizes, "
        "scales and signs. A mismatch is a result that differs from eager's where eager in "
        "float64 agrees with eager in float32; where it does not, the program decided at "
        "rounding level (ill-conditioned).", "",
        summary(results).rstrip("\n"), ""])


def with_section(text: str, results_path: Path = RESULTS) -> str:
    """`text` with its fuzzing section replaced by the one `results_path` renders."""
    if not results_path.exists():
        return text
    data = json.loads(results_path.read_text(encoding="utf-8"))
    return provenance.replace_section(text, SECTION, section(data))
