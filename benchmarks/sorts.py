"""`python -m benchmarks sorts [--sizes N,...] [--rows R] [--static] [-o BENCHMARKS.md]`:
sorting ops over a dynamic length nothing bounds, from a handful of elements to 100000, against
eager PyTorch; with `--static`, over each length compiled as a static shape (a module per
length: past 48 elements `dync-pack-sort-keys` makes those sorts bitonic networks).

Each op is compiled once by `dync.compile` with its defaults (`mode="graph"`, the length a
`Dim` from 2 up) and timed at every size on rows of rounded floats (ties among them), after
its result is checked against eager's (argsort's as the values it puts in order: eager orders
ties as its kernel leaves them). IREE's own sort is a bubble sort on the CPU,
O(n^2); `dync-pack-sort-keys` sorts a length past 512 by a radix sort instead (chosen at run
time where the length is dynamic), so the table shows both sides of that choice.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

SECTION = "## Sorts"
STATIC_SECTION = "## Sorts of a static length"


def _ops() -> dict[str, Callable]:
    import torch

    class Argsort(torch.nn.Module):
        def forward(self, x):
            return torch.argsort(x, dim=-1)

    class SortDescending(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x, dim=-1, descending=True, stable=True)

    class Median(torch.nn.Module):
        def forward(self, x):
            return x.median(dim=-1)

    return {"argsort": Argsort, "sort(descending, stable)": SortDescending, "median": Median}


def _rows(rows: int, n: int, seed: int):
    import torch

    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, n, generator=gen) * 100).round()  # ties


def _agrees(got, want, x) -> bool:
    import torch

    if isinstance(got, torch.Tensor):  # argsort: ties may come in any order
        return torch.equal(x.gather(-1, got), x.gather(-1, want))
    return all(torch.equal(g, w) for g, w in zip(got, want, strict=True))


def _least(fn, x, budget_s: float = 0.2) -> float:
    """The least time of a call of `fn(x)`, in ms, over about `budget_s` seconds."""
    best, start = float("inf"), time.perf_counter()
    while True:
        began = time.perf_counter()
        fn(x)
        best = min(best, time.perf_counter() - began)
        if time.perf_counter() - start > budget_s:
            return best * 1e3


def measure(sizes: list[int], rows: int, only: str = "", static: bool = False,
            say=print) -> list[tuple[str, int, float, float]]:
    import torch
    from torch.export import Dim

    import dync

    torch.set_num_threads(1)
    results = []
    for name, op in _ops().items():
        if only not in name:
            continue
        model = op().eval()
        if not static:
            compiled = dync.compile(model, (_rows(rows, 600, 0),),
                                    dynamic_shapes=({1: Dim("length", min=2)},), mode="graph",
                                    cache=False)
        for n in sizes:
            x = _rows(rows, n, n)
            if static:  # one module per length, compiled for it alone
                compiled = dync.compile(model, (x,), mode="graph", cache=False)
            if not _agrees(compiled(x), model(x), x):
                raise AssertionError(f"{name} at {n}: dync disagrees with eager")
            eager, ours = (min(_least(f, x) for _ in range(3)) for f in (model, compiled))
            say(f"[sorts] {name} {rows}x{n}: eager {eager:.3f} ms, dync {ours:.3f} ms")
            results.append((name, n, eager, ours))
    return results


def section(results: list[tuple[str, int, float, float]], rows: int,
            static: bool = False) -> str:
    import torch

    from .provenance import host_cpu, stamp

    how = ("a static length, one module compiled per length. Up to 48 elements dync sorts "
           "with IREE's sort (O(n²) on the CPU), past 48 with a bitonic network"
           if static else "a length compiled as a `Dim` from 2 up (no upper bound), chosen "
           "at run time by the length: up to 48 elements IREE's sort (O(n²) on the CPU), up "
           "to 1024 a bitonic network padded to the next power of two from 64 (the networks "
           "of 2048 and 4096 would pass the module's budget of network steps), past it a "
           "radix sort")
    lines = [STATIC_SECTION if static else SECTION, "",
             f"Measured on {stamp()} with `python -m benchmarks sorts{' --static' * static}`. "
             f"Host CPU: {host_cpu()}; **one thread** (torch {torch.__version__} with "
             f"`torch.set_num_threads(1)`, IREE `local-sync`). {rows} rows of rounded floats "
             f"(ties), sorted along {how} (`dync-pack-sort-keys`); each result checked against "
             "eager first; the least of calls over 0.2 s, three times.", "",
             "| op | length | eager ms | dync ms | dync / eager |", "|---|---:|---:|---:|---:|"]
    for name, n, eager, ours in results:
        lines.append(f"| {name} | {n} | {eager:.3f} | {ours:.3f} | {eager / ours:.2f}× |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks sorts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="16,100,500,1000,4000,16000,100000",
                        help="lengths, comma-separated")
    parser.add_argument("--rows", type=int, default=4, help="rows sorted at once (default 4)")
    parser.add_argument("--only", default="", metavar="SUBSTRING",
                        help="only the ops whose name contains this")
    parser.add_argument("--static", action="store_true",
                        help="compile each length as a static shape (its own section)")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="BENCHMARKS.md",
                        help=f"put the table into this file as its '{SECTION}' section")
    args = parser.parse_args(argv)
    from .provenance import write_section

    results = measure([int(n) for n in args.sizes.split(",")], args.rows, args.only,
                      args.static)
    text = section(results, args.rows, args.static)
    if args.output:
        write_section(args.output, STATIC_SECTION if args.static else SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
