"""Program rewriting (DyCL §5.2): make an unmodified `forward` with Python control flow on
tensor values exportable whole, on the live module instance.

`rewritten(model)` patches the `forward` of the model and of every submodule whose class
defines control flow in its `forward`, for the duration of a `with` block (an export), and
restores them after. The generated source of each is kept for the report and debugging.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from . import lifting
from .lists import BoundedListMode
from .recurrent import looped_forward
from .runtime import record_branches, replay_branches
from .transform import RewrittenFunction, needs_rewrite, rewrite_function


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
    """Patch the forwards that need rewriting; yield what was rewritten; restore them."""
    result = Rewrite()
    cache: dict[type, RewrittenFunction] = {}
    patched: list[torch.nn.Module] = []
    # In-place activations (ReLU(inplace=True)) would mutate the operands of a branch; for
    # inference the out-of-place form is equivalent.
    inplace = [m for m in model.modules() if getattr(m, "inplace", False) is True]
    for module in inplace:
        module.inplace = False
    token = lifting.set_root_module(model)
    list_mode = BoundedListMode()
    list_mode.__enter__()
    try:
        for module in model.modules():
            cls = type(module)
            if "forward" in vars(module):
                continue
            loop = looped_forward(module)
            if loop is not None:  # a recurrent layer: a loop when its sequence length is dynamic
                module.forward = loop
                patched.append(module)
                continue
            if not _user_class(module):
                continue
            forward = cls.forward
            if cls not in cache:
                if not needs_rewrite(forward):
                    continue
                cache[cls] = rewrite_function(forward, owner=cls)
                result.functions[f"{cls.__qualname__}.forward"] = cache[cls]
            module.forward = cache[cls].function.__get__(module, cls)
            patched.append(module)
        yield result
    finally:
        list_mode.__exit__(None, None, None)
        lifting.reset_root_module(token)
        for module in inplace:
            module.inplace = True
        for module in patched:
            del module.forward


__all__ = ["Rewrite", "record_branches", "replay_branches", "rewritten"]
