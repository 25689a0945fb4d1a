"""The benchmark suite's models, run eagerly: interface, finite outputs, hashable decisions, and
that the inputs of every model take all of its paths. Independent of the compiler."""

import functools
import re
import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import models  # noqa: E402

GATED = ("skipnet_rnn", "skipnet_ff", "blockdrop", "convnet_aig")
EXITS = {"shallow_deep": 4, "ranet": 3, "early_exit_bert": 4}  # number of exits, final included
DECODERS = ("captioner", "nmt_decoder")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Small models: intra-op threads only add contention (and are slow on a busy machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@functools.cache
def run(name):
    """Build `name` and run it eagerly on `inputs(100)`: (module, model, example, dynamic_shapes,
    inputs, outputs, paths)."""
    module = models.load(name)
    model, example, dynamic_shapes = module.build()
    args = module.inputs(100)
    with torch.no_grad():
        outputs = [model(*a) for a in args]
        paths = [module.path(model, *a) for a in args]
    return module, model, example, dynamic_shapes, args, outputs, paths


def test_suite_lists_every_module():
    files = {p.stem for p in Path(models.__file__).parent.glob("*.py")}
    assert set(models.SUITE) == {f for f in files if not f.startswith("_")}
    assert len(models.SUITE) == len(set(models.SUITE))
    with pytest.raises(KeyError, match="unknown benchmark model"):
        models.load("nope")


def test_no_compiler_import():
    for file in Path(models.__file__).parent.glob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+dync\b", file.read_text(), re.M), file


def _dims(spec):
    if spec is None:
        return {}
    assert isinstance(spec, dict)
    return spec


@pytest.mark.parametrize("name", models.SUITE)
def test_interface(name):
    module, model, example, dynamic_shapes, args, _, _ = run(name)
    assert module.NAME == name
    assert isinstance(module.DESCRIPTION, str) and "\n" not in module.DESCRIPTION
    assert isinstance(model, torch.nn.Module) and not model.training
    assert isinstance(example, tuple) and all(isinstance(t, torch.Tensor) for t in example)
    assert len(args) == 100 and all(isinstance(a, tuple) and len(a) == len(example) for a in args)
    assert sum(p.numel() for p in model.parameters()) < 500_000
    if dynamic_shapes is None:
        return
    assert isinstance(dynamic_shapes, tuple) and len(dynamic_shapes) == len(example)
    for i, (tensor, spec) in enumerate(zip(example, dynamic_shapes, strict=True)):
        for axis, dim in _dims(spec).items():
            assert isinstance(dim, Dim) or type(dim).__name__ == "_DerivedDim", dim
            size = tensor.shape[axis]
            assert size >= 2 and dim.min <= size <= dim.max, (name, axis, size)
            for a in args:  # every input fits the declared range
                t = a[i]
                assert dim.min <= t.shape[axis] <= dim.max, (name, axis, t.shape)
        static = set(range(tensor.dim())) - set(_dims(spec))
        for a in args:  # the dims not declared dynamic keep the example's size
            t = a[i]
            assert all(t.shape[d] == tensor.shape[d] for d in static), (name, t.shape)


@pytest.mark.parametrize("name", models.SUITE)
def test_outputs_finite_and_decisions_hashable(name):
    module, model, example, _, _, outputs, _ = run(name)
    with torch.no_grad():
        outputs = [*outputs, model(*example)]
    for out in outputs:
        assert isinstance(out, torch.Tensor)
        assert not out.is_floating_point() or torch.isfinite(out).all()
        hash(module.decision(out))
    assert len({module.decision(out) for out in outputs}) > 1, "every input decides the same"


@pytest.mark.parametrize("name", models.SUITE)
def test_path_is_deterministic(name):
    module, model, _, _, args, outputs, paths = run(name)
    with torch.no_grad():
        for a, out, p in list(zip(args, outputs, paths, strict=True))[:5]:
            assert module.path(model, *a) == p
            assert torch.equal(model(*a), out)
    assert all(isinstance(p, tuple) for p in paths)
    hash(tuple(paths))


@pytest.mark.parametrize("name", GATED)
def test_gates_go_both_ways(name):
    paths = run(name)[-1]
    assert len({len(p) for p in paths}) == 1
    for gate in range(len(paths[0])):
        assert {p[gate] for p in paths} == {False, True}, f"gate {gate} of {name} never flips"


@pytest.mark.parametrize("name", EXITS)
def test_every_exit_taken(name):
    paths = run(name)[-1]
    for p in paths:  # all tests fail up to the one that returned
        assert not any(p[:-1])
    taken = {p.index(True) if True in p else len(p) for p in paths}
    assert taken == set(range(EXITS[name]))


@pytest.mark.parametrize("name", DECODERS)
def test_decoders_stop_early_and_at_max_length(name):
    module, model, _, _, args, outputs, paths = run(name)
    stop = module.END if name == "captioner" else module.EOS
    early = at_max = 0
    for a, out, p in zip(args, outputs, paths, strict=True):
        assert out.dtype == torch.int64 and out.dim() == 1 and len(out) == len(p)
        assert not any(p[:-1])
        if p[-1]:
            early += 1
            assert out[-1] == stop
        else:
            at_max += 1
            if name == "captioner":
                assert len(out) == module.MAX_LEN
            else:
                assert len(out) == model.max_len_a * a[0].size(1) + model.max_len_b
    assert early >= 10 and at_max >= 10
    assert len({len(p) for p in paths}) >= 5


def test_moe_experts_used_and_empty():
    paths = run("moe")[-1]
    for e in range(len(paths[0])):
        assert {p[e] for p in paths} == {False, True}, f"expert {e} always or never used"
    assert sum(not all(p) for p in paths) >= 10


def test_tree_lstm_shapes():
    module, _, _, _, args, _, paths = run("tree_lstm")
    assert len(set(paths)) >= 50
    for (parent, x), p in zip(args, paths, strict=True):
        assert len(p) == len(parent) == len(x) and sum(p) == len(parent) - 1
    assert any(max(p) == 1 for p in paths)  # a chain
    assert any(p[0] == len(p) - 1 and len(p) > 3 for p in paths)  # a star


def test_yolo_no_box_and_several_boxes():
    _, _, _, _, args, outputs, paths = run("yolo_nms")
    counts = [len(out) for out in outputs]
    assert any(c == 0 for c in counts) and sum(c >= 3 for c in counts) >= 10
    assert len({a[0].shape[2:] for a in args}) >= 20
    for out, p in zip(outputs, paths, strict=True):
        assert out.shape[1:] == (6,)
        assert (p == (True,)) == (len(out) == 0)
    assert any(len(p) > 1 and p[1] for p in paths)  # more candidates than max_nms


def test_static_resnet_has_one_path():
    _, _, _, _, args, outputs, paths = run("resnet_static")
    assert len(set(paths)) == 1
    assert len({a[0].shape[0] for a in args}) > 1


def test_paths_vary():
    for name in models.SUITE:
        if name != "resnet_static":
            assert len(set(run(name)[-1])) >= 3, name
