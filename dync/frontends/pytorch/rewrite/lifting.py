"""Lifting: every tensor a control-flow branch reads becomes an operand of the HOP.

The HOPs (`cond_op`, `while_loop_op`) trace branch functions with a fresh tracer; a tensor
reached through a closure, the variable state or a module attribute would be frozen into the
subgraph as a constant (wrong on every other input). Dynamo lifts such tensors for
`torch.cond`; the rewriter calls the HOPs directly, so it lifts them itself.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.nn.utils.stateless import _reparametrize_module
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

from .lists import list_mode_active
from .optionals import MaybeTensor, plain_container

# The module being exported: its parameters and buffers are lifted into every branch.
_root_module: contextvars.ContextVar[torch.nn.Module | None] = contextvars.ContextVar(
    "dync_root", default=None
)


def set_root_module(module: torch.nn.Module | None) -> contextvars.Token:
    return _root_module.set(module)


def reset_root_module(token: contextvars.Token) -> None:
    _root_module.reset(token)



# Ids of the tensors the code running under `recording_usage` reads (its ops' arguments).
_used: contextvars.ContextVar[set[int] | None] = contextvars.ContextVar("dync_used", default=None)


class _UsageMode(TorchFunctionMode):
    def __init__(self, used: set[int]):
        super().__init__()
        self.used = used

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for leaf in pytree.tree_leaves((args, kwargs)):
            if isinstance(leaf, torch.Tensor):
                self.used.add(id(leaf))
        return func(*args, **kwargs)


def record_returned(values: Any) -> None:
    """Count the tensors in `values` (what a probed branch or loop body returns) as read: a
    parameter or buffer returned as it is (`w = self.a.weight if ... else self.b.weight`)
    meets no op, and unlifted it was a tensor of the outer trace inside the HOP's ("Attempting
    to use FunctionalTensor on its own")."""
    used = _used.get()
    if used is not None:
        used.update(id(t) for t in pytree.tree_leaves(values) if isinstance(t, torch.Tensor))


class recording_usage:
    """Collect the tensors read by the code in the block (probing a branch): only the
    parameters a branch reads are lifted into its HOP, not every parameter of the model."""

    def __enter__(self) -> set[int]:
        self.used: set[int] = set()
        outer = _used.get()
        self._token = _used.set(self.used)
        self._mode = _UsageMode(self.used)
        self._mode.__enter__()
        self._outer = outer
        return self.used

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        _used.reset(self._token)
        if self._outer is not None:
            self._outer |= self.used


def lifted(emit: Callable, functions: Sequence[Callable], values: tuple,
           used: set[int] | None = None, lists: Sequence[Any] = ()) -> Any:
    """Call a control-flow HOP with every tensor its branches read passed as an operand.

    Tensors in the closure cells of `functions`, in `values`, in the `TensorList`s `lists`
    and the root module's parameters/buffers become operands, swapped for the operands'
    placeholders while a branch is traced (the lists are restored after). `emit(run, operands)` makes the HOP call and returns its results;
    `run(fn, leading)` turns a branch `fn(*lead, *values)` into the callable the HOP wants,
    taking `(*lead, *operands)`.
    """
    cells = _tensor_cells(functions)
    root = _root_module.get()
    state = dict(root.named_parameters()) | dict(root.named_buffers()) if root is not None else {}
    if used is not None:
        state = {n: t for n, t in state.items() if id(t) in used}
    names = list(state)
    # One operand per distinct tensor: a tensor reached twice (a closure cell and a variable,
    # a tied weight) must not become two graph inputs.
    operands: list[torch.Tensor] = []
    position: dict[int, int] = {}

    def slot(tensor: torch.Tensor) -> int:
        if id(tensor) not in position:
            position[id(tensor)] = len(operands)
            operands.append(tensor)
        return position[id(tensor)]

    # (rebuild, slots) of each cell: a tensor, or a tuple/list/dict of them (`args` a helper
    # closes over)
    cell_parts = [(rebuild, [slot(t) for t in tensors])
                  for tensors, rebuild in (_value_tensors(c.cell_contents) for c in cells)]
    # (index, rebuild, slots) of each value holding tensors: a tensor, or a tuple/list of them
    value_parts = [(i, rebuild, [slot(t) for t in tensors])
                   for i, (tensors, rebuild) in enumerate(map(_value_tensors, values)) if tensors]
    param_slots = [slot(state[n]) for n in names]
    list_slots = [[slot(t) for t in tl.tensors()] for tl in lists]
    # HOP operands may not alias each other (torch.where's results are views of one tensor).
    operands = tuple(t.clone() if t._base is not None else t for t in operands)
    outer = _used.get()
    if outer is not None:  # a HOP nested in a probed branch: its operands are read there
        outer.update(id(t) for t in operands)
        outer.update(id(c.cell_contents) for c in cells)
        outer.update(id(operands[k]) for _, slots in cell_parts for k in slots)

    def run(fn: Callable, leading: int = 0) -> Callable:
        """`fn(*lead, *values)` as a HOP callable taking `(*lead, *operands)`."""

        def traced(*args):
            lead, ops = args[:leading], args[leading:]
            saved = [c.cell_contents for c in cells]
            for cell, (rebuild, slots) in zip(cells, cell_parts, strict=True):
                cell.cell_contents = rebuild([ops[k] for k in slots])
            local = list(values)
            for i, rebuild, slots in value_parts:
                local[i] = rebuild([ops[k] for k in slots])
            params = {n: ops[k] for n, k in zip(names, param_slots, strict=True)}
            saved_lists = [tl.snapshot() for tl in lists]
            for tl, slots in zip(lists, list_slots, strict=True):
                tl.replace_tensors(ops[k] for k in slots)
            try:
                with list_mode_active():
                    if root is None:
                        return fn(*lead, *local)
                    with _reparametrize_module(root, params):
                        return fn(*lead, *local)
            finally:
                for cell, value in zip(cells, saved, strict=True):
                    cell.cell_contents = value
                for tl, snap in zip(lists, saved_lists, strict=True):
                    tl.restore(snap)

        return traced

    return emit(run, operands)


def is_container(value: Any) -> bool:
    """A tuple (named or not), a plain list or a dict (`return {"logits": x, "exit": i}` from
    an early exit), or a `MaybeTensor` (a tensor and its presence): not a `TensorList`, which
    crosses control flow as a buffer and its length."""
    return plain_container(value) or isinstance(value, MaybeTensor)


def _value_tensors(value: Any) -> tuple[list[torch.Tensor], Callable[[list], Any] | None]:
    """The tensors `value` holds (itself, or the items of a tuple or list, nested), and how to
    rebuild it from others in their place."""
    if isinstance(value, torch.Tensor):
        return [value], lambda tensors: tensors[0]
    if not is_container(value):
        return [], None
    leaves, spec = pytree.tree_flatten(value)
    at = [k for k, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def rebuild(tensors: list) -> Any:
        new = list(leaves)
        for k, tensor in zip(at, tensors, strict=True):
            new[k] = tensor
        return pytree.tree_unflatten(new, spec)

    return [leaves[k] for k in at], rebuild


def bound_cells(functions: Sequence[Callable]) -> Iterator[tuple[Any, Any]]:
    """(cell, content) of every bound closure cell of `functions`, and of the functions
    (thunks, nested branches) their cells hold, each cell once."""
    seen_functions: set[int] = set()
    seen_cells: set[int] = set()
    stack = list(functions)
    while stack:
        fn = stack.pop()
        if id(fn) in seen_functions:
            continue
        seen_functions.add(id(fn))
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell: the variable is not bound yet
                continue
            if id(cell) not in seen_cells:
                seen_cells.add(id(cell))
                yield cell, content
            if callable(content) and hasattr(content, "__closure__"):
                stack.append(content)


def _tensor_cells(functions: Sequence[Callable]) -> list:
    """The cells of `functions` (`bound_cells`) holding a tensor, or a tuple, list or dict of
    values with tensors among them."""
    return [cell for cell, content in bound_cells(functions)
            if isinstance(content, torch.Tensor) or _value_tensors(content)[0]]
