"""`python -m benchmarks calls [-o BENCHMARKS.md]`: the floor cost of one call into a compiled
module, in microseconds (issue 33, item 4).

For each step of `benchmarks.models._calls` (a 32-wide linear layer; an LSTM cell with three
inputs and two outputs), one thread:

* eager: the step in eager PyTorch;
* host mode: the step as a sub-DNN of a host-mode model (its Python loops over a list read
  from a tensor and calls the step), the whole path from the model's call of the submodule to
  the torch tensors it gets back — what a tree model or a per-token driver pays per call;
* in-graph: `compiled(*args)` of the step compiled on its own;
* IREE invoke: `VmContext.invoke` of the same function on argument buffers made beforehand,
  results left in IREE's buffers: the floor under dync's own work.

Host mode and eager are timed as the loop's time over `CALLS` calls less the least of
`EMPTY_RUNS` times over none, per call; in-graph and invoke over `CALLS` calls (fewer for a
step whose call takes longer than `ROUND_S / CALLS`: as many as fill `ROUND_S`, at least
`FEWEST_CALLS`). Each figure is the median of `ROUNDS` rounds, the contestants taking turns
round by round.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

SECTION = "## Call floor"
CALLS = 2000
ROUNDS = 15
EMPTY_RUNS = 5
ROUND_S = 0.05
FEWEST_CALLS = 20


@dataclass
class Row:
    step: str
    eager_us: float
    host_us: float
    graph_us: float
    invoke_us: float


def _per_call(fn, calls: int) -> float:
    start = time.perf_counter()
    fn(calls)
    return (time.perf_counter() - start) / calls * 1e6


def _contestants(step, args) -> dict:
    """name -> fn(calls) running `calls` calls of the step that way."""
    import iree.runtime as rt
    import torch
    from torch.export import Dim

    import dync

    from .models._calls import Repeat

    model = Repeat(step).eval()
    none = torch.zeros(0)
    times = Dim("times", min=0, max=CALLS)
    # The compiled call path is what is measured, also where eager is faster (one Linear).
    host = dync.compile(model, (torch.zeros(2), *args), cache=False, eager_if_faster=False,
                        dynamic_shapes=({0: times}, *[None] * len(args)))
    if not host.manifest.subdnns:
        raise RuntimeError("the calls model compiled in one graph: it measures host mode")
    graph = dync.compile(step, args, cache=False)
    torch.testing.assert_close(graph(*args), step(*args))

    function = graph._function(graph.versions.choose(
        graph.signature.check_inputs([a.numpy() for a in args])).function)
    buffers = [function._buffer(a.numpy()) for a in args]

    def invoke(calls):
        context, vm_function = function._context, function._vm_function
        for _ in range(calls):
            arguments = rt.VmVariantList(len(buffers))
            for b in buffers:
                arguments.push_ref(b)
            context.invoke(vm_function, arguments, rt.VmVariantList(2))

    def looped(fn):
        def timed(times):
            start = time.perf_counter()
            fn(times, *args)
            return time.perf_counter() - start

        def run(calls):
            loop = timed(torch.zeros(calls))
            # The fixed cost of a call of the model is the least its empty loop takes: noise
            # only adds time, and one slow empty run would make a short loop's figure negative.
            fixed = min(timed(none) for _ in range(EMPTY_RUNS))
            return (loop - fixed) / calls * 1e6
        return run

    def direct(fn):
        def calls_of(n):
            for _ in range(n):  # each result dropped, as the loops above drop theirs
                fn(*args)

        def run(calls):
            return _per_call(calls_of, calls)
        return run

    torch.testing.assert_close(host(torch.zeros(3), *args), model(torch.zeros(3), *args))
    host.stats.clear()
    return {"eager": looped(model), "host": looped(host), "graph": direct(graph),
            "invoke": lambda calls: _per_call(invoke, calls), "_host_module": host}


def measure(say=print) -> list[Row]:
    import torch

    from .models._calls import steps

    rows = []
    with torch.no_grad():
        for name, (step, args) in steps().items():
            say(f"{name}: compiling")
            fns = _contestants(step, args)
            host = fns.pop("_host_module")
            warm = max(2, CALLS // 10)
            for fn in fns.values():
                fn(warm)
            calls = min(CALLS, max(FEWEST_CALLS, int(ROUND_S * 1e6 / fns["graph"](warm))))
            figures: dict[str, list[float]] = {k: [] for k in fns}
            for _ in range(ROUNDS):
                for key, fn in fns.items():
                    figures[key].append(fn(calls))
            python = sum(s.get("python", 0) for s in host.stats.values())
            if python:
                raise RuntimeError(f"{python} sub-DNN calls ran as Python: not the compiled path")
            med = {k: statistics.median(v) for k, v in figures.items()}
            rows.append(Row(name, med["eager"], med["host"], med["graph"], med["invoke"]))
            say(f"{name}: {rows[-1]}")
    return rows


def section(rows: list[Row]) -> str:
    import torch

    from .provenance import host_cpu, stamp

    lines = [SECTION, "",
             f"Measured on {stamp()} with `python -m benchmarks calls`. Host CPU: {host_cpu()}; "
             f"one thread (torch {torch.__version__} with `torch.set_num_threads(1)`, IREE "
             f"`local-sync`). Microseconds per call: medians of {ROUNDS} rounds of {CALLS} "
             f"calls (of as many as fill {ROUND_S * 1000:g} ms, at least {FEWEST_CALLS}, for a "
             "longer step). Host mode: a host-mode model's call of its sub-DNN, from the submodule "
             "call to the torch tensors returned; in-graph: `compiled(*args)`; IREE invoke: "
             "`VmContext.invoke` alone on buffers made beforehand (the floor under dync).", "",
             "| step | eager µs | dync host-mode call µs | dync in-graph call µs | IREE invoke µs |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {r.step} | {r.eager_us:.1f} | {r.host_us:.1f} | {r.graph_us:.1f} | "
              f"{r.invoke_us:.1f} |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks calls", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="BENCHMARKS.md",
                        help=f"put the table into this file as its '{SECTION}' section")
    args = parser.parse_args(argv)

    import torch

    from .provenance import write_section

    torch.set_num_threads(1)
    text = section(measure())
    print(text)
    if args.output:
        write_section(args.output, SECTION, text)
