"""The compile cache: identical dync IR reuses IREE's output; damaged entries are rebuilt;
anything that changes the IR (weights) or the flags misses."""

import torch
from models import BATCH
from rewrite_models import EarlyExit

import dync
from dync.cache import default_directory


def _compile(model, cache, **options):
    return dync.compile(model, (torch.randn(2, 8),), dynamic_shapes=({0: BATCH},), cache=cache,
                        **options)


def _check(model, compiled):
    for scale in (0.1, 1.0, 5.0):
        x = torch.randn(3, 8) * scale
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_second_compile_is_a_hit_and_a_damaged_entry_is_rebuilt(tmp_path):
    torch.manual_seed(0)
    model = EarlyExit().eval()
    first = _compile(model, tmp_path)
    assert first.report.cache == "miss" and first.report.dispatches > 0
    second = _compile(model, tmp_path)
    assert second.report.cache == "hit"
    assert second.report.dispatches == first.report.dispatches
    assert "compile cache: hit" in str(second.report)
    _check(model, second)
    (entry,) = tmp_path.glob("*.vmfb")
    entry.write_bytes(entry.read_bytes()[:100])  # a truncated write
    third = _compile(model, tmp_path)
    assert third.report.cache == "rebuilt a damaged entry"
    _check(model, third)
    assert _compile(model, tmp_path).report.cache == "hit"


def test_other_weights_or_flags_miss(tmp_path):
    torch.manual_seed(0)
    model = EarlyExit().eval()
    _compile(model, tmp_path)
    torch.manual_seed(1)
    other = EarlyExit().eval()
    compiled = _compile(other, tmp_path)
    assert compiled.report.cache == "miss"
    _check(other, compiled)
    assert _compile(model, tmp_path, extra_flags=["--iree-opt-level=O1"]).report.cache == "miss"


def test_cache_can_be_turned_off(tmp_path, monkeypatch):
    torch.manual_seed(0)
    assert _compile(EarlyExit().eval(), False).report.cache == "off"
    monkeypatch.setenv("DYNC_CACHE", "0")
    assert default_directory() is None
    monkeypatch.delenv("DYNC_CACHE")
    monkeypatch.setenv("DYNC_CACHE_DIR", str(tmp_path / "c"))
    assert default_directory() == tmp_path / "c"
