"""`python -m benchmarks realistic [-o BENCHMARKS.md]`: dynamic networks at the sizes people
deploy, compiled cold by dync with its defaults, checked against eager PyTorch and timed
against it in the same process, at the same thread count (issue 33).

Models (each at every path that matters for its time):

* ``bert-base-deebert``: DeeBERT (`benchmarks.models.early_exit_bert`'s classes) at BERT-base
  size: 12 layers, d=768, 12 heads, FFN 3072, a 30522-token vocabulary, a sequence of 2 to
  512 tokens (dynamic). Timed on its two extreme paths: every off-ramp declines (all 12
  layers, the threshold below any entropy) and the first one exits (one layer).

Medians of alternating calls (eager, then dync) after a warm-up; every result is checked
against eager first. Compile time is the cold `dync.compile` (no cache). Slow (minutes): not
run by CI.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

SECTION = "## Realistic sizes"
SEQUENCES = (16, 128, 512)
REPEATS = 5


@dataclass
class Row:
    model: str
    path: str
    size: str
    eager_ms: float
    dync_ms: float


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


def bert_base_deebert(say=print) -> tuple[list[Row], float]:
    """Rows for both paths and the cold compile time of the never-exiting model (the same
    graph: only the threshold, a constant, differs)."""
    import torch
    from torch.export import Dim

    import dync

    rows, seconds = [], 0.0
    for exit_first in (False, True):
        model = _bert_base(exit_first)
        path = "first off-ramp exits" if exit_first else "all 12 layers"
        start = time.perf_counter()
        compiled = dync.compile(model, (_tokens(128, 0),),
                                dynamic_shapes=({1: Dim("seq", min=2, max=512)},), cache=False)
        if not exit_first:
            seconds = time.perf_counter() - start
            say(f"[realistic] bert-base-deebert: compiled in {seconds:.0f} s "
                f"({compiled.report.mode})")
        with torch.no_grad():
            for length in SEQUENCES:
                ids = _tokens(length, length)
                torch.testing.assert_close(compiled(ids), model(ids), rtol=1e-3, atol=1e-3)
                eager_ms, dync_ms = _alternate(model, compiled, ids)
                rows.append(Row("bert-base-deebert", path, f"{length} tokens", eager_ms, dync_ms))
                say(f"[realistic] bert-base-deebert, {path}, {length} tokens: eager "
                    f"{eager_ms:.1f} ms, dync {dync_ms:.1f} ms")
    return rows, seconds


def _alternate(eager, ours, *args) -> tuple[float, float]:
    eager(*args), ours(*args)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(REPEATS):
        for fn, out in ((eager, times[0]), (ours, times[1])):
            start = time.perf_counter()
            fn(*args)
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]) * 1e3, statistics.median(times[1]) * 1e3


def section(rows: list[Row], compile_seconds: dict[str, float]) -> str:
    import torch

    from .provenance import host_cpu, stamp

    geo = math.exp(statistics.mean(math.log(r.eager_ms / r.dync_ms) for r in rows))
    lines = [SECTION, "",
             f"Measured on {stamp()} with `python -m benchmarks realistic`. Host CPU: "
             f"{host_cpu()}; **one thread** for both (torch {torch.__version__} with "
             "`torch.set_num_threads(1)`, IREE `local-sync`, code for "
             "`--iree-llvmcpu-target-cpu=host`). Cold compile: "
             + ", ".join(f"{m} {s:.0f} s" for m, s in compile_seconds.items())
             + f". Medians of {REPEATS} alternating calls; each result checked against eager "
             f"first. Geo-mean speedup over the rows: **{geo:.2f}×**.", "",
             "| model | path | input | eager ms | dync ms | speedup |",
             "|---|---|---|---:|---:|---:|"]
    lines += [f"| {r.model} | {r.path} | {r.size} | {r.eager_ms:.1f} | {r.dync_ms:.1f} | "
              f"{r.eager_ms / r.dync_ms:.2f}× |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks realistic", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="BENCHMARKS.md",
                        help=f"put the table into this file as its '{SECTION}' section")
    args = parser.parse_args(argv)

    import torch

    from .provenance import replace_section

    torch.set_num_threads(1)
    rows, seconds = bert_base_deebert()
    text = section(rows, {"bert-base-deebert": seconds})
    print(text)
    if args.output:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        args.output.write_text(replace_section(current, SECTION, text), encoding="utf-8")
