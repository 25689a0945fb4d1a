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

def eager_peak_intermediates(model, args) -> int:
    """Peak bytes of live intermediate tensors during `model(*args)` under `torch.no_grad()`."""
    import torch
    from torch.utils import _pytree as pytree
    from torch.utils._python_dispatch import TorchDispatchMode

    args = tuple(args) if isinstance(args, tuple | list) else (args,)
    owned = {_storage_key(t) for t in pytree.tree_leaves(args) if isinstance(t, torch.Tensor)}
    owned |= {_storage_key(t) for t in model.parameters()}
    owned |= {_storage_key(t) for t in model.buffers()}

    class Live(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.sizes: dict[int, int] = {}
            self.current = 0
            self.peak = 0

        def _free(self, key: int) -> None:
            self.current -= self.sizes.pop(key, 0)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in pytree.tree_leaves(out):
                if isinstance(t, torch.Tensor) and t.device.type != "meta":
                    self._track(t)
            self.peak = max(self.peak, self.current)
            return out

        def _track(self, t) -> None:
            storage = t.untyped_storage()
            key, nbytes = _storage_key(t), storage.nbytes()
            if key in owned or nbytes == 0:
                return
            if key in self.sizes:  # resized in place (out= ops, index_add_ into a buffer)
                grow = max(0, nbytes - self.sizes[key])
                self.sizes[key] += grow
                self.current += grow
                return
            self.sizes[key] = nbytes
            self.current += nbytes
            weakref.finalize(storage, self._free, key)

    mode = Live()
    with torch.no_grad(), mode:
        result = model(*args)
        peak = mode.peak
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

    if getattr(compiled.manifest, "subdnns", None):
        raise NotImplementedError("host-mode modules are driven by Python; measure their "
                                  "sub-DNNs one by one")
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
    was live before it (the arguments, and what initialization kept)."""
    return measure_dync(compiled, args).peak


def predicted_peak(peak, compiled, args, missing: str = "error") -> int:
    """The `dync-plan-buffers` prediction (`plan_buffers.Peak`) for these arguments."""
    from dync.passes.plan_buffers import symbol_values

    return peak.evaluate(symbol_values(compiled.signature, args), missing=missing)


def _numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        return value.detach().cpu().contiguous().numpy()
    return np.ascontiguousarray(value)
