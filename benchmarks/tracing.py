"""The tracing baseline: freeze the path the example input takes (what `torch.jit.trace`
does), then compile that single path with dync's own pipeline. The failure dync removes.

The path is recorded by running the rewritten forward eagerly on the example, and replayed
while exporting: every branch takes its recorded decision whatever its predicate.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

import dync
from dync.frontends.pytorch.rewrite import record_branches, replay_branches, rewritten


def trace_compile(model: torch.nn.Module, example: tuple, dynamic_shapes: Any = None):
    with torch.no_grad(), rewritten(model), record_branches() as trace:
        model(*example)
    with replay_branches([decision for _, decision in trace]):
        # One frozen graph, as a tracer makes: never host mode's per-call fallback.
        return dync.compile(model, example, dynamic_shapes=dynamic_shapes, mode="graph")


def torchscript_trace(model: torch.nn.Module, example: tuple):
    """`torch.jit.trace` itself, run by TorchScript: for models whose frozen path still has
    Python values read from the data (`.tolist()` in a helper), which no graph compiler takes."""
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings: exactly the freezing being measured
        return torch.jit.trace(model, example, check_trace=False)
