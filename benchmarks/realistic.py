"""`python -m benchmarks realistic [--threads N] [--isa native|avx2] [-o BENCHMARKS.md]`:
dynamic networks at the sizes people deploy, compiled cold by dync with its defaults, checked
against eager PyTorch and timed against it in the same process, at the same thread count and
vector extension (issue 33; `--isa avx2`: `benchmarks.isa`).

Models (each at every path that matters for its time):

* ``bert-base-deebert``: DeeBERT (`benchmarks.models.early_exit_bert`'s classes) at BERT-base
  size: 12 layers, d=768, 12 heads, FFN 3072, a 30522-token vocabulary, a sequence of 2 to
  512 tokens (dynamic). Timed on its two extreme paths: every off-ramp declines (all 12
  layers, the threshold below any entropy) and the first one exits (one layer).
* ``resnet50-early-exit``: ResNet-50 at 224x224 (`benchmarks.models._resnet50`,
  torchvision's layout written out) with a classifier after each of the first three stages,
  over a dynamic batch of 1 to 8 images. Timed on its longest path (no classifier is sure
  enough: all four stages) and its shortest (the first classifier exits).
* ``transformer-greedy``: a d=512 `nn.Transformer` (3 + 3 layers, 8 heads, FFN 2048, an
  8000-token vocabulary; `benchmarks.models._greedy_transformer`) decoding greedily to EOS or 4
  + the source length, the source 2 to 64 tokens (dynamic). Timed decoding to the length
  bound (EOS never wins) and stopping at the first token (EOS biased to win).

Medians of calls timed in alternating blocks (eager's, then dync's, twice over), each block
after an untimed call: strictly alternating calls measured the other contestant's idle threads
too (at 2 threads, PyTorch's OpenMP workers spin for milliseconds after a call and took a core
from IREE's next call: an early-exit ResNet-50's first exit, one image, 11.4 ms alternating
against 5.7-8.0 alone). Every result is checked against eager first. Compile time is the cold
`dync.compile` (no cache). Slow (minutes): not run by CI.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from .isa import CHOICES, TARGET, code_for, rerun_held_to

SECTION = "## Realistic sizes"
SEQUENCES = (16, 128, 512)
BATCHES = (1, 4)
SOURCES = (8, 32, 64)
REPEATS = 5
ROUNDS = 2


@dataclass
class Row:
    model: str
    path: str
    size: str
    eager_ms: float
    dync_ms: float
    # What dync runs it as (`report.mode`): "eager" where it found eager PyTorch faster on the
    # example (`eager_if_faster`), when the dync column is eager's time too.
    mode: str


def _bert_base(exit_first: bool):
    import torch

    from .models import early_exit_bert as eb

    torch.manual_seed(0)
    # Entropies of 3-way predictions lie in [0, log 3]: a threshold above log 3 exits at the
    # first off-ramp, one of 0 never does.
    model = eb.DeeBert(hidden=768, heads=12, intermediate=3072, layers=12,
                       early_exit_entropy=2.0 if exit_first else 0.0)
    model.word_embeddings = torch.nn.Embedding(30522, 768)
    model.position_embeddings = torch.nn.Embedding(512, 768)
    return model.eval()


def _tokens(length: int, seed: int):
    import torch

    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, 30522, (1, length), generator=gen)
    ids[0, 0] = 1  # [CLS]
    return ids


def _measure(name: str, variants, example: tuple, dynamic_shapes, inputs,
             say, threads: int, isa: str) -> tuple[list[Row], float]:
    """Rows for each (path, model) of `variants`, compiled for `example` with
    `dynamic_shapes`, on each (size, args) of `inputs`, every result checked against eager
    first; and the cold compile time of the first variant (the others are the same graph
    with another constant)."""
    import torch

    import dync

    rows, seconds = [], 0.0
    for n, (path, model) in enumerate(variants):
        start = time.perf_counter()
        compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes, cache=False,
                                threads=threads, target=TARGET[isa])
        if n == 0:
            seconds = time.perf_counter() - start
            say(f"[realistic] {name}: compiled in {seconds:.0f} s ({compiled.report.mode})")
        if compiled.report.mode == "eager":
            say(f"[realistic] {name}, {path}: dync runs it in eager PyTorch: "
                + (compiled.report.graph_breaks[0]["reason"] if compiled.report.graph_breaks
                   else "see its report"))
        with torch.no_grad():
            for size, args in inputs:
                torch.testing.assert_close(compiled(*args), model(*args), rtol=1e-3, atol=1e-3)
                eager_ms, dync_ms = _alternate(model, compiled, *args)
                rows.append(Row(name, path, size, eager_ms, dync_ms, compiled.report.mode))
                say(f"[realistic] {name}, {path}, {size}: eager {eager_ms:.1f} ms, dync "
                    f"{dync_ms:.1f} ms")
    return rows, seconds


def bert_base_deebert(say=print, threads: int = 1, isa: str = "native") -> tuple[list[Row], float]:
    from torch.export import Dim

    variants = [("all 12 layers", _bert_base(False)), ("first off-ramp exits", _bert_base(True))]
    inputs = [(f"{n} tokens", (_tokens(n, n),)) for n in SEQUENCES]
    return _measure("bert-base-deebert", variants, (_tokens(128, 0),),
                    ({1: Dim("seq", min=2, max=512)},), inputs, say, threads, isa)


def _resnet50(threshold: float):
    import torch

    from .models._resnet50 import EarlyExitResNet50

    torch.manual_seed(0)
    model = EarlyExitResNet50(threshold=threshold).eval()
    with torch.no_grad():  # trained-looking batch norms, so that no stage is the identity
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.0)
    return model


def resnet50_early_exit(say=print, threads: int = 1, isa: str = "native") -> tuple[list[Row], float]:
    import torch
    from torch.export import Dim

    # Top-1 probabilities lie in (0, 1]: a threshold above 1 never exits, 0 always does.
    variants = [("all 4 stages", _resnet50(2.0)), ("first classifier exits", _resnet50(0.0))]
    gen = torch.Generator().manual_seed(0)
    inputs = [(f"batch {b}", (torch.randn(b, 3, 224, 224, generator=gen),)) for b in BATCHES]
    return _measure("resnet50-early-exit", variants, (torch.randn(2, 3, 224, 224),),
                    ({0: Dim("batch", min=1, max=8)},), inputs, say, threads, isa)


def transformer_greedy(say=print, threads: int = 1, isa: str = "native") -> tuple[list[Row], float]:
    import torch
    from torch.export import Dim

    from .models._greedy_transformer import MAX_SRC, VOCAB, GreedyTransformer

    def model(eos_bias: float):
        torch.manual_seed(0)
        return GreedyTransformer(eos_bias=eos_bias).eval()

    variants = [("to the length bound", model(0.0)), ("EOS first", model(30.0))]
    gen = torch.Generator().manual_seed(0)
    inputs = [(f"{n} source tokens", (torch.randint(3, VOCAB, (1, n), generator=gen),))
              for n in SOURCES]
    example = (torch.randint(3, VOCAB, (1, 16), generator=gen),)
    return _measure("transformer-greedy", variants, example,
                    ({1: Dim("src", min=2, max=MAX_SRC)},), inputs, say, threads, isa)


MODELS = {"bert-base-deebert": bert_base_deebert, "resnet50-early-exit": resnet50_early_exit,
          "transformer-greedy": transformer_greedy}


def _alternate(eager, ours, *args) -> tuple[float, float]:
    """The median ms of `eager` and of `ours` on `args`, timed in alternating blocks of
    `REPEATS` calls (`ROUNDS` each), every block after an untimed call (see the docstring)."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(ROUNDS):
        for fn, out in ((eager, times[0]), (ours, times[1])):
            fn(*args)
            for _ in range(REPEATS):
                start = time.perf_counter()
                fn(*args)
                out.append(time.perf_counter() - start)
    return statistics.median(times[0]) * 1e3, statistics.median(times[1]) * 1e3


def heading(threads: int, isa: str = "native") -> str:
    text = SECTION if threads == 1 else f"{SECTION}, {threads} threads"
    return text if isa == "native" else f"{text} ({isa.upper()})"


def section(rows: list[Row], compile_seconds: dict[str, float], threads: int = 1,
            isa: str = "native") -> str:
    import torch

    from .provenance import host_cpu, stamp

    geo = math.exp(statistics.mean(math.log(r.eager_ms / r.dync_ms) for r in rows))
    eager = sum(r.mode == "eager" for r in rows)
    command = ("python -m benchmarks realistic" + (f" --threads {threads}" if threads > 1 else "")
               + (f" --isa {isa}" if isa != "native" else ""))
    if threads == 1:
        device = (f"**one thread** for both (torch {torch.__version__} with "
                  "`torch.set_num_threads(1)`, IREE `local-sync`")
    else:
        device = (f"**{threads} threads** for both (torch {torch.__version__} with "
                  f"`torch.set_num_threads({threads})`, `dync.compile(..., threads={threads})`: "
                  f"IREE `local-task`, code distributed for {threads} threads")
    lines = [heading(threads, isa), "",
             f"Measured on {stamp()} with `{command}`. Host CPU: {host_cpu()}; {device}, code "
             f"for {code_for(isa)}). Cold compile: "
             + ", ".join(f"{m} {s:.0f} s" for m, s in compile_seconds.items())
             + f". Medians of {ROUNDS * REPEATS} calls each, in alternating blocks of "
             f"{REPEATS} (each after an untimed call); each result checked against eager "
             f"first. Geo-mean speedup over the rows: **{geo:.2f}×**" + (
                 f"; {eager} of {len(rows)} rows run in eager PyTorch (dync measured eager "
                 "faster on the example and fell back to it: their dync time is eager's)"
                 if eager else "") + ".", "",
             "| model | path | input | dync runs it | eager ms | dync ms | speedup |",
             "|---|---|---|---|---:|---:|---:|"]
    lines += [f"| {r.model} | {r.path} | {r.size} | {r.mode} | {r.eager_ms:.1f} | "
              f"{r.dync_ms:.1f} | {r.eager_ms / r.dync_ms:.2f}× |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks realistic", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="BENCHMARKS.md",
                        help=f"put the table into this file as its '{SECTION}' section")
    parser.add_argument("--models", default=",".join(MODELS), metavar="NAME,...",
                        help="which models (default: all): " + ", ".join(MODELS))
    parser.add_argument("--threads", type=int, default=1, metavar="N",
                        help="threads for eager and dync alike (default 1); a table of its own")
    parser.add_argument("--isa", choices=CHOICES, default="native",
                        help="native: the code IREE makes for this CPU; avx2: an AVX2 machine "
                        "(a table of its own)")
    args = parser.parse_args(argv)
    rerun_held_to(args.isa, "realistic", argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model {unknown[0]!r}; choose from {', '.join(MODELS)}")

    import torch

    from .provenance import write_section

    torch.set_num_threads(args.threads)
    rows, seconds = [], {}
    for name in names:
        found, seconds[name] = MODELS[name](threads=args.threads, isa=args.isa)
        rows += found
    text = section(rows, seconds, args.threads, args.isa)
    print(text)
    if args.output:
        write_section(args.output, heading(args.threads, args.isa), text)
