"""Every suite model compiled by dync and checked against the original eager model on inputs
that take all of its paths (`python -m benchmarks` adds timing, memory and the baselines)."""

import functools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dync  # noqa: E402
from benchmarks import models  # noqa: E402


@functools.cache
def _compiled(name):
    module = models.load(name)
    model, example, dynamic_shapes = module.build()
    return module, model, dync.compile(model, example, dynamic_shapes=dynamic_shapes,
                                       **models.compile_options(module))


HOST_MODE = {"tree_lstm", "yolo_nms"}  # recursion over Python data; .tolist() on detections


@pytest.mark.parametrize("name", models.SUITE)
def test_suite_model_matches_the_original_on_every_path(name):
    """Every suite model, compiled as its deployment would, against the model exactly as
    written (not dync's rewrite of it), on its input set, which takes every path it has."""
    module, model, compiled = _compiled(name)
    assert compiled.report.mode == ("host" if name in HOST_MODE else "in-graph")
    if "buckets" in models.compile_options(module):  # yolo_nms: its CNN runs padded, static
        assert all(len(d["versions"]) == 16 for d in compiled.manifest.subdnns)
    inputs = module.inputs(INPUTS)
    result = dync.verify(model, compiled, inputs, decision=module.decision)
    assert result.eta == 0 and result.delta <= -4, result
    assert result.rewrite_eta == 0 and result.rewrite_delta <= -5, result
    with torch.no_grad():
        paths = {module.path(model, *args) for args in inputs}
    assert len(paths) == PATHS[name], paths


# The paths each model's input set takes (tests/test_suite_models.py checks they are all of
# the model's paths); a change here is a change in what the comparison covers.
INPUTS = 100
PATHS = {"shallow_deep": 4, "skipnet_rnn": 26, "skipnet_ff": 41, "blockdrop": 50,
         "convnet_aig": 43, "ranet": 3, "captioner": 9, "nmt_decoder": 26, "early_exit_bert": 4,
         "moe": 34, "tree_lstm": 93, "yolo_nms": 16, "resnet_static": 1}


def test_a_broken_rewrite_is_caught(monkeypatch):
    """A rewrite bug flatters nothing: with each of the model's `if`s taking the other branch,
    the compile's first-call check sees the graph disagree with eager and falls back to host
    mode, which is right; without that check, the compiled module still matches the (broken)
    rewritten forward, but not the model as written, and verify says which of the two went
    wrong."""
    from dync.frontends.pytorch.rewrite import runtime

    original_if = runtime.if_

    def negated(pred, true_fn, false_fn, names, values, site, returned_if_false=False):
        if returned_if_false:  # a guard the rewriter adds after a return: kept as it is
            return original_if(pred, true_fn, false_fn, names, values, site, True)
        return original_if(pred, false_fn, true_fn, names, values, site)

    module = models.load("shallow_deep")
    model, example, dynamic_shapes = module.build()
    monkeypatch.setattr(runtime, "if_", negated)
    checked = dync.compile(model, example, dynamic_shapes=dynamic_shapes, cache=False)
    assert checked.report.mode == "host"
    assert checked.report.graph_breaks[0]["stage"] == "first call"
    assert dync.verify(model, checked, module.inputs(24), decision=module.decision).eta == 0
    broken = dync.compile(model, example, dynamic_shapes=dynamic_shapes, cache=False,
                          check_first_call=False)
    result = dync.verify(model, broken, module.inputs(24), decision=module.decision)
    assert result.eta > 0.5 and result.rewrite_eta > 0.5, result
    # The compiled module is faithful to what it was given: the bug is the rewrite's.
    assert all(r.compiled_decision == r.rewrite_decision for r in result.results)


def test_saved_vmfb_runs_under_iree_run_module(tmp_path):
    """A saved in-graph module runs under the stock `iree-run-module` with the same results:
    the captioner, whose output length depends on the data."""
    module, model, compiled = _compiled("captioner")
    path = compiled.save(tmp_path / "captioner.vmfb")
    tool = Path(sys.executable).parent / "iree-run-module"
    lengths = set()
    for i, (image,) in enumerate(module.inputs(8)):
        x, y = tmp_path / f"x{i}.npy", tmp_path / f"y{i}.npy"
        np.save(x, image.numpy())
        run = subprocess.run(
            [str(tool), f"--module={path}", "--device=local-sync", "--function=main",
             f"--input=@{x}", f"--output=@{y}"],
            capture_output=True, text=True, timeout=120,
        )
        assert run.returncode == 0, run.stderr
        with torch.no_grad():
            want = model(image).numpy()
        assert np.load(y).tolist() == want.tolist()
        lengths.add(len(want))
    assert len(lengths) >= 2, lengths
