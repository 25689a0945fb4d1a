"""`python -m benchmarks fuzz [--count N] [--first SEED] [--jobs J] [--dir DIR] [-o FILE]
[--resume]`: generate programs, compile each with dync's defaults, compare with eager,
summarize."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from .. import provenance
from .report import SECTION, kept, results_json, section
from .run import Result, campaign, summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks fuzz", description=__doc__)
    parser.add_argument("--count", type=int, default=100, help="programs (default 100)")
    parser.add_argument("--first", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="programs compiled at once, each in a process of its own (default 1)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="where the programs are written (default: a temporary directory)")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help="write the outcomes here as JSON (benchmarks/fuzz.json is what "
                        "BENCHMARKS.md's section is made from)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the results --output holds for these seeds (each names the "
                        "commit it was measured on) and run only the others; the file is "
                        "rewritten after every program, so an interrupted campaign resumes")
    parser.add_argument("--report", type=Path, default=None, metavar="BENCHMARKS.md",
                        help="put the campaign's section into this file")
    args = parser.parse_args(argv)
    if args.resume and not args.output:
        parser.error("--resume needs --output (the file to resume)")
    directory = args.dir or Path(tempfile.mkdtemp(prefix="dync-fuzz-"))
    seeds = list(range(args.first, args.first + args.count))
    done = {r.seed: r for r in (kept(args.output, seeds) if args.resume else [])}
    commit = provenance.commit() or ""

    def save(result=None) -> dict:
        if result is not None:
            result.commit = commit
            done[result.seed] = result
        data = results_json(sorted(done.values(), key=lambda r: r.seed), args.first)
        if args.output:
            args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        return data

    campaign([s for s in seeds if s not in done], directory, jobs=args.jobs, finished=save)
    data = save()
    results = [Result(**r) for r in data["results"]]
    if args.report:
        text = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        args.report.write_text(provenance.replace_section(text, SECTION, section(data)),
                               encoding="utf-8")
    print(f"\nprograms in {directory}\n")
    print(summary(results))


if __name__ == "__main__":
    main()
