"""One compiled module, many threads: graph- and host-mode modules give every thread the
right answer, a thread running the model eagerly meanwhile runs it unchanged, and the model is
left as it was between calls, also after an exception."""

import os
import platform
import subprocess
import sys
import threading

import pytest
import rewrite_models as rm
import torch
from models import cond_inputs
from torch.export import Dim

import dync

THREADS, CALLS = 8, 200


def _hammer(call, cases, threads=THREADS, calls=CALLS, eager=None):
    """Run `call` from `threads` threads, `calls` times each over `cases` [(args, expected)];
    with `eager`, as many more threads run it on the same cases. Returns (errors, wrong)."""
    errors, wrong = [], []
    start = threading.Barrier(threads * (2 if eager else 1))

    def work(fn, offset):
        start.wait()
        for i in range(calls):
            args, expected = cases[(offset + i) % len(cases)]
            try:
                got = fn(*args)
            except Exception as e:  # noqa: BLE001 - every failure is counted
                errors.append(repr(e))
                continue
            if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
                wrong.append(i)

    workers = [threading.Thread(target=work, args=(call, t)) for t in range(threads)]
    if eager:
        workers += [threading.Thread(target=work, args=(eager, t)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return errors, wrong


@pytest.fixture(scope="module")
def host_compiled():
    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    compiled = dync.compile(model, (torch.randn(2, 8),),
                            dynamic_shapes=({0: Dim("batch", min=1, max=16)},), mode="host",
                            eager_if_faster=False)  # tiny sub-DNNs stay compiled
    assert isinstance(compiled, dync.HostModule)
    return model, compiled


def _cases(model, seed=0):
    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(16):
        x = torch.randn(1 + i % 7, 8, generator=gen) * (0.1 if i % 2 else 4.0)
        with torch.no_grad():
            cases.append(((x,), model(x)))
    return cases


def _instance_attributes(model):
    return {name: set(vars(m)) for name, m in model.named_modules()}


def test_a_host_mode_module_serves_many_threads(host_compiled):
    model, compiled = host_compiled
    before = _instance_attributes(model)
    errors, wrong = _hammer(compiled, _cases(model), eager=model)
    assert errors == [] and wrong == []
    assert _instance_attributes(model) == before
    # Every compiled call ran its sub-DNNs (the eager threads never reached them).
    assert sum(s["compiled"] for s in compiled.stats.values()) >= THREADS * CALLS


def test_two_host_modules_over_one_model_at_once(host_compiled):
    model, compiled = host_compiled
    other = dync.compile(model, (torch.randn(2, 8),),
                         dynamic_shapes=({0: Dim("batch", min=1, max=16)},), mode="host",
                         cache=False)
    cases = _cases(model, seed=1)
    errors, wrong = _hammer(compiled, cases, threads=4, calls=50, eager=other)
    assert errors == [] and wrong == []


class Fails(torch.nn.Module):
    """A host-mode model whose Python raises for some inputs, between two sub-DNN calls."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.a(x)
        if int(y.abs().sum() > 1000):
            raise ValueError("too large")
        return self.b(y)


def test_the_model_is_left_as_it_was_after_an_exception():
    torch.manual_seed(0)
    model = Fails().eval()
    model.b.forward = model.b.forward  # an instance attribute of the user's own: kept
    own = model.b.forward
    compiled = dync.compile(model, (torch.randn(2, 8),), mode="host")
    before = _instance_attributes(model)
    with pytest.raises(ValueError, match="too large"):
        compiled(torch.full((2, 8), 1e4))
    assert _instance_attributes(model) == before and model.b.forward is own
    x = torch.randn(2, 8)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_a_graph_mode_module_serves_many_threads(cond_model, cond_compiled):
    cases = []
    for i in range(16):
        x = cond_inputs(1 + i % 9, positive=bool(i % 2))
        with torch.no_grad():
            cases.append(((x,), cond_model(x)))
    errors, wrong = _hammer(cond_compiled, cases)
    assert errors == [] and wrong == []


def test_a_module_compiled_for_two_threads_runs_on_local_task(tmp_path):
    """`threads=2`: IREE's local-task device and code distributed for two threads, recorded
    in the manifest; every exit of a data-dependent early exit right, also after loading."""
    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    compiled = dync.compile(model, (torch.randn(2, 8),),
                            dynamic_shapes=({0: Dim("b", min=1, max=16)},), threads=2,
                            cache=False)
    assert compiled.manifest.driver == "local-task"
    assert "--iree-llvmcpu-number-of-threads=2" in compiled.report.flags
    assert "--iree-llvmcpu-number-of-threads=1" not in compiled.report.flags
    inputs = [torch.randn(b, 8) * s for b in (1, 5) for s in (0.1, 3.0, -3.0)]
    loaded = dync.load(compiled.save(tmp_path / "m.vmfb"))
    assert loaded.manifest.driver == "local-task"
    for x in inputs:
        with torch.no_grad():
            want = model(x)
        torch.testing.assert_close(compiled(x), want, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(loaded(x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [0, -1, 2.5, True, "2"])
def test_threads_must_be_a_positive_int(threads):
    with pytest.raises(dync.OptionError, match="threads must be an int"):
        dync.compile(rm.EarlyExit().eval(), (torch.randn(2, 8),), threads=threads)


def test_threads_are_for_cpu_modules():
    with pytest.raises(dync.OptionError, match="only llvm-cpu modules"):
        dync.compile(rm.EarlyExit().eval(), (torch.randn(2, 8),), backend="cuda", threads=2)


_HEAP_CHECK = """
import sys
import numpy as np
import dync

def in_heap(array):
    address = array.ctypes.data
    for line in open("/proc/self/maps"):
        span, *rest = line.split()
        low, high = (int(x, 16) for x in span.split("-"))
        if low <= address < high:
            return rest[-1] == "[heap]"
    return False

before = in_heap(np.ones(80 << 20, np.uint8))
module = dync.load(sys.argv[1])
module(np.ones((3, 8), np.float32))
print(before, in_heap(np.ones(80 << 20, np.uint8)))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc is tuned for local-task modules; this is not glibc")
def test_a_local_task_module_keeps_large_blocks_in_the_heap(tmp_path):
    """Loading a `threads=2` module makes glibc serve large blocks from the heap (IREE's
    local-task device frees a call's transients at its end; an mmap'd block would be mapped
    and faulted in again at every call: dync.runtime.malloc); DYNC_KEEP_MALLOC=1 leaves
    malloc as it is. In a process of its own: the setting is process-wide."""
    model = rm.EarlyExit().eval()
    compiled = dync.compile(model, (torch.randn(2, 8),),
                            dynamic_shapes=({0: Dim("b", min=1, max=16)},), threads=2)
    path = compiled.save(tmp_path / "m.vmfb")
    script = tmp_path / "heap.py"
    script.write_text(_HEAP_CHECK)

    def run(**env):
        done = subprocess.run([sys.executable, str(script), str(path)], capture_output=True,
                              text=True, env={**os.environ, **env}, check=True)
        return done.stdout.split()

    assert run() == ["False", "True"]
    assert run(DYNC_KEEP_MALLOC="1") == ["False", "False"]
