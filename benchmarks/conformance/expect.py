"""What the conformance run is held to: dync's side table of expected outcomes
(`expected.json`: every node test that does not pass, its outcome and the reason; the
convention of torch-mlir's and IREE's xfail lists) and IREE's own CPU results (`iree_cpu.json`,
test names derived from IREE's configuration, named there with its commit)."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

from .run import OUTCOMES, Result

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected.json"
IREE_CPU = HERE / "iree_cpu.json"


def load(path: Path = EXPECTED) -> dict[str, dict]:
    """test name -> {"outcome", "reason"} for every test not expected to pass."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: entry for name, entry in data.items() if not name.startswith("_")}


def surprises(results: list[Result], expected: dict[str, dict]) -> list[str]:
    """Each result that differs from the side table: a test that newly passes, or newly fails
    (or fails another way)."""
    found = []
    for r in results:
        want = expected.get(r.name, {}).get("outcome", "pass")
        if r.outcome != want:
            found.append(f"{r.name}: {r.outcome}, expected {want}"
                         + (f" ({r.stage}: {r.detail[:200]})" if r.detail else ""))
    return found


def updated(results: list[Result], expected: dict[str, dict]) -> dict:
    """The side table rewritten for `results`: reasons kept where the outcome did not change,
    else the message dync gave (to be replaced by a person's reason)."""
    table: dict = {"_about": (
        "Expected outcomes of the ONNX node tests that do not pass (python -m benchmarks "
        "conformance): outcome and reason. A test absent here must pass; one whose outcome "
        "differs fails the conformance tests.")}
    ran = {r.name: r for r in results}
    for name in sorted(set(expected) | set(ran)):
        r = ran.get(name)
        if r is None:
            table[name] = expected[name]
        elif r.outcome != "pass":
            old = expected.get(name, {})
            reason = old.get("reason") if old.get("outcome") == r.outcome else None
            table[name] = {"outcome": r.outcome, "reason": reason or f"{r.stage}: {r.detail}"}
    return table


def iree_comparison(results: list[Result]) -> tuple[list[str], list[str], dict]:
    """(tests IREE's CPU configuration passes that dync does not, those dync passes that IREE
    does not, the configuration's source) over the tests that ran."""
    data = json.loads(IREE_CPU.read_text(encoding="utf-8"))
    iree = set(data["passes"])
    imported = iree | {n for names in data["expected_failures"].values() for n in names}
    ours = {r.name for r in results if r.outcome == "pass"}
    ran = {r.name for r in results}
    return (sorted((iree & ran) - ours), sorted((ours & imported) - iree), data["sources"])


def _gist(detail: str) -> str:
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", detail)
    text = re.sub(r"\d+", "N", text)
    return " ".join(text.split()[:14])


def summary(results: list[Result], control_flow: set[str]) -> str:
    """The run as Markdown: outcomes over all tests and the control-flow ones, the comparison
    with IREE's CPU results, and the failures grouped by message."""
    lines = ["| outcome | all tests | control flow |", "|---|---|---|"]
    every = collections.Counter(r.outcome for r in results)
    flow = collections.Counter(r.outcome for r in results if r.name in control_flow)
    lines += [f"| {o} | {every[o]} | {flow[o]} |" for o in OUTCOMES]
    lines += [f"| **total** | {len(results)} | {sum(flow.values())} |"]
    missing, extra, sources = iree_comparison(results)
    config = sources["iree_config"]
    lines += ["", f"Against IREE's own CPU results (`{config['path']}` at "
              f"{config['repository']} {config['commit'][:10]}): {len(missing)} tests IREE "
              f"passes that dync does not, {len(extra)} the other way."]
    if missing:
        lines += ["", "IREE passes, dync does not: " + ", ".join(missing)]
    groups = collections.Counter((r.outcome, r.stage, _gist(r.detail)) for r in results
                                 if r.outcome != "pass")
    if groups:
        lines += ["", "| outcome | stage | message (first words) | tests |", "|---|---|---|---|"]
        lines += [f"| {o} | {s} | {g.replace('|', '/')} | {n} |"
                  for (o, s, g), n in groups.most_common()]
    return "\n".join(lines) + "\n"
