"""Files from someone else run no code: a manifest or a compile-cache entry holding a Python
payload in a shape expression is an error or a recompile, never a command; a tampered cache
entry is compiled again; a saved module runs where torch is not installed."""

import json
import stat
import subprocess
import sys

import numpy as np
import pytest
import torch
from models import BATCH, cond_inputs
from rewrite_models import EarlyExit

import dync
from dync.cache import _record_digest


def _payload(marker) -> str:
    """What `sympy.sympify` would have run: it creates `marker`."""
    return (f"batch.subs.__globals__['__builtins__']['__import__']('os')"
            f".system('touch {marker}')")


@pytest.fixture
def saved(loop_compiled, tmp_path):
    return loop_compiled.save(tmp_path / "loop.vmfb")


def test_a_payload_in_a_manifest_runs_nothing(saved, tmp_path):
    manifest_path = saved.with_name("loop.manifest.json")
    manifest = json.loads(manifest_path.read_text())
    marker = tmp_path / "PWNED"
    manifest["signature"]["inputs"][0]["shape"][0] = _payload(marker)
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(dync.ModuleFormatError, match=r"loop\.manifest\.json: malformed shape "
                       r"expression .*'\.' is not part of a shape expression"):
        dync.load(saved)
    np.save(tmp_path / "x.npy", np.ones((2, 8), np.float32))
    done = subprocess.run([sys.executable, "-m", "dync.cli", "run", str(saved), "--input",
                           f"@{tmp_path / 'x.npy'}"], capture_output=True, text=True)
    assert done.returncode == 1 and "malformed shape expression" in done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists()


@pytest.mark.parametrize("field, value", [
    (("signature", "inputs", 0, "dtype"), "complex128"),
    (("signature", "symbols", "batch", "min"), "1"),
    (("signature", "output_tree"), "[1, {\"type\": \"os.system\""),
    (("subdnns",), [{"name": "f", "callable": ["", "__class__"], "signature": {}}]),
    (("versions",), [{"function": "main", "symbols": {"nope": 3}}]),
    (("cpu_features",), ["avx2; rm -rf /"]),
    (("cpu_features",), "avx2"),
])
def test_a_malformed_manifest_field_is_named(saved, field, value):
    manifest_path = saved.with_name("loop.manifest.json")
    manifest = json.loads(manifest_path.read_text())
    *path, last = field
    node = manifest
    for key in path:
        node = node[key]
    node[last] = value
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(dync.ModuleFormatError, match=r"loop\.manifest\.json"):
        dync.load(saved)


@pytest.mark.parametrize("keywords", [
    {"tensors": ["x"], "constants": {"scale": {"__class__": "os.system"}}},
    {"tensors": ["x; import os"], "constants": {}},
    {"tensors": ["x", "mask"], "constants": {}},  # two tensor parameters for one input
    {"tensors": ["x"], "constants": {"x": 1}},
    {"tensors": ["x"]},
])
def test_a_malformed_keywords_entry_is_named(saved, keywords):
    manifest_path = saved.with_name("loop.manifest.json")
    manifest = json.loads(manifest_path.read_text())
    manifest["subdnns"] = [{"name": "f", "callable": ["", "forward"],
                            "signature": manifest["signature"], "keywords": keywords}]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(dync.ModuleFormatError, match=r"loop\.manifest\.json.*(keywords|inputs)"):
        dync.load(saved)


EXAMPLE = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))


def _compile(model, cache, **options):
    return dync.compile(model, (EXAMPLE,), dynamic_shapes=({0: BATCH},), cache=cache, **options)


def _model_entry(cache):
    (entry,) = cache.glob("model-*.json")
    return entry, json.loads(entry.read_text())


def _check(model, compiled):
    for scale in (0.1, 1.0, 5.0):
        x = torch.randn(3, 8) * scale
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_a_payload_in_a_cache_entry_is_recompiled_not_run(tmp_path):
    """Even with its checksum recomputed (a checksum is no signature), the entry's manifest is
    parsed: the payload is a malformed shape expression, the entry is compiled again."""
    torch.manual_seed(0)
    model = EarlyExit().eval()
    cache = tmp_path / "cache"
    assert _compile(model, cache).report.cache == "miss"
    entry, record = _model_entry(cache)
    marker = tmp_path / "PWNED"
    record["metadata"]["manifest"]["signature"]["inputs"][0]["shape"][0] = _payload(marker)
    record["sha256"] = _record_digest(record)
    entry.write_text(json.dumps(record))
    messages = []
    again = _compile(model, cache, progress=messages.append)
    assert again.report.cache == "hit"  # IREE's output for the same IR is still good
    assert any("malformed shape expression" in m and "compiling again" in m for m in messages)
    assert any("malformed shape expression" in n for n in again.report.notes)
    assert not marker.exists()
    _check(model, again)
    assert _compile(model, cache).report.cache == "hit (model)"  # the entry was overwritten


def test_a_tampered_cache_entry_is_recompiled(tmp_path):
    """An edited manifest (the input's dtype) that would make every later compile fail: its
    checksum no longer matches, so it is a miss, compiled again and overwritten."""
    torch.manual_seed(0)
    model = EarlyExit().eval()
    cache = tmp_path / "cache"
    _compile(model, cache)
    entry, record = _model_entry(cache)
    record["metadata"]["manifest"]["signature"]["inputs"][0]["dtype"] = "int64"
    entry.write_text(json.dumps(record))
    messages = []
    again = _compile(model, cache, progress=messages.append)
    assert any("record does not match its checksum" in m for m in messages)
    _check(model, again)
    assert _compile(model, cache).report.cache == "hit (model)"


def test_an_entry_from_another_version_is_recompiled(tmp_path):
    torch.manual_seed(0)
    model = EarlyExit().eval()
    cache = tmp_path / "cache"
    _compile(model, cache)
    for entry in cache.glob("*.json"):
        record = json.loads(entry.read_text())
        record["dync"] = "0.0.1"
        record["sha256"] = _record_digest(record)
        entry.write_text(json.dumps(record))
    messages = []
    again = _compile(model, cache, progress=messages.append)
    assert again.report.cache == "rebuilt (the entry was from another version: dync '0.0.1' " \
        f"-> {dync.__version__!r})"
    assert sum("from another version" in m for m in messages) == 2  # model and module entries
    _check(model, again)


def test_the_cache_directory_is_private(tmp_path):
    torch.manual_seed(0)
    cache = tmp_path / "shared" / "cache"
    _compile(EarlyExit().eval(), cache)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) & 0o077 == 0 for f in cache.iterdir())


def test_a_saved_module_runs_without_torch_or_the_compiler(loop_model, saved, tmp_path):
    """A deployment machine with iree-base-runtime and numpy: `import dync`, `dync.load` and
    the call work with torch and iree.compiler unimportable, and a tuple output stays one."""
    x = cond_inputs(3, True)
    np.save(tmp_path / "x.npy", x.numpy())
    script = (
        "import sys; sys.modules['torch'] = None; sys.modules['iree.compiler'] = None\n"
        "import numpy as np, dync\n"
        f"h, steps = dync.load({str(saved)!r})(np.load({str(tmp_path / 'x.npy')!r}))\n"
        f"np.save({str(tmp_path / 'h.npy')!r}, h); np.save({str(tmp_path / 's.npy')!r}, steps)\n"
        "print(sorted(m for m, v in sys.modules.items()\n"
        "             if v is not None and m.startswith(('torch', 'iree.compiler'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
    h, steps = loop_model(x)
    np.testing.assert_allclose(np.load(tmp_path / "h.npy"), h.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    assert int(np.load(tmp_path / "s.npy")) == int(steps)


def test_a_payload_as_an_onnx_dim_param_is_a_name(tmp_path):
    """A `dim_param` is a name: made an identifier, never parsed as an expression."""
    from onnx_models import if_model

    marker = tmp_path / "PWNED"
    compiled = dync.compile(if_model(dim_param=_payload(marker)))
    (name,) = compiled.signature.symbols
    assert name.isidentifier()
    saved = compiled.save(tmp_path / "m.vmfb")
    x = np.ones((3, 8), np.float32)
    np.testing.assert_allclose(dync.load(saved)(x)[0], compiled(x)[0])
    assert not marker.exists()


def test_saving_a_loaded_module_copies_no_file_its_manifest_names(saved, tmp_path):
    """A manifest's transform-spec flag is copied beside a saved module, but only a spec: a
    foreign manifest naming another file does not get it copied."""
    secret = tmp_path / "secret.txt"
    secret.write_text("key")
    manifest_path = saved.with_name("loop.manifest.json")
    manifest = json.loads(manifest_path.read_text())
    manifest["flags"].append(f"--iree-preprocessing-transform-spec-filename={secret}")
    manifest_path.write_text(json.dumps(manifest))
    again = dync.load(saved).save(tmp_path / "out" / "again.vmfb")
    assert sorted(p.name for p in again.parent.iterdir()) == ["again.manifest.json", "again.vmfb"]
