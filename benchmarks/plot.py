"""The benchmark's figure: per model, one bar per contestant (eager, torch.compile, ORT, IREE
without dync's passes, dync), median latency on a log scale. Needs matplotlib (the `bench`
extra); `python -m benchmarks` writes it beside BENCHMARKS.md and links it from there.

Panels are listed in `PANELS` (title, axis label, value per row and contestant); peak memory
joins as a second panel once the runner measures it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runner import Row

# (title, y label, value of row for a contestant of `runner.CONTESTANTS`: NaN where none)
Panel = tuple[str, str, Callable[["Row", str], float]]

PANELS: list[Panel] = [
    ("Median latency", "ms (log scale)", lambda row, contestant: row.ms(contestant)),
    # TODO(issue 5, peak memory): ("Peak memory", "MiB (log scale)",
    #     lambda row, contestant: row.peak_mib(contestant)) once benchmarks/memory.py fills it.
]


def latency_plot(rows: Sequence[Row], path: Path, panels: Sequence[Panel] | None = None) -> Path:
    """Write the grouped bar chart of `rows` (models that ran) to `path` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    from .runner import CONTESTANTS, FROZEN

    panels = list(panels or PANELS)
    rows = [r for r in rows if not r.error]
    first = panels[0][2]
    shown = [(n, h) for n, h in CONTESTANTS if any(not math.isnan(first(r, n)) for r in rows)]
    width = 0.8 / len(shown)
    fig, axes = plt.subplots(len(panels), 1, squeeze=False, layout="constrained",
                             figsize=(max(7.0, 1.0 * len(rows) + 2), 3.8 * len(panels)))
    for ax, (title, label, value) in zip(axes[:, 0], panels, strict=True):
        for k, (name, header) in enumerate(shown):
            xs, ys, hatches = [], [], []
            for i, r in enumerate(rows):
                v = value(r, name)
                if v == v and v > 0:
                    xs.append(i + (k - (len(shown) - 1) / 2) * width)
                    ys.append(v)
                    c = r.contestants.get(name)
                    hatches.append("//" if c is not None and c.frozen else "")
            bars = ax.bar(xs, ys, width, label=header, color=f"C{k}")
            for bar, hatch in zip(bars, hatches, strict=True):
                bar.set_hatch(hatch)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_locator(matplotlib.ticker.LogLocator(subs=(2.0, 5.0)))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.set_title(title, fontsize="medium")
        ax.set_ylabel(label)
        ax.set_xticks(range(len(rows)), [r.name for r in rows], rotation=30, ha="right")
        ax.grid(axis="y", which="both", alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=len(shown), fontsize="small",
               frameon=False)
    if any(c.frozen for r in rows for c in r.contestants.values()):
        fig.supxlabel(f"hatched ({FROZEN}): ORT on a traced export that froze the example's path "
                      "(one path's latency, wrong on other inputs)", fontsize="x-small")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
