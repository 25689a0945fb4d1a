"""Suite models compiled by dync and checked against eager on inputs that take their paths (the
whole suite at 100 inputs per model is `python -m benchmarks`; these are the models that
exercise a frontend or IREE workaround, kept small enough for CI)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dync  # noqa: E402
from benchmarks import models  # noqa: E402


@pytest.mark.parametrize("name", ["moe", "captioner", "nmt_decoder", "yolo_nms"])
def test_suite_model_matches_eager_on_every_path(name):
    module = models.load(name)
    model, example, dynamic_shapes = module.build()
    compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes)
    result = dync.verify(model, compiled, module.inputs(24), decision=module.decision)
    assert result.eta == 0 and result.delta <= -4, result
    assert result.paths >= 3, result
