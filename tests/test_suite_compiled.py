"""Suite models compiled by dync and checked against eager on inputs that take their paths (the
whole suite at 100 inputs per model is `python -m benchmarks`; these are the models that
exercise a frontend or IREE workaround or host mode, kept small enough for CI)."""

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


@pytest.mark.parametrize("name, mode", [("moe", "in-graph"), ("captioner", "in-graph"),
                                        ("nmt_decoder", "in-graph"), ("yolo_nms", "host")])
def test_suite_model_matches_eager_on_every_path(name, mode):
    module, model, compiled = _compiled(name)
    assert compiled.report.mode == mode
    if "buckets" in models.compile_options(module):  # yolo_nms: its CNN runs padded, static
        assert all(len(d["versions"]) == 16 for d in compiled.manifest.subdnns)
    result = dync.verify(model, compiled, module.inputs(24), decision=module.decision)
    assert result.eta == 0 and result.delta <= -4, result
    with torch.no_grad():
        paths = {module.path(model, *args) for args in module.inputs(24)}
    assert len(paths) >= 3, paths


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
