"""Peak intermediate memory: eager PyTorch against a dync module, measured, and dync's predicted
peak (`dync-plan-buffers`).

What is counted, in all three, is SoD²'s *intermediate memory*: the bytes of tensors created
during one forward call that are alive at the same time, the call's results included, its
arguments and the model's weights excluded.

* `eager_peak_intermediates`: a `TorchDispatchMode` sees every tensor an aten op returns
  (composite ops are seen decomposed, so their inner temporaries count too). Each new storage
  (not one of the arguments', parameters' or buffers') adds its bytes when it first appears; a
  `weakref.finalize` on the storage takes them off when PyTorch frees it, which for eager
  execution is the moment the last tensor using it dies. The peak is taken after every op.
  Exact for tensors; scratch memory an op's kernel allocates and frees inside itself (a
  convolution's im2col buffer) is not a tensor and is not counted.
* `dync_peak`: IREE's own allocator statistics (`HalAllocator.statistics`,
  ``device_bytes_peak``) around one call of the compiled module. The statistics are a
  high-water mark shared by every device of the process's local driver, so each measurement
  runs in a fresh Python process: it loads the module, puts the arguments on the device
  first, notes the bytes then live (arguments and anything module initialization kept:
  hoisted constants), calls the entry function once and reports the peak above that. What
  remains is what the call allocated: every transient buffer and the results (IREE allocates
  an execution region's results when it launches the region). Constants embedded in the
  module are mapped from the `.vmfb` and never counted.
* `host_peak_intermediates`: a host-mode module runs the model's Python, in this process: its
  tensors are tracked as eager's are, and each sub-DNN call adds its own peak in IREE's
  allocator and the host copies it made (an argument padded to a size bucket).
* predicted: the ``dync.peak`` formula of `dync-plan-buffers` evaluated at the call's symbols
  (`predicted_peak`); it counts the same thing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# --- eager PyTorch -------------------------------------------------------------------------

class LiveTensors:
    """Bytes of intermediate storages alive, and their peak, while `mode()` is entered: every
    storage an aten op creates (not one of `owned`'s) counts from its first appearance until
    PyTorch frees it. Memory made outside aten (a sub-DNN's results) is added with `add`."""

    def __init__(self, owned: set[int]):
        self.owned = owned
        self.sizes: dict[int, int] = {}
        self.current = 0
        self.peak = 0

    def mode(self):
        import torch
        from torch.utils import _pytree as pytree
        from torch.utils._python_dispatch import TorchDispatchMode

        live = self

        class Live(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                for t in pytree.tree_leaves(out):
                    if isinstance(t, torch.Tensor) and t.device.type != "meta":
                        storage = t.untyped_storage()
                        live.add(_storage_key(t), storage.nbytes(), storage)
                live.peak = max(live.peak, live.current)
                return out

        return Live()

    def add(self, key: int, nbytes: int, owner: Any) -> None:
        """`nbytes` at address `key`, freed when `owner` is (a storage, a numpy array)."""
        if key in self.owned or nbytes == 0:
            return
        if key in self.sizes:  # resized in place (out= ops, index_add_ into a buffer)
            grow = max(0, nbytes - self.sizes[key])
            self.sizes[key] += grow
            self.current += grow
            return
        self.sizes[key] = nbytes
        self.current += nbytes
        weakref.finalize(owner, self._free, key)
        self.peak = max(self.peak, self.current)

    def _free(self, key: int) -> None:
        self.current -= self.sizes.pop(key, 0)


def _owned(model, args) -> set[int]:
    """The storages of `args` and of the model's parameters and buffers."""
    import torch
    from torch.utils import _pytree as pytree

    tensors = [t for t in pytree.tree_leaves(tuple(args)) if isinstance(t, torch.Tensor)]
    return {_storage_key(t) for t in [*tensors, *model.parameters(), *model.buffers()]}


def eager_peak_intermediates(model, args) -> int:
    """Peak bytes of live intermediate tensors during `model(*args)` under `torch.no_grad()`."""
    import torch

    args = tuple(args) if isinstance(args, tuple | list) else (args,)
    live = LiveTensors(_owned(model, args))
    with torch.no_grad(), live.mode():
        result = model(*args)
        peak = live.peak
    del result
    return peak


def _storage_key(t) -> int:
    return t.untyped_storage().data_ptr()


# --- dync / IREE ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    """One call of a compiled module, in bytes: `peak` allocated above what was live before
    the call (`before`: the arguments, `arguments`, plus what initialization kept), the
    results' bytes (`results`), and the function of the module that ran (`function`)."""

    peak: int
    before: int
    arguments: int
    results: int
    function: str = ""


_CHILD = r"""
import json, sys
import numpy as np
import iree.runtime as rt
spec = json.loads(sys.argv[1])
device = rt.get_driver(spec["driver"]).create_default_device()
config = rt.Config(device=device)
vm = rt.load_vm_module(rt.VmModule.copy_buffer(config.vm_instance,
                                               open(spec["vmfb"], "rb").read()), config)
args = [rt.asdevicearray(device, np.load(p)) for p in spec["args"]]
fn = getattr(vm, spec["function"])
before = device.allocator.statistics
live = before["device_bytes_allocated"] - before["device_bytes_freed"]
out = fn(*args)
after = device.allocator.statistics
outs = out if isinstance(out, (tuple, list)) else [out]
results = sum(int(np.asarray(o.to_host() if hasattr(o, "to_host") else o).nbytes) for o in outs)
print(json.dumps({"peak_before": before["device_bytes_peak"], "peak": after["device_bytes_peak"],
                  "live": live, "results": results}))
"""


def measure_dync(compiled, args, function: str | None = None) -> Measured:
    """IREE's allocator statistics around one call of `compiled` (a `dync.CompiledModule`)
    on `args` (torch tensors or numpy arrays), in a fresh process. The call runs the function
    `compiled(*args)` would run: a shape-specialized version or size bucket when one matches
    (with the bucket's padded arguments), else the entry function; or `function`, to compare
    the entry with a version on the same arguments."""
    from torch.utils import _pytree as pytree

    if _host_mode(compiled):
        raise NotImplementedError("host-mode modules are driven by Python: measure them with "
                                  "host_peak_intermediates")
    arrays = [_numpy(a) for a in pytree.tree_leaves(tuple(args))]
    choice = compiled.versions.choose(compiled.signature.check_inputs(arrays))
    if function is None:
        arrays, function = choice.arguments(arrays), choice.function
    with tempfile.TemporaryDirectory(prefix="dync-memory-") as tmp:
        vmfb = Path(tmp, "m.vmfb")
        vmfb.write_bytes(compiled.vmfb)
        paths = []
        for i, a in enumerate(arrays):
            paths.append(str(Path(tmp, f"arg{i}.npy")))
            np.save(paths[-1], a)
        spec = {"driver": compiled.manifest.driver, "vmfb": str(vmfb), "args": paths,
                "function": function}
        import iree.runtime  # the child imports iree.runtime from where this process does

        env = dict(os.environ, PYTHONPATH=str(Path(iree.runtime.__file__).parents[2]))
        done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec)],
                              capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"measuring the module failed:\n{done.stderr[-2000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    if data["peak"] <= data["peak_before"] and data["peak_before"] > data["live"]:
        raise RuntimeError("module initialization peaked above the call: the call's peak is "
                           "hidden by the allocator's high-water mark")
    return Measured(peak=data["peak"] - data["live"], before=data["live"],
                    arguments=sum(int(a.nbytes) for a in arrays), results=data["results"],
                    function=function)


def dync_peak(compiled, args) -> int:
    """Peak bytes IREE's allocator holds during one call of `compiled` on `args`, above what
    was live before it (the arguments, and what initialization kept); for a host-mode
    module, `host_peak_intermediates`."""
    if _host_mode(compiled):
        return host_peak_intermediates(compiled, args)
    return measure_dync(compiled, args).peak


def host_peak_intermediates(compiled, args) -> int:
    """Peak intermediate bytes during one call of a host-mode module (`dync.HostModule`),
    counted as `eager_peak_intermediates` counts the model's: the model's Python runs on the
    host, and what its aten ops create is tracked the same way. During each sub-DNN call
    the bytes alive are those tensors, plus the host copies the call made (an argument padded
    to a bucket or made contiguous, the results copied out of IREE's buffers), plus
    the most IREE's allocator held above what it held before the call (argument buffers not
    imported, transients, results: `_PeakOfCall`). The results then count as tensors until
    the model's Python drops them."""
    import torch

    if not _host_mode(compiled):
        raise ValueError("not a host-mode module: measure it with measure_dync")
    args = tuple(args) if isinstance(args, tuple | list) else (args,)
    live = LiveTensors(_owned(compiled.model, args))
    function = compiled._function

    def measured(name: str | None = None):
        return _PeakOfCall(function(name), live)

    compiled._function = measured  # the sub-DNN calls of this one run, and no other
    try:
        with torch.no_grad(), live.mode():
            result = compiled(*args)
            peak = live.peak
    finally:
        del compiled._function
    del result
    return peak


class _PeakOfCall:
    """One sub-DNN call of `host_peak_intermediates`. IREE's statistics keep only a
    high-water mark for the process, which an earlier call may have set higher than this one
    reaches; so before the call a filler buffer raises the bytes IREE holds to that mark, and
    the mark's rise during the call is the call's own peak."""

    def __init__(self, function, live: LiveTensors):
        self.function, self.live = function, live

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        import iree.runtime as rt

        allocator = self.function.device.allocator
        before = allocator.statistics
        held = before["device_bytes_allocated"] - before["device_bytes_freed"]
        filler = None
        if before["device_bytes_peak"] > held:
            filler = allocator.allocate_buffer(
                memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
                allocation_size=before["device_bytes_peak"] - held)
        results = self.function(arrays)
        in_call = allocator.statistics["device_bytes_peak"] - before["device_bytes_peak"]
        del filler
        # Host copies: of arguments (padded to a bucket, made contiguous) and of results.
        copies = sum(a.nbytes for a in (*arrays, *results) if _owns_memory(a))
        live = self.live
        live.peak = max(live.peak, live.current + copies + in_call)
        for r in results:
            live.add(r.ctypes.data, r.nbytes, r)
        return results


def _host_mode(compiled) -> bool:
    """Whether `compiled` is a host-mode module (its manifest lists sub-DNN entry points)."""
    return bool(getattr(compiled.manifest, "subdnns", None))


def _owns_memory(array: np.ndarray) -> bool:
    """Whether `array`'s memory is numpy's own (a copy), not a torch tensor's."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.base is None


def predicted_peak(peak, compiled, args, missing: str = "error") -> int:
    """The `dync-plan-buffers` prediction (`plan_buffers.Peak`) for these arguments."""
    from dync.passes.plan_buffers import symbol_values

    return peak.evaluate(symbol_values(compiled.signature, args), missing=missing)


def _numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        return value.detach().cpu().contiguous().numpy()
    return np.asarray(value, order="C")
