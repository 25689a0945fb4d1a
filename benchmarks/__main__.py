"""`python -m benchmarks [MODEL ...] [--models A,B] [--inputs N] [--no-tracing]
[--no-baselines | --no-torch-compile | --no-ort] [-o BENCHMARKS.md] [--plot PNG | --no-plot]`.

`python -m benchmarks fuzz --count N`: the differential fuzzing campaign (`benchmarks.fuzz`).

`python -m benchmarks conformance`: the ONNX backend node tests, against dync's side table of
expected failures and IREE's own CPU results (`benchmarks.conformance`).

`python -m benchmarks ops`: kernels of ResNet-50, MobileNet-v2 and BERT-base one at a time, in
GFLOP/s against eager and IREE alone (`benchmarks.ops`).

`python -m benchmarks realistic`: dynamic networks at deployed sizes (BERT-base DeeBERT, an
early-exit ResNet-50 over a dynamic batch, a d=512 Transformer decoding greedily), compiled
cold, against eager at the same thread count (`benchmarks.realistic`).

`python -m benchmarks outside`: small dynamic programs written in research code's styles, not for
dync: modes, correctness and speed against eager (`benchmarks.outside`).

`python -m benchmarks sorts`: sorting ops from 16 to 100000 elements over a dynamic length,
against eager (`benchmarks.sorts`).

`python -m benchmarks calls`: the floor cost of one call of a compiled module or a host-mode
sub-DNN, in µs, against eager (`benchmarks.calls`).

The baselines (torch.compile, ONNX Runtime) need the `bench` extra: `pip install -e '.[bench]'`.
"""

import argparse
import sys
from pathlib import Path

from .models import SUITE
from .runner import BASELINES, markdown, run


def main() -> None:
    if sys.argv[1:2] == ["fuzz"]:
        from .fuzz.__main__ import main as fuzz

        return fuzz(sys.argv[2:])
    if sys.argv[1:2] == ["conformance"]:
        from .conformance.__main__ import main as conformance

        return sys.exit(conformance(sys.argv[2:]))
    if sys.argv[1:2] == ["ops"]:
        from .ops import main as ops

        return ops(sys.argv[2:])
    if sys.argv[1:2] == ["sorts"]:
        from .sorts import main as sorts

        return sorts(sys.argv[2:])
    if sys.argv[1:2] == ["calls"]:
        from .calls import main as calls

        return calls(sys.argv[2:])
    if sys.argv[1:2] == ["outside"]:
        from .outside import main as outside

        return outside(sys.argv[2:])
    if sys.argv[1:2] == ["realistic"]:
        from .realistic import main as realistic

        return realistic(sys.argv[2:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help=f"default: the whole suite ({', '.join(SUITE)})")
    parser.add_argument("--models", dest="model_list", default="", metavar="A,B",
                        help="models, comma-separated (with any given as MODEL)")
    parser.add_argument("--inputs", type=int, default=100, help="inputs per model (default 100)")
    parser.add_argument("--timing-inputs", type=int, default=30,
                        help="of those, the inputs timed (default 30)")
    parser.add_argument("--repeats", type=int, default=4,
                        help="timing rounds over the timed inputs (default 4)")
    parser.add_argument("--no-tracing", action="store_true", help="skip the tracing baseline")
    parser.add_argument("--no-baselines", action="store_true",
                        help="skip torch.compile and ONNX Runtime (the slow baselines)")
    parser.add_argument("--no-torch-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help="the markdown file written (default: BENCHMARKS.md for the whole "
                             "suite; for some models their table is printed and no file written)")
    parser.add_argument("--plot", type=Path, default=None, metavar="PNG",
                        help="latency plot (default: benchmarks/latency.png for BENCHMARKS.md, "
                             "else OUTPUT's name with -latency.png)")
    parser.add_argument("--no-plot", action="store_true", help="write no plot")
    parser.add_argument("--no-ablation", action="store_true",
                        help="skip the ablation (each of dync's optimizations off in turn: one "
                             "more compile per optimization and model)")
    args = parser.parse_args()
    models = list(args.models) + [m for m in args.model_list.split(",") if m.strip()]
    models = list(dict.fromkeys(m.strip() for m in models))
    unknown = sorted(set(models) - set(SUITE))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; the suite has {', '.join(SUITE)}")
    skip = set(BASELINES) if args.no_baselines else (
        ({"torch.compile"} if args.no_torch_compile else set()) | ({"ORT"} if args.no_ort else set()))
    # A run of some models writes nothing unless asked: BENCHMARKS.md holds the whole suite's.
    output = args.output or (None if models else Path("BENCHMARKS.md"))
    plot = None
    if not args.no_plot and output is not None:
        if args.plot is not None:
            plot = args.plot
        elif output.resolve() == Path("BENCHMARKS.md").resolve():
            plot = Path("benchmarks/latency.png")
        else:
            plot = output.with_name(output.stem + "-latency.png")
    rows = run(models or None, args.inputs, with_tracing=not args.no_tracing,
               with_baselines=[b for b in BASELINES if b not in skip],
               with_ablation=not args.no_ablation, timing_inputs=args.timing_inputs,
               repeats=args.repeats, output=output, plot=plot)
    if output is None:
        print(markdown(rows, "Not written to a file (`-o FILE` writes one)."))


if __name__ == "__main__":
    main()
