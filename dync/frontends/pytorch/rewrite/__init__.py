"""Program rewriting (DyCL §5.2): make an unmodified `forward` with Python control flow on
tensor values exportable whole, on the live module instance.

`rewritten(model)` patches the `forward` of the model and of every submodule whose class
defines control flow in its `forward`, for the duration of a `with` block (an export), and
restores them after. The generated source of each is kept for the report and debugging.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from . import lifting
from .decisions import record_branches, replay_branches
from .helpers import Helpers
from .lists import BoundedListMode
from .numbers import NumberArithmetic
from .packed import packed_sequences
from .recurrent import looped_forward
from .transform import RewrittenFunction, needs_rewrite, rewrite_function
from .transformer import padding_zeroed_forward


@dataclass
class Rewrite:
    functions: dict[str, RewrittenFunction] = field(default_factory=dict)

    @property
    def sources(self) -> dict[str, str]:
        return {name: f.source for name, f in self.functions.items()}

    def source(self) -> str:
        return "\n\n".join(f"# {name}\n{src}" for name, src in self.sources.items())


def _user_class(module: torch.nn.Module) -> bool:
    return not type(module).__module__.startswith("torch.")


@contextlib.contextmanager
def rewritten(model: torch.nn.Module) -> Iterator[Rewrite]:
    """Patch the forwards, and the other methods of the model's own classes, that need
    rewriting (a helper called from `forward`, recursive or not, branches on data as often as
    `forward` does); yield what was rewritten; restore them."""
    result = Rewrite()
    cache: dict[tuple[type, str], RewrittenFunction] = {}
    helpers = Helpers(rewrite_function, needs_rewrite)
    patched: list[tuple[torch.nn.Module, str, object]] = []  # (module, name, what it had)

    def patch(owner: torch.nn.Module | type, name: str, value) -> None:
        patched.append((owner, name, vars(owner).get(name, _MISSING)))
        setattr(owner, name, value)

    # In-place activations (ReLU(inplace=True)) would mutate the operands of a branch; for
    # inference the out-of-place form is equivalent.
    inplace = [m for m in model.modules() if getattr(m, "inplace", False) is True]
    for module in inplace:
        module.inplace = False
    token = lifting.set_root_module(model)
    list_mode = BoundedListMode()
    list_mode.__enter__()
    arithmetic = NumberArithmetic()
    arithmetic.__enter__()
    packing = packed_sequences()
    packing.__enter__()
    try:
        for module in model.modules():
            cls = type(module)
            if "forward" not in vars(module):
                loop = looped_forward(module)
                if loop is not None:  # a recurrent layer: a loop when its sequence length is dynamic
                    patch(module, "forward", loop)
                    continue
                zeroing = padding_zeroed_forward(module)
                if zeroing is not None:  # eager's nested-tensor path, `transformer.py`
                    patch(module, "forward", zeroing)
            if not _user_class(module):
                continue
            methods = dict(_methods(cls))
            own = vars(module).get("forward")
            # `model.forward = model.early_exit`, as research code does for evaluation: the
            # method it names is what runs, and is rewritten as a forward would be.
            replaced = getattr(own, "__func__", None) if getattr(own, "__self__", None) is module else None
            for name, function in methods.items():
                if name in vars(module) and not (name == "forward" and replaced is not None):
                    continue  # set on the instance by the model itself
                if name == "forward" and replaced is not None:
                    function = replaced
                entry = module is model and name == "forward"
                key = (cls, name if function is methods.get(name) else function.__name__, entry)
                if key not in cache:
                    if not needs_rewrite(function, helpers):
                        continue
                    cache[key] = rewrite_function(function, owner=cls, entry=entry,
                                                  helpers=helpers)
                    result.functions[f"{cls.__qualname__}.{key[1]}"] = cache[key]
                patch(*_bound(cache[key].function, module, name))
        result.functions.update(helpers.rewritten)
        yield result
    finally:
        packing.__exit__(None, None, None)
        arithmetic.__exit__(None, None, None)
        list_mode.__exit__(None, None, None)
        lifting.reset_root_module(token)
        for module in inplace:
            module.inplace = True
        for module, name, previous in reversed(patched):
            if previous is _MISSING:
                delattr(module, name)
            else:
                setattr(module, name, previous)


_MISSING = object()


def _methods(cls: type) -> Iterator[tuple[str, object]]:
    """`forward` and the other methods `cls` defines or inherits from the model's own classes
    (not torch's), most derived first: plain, static and class methods, each as its function."""
    seen = set()
    for klass in cls.__mro__:
        if klass is object or klass.__module__.startswith("torch."):
            continue
        for name, value in vars(klass).items():
            function = value.__func__ if isinstance(value, staticmethod | classmethod) else value
            if name in seen or not inspect.isfunction(function) or name.startswith("__"):
                continue
            seen.add(name)
            yield name, function


def _bound(function: Callable, module: torch.nn.Module, name: str) -> tuple[object, str, object]:
    """(where, name, what) to set for the rewritten `function` of the method `name`: on the
    module, bound to it; a static or class method on the class that defines it, as such, so
    that `Model.helper(x)` and `cls.helper(x)` run it too (restored after the export)."""
    cls = type(module)
    for klass in cls.__mro__:
        kind = vars(klass).get(name)
        if isinstance(kind, staticmethod | classmethod):
            return klass, name, type(kind)(function)
        if kind is not None:
            break
    return module, name, function.__get__(module, cls)


__all__ = ["Rewrite", "record_branches", "replay_branches", "rewritten"]
