"""The tracing baseline: freeze the path the example input takes (what `torch.jit.trace`
does), then compile that single path with dync's own pipeline. The failure dync removes.

The path is recorded by running the rewritten forward eagerly on the example, and replayed
while exporting: every branch takes its recorded decision whatever its predicate.
"""

from __future__ import annotations

from typing import Any

import torch

import dync
from dync.frontends.pytorch.rewrite import record_branches, replay_branches, rewritten


def trace_compile(model: torch.nn.Module, example: tuple, dynamic_shapes: Any = None):
    with torch.no_grad(), rewritten(model), record_branches() as trace:
        model(*example)
    with replay_branches([decision for _, decision in trace]):
        return dync.compile(model, example, dynamic_shapes=dynamic_shapes)
