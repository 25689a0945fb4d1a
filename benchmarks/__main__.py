"""`python -m benchmarks [MODEL ...] [--inputs N] [--no-tracing] [-o BENCHMARKS.md]`."""

import argparse
from pathlib import Path

from .models import SUITE
from .runner import run


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help=f"default: the whole suite ({', '.join(SUITE)})")
    parser.add_argument("--inputs", type=int, default=100, help="inputs per model (default 100)")
    parser.add_argument("--no-tracing", action="store_true", help="skip the tracing baseline")
    parser.add_argument("-o", "--output", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args()
    unknown = sorted(set(args.models) - set(SUITE))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; the suite has {', '.join(SUITE)}")
    run(args.models or None, args.inputs, with_tracing=not args.no_tracing, output=args.output)


if __name__ == "__main__":
    main()
