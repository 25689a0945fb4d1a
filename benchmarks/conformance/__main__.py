"""`python -m benchmarks conformance [--slice ci|all] [--only NAME,...] [--jobs J] [--update]
[-o FILE] [--report BENCHMARKS.md]`: the ONNX backend node tests of the installed `onnx` wheel,
each compiled with `dync.compile`'s defaults on the host CPU and compared with its expected
outputs (rtol 1e-3, atol 1e-5, or the test's own where looser; dtypes and shapes must match),
checked against the side table of expected failures (`benchmarks/conformance/expected.json`)
and against IREE's own CPU results. Exits 1 when an outcome differs from the side table."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from .. import provenance
from . import expect
from .cases import ci_slice, generate
from .run import run

SECTION = "## ONNX conformance"


def section(summary: str, slice_: str, count: int) -> str:
    """BENCHMARKS.md's section for a run whose `expect.summary` is `summary`."""
    import onnx

    return (f"{SECTION}\n\n{provenance.host_cpu()}, {provenance.stamp()}, "
            f"`python -m benchmarks conformance --slice {slice_}`: {count} ONNX node tests of the "
            f"installed `onnx` {onnx.__version__} wheel, each compiled with `dync.compile`'s "
            "defaults (host CPU) and compared with its expected outputs (rtol 1e-3, atol 1e-5, "
            "16-bit floats within two units in their last place, dtype and shape exact; random "
            "ops by dtype and shape). `error` is a dync error "
            "(refused with a message), `crash` a worker killed or hung. Every test that does "
            "not pass is listed with its outcome and reason in "
            "`benchmarks/conformance/expected.json`.\n\n" + summary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks conformance", description=__doc__)
    parser.add_argument("--slice", choices=("ci", "all"), default="all",
                        help="ci: every control-flow test and one test per op; all (default)")
    parser.add_argument("--only", default="", metavar="NAME,...", help="these tests alone")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--cases", type=Path, default=None,
                        help="where the generated tests are written (default: a temporary "
                        "directory)")
    parser.add_argument("--update", action="store_true",
                        help="rewrite the side table for the outcomes of this run")
    parser.add_argument("-o", "--output", type=Path, default=None, help="results as JSON")
    parser.add_argument("--report", type=Path, default=None, metavar="BENCHMARKS.md",
                        help="put the run's section into this file")
    args = parser.parse_args(argv)

    cases = generate(args.cases or Path(tempfile.mkdtemp(prefix="dync-onnx-")))
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c.name in wanted]
    elif args.slice == "ci":
        cases = ci_slice(cases)
    start = time.perf_counter()
    results = run(cases, jobs=args.jobs)
    control_flow = {c.name for c in cases if c.control_flow}
    expected = expect.load()
    text = expect.summary(results, control_flow)
    print("\n" + text)
    if args.output:
        args.output.write_text(json.dumps({
            "commit": provenance.commit(), "date": time.strftime("%Y-%m-%d"),
            "machine": provenance.host_cpu(), "slice": args.only and "only" or args.slice,
            "seconds": round(time.perf_counter() - start, 1),
            "results": [r.to_json() for r in results]}, indent=1) + "\n", encoding="utf-8")
    if args.report:
        page = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        args.report.write_text(provenance.replace_section(page, SECTION, section(
            text, args.slice, len(results))), encoding="utf-8")
    if args.update:
        table = expect.updated(results, expected)
        expect.EXPECTED.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
        return 0
    differ = expect.surprises(results, expected)
    for line in differ:
        print("unexpected:", line)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
