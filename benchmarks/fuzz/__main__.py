"""`python -m benchmarks fuzz [--count N] [--first SEED] [--jobs J] [--dir DIR] [-o FILE]`: generate
programs, compile each with dync's defaults, compare with eager, summarize."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from .. import provenance
from .report import SECTION, results_json, section
from .run import campaign, summary


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
    parser.add_argument("--report", type=Path, default=None, metavar="BENCHMARKS.md",
                        help="put the campaign's section into this file")
    args = parser.parse_args(argv)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="dync-fuzz-"))
    results = campaign(list(range(args.first, args.first + args.count)), directory,
                       jobs=args.jobs)
    data = results_json(results, args.first)
    if args.output:
        args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.report:
        text = args.report.read_text(encoding="utf-8") if args.report.exists() else ""
        args.report.write_text(provenance.replace_section(text, SECTION, section(data)),
                               encoding="utf-8")
    print(f"\nprograms in {directory}\n")
    print(summary(results))


if __name__ == "__main__":
    main()
