"""One generated program compiled with dync's defaults and compared with eager PyTorch on its
inputs, in a process of its own: forked by the campaign (`run_forked`, see
`benchmarks.fuzz.run`), or `python -m benchmarks.fuzz.child PROGRAM.py`, which prints the
outcome as one JSON line."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType


def load(path: Path) -> ModuleType:
    """The program at `path` (written by `benchmarks.fuzz.generate`: the project's own code)."""
    spec = importlib.util.spec_from_file_location(f"dync_fuzz_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def outcome(path: Path) -> dict:
    import torch

    import dync
    from dync.differential import disagreement
    from dync.runtime import invoke

    # Arguments of every size go to IREE without a copy where the module allows (the runtime's
    # 16 KiB threshold is for speed alone): each program also tries that verdict, its inputs
    # compared below as the calls leave them.
    invoke._IMPORT_FROM = 1
    program = load(path)
    model = program.build()
    args, dynamic_shapes = program.example()

    def failed(e: Exception) -> dict:
        text = " ".join(str(e).split())
        if isinstance(e, dync.DyncError):
            where = f"{text} {getattr(e, 'source', '') or ''}"
            return {"outcome": "error", "detail": text[:500],
                    "names_line": f"{path.name}:" in where}
        return {"outcome": "crash", "detail": f"{type(e).__name__}: {text[:500]}"}

    try:
        compiled = dync.compile(model, args, dynamic_shapes=dynamic_shapes)
    except Exception as e:  # noqa: BLE001 - classifying every failure is the point
        return failed(e)
    ill_conditioned = False
    for inputs in program.inputs():
        theirs, mine = copy.deepcopy(inputs), copy.deepcopy(inputs)
        with torch.no_grad():
            want = model(*theirs)
        try:
            got = compiled(*mine)
        except Exception as e:  # noqa: BLE001
            return failed(e)
        problem = disagreement(got, want)
        inputs_changed = None if problem else disagreement(mine, theirs, rtol=0)
        if inputs_changed:
            return {"outcome": "mismatch",
                    "detail": f"the inputs as the compiled call leaves them: {inputs_changed}"}
        if problem:
            with torch.no_grad():
                exact = copy.deepcopy(model).double()(*(x.double() for x in inputs))
            if disagreement(want, _as(exact, want)):
                ill_conditioned = True  # eager itself decides at rounding level here
                continue
            return {"outcome": "mismatch", "detail": problem}
    report = compiled.report
    breaks = [{key: str(b.get(key, ""))[:300] for key in ("region", "stage", "construct", "reason")}
              for b in report.graph_breaks]
    if getattr(compiled, "run_time_fallbacks", 0):  # calls IREE failed on, run in eager
        breaks += [{"region": "call", "stage": "run time", "construct": "", "reason": note[:300]}
                   for note in report.notes if "ran in eager PyTorch" in note]
    return {"outcome": "ill-conditioned" if ill_conditioned else "correct", "mode": report.mode,
            "graph_breaks": len(report.graph_breaks), "breaks": breaks,
            "arguments": report.arguments[:300]}


def _as(value, like):
    """`value` (float64 results) cast to the dtypes of `like`, nested alike."""
    import torch
    from torch.utils import _pytree as pytree

    values, _ = pytree.tree_flatten(value)
    likes, spec = pytree.tree_flatten(like)
    cast = [v.to(w.dtype) if isinstance(v, torch.Tensor) and isinstance(w, torch.Tensor) else v
            for v, w in zip(values, likes, strict=False)]
    return pytree.tree_unflatten(cast, spec)


def run_forked(path: str, result_path: str, log_path: str) -> None:
    """`outcome` of the program at `path`, as JSON into `result_path`, in a process forked
    for it (`run.run_one`); its stdout and stderr go to `log_path`, whose end a crash
    reports."""
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    Path(result_path).write_text(json.dumps(outcome(Path(path))), encoding="utf-8")


def main() -> None:
    print(json.dumps(outcome(Path(sys.argv[1]))), flush=True)


if __name__ == "__main__":
    main()
