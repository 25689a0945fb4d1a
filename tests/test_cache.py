"""The compile cache: an unchanged model reuses the whole compiled module; identical dync IR
reuses IREE's output; damaged entries are rebuilt; anything that changes what the model
computes or accepts (attributes, weights, Dim ranges, source files, flags) misses."""

import pytest
import torch
from models import BATCH
from rewrite_models import EarlyExit
from torch.export import Dim

import dync
from dync.cache import default_directory

EXAMPLE = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))


def _compile(model, cache, **options):
    return dync.compile(model, (EXAMPLE,), dynamic_shapes=({0: BATCH},), cache=cache, **options)


def _ir_keyed(model):
    """`model` with an attribute the model-level key cannot see: only the IR key applies."""
    model.post = lambda y: y
    return model


def _check(model, compiled):
    for scale in (0.1, 1.0, 5.0):
        x = torch.randn(3, 8) * scale
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_second_compile_is_a_hit_and_a_damaged_entry_is_rebuilt(tmp_path):
    torch.manual_seed(0)
    model = _ir_keyed(EarlyExit().eval())
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
    assert third.report.cache == "rebuilt (the entry was damaged: its vmfb does not match its checksum)"
    _check(model, third)
    assert _compile(model, tmp_path).report.cache == "hit"
    (record,) = [p for p in tmp_path.iterdir() if p.suffix == ".json"]
    record.write_text("[" * 200_000 + "]" * 200_000)  # nested past Python's stack
    assert _compile(model, tmp_path).report.cache == "rebuilt (the entry was damaged: RecursionError)"


def test_other_weights_or_flags_miss(tmp_path):
    torch.manual_seed(0)
    model = _ir_keyed(EarlyExit().eval())
    _compile(model, tmp_path)
    torch.manual_seed(1)
    other = _ir_keyed(EarlyExit().eval())
    compiled = _compile(other, tmp_path)
    assert compiled.report.cache == "miss"
    _check(other, compiled)
    assert _compile(model, tmp_path, extra_flags=["--iree-opt-level=O1"]).report.cache == "miss"


@pytest.mark.parametrize("keyed", ["model", "ir"])
def test_a_cache_shared_with_a_cpu_of_other_features_misses(tmp_path, monkeypatch, keyed):
    """`target="host"` is a different CPU on each machine that shares a cache: a module built
    where the CPU has other vector features is not served (its code may use one this CPU
    lacks), at the model key and at the IR key alike."""
    from dync import targets

    torch.manual_seed(0)
    model = EarlyExit().eval()
    model = _ir_keyed(model) if keyed == "ir" else model
    assert _compile(model, tmp_path).report.cache == "miss"
    assert _compile(model, tmp_path).report.cache.startswith("hit")
    name, flags, isa = *targets.host_cpu(), targets.host_vector_isa()
    # A vector extension no CPU has (a real one, avx_vnni, is this CPU's own on some machines).
    assert "avx10_9" not in flags
    monkeypatch.setattr(targets, "host_cpu", lambda: (name, flags | {"avx10_9"}))
    assert targets.host_vector_isa() == isa  # the same dync IR: only the features differ
    compiled = _compile(model, tmp_path)
    assert compiled.report.cache == "miss"
    assert "avx10_9" in compiled.manifest.cpu_features
    _check(model, compiled)


def test_cache_can_be_turned_off(tmp_path, monkeypatch):
    torch.manual_seed(0)
    assert _compile(EarlyExit().eval(), False).report.cache == "off"
    monkeypatch.setenv("DYNC_CACHE", "0")
    assert default_directory() is None
    monkeypatch.delenv("DYNC_CACHE")
    monkeypatch.setenv("DYNC_CACHE_DIR", str(tmp_path / "c"))
    assert default_directory() == tmp_path / "c"


def test_unchanged_model_skips_the_whole_compile(tmp_path):
    torch.manual_seed(0)
    model = EarlyExit().eval()
    assert _compile(model, tmp_path).report.cache == "miss"
    again = _compile(model, tmp_path)
    assert again.report.cache == "hit (model)" and "rewritten" in str(again.report)
    _check(model, again)


def test_any_change_the_model_key_sees_misses(tmp_path):
    """A plain attribute, the weights, a Dim range: each changes what the model computes or
    accepts, and each compiles afresh (and right)."""
    torch.manual_seed(0)
    model = EarlyExit().eval()
    _compile(model, tmp_path)
    model.threshold = 0.9
    changed = _compile(model, tmp_path)
    assert changed.report.cache == "miss"
    _check(model, changed)
    with torch.no_grad():
        model.blocks[0].weight.mul_(2)
    assert _compile(model, tmp_path).report.cache == "miss"
    wider = dync.compile(model, (EXAMPLE,), dynamic_shapes=({0: Dim("batch", max=99)},),
                         cache=tmp_path)
    assert wider.report.cache == "miss"


def test_an_edited_source_file_misses(tmp_path, monkeypatch):
    """The key hashes the files the model's code comes from: an edit means a new compile."""
    source = tmp_path / "edited_model.py"
    source.write_text("import torch\n\nclass Net(torch.nn.Module):\n"
                      "    def forward(self, x):\n        return torch.relu(x) + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import edited_model

    cache = tmp_path / "cache"
    model = edited_model.Net()
    assert _compile(model, cache).report.cache == "miss"
    assert _compile(model, cache).report.cache == "hit (model)"
    source.write_text(source.read_text() + "# edited\n")
    assert _compile(model, cache).report.cache == "hit"  # same IR: IREE's output is reused


def test_state_the_key_cannot_see_falls_back_to_the_ir_key(tmp_path):
    torch.manual_seed(0)
    model = _ir_keyed(EarlyExit().eval())  # a lambda is not plain data
    _compile(model, tmp_path)
    assert _compile(model, tmp_path).report.cache == "hit"
    assert len(list(tmp_path.glob("model-*"))) == 0


def test_a_recurrent_layer_gets_a_model_key_and_its_weights_are_in_it():
    """nn.GRU keeps weak references to its weights (`_flat_weight_refs`): the key follows them
    (a model with a GRU used to fall back to the slower IR key)."""
    from dync.cache import model_key

    torch.manual_seed(0)
    gru = torch.nn.GRU(4, 8).eval()
    args, options = (torch.randn(3, 1, 4),), {}
    key = model_key(gru, args, None, options)
    assert key is not None and key == model_key(gru, args, None, options)
    with torch.no_grad():
        gru.weight_hh_l0.add_(1.0)
    assert model_key(gru, args, None, options) != key


SCALE = 2.0


class _ReadsAGlobal(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * SCALE


def test_a_global_the_forward_reads_is_in_the_key(tmp_path, monkeypatch):
    """A module-level value the forward reads can change between two compiles in one process:
    the second compile must see it (it got the first's module back)."""
    model = _ReadsAGlobal()
    assert _compile(model, tmp_path).report.cache == "miss"
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    changed = _compile(model, tmp_path)
    assert changed.report.cache != "hit (model)"
    _check(model, changed)


def test_code_without_a_file_is_in_the_key(monkeypatch):
    """A class typed at a prompt (`python - <<EOF`, whose module's file is "<stdin>") has no
    file whose contents the key could hash: its methods' code is hashed instead (a second
    class of the same name got the first's module back)."""
    import sys
    import types

    from dync.cache import model_key

    prompt = types.ModuleType("prompt")
    prompt.__file__ = "<stdin>"
    monkeypatch.setitem(sys.modules, "prompt", prompt)

    def cell(body: str):
        source = f"class Net(torch.nn.Module):\n    def forward(self, x):\n        return {body}\n"
        prompt.torch = torch
        exec(compile(source, "<stdin>", "exec"), vars(prompt))  # what the prompt does
        return prompt.Net()

    keys = {model_key(cell(body), (EXAMPLE,), None, {}) for body in ("x + 1", "x * 5", "x + 1")}
    assert None not in keys and len(keys) == 2


def test_the_key_is_the_same_in_every_process(tmp_path):
    """The globals a forward reads are hashed in a fixed order: in set order the key changed
    with Python's hash seed, so every new process missed the model-level cache."""
    import os
    import subprocess
    import sys

    (tmp_path / "reads_four.py").write_text(
        "import torch\nfrom dync.cache import model_key\nA, B, C, D = 1.0, 2.0, 3.0, 4.0\n"
        "class M(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.relu(x) * A + B - C * D\n"
        "print(model_key(M(), (torch.zeros(2, 8),), None, {}))\n")
    keys = {subprocess.run([sys.executable, "reads_four.py"], cwd=tmp_path, check=True,
                           capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout.split()[-1]
            for seed in ("1", "2", "3")}
    assert len(keys) == 1 and next(iter(keys)).startswith("model-"), keys
