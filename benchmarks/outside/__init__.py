"""`python -m benchmarks outside [NAME ...] [-o BENCHMARKS.md]`: dync on small dynamic programs
written in the styles of research code, not for dync (`programs.py`): each compiled with the
defaults (`mode="auto"`, cold), checked against eager PyTorch at every listed size, and timed
against eager at one thread on its example input. The table gives each program's mode (a
program dync takes in one graph, in host mode, or leaves to eager), its speedup, and the
geo-mean and the count below 1x over them: issue 33's figure for networks it was not written
against.

Timing: `ROUNDS` rounds, eager and dync taking turns, each round as many calls as fill about
`ROUND_S`; each contestant's time is its least round, per call (the least is the run least
disturbed by the rest of the machine: these programs take tens of microseconds).
"""

from __future__ import annotations

import argparse
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SECTION = "## Programs written elsewhere"
ROUNDS, ROUND_S = 15, 0.02


@dataclass(frozen=True)
class Program:
    name: str
    build: str  # the class in programs.py
    inputs: Callable[[int, int], tuple]  # (batch, length) -> the arguments
    dims: tuple  # per argument: {axis: (name, min, max)} or None
    sizes: tuple  # (batch, length) of the example first, then the other sizes checked


def _tokens(b, n):
    import torch

    t = torch.randint(1, 50, (b, n))
    for i in range(b):
        t[i, n - i:] = 0
    t[0] = torch.randint(1, 50, (n,))
    return (t,)


def _padded(b, n):
    import torch

    x = torch.randn(b, n, 8)
    for i in range(1, b):
        x[i, n - i:] = 0
    return (x,)


def _randn(*shape_of: Callable[[int, int], int]) -> Callable[[int, int], tuple]:
    def inputs(b, n):
        import torch

        return (torch.randn(*(size(b, n) if callable(size) else size for size in shape_of)),)

    return inputs


def _b(b, n):
    return b


def _n(b, n):
    return n


B = ("b", 1, 8)
_SEQ16 = ({0: B, 1: ("n", 2, 48)},)
_IMG = ({0: B, 2: ("h", 8, 32), 3: ("w", 12, 36)},)


def _programs() -> list[Program]:
    import torch

    def image(b, n):
        return (torch.randn(b, 3, n, n + 4),)

    def padded_image(b, n):
        return (torch.randn(b, 3, n, n + 3),)

    def graph(b, n):
        return torch.randn(n, 8), torch.randint(0, n, (2, 3 * n))

    def masked_sets(b, n):
        return torch.randn(b, n, 8), torch.randint(1, n + 1, (b,))

    def pad_masked(b, n):
        return (torch.randn(b, n, 32) * (torch.arange(n) < n - 1).float()[None, :, None],)

    return [
        Program("PackedLSTM", "PackedLSTM", _tokens, ({0: B, 1: ("n", 2, 32)},), ((3, 7), (4, 12))),
        Program("EncoderWithPadMask", "EncoderWithPadMask", pad_masked,
                ({0: B, 1: ("n", 2, 32)},), ((2, 6), (3, 9))),
        Program("MHAWithMask", "MHAWithMask", _randn(_b, _n, 32), ({0: B, 1: ("n", 2, 32)},),
                ((2, 6), (3, 9))),
        Program("TopKRouting", "TopKRouting", _randn(_n, 16), ({0: ("n", 2, 64)},),
                ((0, 6), (0, 17))),
        Program("ArgmaxItemLoop", "ArgmaxItemLoop", _randn(_b, 8), ({0: B},), ((2, 0), (5, 0))),
        Program("AdaptivePool", "AdaptivePool", _randn(_b, 3, _n, lambda b, n: n + 2),
                ({0: B, 2: ("h", 8, 32), 3: ("w", 10, 34)},), ((2, 8), (3, 13))),
        Program("CumsumGather", "CumsumGather", _randn(_b, _n), ({0: B, 1: ("n", 2, 64)},),
                ((2, 6), (3, 33))),
        Program("ListOfSizesTolist", "ListOfSizesTolist", _randn(_n, 6), ({0: ("n", 2, 64)},),
                ((0, 6), (0, 33))),
        Program("PosEncodingArange", "PosEncodingArange", _randn(_b, _n, 16),
                ({0: B, 1: ("n", 2, 64)},), ((2, 6), (3, 33))),
        Program("NormsAndActs", "NormsAndActs", _randn(_b, 16, _n), ({0: B, 2: ("n", 4, 64)},),
                ((2, 6), (3, 33))),
        Program("SeqMaskGRU", "SeqMaskGRU", _padded, ({0: B, 1: ("n", 2, 32)},), ((3, 7), (4, 12))),
        Program("EinsumAttention", "EinsumAttention", _randn(_b, _n, 32),
                ({0: B, 1: ("n", 2, 64)},), ((2, 6), (3, 33))),
        Program("UnetLike", "UnetLike", padded_image,
                ({0: ("b", 1, 4), 2: ("h", 8, 64), 3: ("w", 11, 67)},), ((2, 16), (1, 21))),
        Program("SortSearch", "SortSearch", _randn(_b, _n), ({0: B, 1: ("n", 2, 64)},),
                ((2, 6), (3, 33))),
        Program("StatsUnfold", "StatsUnfold", _randn(_b, _n), ({0: B, 1: ("n", 8, 64)},),
                ((2, 10), (3, 33))),
        Program("ScatterGather", "ScatterGather", _randn(_b, _n), ({0: B, 1: ("n", 2, 64)},),
                ((2, 6), (3, 33))),
        Program("DepthwiseSep", "DepthwiseSep", _randn(_b, 8, _n, _n),
                ({0: B, 2: ("h", 8, 64), 3: ("w", 8, 64)},), ((2, 16), (3, 13))),
        Program("ConditionalResolution", "ConditionalResolution", _randn(_b, 3, _n, _n),
                ({0: B, 2: ("h", 8, 64), 3: ("w", 8, 64)},), ((2, 16), (3, 31))),
        Program("EntropyExit", "EntropyExit", image, _IMG, ((2, 8), (3, 13), (1, 20))),
        Program("BlockDropPolicy", "BlockDropPolicy", image, _IMG, ((2, 8), (3, 13), (5, 9))),
        Program("STN", "STN", image, _IMG, ((2, 8), (3, 13))),
        Program("GreedyLSTMDecoder", "GreedyLSTMDecoder",
                lambda b, n: (torch.randint(2, 20, (b, n)),), ({0: B, 1: ("n", 2, 32)},),
                ((2, 6), (3, 9), (1, 3))),
        Program("PointerNet", "PointerNet", _randn(_b, _n, 2), ({0: B, 1: ("n", 2, 16)},),
                ((2, 6), (3, 9))),
        Program("MaskedSetPool", "MaskedSetPool", masked_sets,
                ({0: B, 1: ("n", 2, 32)}, {0: B}), ((2, 6), (3, 9))),
        Program("GCN", "GCN", graph, ({0: ("n", 2, 64)}, {1: ("e", 2, 256)}), ((0, 6), (0, 17))),
        Program("CapsuleRouting", "CapsuleRouting", _randn(_b, _n, 8), ({0: B, 1: ("n", 4, 16)},),
                ((2, 6), (3, 9))),
        Program("PixelShuffleUp", "PixelShuffleUp",
                _randn(_b, 3, lambda b, n: 2 * n, lambda b, n: 2 * n + 4), ({0: B},),
                ((2, 4), (3, 4))),
        Program("NumericsMix", "NumericsMix", _randn(_b, _n), ({0: B, 1: ("n", 2, 64)},),
                ((2, 6), (3, 33))),
        Program("ACT", "ACT", _randn(_b, 8), ({0: B},), ((2, 0), (5, 0))),
        Program("MixtureOfDepths", "MixtureOfDepths", _randn(_b, _n, 16),
                ({0: B, 1: ("n", 2, 32)},), ((2, 6), (3, 9))),
        Program("ViTInterpPos", "ViTInterpPos",
                _randn(_b, 3, lambda b, n: 4 * n, lambda b, n: 4 * n + 8), ({0: B},),
                ((2, 3), (3, 3))),
        Program("CausalTriu", "CausalTriu", _randn(_b, _n, 16), ({0: B, 1: ("n", 2, 32)},),
                ((2, 6), (3, 9))),
        Program("BahdanauGreedy", "BahdanauGreedy",
                lambda b, n: (torch.randint(2, 12, (1, n)),), ({1: ("n", 2, 16)},),
                ((1, 5), (1, 9))),
        Program("CondConv", "CondConv", _randn(_b, 4, _n, lambda b, n: n + 2),
                ({0: B, 2: ("h", 4, 32), 3: ("w", 6, 34)},), ((2, 6), (3, 9))),
        Program("T5RelativeBias", "T5RelativeBias", _randn(_b, _n, 16), _SEQ16,
                ((2, 6), (3, 40))),
        Program("TokenMerging", "TokenMerging", _randn(_b, _n, 16), ({0: B, 1: ("n", 4, 48)},),
                ((2, 8), (3, 17))),
        Program("RoutingTopKAttention", "RoutingTopKAttention", _randn(_b, _n, 16),
                ({0: B, 1: ("n", 4, 32)},), ((2, 6), (3, 9))),
        Program("BeamSearch", "BeamSearch", _randn(1, 16), (None,), ((1, 0), (1, 1))),
        Program("ALiBi", "ALiBi", _randn(_b, _n, 16), _SEQ16, ((2, 6), (3, 17))),
        Program("LocalWindow1D", "LocalWindow1D", _randn(_b, _n, 8), _SEQ16, ((2, 6), (3, 17))),
        Program("TransformerXLMemory", "TransformerXLMemory",
                lambda b, n: (torch.randn(b, n, 8), torch.randn(b, 6, 8)),
                ({0: B, 1: ("n", 2, 32)}, {0: B}), ((2, 5), (3, 9))),
        Program("DynamicTemporalStride", "DynamicTemporalStride", _randn(_b, 4, _n),
                ({0: B, 2: ("t", 8, 64)},), ((2, 16), (3, 33))),
        Program("CTCGreedy", "CTCGreedy", _randn(_n, 8), ({0: ("t", 2, 64)},), ((0, 10), (0, 33))),
        Program("SegmentMeanPool", "SegmentMeanPool",
                lambda b, n: (torch.randn(n, 8), torch.tensor([2, 5, 9])),
                ({0: ("n", 2, 64)}, None),
                ((0, 12), (0, 30))),
        Program("InterpScale", "InterpScale", _randn(_b, 3, _n, lambda b, n: n + 2),
                ({0: B, 2: ("h", 8, 32), 3: ("w", 10, 34)},), ((2, 8), (3, 14))),
        Program("NestedLoops", "NestedLoops", _randn(_b, 8), ({0: B},), ((2, 0), (5, 0))),
        Program("LengthRegulator", "LengthRegulator", _randn(_n, 8), ({0: ("n", 1, 64)},),
                ((0, 5), (0, 17))),
        Program("KnnEdgeConv", "KnnEdgeConv", _randn(_b, _n, 3), ({0: B, 1: ("n", 5, 64)},),
                ((2, 8), (3, 33))),
        Program("NucleusFilter", "NucleusFilter", _randn(_b, _n), ({0: B, 1: ("n", 3, 64)},),
                ((2, 10), (3, 37))),
        Program("EinsumProjection", "EinsumProjection", _randn(_b, _n, 8), _SEQ16,
                ((2, 6), (3, 17))),
        Program("RollCummax", "RollCummax", _randn(_b, _n), ({0: B, 1: ("n", 2, 64)},),
                ((2, 6), (3, 17))),
        Program("MaskedScatter", "MaskedScatter", _randn(_b, _n), ({0: B, 1: ("n", 2, 64)},),
                ((2, 6), (3, 17))),
        Program("PairsBelowDiagonal", "PairsBelowDiagonal", _randn(_n, 8),
                ({0: ("n", 2, 64)},), ((0, 6), (0, 17))),
        Program("UniqueRows", "UniqueRows", _randn(_n, 3), ({0: ("n", 2, 64)},),
                ((0, 6), (0, 17))),
    ]


@dataclass
class Row:
    name: str
    mode: str
    correct: bool
    compile_s: float
    eager_us: float
    dync_us: float
    note: str = ""

    @property
    def speedup(self) -> float:
        return self.eager_us / self.dync_us


def _dynamic_shapes(program: Program) -> tuple | None:
    from torch.export import Dim

    made: dict[str, Dim] = {}  # one Dim per name: a size shared by two arguments

    def dim(name: str, low: int, high: int) -> Dim:
        if name not in made:
            made[name] = Dim(name, min=low, max=high)
        return made[name]

    spec = tuple(None if d is None else {axis: dim(*named) for axis, named in d.items()}
                 for d in program.dims)
    return None if all(s is None for s in spec) else spec


def _agrees(got, want) -> bool:
    import torch

    got, want = (got, want) if isinstance(want, tuple | list) else ((got,), (want,))
    try:
        for g, w in zip(got, want, strict=True):
            w = torch.as_tensor(w)
            torch.testing.assert_close(torch.as_tensor(g).to(w.dtype), w, rtol=1e-4, atol=1e-4)
    except (AssertionError, ValueError, TypeError):
        return False
    return True


def _least_per_call(contestants: list[Callable[[], object]]) -> list[float]:
    """Each contestant's least time per call (s) over ROUNDS rounds, the contestants taking
    turns."""
    calls = []
    for run in contestants:
        run()
        began = time.perf_counter()
        run()
        calls.append(max(1, int(ROUND_S / max(time.perf_counter() - began, 1e-7))))
    best = [math.inf] * len(contestants)
    for _ in range(ROUNDS):
        for k, run in enumerate(contestants):
            began = time.perf_counter()
            for _ in range(calls[k]):
                run()
            best[k] = min(best[k], (time.perf_counter() - began) / calls[k])
    return best


def measure(names: list[str] | None = None, say=print) -> list[Row]:
    import warnings

    import torch

    import dync

    from . import programs

    torch.set_num_threads(1)
    rows = []
    for program in _programs():
        if names and program.name not in names:
            continue
        torch.manual_seed(0)
        model = getattr(programs, program.build)().eval()
        torch.manual_seed(1)
        example = program.inputs(*program.sizes[0])
        began = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = dync.compile(model, example, dynamic_shapes=_dynamic_shapes(program),
                                    cache=False)
        seconds = time.perf_counter() - began
        correct = True
        with torch.no_grad():
            for k, size in enumerate(program.sizes):
                torch.manual_seed(2 + k)
                args = program.inputs(*size)
                correct &= _agrees(compiled(*args), model(*args))
            eager_s, dync_s = _least_per_call([functools.partial(model, *example),
                                               functools.partial(compiled, *example)])
        report = compiled.report
        note = "" if report.mode == "in-graph" else _first_break(report)
        rows.append(Row(program.name, report.mode, correct, seconds, eager_s * 1e6,
                        dync_s * 1e6, note))
        r = rows[-1]
        say(f"{r.name}: {r.mode}, {'correct' if r.correct else 'WRONG'}, "
            f"compile {r.compile_s:.1f} s, eager {r.eager_us:.1f} µs, dync {r.dync_us:.1f} µs, "
            f"{r.speedup:.2f}x")
    return rows


def _first_break(report) -> str:
    """The first graph break's stage and reason, on one line."""
    if not report.graph_breaks:
        return ""
    first = report.graph_breaks[0]
    reason = " ".join(str(first.get("reason") or "").split())
    return f"{first.get('stage') or 'capture'}: {reason[:160]}"


def geo_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def section(rows: list[Row]) -> str:
    import torch

    from ..provenance import host_cpu, stamp

    speedups = [r.speedup for r in rows]
    below = [r.name for r in rows if r.speedup < 1]
    lines = [SECTION, "",
             f"Measured on {stamp()} with `python -m benchmarks outside`. Host CPU: "
             f"{host_cpu()}; one thread (torch {torch.__version__} with "
             "`torch.set_num_threads(1)`, IREE `local-sync`). Each program of "
             "`benchmarks/outside/programs.py` compiled cold with the defaults "
             "(`mode=\"auto\"`), checked against eager at every size listed for it, and timed "
             f"on its example input: the least of {ROUNDS} alternating rounds of about "
             f"{ROUND_S * 1e3:.0f} ms each, per call.", "",
             f"**Geo-mean {geo_mean(speedups):.2f}× eager over {len(rows)} programs; "
             f"{sum(r.mode == 'in-graph' for r in rows)} in one graph, "
             f"{sum(r.correct for r in rows)} correct, {len(below)} below 1×"
             + (f" ({', '.join(below)})" if below else "") + ".**", "",
             "| program | mode | correct | compile s | eager µs | dync µs | speedup "
             "| why not one graph |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    lines += [f"| {r.name} | {r.mode} | {'yes' if r.correct else '**no**'} | {r.compile_s:.1f} | "
              f"{r.eager_us:.1f} | {r.dync_us:.1f} | {r.speedup:.2f}× | "
              f"{r.note.replace('|', '/')} |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks outside", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help="default: every program")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="BENCHMARKS.md",
                        help=f"put the table into this file as its '{SECTION}' section")
    args = parser.parse_args(argv)
    known = {p.name for p in _programs()}
    unknown = sorted(set(args.names) - known)
    if unknown:
        parser.error(f"unknown program(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    text = section(measure(args.names or None))
    print(text)
    if args.output:
        from ..provenance import write_section

        write_section(args.output, SECTION, text)
