"""`HostModule`: a host-mode model — its own Python on the host, with the calls that were
captured (see `dync.frontends.pytorch.host`) running as sub-DNN entry points of one `.vmfb`.

Any number of threads may call one HostModule (or several over the same model) at once, and
the model is left as it was between calls, also after an exception. While at least one call
is in flight, each captured call target (`submodule.forward`, a method) is shadowed by an
instance attribute, a `_Dispatch` installed once per target and counted; it routes a call to
a sub-DNN only in the thread (context) of a HostModule call that asked for it, through a
`ContextVar`, and to the original method everywhere else — a thread running the model
eagerly meanwhile runs it unchanged. The last call out removes the attribute (or restores
one the model had).
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import inspect
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import DyncError, InputError
from ..keywords import Keywords
from ..signature import Signature
from .invoke import array_from_torch, torch_from_array
from .manifest import Manifest
from .module import (
    CompiledModule,
    _converting,
    _fast_key,
    _tensor_array,
    _to_numpy,
    remember_fast,
)
from .versions import Versions

Target = tuple[int, str]  # (id of the submodule, attribute)

# The routes of the HostModule calls this context is inside: target -> sub-DNN call.
_ROUTES: contextvars.ContextVar[dict[Target, Callable] | None] = contextvars.ContextVar(
    "dync_host_routes", default=None)
_INSTALL_LOCK = threading.Lock()
_MISSING = object()


class _Dispatch:
    """The instance attribute shadowing one call target while calls are in flight."""

    def __init__(self, module: Any, attribute: str, original: Callable, saved: Any):
        self.key: Target = (id(module), attribute)
        self.original = original
        self.saved = saved  # the instance attribute it replaced, or _MISSING
        self.users = 0

    def __call__(self, *args, **kwargs):
        routes = _ROUTES.get()
        route = routes.get(self.key) if routes else None
        return (route or self.original)(*args, **kwargs)


# id(submodule), attribute -> its installed dispatch.
_INSTALLED: dict[Target, _Dispatch] = {}


def _own_or_class(module: Any, attribute: str, own: Any) -> Callable:
    """`own` (the model's instance attribute), else the class's method bound to `module`."""
    return getattr(type(module), attribute).__get__(module) if own is _MISSING else own


def _unpatched(module: Any, attribute: str) -> Callable:
    """`module.attribute` as the model has it between calls: an instance attribute of its
    own, else its class's method (never a dispatch)."""
    with _INSTALL_LOCK:
        dispatch = _INSTALLED.get((id(module), attribute))
        own = vars(module).get(attribute, _MISSING) if dispatch is None else dispatch.saved
    return _own_or_class(module, attribute, own)


@contextlib.contextmanager
def routed(targets: dict[Target, tuple[Any, str, Callable]]) -> Iterator[None]:
    """Within the block, in this context, each (submodule, attribute) of `targets` calls its
    sub-DNN call; the dispatches are installed for it and removed after the last user."""
    with _INSTALL_LOCK:
        for key, (module, attribute, _) in targets.items():
            dispatch = _INSTALLED.get(key)
            if dispatch is None:
                saved = vars(module).get(attribute, _MISSING)
                dispatch = _Dispatch(module, attribute, _own_or_class(module, attribute, saved),
                                     saved)
                setattr(module, attribute, dispatch)
                _INSTALLED[key] = dispatch
            dispatch.users += 1
    outer = _ROUTES.get() or {}
    token = _ROUTES.set({**outer, **{k: call for k, (_, _, call) in targets.items()}})
    try:
        yield
    finally:
        _ROUTES.reset(token)
        with _INSTALL_LOCK:
            for key, (module, attribute, _) in targets.items():
                dispatch = _INSTALLED[key]
                dispatch.users -= 1
                if dispatch.users == 0:
                    del _INSTALLED[key]
                    if dispatch.saved is _MISSING:
                        delattr(module, attribute)
                    else:
                        setattr(module, attribute, dispatch.saved)


def _shape_carrier(value: Any, torch) -> Any:
    """What `Signature.check_inputs` reads of an argument the model itself will take: a
    tensor's shape and dtype as they are (no conversion); anything else as graph mode takes
    it (an error for what is no tensor or array)."""
    if isinstance(value, torch.Tensor) and not value.is_meta:
        return value
    return _to_numpy(value)


def with_numpy_arrays(call: Callable[..., Any], args: tuple) -> Any:
    """`call(*args)` for a model that takes torch tensors, where `args` hold numpy arrays (as
    graph mode's modules take them): each as a torch tensor, and then the tensors of the
    results as numpy arrays (bfloat16 ones as ml_dtypes'). Other arguments pass as they are."""
    tensor = sys.modules["torch"].Tensor
    for a in args:  # no tree walk on the hot path (nor a generator: 0.4 µs a call)
        if not isinstance(a, tensor):
            break
    else:
        return call(*args)
    torch = sys.modules["torch"]
    import numpy as np
    from torch.utils._pytree import tree_leaves, tree_map

    if not any(isinstance(a, np.ndarray) for a in tree_leaves(args)):
        return call(*args)
    tensors = tree_map(lambda a: torch_from_array(a) if isinstance(a, np.ndarray) else a, args)
    return tree_map(lambda o: array_from_torch(o) if isinstance(o, torch.Tensor) else o,
                    call(*tensors))


class HostModule(CompiledModule):
    """`compiled(*args)` runs `model.forward` with each captured call replaced by its
    sub-DNN; a call whose arguments are outside its sub-DNN's signature runs the original
    Python instead. `stats` counts both per sub-DNN. Takes and returns torch tensors, or numpy
    arrays as graph mode does.
    Thread-safe: see the module's docstring."""

    def __init__(self, model: Any, vmfb: bytes, manifest: Manifest):
        super().__init__(vmfb, manifest)
        self.model = model
        self._subdnns = []
        self._keywords: dict[str, Keywords] = {}
        for d in manifest.subdnns:
            signature = Signature.from_json(d["signature"])
            self._subdnns.append((d["name"], tuple(d["callable"]), signature,
                                  Versions(d["name"], d.get("versions", []), signature)))
            if "keywords" in d:
                self._keywords[d["name"]] = Keywords.from_json(d["keywords"])
        self.stats: dict[str, collections.Counter] = {
            name: collections.Counter() for name, *_ in self._subdnns
        }
        self._targets: dict[Target, tuple[Any, str, Callable]] | None = None
        self._subdnn_plans: dict[str, dict] = {name: {} for name, *_ in self._subdnns}
        self._targets_lock = threading.Lock()

    def __repr__(self) -> str:
        calls = ", ".join(".".join(p for p in key if p) for _, key, *_ in self._subdnns)
        return f"<dync.HostModule {len(self._subdnns)} sub-DNNs ({calls}) for {self.backend}/{self.target}>"

    def _call(self, *args: Any) -> Any:
        return with_numpy_arrays(self._call_model, args)

    def _call_model(self, *args: Any) -> Any:
        import torch

        if self.signature.inputs:  # the model's declared inputs, as graph mode checks them
            self.signature.check_inputs([_shape_carrier(a, torch) for a in args])
        # Each context costs microseconds a call (a small tree net's call is ~70 us in eager,
        # a model left to eager whole 7 us): none where nothing is routed (every sub-DNN runs
        # as Python), and grad turned off as `torch.no_grad` does, without its objects (1-2
        # us a call).
        routes = self._targets if self._targets is not None else self._routes()
        grad = torch.is_grad_enabled()
        if grad:
            torch._C._set_grad_enabled(False)
        try:
            if routes:
                with routed(routes):
                    return self.model(*args)
            return self.model(*args)
        finally:
            if grad:
                torch._C._set_grad_enabled(True)

    def _routes(self) -> dict[Target, tuple[Any, str, Callable]]:
        with self._targets_lock:
            if self._targets is None:
                targets = {}
                for name, (qual, attr), signature, versions in self._subdnns:
                    module = self.model.get_submodule(qual)
                    call = self._sub_dnn(name, signature, versions, _unpatched(module, attr))
                    targets[(id(module), attr)] = (module, attr, call)
                self._targets = targets
            return self._targets

    def save(self, path):
        if not self._subdnns:
            raise DyncError(
                "nothing was compiled: this model runs in eager PyTorch (every region fell "
                "back; `report.explain()` says why), so there is no module to save")
        return super().save(path)

    def subdnn_signature(self, name: str) -> Signature:
        """The signature of sub-DNN `name`'s compiled function."""
        return self._subdnn(name)[0]

    def call_subdnn(self, name: str, *args: Any) -> Any:
        """Sub-DNN `name` alone on `args` (torch tensors): what a captured call runs, without
        the model's Python. Raises `InputError` where the arguments are outside its signature."""
        signature, versions = self._subdnn(name)
        return self._run(name, signature, versions, [_to_numpy(a) for a in args])

    def _subdnn(self, name: str) -> tuple[Signature, Versions]:
        for sub, _, signature, versions in self._subdnns:
            if sub == name:
                return signature, versions
        raise DyncError(f"this module has no sub-DNN {name!r}")

    def _run(self, name: str, signature: Signature, versions: Versions, arrays: list,
             count: tuple[collections.Counter, str] | None = None) -> Any:
        plan = self._plan(self._subdnn_plans[name], signature, versions, arrays)
        return self._runner(plan, signature, True, count)(arrays)

    def _sub_dnn(self, name: str, signature: Signature, versions: Versions, original):
        import torch

        stats = self.stats[name]
        compiled = (stats, "compiled")
        keywords = self._keywords.get(name)
        parameters = inspect.signature(original) if keywords else None

        def is_tensor(value) -> bool:
            return isinstance(value, torch.Tensor)

        plans = self._subdnn_plans[name]
        # Tensors' (dtype, shape) -> the runner of calls on them, as `CompiledModule._fast`.
        fast: dict[tuple, Callable[[tuple], Any]] = {}

        def call(*args, **kwargs):
            if keywords is None:
                if not kwargs and (run := fast.get(_fast_key(args))) is not None:
                    return run(args)
                tensors = None if kwargs else args
            else:  # bound to its parameters as the captured calls were
                tensors = keywords.tensors_of(parameters, args, kwargs, is_tensor)
            if tensors is not None and all(is_tensor(a) for a in tensors):
                arrays = [_tensor_array(a) for a in tensors]
                try:
                    plan = self._plan(plans, signature, versions, arrays)
                except InputError:
                    pass
                else:
                    run = self._runner(plan, signature, True, compiled)
                    result = run(arrays)
                    if tensors is args:  # (after a call: it decides how results are read)
                        remember_fast(fast, args, self._direct_runner(plan, signature, arrays,
                                                                      compiled)
                                      or _converting(run, _tensor_array))
                    return result
            with self._lock:
                stats["python"] += 1
            return original(*args, **kwargs)

        return call
