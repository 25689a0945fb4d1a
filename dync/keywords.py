"""How a host-mode call made with keyword arguments feeds a sub-DNN, which takes tensors by
position: the parameters whose values are tensors, in the order the sub-DNN takes them, and
the values every captured call gave the others (``None``, a bool, an int, a float or a
string). `nn.TransformerDecoder(x, memory, tgt_mask=mask, tgt_is_causal=True)` and the
attention blocks of most research code are called so.

Shared by the PyTorch frontend (capture: `layout` of each recorded call) and the runtime
(`Keywords.tensors_of` a call, or None where it differs from the captured ones and runs as
Python); read from a manifest with `Keywords.from_json`, which checks every field.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_SCALARS = (type(None), bool, int, float, str)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


@dataclass(frozen=True)
class Keywords:
    tensors: tuple[str, ...]  # parameters passing the sub-DNN's inputs, in its order
    constants: dict[str, Any]  # every other parameter, as the captured calls gave it

    def tensors_of(self, signature: inspect.Signature, args: tuple, kwargs: dict,
                   is_tensor: Callable[[Any], bool]) -> list | None:
        """The tensors a call passes, in the sub-DNN's order; None where its parameters or
        constants are not those of the captured calls."""
        try:
            found = layout(signature, args, kwargs, is_tensor)
        except (TypeError, ValueError):
            return None
        if found is None or found[0] != self:
            return None
        return found[1]

    def to_json(self) -> dict:
        return {"tensors": list(self.tensors), "constants": dict(self.constants)}

    @classmethod
    def from_json(cls, data: Any) -> Keywords:
        if not isinstance(data, dict) or set(data) != {"tensors", "constants"}:
            raise ValueError(f"keywords {data!r:.80} is not {{tensors, constants}}")
        tensors, constants = data["tensors"], data["constants"]
        if not (isinstance(tensors, list) and all(_is_name(t) for t in tensors)):
            raise ValueError(f"keywords: tensors {tensors!r:.80} is not a list of names")
        if not (isinstance(constants, dict) and all(_is_name(k) for k in constants)
                and all(_is_scalar(v) for v in constants.values())):
            raise ValueError(f"keywords: constants {constants!r:.80} are not names to "
                             "None, bools, numbers or strings")
        if set(tensors) & set(constants):
            raise ValueError("keywords: a parameter is both a tensor and a constant")
        return cls(tuple(tensors), dict(constants))


def layout(signature: inspect.Signature, args: tuple, kwargs: dict,
           is_tensor: Callable[[Any], bool]) -> tuple[Keywords, list] | None:
    """(the Keywords of one call, its tensors in their order); None where the callable takes
    `*args`/`**kwargs` or positional-only parameters. Raises TypeError where the arguments do
    not bind, ValueError where one is neither a tensor nor a constant `Keywords` can hold."""
    if any(p.kind in _VARIADIC or p.kind == inspect.Parameter.POSITIONAL_ONLY
           for p in signature.parameters.values()):
        return None
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    tensors, names, constants = [], [], {}
    for name, value in bound.arguments.items():
        if is_tensor(value):
            names.append(name)
            tensors.append(value)
        elif _is_scalar(value):
            constants[name] = value
        else:
            raise ValueError(f"argument {name!r} is a {type(value).__name__}, neither a tensor "
                             "nor None, a bool, a number or a string")
    return Keywords(tuple(names), constants), tensors


def _is_scalar(value: Any) -> bool:
    # bool before int: both are JSON's; a NaN constant never equals itself, so is refused.
    return isinstance(value, _SCALARS) and not (isinstance(value, float)
                                                 and not math.isfinite(value))


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and value.isidentifier()
