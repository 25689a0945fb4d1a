"""How values cross the boundary of a `cond` or `while_loop` that rewritten code calls: what a
branch or loop body returns and carries (tensors with plain strides, the masks of variables a
path leaves undefined, lists that grew, numbers as 0-d tensors), and the probe that runs a body
once, untraced, to learn it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._guards import detect_fake_mode
from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing
from torch.fx.experimental.symbolic_shapes import statically_known_true
from torch.utils import _pytree as pytree

from ....errors import UnsupportedConstructError
from .decisions import _recorder
from .lifting import bound_cells, is_container
from .lists import TensorList


@contextlib.contextmanager
def _untraced():
    """Run code on the tracer's fake tensors without recording it (to probe a branch or a loop
    body). A data-dependent size it makes (`x[mask]`) is a fresh unbacked symbol that no graph
    node will bind: the shape environment is told it is discarded, or the next traced op
    would fail with "pending unbacked symbols"."""
    fake_mode = detect_fake_mode()
    shape_env = getattr(fake_mode, "shape_env", None)
    with contextlib.ExitStack() as stack:
        stack.enter_context(disable_proxy_modes_tracing())
        if shape_env is not None:
            stack.enter_context(shape_env.ignore_fresh_unbacked_symbols())
        yield


class _Undefined:
    """A variable not bound yet at this point of the program."""

    _instance = None

    def __new__(cls):
        cls._instance = cls._instance or super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<undefined>"


UNDEFINED = _Undefined()


_NUMBERS = (bool, int, float, torch.SymInt, torch.SymFloat, torch.SymBool)


# -- if ----------------------------------------------------------------------------------------
RETURNED, RETURN_VALUE = "__dync_returned", "__dync_return_value"


class _Probe:
    """Runs branches untraced (inside `disable_proxy_modes_tracing`) to see what they
    produce: refuses one that changes a Python container, and puts the `TensorList`s they
    reach back as they were after each, returning the lists' states it left."""

    def __init__(self, functions: Sequence[Callable], values: tuple, site: str, what: str):
        self.values, self.site, self.what = values, site, what
        self.containers = _Containers(functions, values)
        self.lists = _tensor_lists(functions, values)
        self.before = [tl.snapshot() for tl in self.lists]

    def run(self, fn: Callable) -> tuple[tuple, list]:
        result = tuple(fn(*self.values))
        self.containers.check(self.site, self.what)
        return result, _restore(self.lists, self.before)


def _tensor_lists(functions: Sequence[Callable], values: tuple) -> list[TensorList]:
    recorder = _recorder.get()
    found = [recorder.codes] if recorder is not None else []
    found += [v for v in values if isinstance(v, TensorList)]
    found += [c for _, c in bound_cells(functions) if isinstance(c, TensorList)]
    unique = {id(tl): tl for tl in found}
    return list(unique.values())


def _restore(lists: Sequence[TensorList], before: Sequence) -> list:
    """Each list's state after a probe; the lists are put back as they were."""
    after = [tl.snapshot() for tl in lists]
    for tl, snap in zip(lists, before, strict=True):
        tl.restore(snap)
    return after


def _grown_lists(lists, before, after_true, after_false, site: str) -> list[tuple]:
    """(list, capacity, item) of the lists a branch appended to: they leave the `cond` as
    bounded buffers of the larger branch's capacity."""
    grown = []
    for tl, *states in zip(lists, before, after_true, after_false, strict=True):
        if all(_same_state(states[0], s) for s in states[1:]):
            continue
        for state in states[1:]:
            if not _appended_to(states[0], state):
                raise UnsupportedConstructError(
                    "Python list changed inside a data-dependent if",
                    "only appending to a list is supported on a data-dependent path",
                    site,
                )
        items = [t for state in states for t in ([state[1][0]] if state[1] is not None else state[0])]
        like = next((t for t in items if isinstance(t, torch.Tensor)), None)
        if like is None:
            raise UnsupportedConstructError(
                "Python list changed inside a data-dependent if",
                "a list that grows on a data-dependent path must hold tensors",
                site,
            )
        capacity = max(_capacity(s) for s in states)
        grown.append((tl, capacity, like))
    return grown


def _same_state(a, b) -> bool:
    return (a[1] is b[1] and a[2] is b[2] and len(a[0]) == len(b[0])
            and all(x is y for x, y in zip(a[0], b[0], strict=True)))


def _appended_to(before, after) -> bool:
    if before[1] is not None:  # bounded: only appends can have changed it
        return after[1] is not None
    if after[1] is not None:
        return True  # a nested data-dependent append made it bounded
    return len(after[0]) >= len(before[0]) and all(
        x is y for x, y in zip(before[0], after[0], strict=False)
    )


def _capacity(state) -> int:
    return state[1].shape[0] if state[1] is not None else len(state[0])


class _Containers:
    """Python lists/dicts/sets a branch can reach (variables and closure cells), to refuse
    a data-dependent branch that mutates one: its effect cannot follow a traced path, and
    probing the branch would already have applied it once."""

    def __init__(self, functions: Sequence[Callable], values: tuple):
        found = [v for v in values if _plain_container(v)]
        found += [c for _, c in bound_cells(functions) if _plain_container(c)]
        self.items = [(c, self._state(c)) for c in found]

    @staticmethod
    def _state(container) -> tuple:
        if isinstance(container, dict):
            return tuple((k, id(v)) for k, v in container.items())
        return tuple(id(v) for v in container)

    def check(self, site: str, what: str) -> None:
        for container, before in self.items:
            if self._state(container) != before:
                raise UnsupportedConstructError(
                    f"Python {type(container).__name__} changed inside a data-dependent {what}",
                    "on a data-dependent path a list created empty in the function may be "
                    "appended to (it becomes a bounded buffer); other list/dict/set updates "
                    "cannot follow a traced path: keep such state in tensors",
                    site,
                )


def _plain_container(value: Any) -> bool:
    return isinstance(value, list | dict | set) and not isinstance(value, TensorList)


def _returns(names: Sequence[str], probe: tuple) -> bool:
    return _breaks(names, probe, RETURNED)


def _breaks(names: Sequence[str], probe: tuple, flag: str) -> bool:
    """Whether the branch `probe` came from surely sets `flag` (a `break`'s, a `return`'s)."""
    return flag in names and probe[list(names).index(flag)] is True


def _mask(outputs: tuple, dead: Sequence[bool], live: tuple) -> tuple:
    """Dead variables take the live branch's static value, or a tensor placeholder slot (also
    for each tensor in a tuple or list)."""
    def slot(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return UNDEFINED
        return pytree.tree_map(slot, value) if is_container(value) else value

    return tuple(slot(v) if is_dead else o
                 for o, is_dead, v in zip(outputs, dead, live, strict=True))


class Containers:
    """The outputs of a branch that are tuples or lists (`return logits, features` from an
    early exit, an LSTM's `(h, c)`), each crossing as its items: `flatten` gives every
    output's items in place of it, `unflatten` rebuilds it. An output is flattened where one
    branch gives a tuple or list and the other the same structure, or nothing yet (the return
    value of the path that has not returned: its items are placeholders, a number 0)."""

    def __init__(self, one: tuple, other: tuple):
        self.specs = [_common_spec(a, b) for a, b in zip(one, other, strict=True)]

    def flatten(self, values: tuple, names: Sequence[str] = ()) -> tuple:
        out = []
        for k, (value, spec) in enumerate(zip(values, self.specs, strict=True)):
            if spec is None:
                out.append(names[k] if names else value)
            elif names:
                out.extend(f"{names[k]}[{i}]" for i in range(spec.num_leaves))
            elif value is UNDEFINED or value is None:
                out.extend([UNDEFINED] * spec.num_leaves)
            else:
                out.extend(pytree.tree_leaves(value))
        return tuple(out)

    def placeholders(self, values: tuple, other: tuple) -> tuple:
        """`flatten(values)`, a missing number item 0 where `other` (flattened) has one."""
        flat = self.flatten(values)
        return tuple(type(o)(0) if v is UNDEFINED and isinstance(o, bool | int | float) else v
                     for v, o in zip(flat, other, strict=True))

    def unflatten(self, leaves: Sequence) -> tuple:
        out, k = [], 0
        for spec in self.specs:
            if spec is None:
                out.append(leaves[k])
                k += 1
            else:
                out.append(pytree.tree_unflatten(list(leaves[k:k + spec.num_leaves]), spec))
                k += spec.num_leaves
        return tuple(out)


def _common_spec(a: Any, b: Any) -> Any:
    """The tree structure `a` and `b` share as tuples/lists (either may be missing) holding a
    tensor, or None: a tuple of numbers alone (a shape) is one static value, as before."""
    if a is b or not any(is_container(v) and any(isinstance(leaf, torch.Tensor)
                                                 for leaf in pytree.tree_leaves(v))
                         for v in (a, b)):
        return None
    specs = [pytree.tree_structure(v) if is_container(v) else None for v in (a, b)]
    if specs[0] is not None and (specs[0] == specs[1] or b is UNDEFINED or b is None):
        return specs[0]
    if specs[1] is not None and (a is UNDEFINED or a is None):
        return specs[1]
    return None


def _output_kind(name: str, a: Any, b: Any, site: str) -> str | None:
    """None: static (same object both ways); "tensor"; "number" (Python scalar, tensorized)."""
    if a is b and not isinstance(a, torch.Tensor):
        return None
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        for x, y in ((a, b), (b, a)):
            if isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
                if y is UNDEFINED or (y is None and name == RETURN_VALUE):
                    return "tensor"  # the other branch gets a placeholder
                if y is None:
                    # code after the branch can tell None from a tensor (`if out is None:`,
                    # a returned `aux`), which a placeholder would answer wrongly
                    raise _mismatch(name, site, "None in one branch and a tensor in the other")
                if isinstance(y, _NUMBERS) and x.dim() == 0:
                    return "tensor"  # the number becomes a 0-d tensor of x's dtype
                raise _mismatch(name, site, f"a tensor in one branch and {type(y).__name__} in the other")
        if a.dtype != b.dtype or a.dim() != b.dim():
            raise _mismatch(
                name, site, f"{a.dtype}{list(a.shape)} in one branch and {b.dtype}{list(b.shape)} in the other"
            )
        return "tensor"
    if all(isinstance(v, _NUMBERS) for v in (a, b)):
        return "number"
    if a is UNDEFINED or b is UNDEFINED:
        return None  # bound in one branch only and not a tensor: treated as branch-local
    if a == b:
        return None
    raise _mismatch(name, site, f"values {a!r} and {b!r} of a type that cannot cross a branch")


def _as_output(value: Any, other: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        # cond outputs may not alias its inputs (pass-through values), and both branches'
        # must give the same strides: a transposed view in one branch is a fresh tensor in
        # the other (the values are what the program means; strides are not)
        return _dense(value)
    if value is UNDEFINED or value is None:  # placeholder on the path that lacks the value
        if isinstance(other, torch.Tensor):
            return _dense(torch.zeros(other.shape, dtype=other.dtype))
        return torch.scalar_tensor(0, dtype=_scalar_dtype(other, other))
    dtype = other.dtype if isinstance(other, torch.Tensor) else _scalar_dtype(value, other)
    return torch.scalar_tensor(value, dtype=dtype)


def _dense(value: torch.Tensor) -> torch.Tensor:
    """A copy of `value` whose strides are the plain products of its sizes. A contiguous
    tensor's strides are products of max(size, 1); where a size is a floor division of a dim
    (`max_pool2d` over a dynamic H) or an unbacked symbol (a nested early exit's sequence), the
    symbolic `Max(1, s)` does not simplify, and `cond` cannot match it with the other branch's
    sizes and refuses the output."""
    copy = value.clone(memory_format=torch.contiguous_format)
    strides, step = [], 1
    for size in reversed(value.shape):
        strides.append(step)
        step = step * size
    strides.reverse()
    if all(_expr(a) == _expr(b) for a, b in zip(copy.stride(), strides, strict=True)):
        return copy  # the usual case (`cond` compares the expressions): a plain clone
    out = torch.empty_strided(value.shape, tuple(strides), dtype=value.dtype, device=value.device)
    return out.copy_(value)


def _expr(size: Any) -> Any:
    return size.node.expr if isinstance(size, torch.SymInt) else size


def _scalar_dtype(a: Any, b: Any) -> torch.dtype:
    kinds = {type(v) for v in (a, b)}
    if kinds & {float, torch.SymFloat}:
        return torch.float32
    if kinds <= {bool, torch.SymBool}:
        return torch.bool
    return torch.int64


def _mismatch(name: str, site: str, what: str) -> UnsupportedConstructError:
    return UnsupportedConstructError(
        f"variable {name!r} across a data-dependent if",
        f"it is {what}; both branches must give it the same type, dtype and rank",
        site,
    )


def _same_shape(a: torch.Tensor, b: torch.Tensor) -> bool:
    # Compared outside the proxy tracer: a size of a probe's result may be an unbacked
    # symbol the tracer never saw (a loop over the rows a mask kept), and `==` would trace.
    with disable_proxy_modes_tracing():
        return a.dim() == b.dim() and all(
            statically_known_true(x == y) for x, y in zip(a.shape, b.shape, strict=True)
        )


def _carry_in(value: Any, after: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    return torch.scalar_tensor(value, dtype=_scalar_dtype(value, after))


def _carry_out(value: Any, like: torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return _dense(value.to(like.dtype))  # loop outputs may not alias its inputs
    return torch.scalar_tensor(value, dtype=like.dtype)
