"""The user's `dynamic_shapes`, read once into one form that every stage shares.

torch.export takes `dynamic_shapes` keyed by `forward`'s parameter names or by position, the
specs of a `*args` parameter grouped in one entry, and each tensor's spec as `{axis: Dim}` or
as a sequence over its axes. Export, the naming of the user's symbols, host mode's examples
and signature and the compile cache's key read `DeclaredShapes` instead: one spec per
positional argument of the example, in the order of the arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ...errors import OptionError


@dataclass(frozen=True)
class DeclaredShapes:
    """`dynamic_shapes` as declared for one call of `forward` with positional `args`."""

    names: tuple[str, ...]
    """Each argument's name: its parameter's, or `xs_1` for the second item of `*xs`."""
    specs: tuple[Any, ...]
    """Each argument's spec as torch.export reads it (None: all its dims static)."""
    groups: tuple[int, ...]
    """How many arguments each parameter of `forward` that the call binds takes (one, or
    all the rest for `*args`): the grouping torch.export expects."""
    star: int | None
    """Which of those parameters is `*args`, if any."""
    given: bool
    """Whether the call declared any `dynamic_shapes` at all."""
    keywords: tuple[str, ...] = ()
    """The arguments' names where a call may also give them by keyword (every parameter they
    bind is positional-or-keyword); empty otherwise (`*args`, positional-only parameters)."""

    @classmethod
    def of(cls, forward: Callable, args: tuple, dynamic_shapes: Any) -> DeclaredShapes:
        """Read `dynamic_shapes` for `forward(*args)`; an object already read is returned as
        it is. A spec that names no parameter the call binds, or a positional list of the
        wrong length, is the call's mistake (`OptionError`)."""
        if isinstance(dynamic_shapes, DeclaredShapes):
            return dynamic_shapes
        params, groups = _bound_parameters(forward, len(args))
        names = _argument_names(params, groups)
        star = next((k for k, p in enumerate(params)
                     if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
        keywords = names if all(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params) else ()
        if dynamic_shapes is None:
            return cls(names, (None,) * len(args), groups, star, False, keywords)
        if isinstance(dynamic_shapes, dict):
            per_param = _by_name(forward, params, dynamic_shapes)
        elif isinstance(dynamic_shapes, tuple | list):
            per_param = _by_position(forward, params, groups, len(args), list(dynamic_shapes))
        else:
            raise OptionError(
                f"dynamic_shapes must be a dict (parameter name -> spec) or a tuple/list (one "
                f"spec per argument), as torch.export takes it; got {type(dynamic_shapes).__name__}")
        specs: list[Any] = []
        for spec, count, param in zip(per_param, groups, params, strict=True):
            if param.kind is not inspect.Parameter.VAR_POSITIONAL:
                specs.append(spec)
                continue
            items = [None] * count if spec is None else list(spec)
            if len(items) != count:
                raise OptionError(
                    f"dynamic_shapes gives {len(items)} specs for *{param.name} of "
                    f"{_qualname(forward)}, which the example fills with {count} arguments")
            specs.extend(items)
        return cls(names, tuple(specs), groups, star, True, keywords)

    def dims(self, args: tuple, i: int) -> dict[int, Any]:
        """Argument `i`'s declared dynamic dims, {axis: `Dim` or hint} (axes declared
        static, by None or an int, left out); {} for a value that is not a tensor."""
        spec = self.specs[i]
        if not isinstance(args[i], torch.Tensor) or not spec:
            return {}
        pairs = spec.items() if isinstance(spec, dict) else enumerate(spec)
        return {axis: dim for axis, dim in pairs if dim is not None and not isinstance(dim, int)}

    def for_export(self) -> tuple | None:
        """The specs as torch.export takes them for `forward(*args)` itself."""
        if not self.given:
            return None
        grouped, start = [], 0
        for k, count in enumerate(self.groups):
            items = self.specs[start:start + count]
            grouped.append(tuple(items) if k == self.star else items[0])
            start += count
        return tuple(grouped)

    def for_varargs(self) -> tuple | None:
        """The specs for a wrapper whose `forward(*args)` passes the arguments on."""
        return (tuple(self.specs),) if self.given else None


def _bound_parameters(forward: Callable, n_args: int) -> tuple[list[inspect.Parameter], tuple[int, ...]]:
    """The parameters of `forward` that `n_args` positional arguments bind, and how many
    arguments each takes."""
    try:
        parameters = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):  # no signature to read: one parameter per argument
        parameters = [inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_ONLY)
                      for i in range(n_args)]
    params, groups, left = [], [], n_args
    for p in parameters:
        if left == 0 and p.kind is not inspect.Parameter.VAR_POSITIONAL:
            break
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            params.append(p)
            groups.append(left)
            left = 0
            break
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            params.append(p)
            groups.append(1)
            left -= 1
    if left:
        raise OptionError(f"{_qualname(forward)} takes {n_args - left} positional arguments, "
                          f"and the example gives {n_args}")
    return params, tuple(groups)


def _argument_names(params: list[inspect.Parameter], groups: tuple[int, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for p, count in zip(params, groups, strict=True):
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            names.extend(f"{p.name}_{k}" for k in range(count))
        else:
            names.append(p.name)
    return tuple(names)


def _by_name(forward: Callable, params: list[inspect.Parameter], shapes: dict) -> list[Any]:
    known = [p.name for p in params]
    unknown = [k for k in shapes if k not in known]
    if unknown and all(isinstance(k, int) for k in shapes):
        raise OptionError(
            "dynamic_shapes reads like one tensor's spec ({axis: Dim}); torch.export takes a "
            f"spec per argument: {{{known[0] if known else 'x'!r}: {{0: batch}}}} or "
            "({0: batch},)")
    if unknown:
        raise OptionError(
            f"dynamic_shapes names {', '.join(map(repr, unknown))}, which the example does not "
            f"pass to {_qualname(forward)}: its arguments are {', '.join(known) or 'none'}")
    return [shapes.get(name) for name in known]


def _by_position(forward: Callable, params: list[inspect.Parameter], groups: tuple[int, ...],
                 n_args: int, shapes: list[Any]) -> list[Any]:
    if len(shapes) == len(params):
        return shapes
    var = bool(params) and params[-1].kind is inspect.Parameter.VAR_POSITIONAL
    if var and len(shapes) == n_args:  # the items of *args listed one by one, not grouped
        head = len(params) - 1
        return shapes[:head] + [tuple(shapes[head:])]
    raise OptionError(
        f"dynamic_shapes lists {len(shapes)} specs, and the example passes {n_args} arguments "
        f"to {_qualname(forward)} ({', '.join(p.name for p in params) or 'none'}): one spec "
        "per argument (None for one with only static dims)")


def _qualname(forward: Callable) -> str:
    owner = getattr(forward, "__self__", None)
    name = getattr(forward, "__name__", "forward")
    return f"{type(owner).__name__}.{name}" if owner is not None else name
