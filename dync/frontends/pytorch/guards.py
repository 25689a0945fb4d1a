"""Dynamic dims that torch.export can trace over only part of their declared range.

A model that computes with a dynamic size in Python (`if x.shape[1] > 32: x = x[:, :32]`,
`k = max(1, s // 2)` feeding a `topk`) makes torch.export assume something of that size (that
`s <= 32`, that `k != 1`). With the user's `Dim`s it then refuses the whole export
("Constraints violated"), and the model would run as Python. Exported again with
`Dim.DYNAMIC` hints over the same ranges, torch keeps the assumptions as guards on the
exported program instead. `guarded_ranges` finds where they hold: for each dim, the widest
range around the example's size in which the program's own guard function accepts inputs
(sizes checked one by one on meta tensors, the other dims at the example's) or, where it
refuses them, every guard of the trace that decides values holds (`_values_hold`: not those
torch added while working out a layout), then the box of those ranges checked at its corners
and at sampled points. The module is compiled for that
box; `SymbolSpec.declared` keeps the declared range, and a call inside it but outside the box
runs in eager PyTorch under `mode="auto"` (`OutsideCompiledRange` otherwise).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
from typing import Any

import sympy
import torch
from torch.utils import _pytree as pytree
from torch.utils._sympy.value_ranges import ValueRanges

from ...signature import MAX_ASSUMES, SymbolSpec
from .declared_shapes import DeclaredShapes
from .guard_grid import truth

#: The key of `graph_module.meta` holding how many of the shape environment's guards the
#: export's own trace added (before its decompositions).
TRACED_GUARDS = "dync_traced_guards"

# How far from the example's size each dim's range is searched, one size at a time.
_SEARCH = 1 << 14
_SAMPLES = 256


def violated(error: Exception) -> bool:
    """Whether torch.export failed because the trace holds for part of a declared range:
    "Constraints violated", or torch's crash while suggesting `Dim`s for such a trace (a
    root dim whose suggested range is empty, `_process_derived_dim_roots`)."""
    return any(sign in str(error) for sign in ("Constraints violated",
                                               "Cannot create Dim with inconsistent"))


def hinted(declared: DeclaredShapes, args: tuple) -> DeclaredShapes | None:
    """`declared` with each `Dim` replaced by a `Dim.DYNAMIC` hint over its range; None when
    a spec is not a plain `Dim` (a derived `2 * n`, a hint already) or a `Dim` spans
    arguments (by name, as torch reads them): the ranges found are per dim, and one `Dim` on
    several tensors is one size (`suggested` takes those)."""
    specs, seen = [], set()
    for i, spec in enumerate(declared.specs):
        dims = declared.dims(args, i)
        if not dims:
            specs.append(spec)
            continue
        for dim in dims.values():
            if not _plain(dim) or dim.__name__ in seen:
                return None
            seen.add(dim.__name__)
        rank = args[i].dim()
        specs.append({axis: torch.export.Dim.DYNAMIC(min=dim.min, max=_finite_max(dim))
                      for axis, dim in dims.items() if 0 <= axis < rank or -rank <= axis < 0})
    return dataclasses.replace(declared, specs=tuple(specs))


_SUGGESTED_FIX = re.compile(r"^\s*(\w+) = Dim\('(\w+)'((?:, (?:min|max)=\d+)*)\)\s*$")


def suggested(declared: DeclaredShapes, args: tuple, error: Exception
              ) -> tuple[DeclaredShapes, dict[str, SymbolSpec]] | None:
    """`declared` with the ranges torch's suggested fixes for `error` give its plain `Dim`s
    (`n = Dim('n', max=25)`: `cdist` takes another path past 25 points), and the symbols of
    those ranges, their declared ones kept: for dims `hinted` cannot take (one `Dim` on
    several arguments, a size torch cannot tell apart per argument). None unless every fix
    narrows a declared plain `Dim` to a range that runs to one end of it."""
    text = str(error)
    if "Suggested fixes:" not in text:
        return None
    dims = {name: dim for name, (_, _, dim) in _declared_axes(declared, args).items()}
    if not all(map(_plain, dims.values())):
        return None
    narrowed: dict[str, Any] = {}
    for line in filter(str.strip, text.split("Suggested fixes:", 1)[1].splitlines()):
        match = _SUGGESTED_FIX.match(line)
        if match is None or match[1] != match[2] or match[1] not in dims:
            return None
        old = dims[match[1]]
        bounds = dict(part.split("=") for part in match[3].split(", ") if part)
        low, high = int(bounds.get("min", old.min)), int(bounds.get("max", _finite_max(old)))
        if not (old.min <= low <= high <= _finite_max(old)) or not _reaches_an_end((low, high), old):
            return None
        narrowed[match[1]] = torch.export.Dim(match[1], min=low, max=high)
    if not narrowed:
        return None
    specs = tuple(_with_dims(spec, narrowed) for spec in declared.specs)
    assumes = "; ".join(re.findall(r"satisfy the generated guard (.+?)\.?$", text, re.M))
    assumes = assumes if 0 < len(assumes) <= MAX_ASSUMES else "the ranges torch suggests"
    symbols = {name: SymbolSpec(name, dim.min, dim.max, (dims[name].min, _finite_max(dims[name])),
                                assumes) for name, dim in narrowed.items()}
    return dataclasses.replace(declared, specs=specs), symbols


def _with_dims(spec: Any, narrowed: dict[str, Any]) -> Any:
    """`spec` with each `Dim` named in `narrowed` replaced (torch takes `Dim`s of one name as
    one size, whether or not they are one object)."""
    def new(dim: Any) -> Any:
        return narrowed.get(getattr(dim, "__name__", None), dim) if _plain(dim) else dim

    if isinstance(spec, dict):
        return {axis: new(dim) for axis, dim in spec.items()}
    if isinstance(spec, tuple | list):
        return type(spec)(new(dim) for dim in spec)
    return spec


def guarded_ranges(ep: torch.export.ExportedProgram, declared: DeclaredShapes, args: tuple,
                   names: dict[str, str]) -> dict[str, SymbolSpec] | None:
    """The range of each declared dim where `ep` (exported with `hinted` dims) holds, as
    symbols whose `declared` is set where that range is narrower; None when there is no such
    box (a guard ties dims together, or a dim was made static) or a range reaches neither
    end of its declared one."""
    guards = getattr(ep.module(), "_guards_fn", None)
    where = _declared_axes(declared, args)
    if guards is None or not where or sorted(names.values()) != sorted(where):
        return None
    example = {name: args[i].shape[axis] for name, (i, axis, _) in where.items()}
    symbols, shape_env = _symbols(ep, where)
    if symbols is None:
        return None
    traced = shape_env.guards[:ep.graph_module.meta.get(TRACED_GUARDS)]
    values_hold = _values_hold(shape_env, symbols, traced)

    def holds(sizes: dict[str, int]) -> bool:
        shaped = [list(a.shape) if isinstance(a, torch.Tensor) else None for a in args]
        for name, (i, axis, _) in where.items():
            shaped[i][axis] = sizes[name]
        inputs = [torch.empty(s, dtype=a.dtype, device="meta") if s is not None else a
                  for s, a in zip(shaped, args, strict=True)]
        try:
            guards(*pytree.tree_leaves(tuple(inputs)))
        except Exception:  # noqa: BLE001 - a guard that fails, whatever torch raises
            return values_hold(sizes)
        return True

    if not holds(example):
        return None
    box = {}
    for name, (_, _, dim) in where.items():
        low, high = example[name], example[name]
        while low > dim.min and example[name] - low < _SEARCH and holds({**example, name: low - 1}):
            low -= 1
        limit = _finite_max(dim)
        while high < limit and high - example[name] < _SEARCH and holds({**example, name: high + 1}):
            high += 1
        box[name] = (low, high)
    if not all(holds(point) for point in _points(box)) or not all(
            _reaches_an_end(box[name], where[name][2]) for name in box) or not _traced_guards_hold(
            shape_env, symbols, traced, box):
        return None
    assumes = _deciding_assumptions(shape_env, symbols, traced, where, box) or _assumptions(
        ep, declared, where)
    specs = {}
    for name, (low, high) in box.items():
        full = (where[name][2].min, _finite_max(where[name][2]))
        narrowed = (low, high) != full
        specs[name] = SymbolSpec(name, low, high, full if narrowed else None,
                                 assumes if narrowed else "")
    return specs


def _symbols(ep: torch.export.ExportedProgram, where: dict[str, tuple[int, int, Any]]
             ) -> tuple[dict[str, sympy.Symbol] | None, Any]:
    """Each declared dim's symbol in the trace and the trace's shape environment; None for
    the symbols when a dim is not a plain symbol there (made static, or an expression)."""
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    leaves = [placeholders[name] for name in ep.graph_signature.user_inputs]
    symbols, shape_env = {}, None
    for name, (i, axis, _) in where.items():
        size = leaves[i].meta["val"].shape[axis] if i < len(leaves) else None
        if not isinstance(size, torch.SymInt) or not isinstance(size.node.expr, sympy.Symbol):
            return None, None
        shape_env = size.node.shape_env
        symbols[name] = size.node.expr
    return symbols, shape_env


def _values_hold(shape_env: Any, symbols: dict[str, sympy.Symbol], traced: list):
    """A function of the dims' sizes saying whether every guard of the trace that decides
    values holds there. The program's guard function also checks the guards torch added while
    working out layouts (`_value_neutral`): padding a length to a multiple of 4, viewing it
    as windows and cropping it back (`x.view(b, -1, 4, c)`, `[:, :n]`) is traced assuming the
    pad is not 0 (else the crop would be contiguous) and there is more than one window (else
    the view's strides differ), which fails at every multiple of 4; the graph computes the
    same values at those sizes, only torch's strides would differ, and dync's buffers are
    dense. `traced`: the shape environment's guards the export's trace added; those after
    them come from re-tracing the program (its guard function's asserts restated, with the
    frame of the torch-function mode that passed them on, so their source is lost) and from
    the decompositions, whose guards `export._refuse_specialization` checks."""
    deciding = [g.expr.xreplace(shape_env.replacements) for g in traced
                if not _value_neutral(g)]

    def holds(sizes: dict[str, int]) -> bool:
        point = {symbols[name]: sympy.Integer(size) for name, size in sizes.items()}
        columns = {symbols[name]: (size,) for name, size in sizes.items()}
        for expr in deciding:
            found = truth(expr, columns)
            if found is not None:
                if not found[0]:
                    return False
                continue
            try:
                if expr.xreplace(point) is not sympy.true:
                    return False
            except Exception:  # noqa: BLE001 - one sympy cannot evaluate: not shown to hold
                return False
        return True

    return holds


def _traced_guards_hold(shape_env: Any, symbols: dict[str, sympy.Symbol], traced: list,
                        box: dict[str, tuple[int, int]]) -> bool:
    """Whether every guard of the trace (`traced`) holds over `box` (sampled, `holds_in`):
    the program's guard function lacks the ones torch.export's check missed."""
    ranges = {symbols[name]: ValueRanges(*box[name]) for name in box}
    return not failing(traced, shape_env.replacements, ranges)


def _reaches_an_end(found: tuple[int, int], dim: Any) -> bool:
    """Whether a range found for `dim` runs to one end of its declared range: what a
    threshold (`s > 32`, `k != 1`) leaves. One that stops short of both (a size specialized
    to the example's, `s % 4 == 0`) would compile the model for a few sizes and run the
    rest in eager: the export error, with torch's suggested fix, serves the user better."""
    return found[0] == dim.min or found[1] == _finite_max(dim)


def _plain(dim: Any) -> bool:
    return (isinstance(dim, torch.export.dynamic_shapes._Dim) and not hasattr(dim, "root")
            and isinstance(dim.min, int) and dim.min >= 0)


def _finite_max(dim: Any) -> int:
    return dim.max if isinstance(dim.max, int) and dim.max < 2**62 else 2**62


def example_at(declared: DeclaredShapes, args: tuple, name: str, size: int) -> tuple | None:
    """`args` with every axis declared as the `Dim` `name` made `size` long: the example's
    values repeated along it (or cut), so that data-dependent paths see values like the
    example's; None where no axis is declared so or one is empty."""
    out, changed = list(args), False
    for i in range(len(args)):
        for axis, dim in declared.dims(args, i).items():
            if getattr(dim, "__name__", None) != name:
                continue
            x = out[i]
            axis %= x.dim()
            if x.shape[axis] == 0:
                return None
            out[i] = repeated_to(x, axis, size).clone()
            changed = True
    return tuple(out) if changed else None


def past_one(declared: DeclaredShapes, args: tuple) -> tuple:
    """`args` with each axis of a plain `Dim` whose example size is 1 made 2 long where its
    range allows (`example_at`): torch.export specializes a dim whose example size is 0 or 1
    to that size and refuses the `Dim`, where a user's example is often one image or one
    sentence. The first-call check runs the example as given, so size 1 is checked."""
    for i in range(len(args)):
        for axis, dim in declared.dims(args, i).items():
            if _plain(dim) and args[i].shape[axis] == 1 and _finite_max(dim) >= 2:
                args = example_at(declared, args, dim.__name__, 2) or args
    return args


def repeated_to(x: torch.Tensor, axis: int, size: int) -> torch.Tensor:
    """`x` made `size` long along `axis` (not empty) by repeating its values (or cut)."""
    copies = -(-size // x.shape[axis])
    return torch.cat([x] * copies, dim=axis).narrow(axis, 0, size)


def _declared_axes(declared: DeclaredShapes, args: tuple) -> dict[str, tuple[int, int, Any]]:
    """Each declared `Dim`'s name -> (argument, axis, the `Dim`)."""
    where = {}
    for i in range(len(args)):
        for axis, dim in declared.dims(args, i).items():
            where[dim.__name__] = (i, axis % args[i].dim(), dim)
    return where


def _points(box: dict[str, tuple[int, int]]):
    """The box's corners (up to 2^10) and `_SAMPLES` points inside it, drawn alike each time."""
    names = list(box)
    corners = itertools.product(*(sorted(set(box[n])) for n in names[:10]))
    middle = {n: box[n][0] for n in names[10:]}
    for corner in corners:
        yield {**dict(zip(names, corner, strict=False)), **middle}
    rng = random.Random(0)
    for _ in range(_SAMPLES):
        yield {n: rng.randint(*box[n]) for n in names}


def _deciding_assumptions(shape_env: Any, symbols: dict[str, sympy.Symbol], traced: list,
                          where: dict[str, tuple[int, int, Any]],
                          box: dict[str, tuple[int, int]]) -> str:
    """What the trace assumes of the dims that fails somewhere in their declared ranges: the
    ranges torch narrowed (a branch on a size) and the guards that decide values
    (`_values_hold`), spelled with the dims' names; empty when there is nothing."""
    declared = {symbols[name]: ValueRanges(dim.min, _finite_max(dim))
                for name, (_, _, dim) in where.items()}
    names = {symbol: sympy.Symbol(name, integer=True) for name, symbol in symbols.items()}
    found = []
    for name, symbol in symbols.items():  # a branch on a size narrows its symbol's range
        traced_range, (low, high) = shape_env.var_to_range.get(symbol), box[name]
        if traced_range is None:
            continue
        if declared[symbol].lower < low == traced_range.lower:
            found.append(f"{name} >= {low}")
        if high == traced_range.upper < declared[symbol].upper:
            found.append(f"{name} <= {high}")
    found += [str(g.expr.xreplace(shape_env.replacements).xreplace(names))
              for g in failing(traced, shape_env.replacements, declared)]
    return "; ".join(dict.fromkeys(found))[:MAX_ASSUMES]


def _assumptions(ep: torch.export.ExportedProgram, declared: DeclaredShapes,
                 where: dict[str, tuple[int, int, Any]]) -> str:
    """The guards torch.export keeps, with `L['x'].size()[1]` spelled as the dim's name
    (`where`: `_declared_axes`)."""
    names = {(declared.names[i], axis): name for name, (i, axis, _) in where.items()}

    def spelled(match: re.Match) -> str:
        return names.get((match[1], int(match[2])), match[0])

    guards = [re.sub(r"L\['(\w+)'\]\.size\(\)\[(\d+)\]", spelled, g)
              for g in getattr(ep, "_guards_code", [])]
    return "; ".join(guards)[:MAX_ASSUMES]


#: The most points of the declared ranges a guard is evaluated at.
GUARD_SAMPLES = 4096


def holds_in(expr: sympy.Basic, ranges: dict) -> bool:
    """Whether `expr` holds at every sampled point of the symbols' ranges (all of them for
    one symbol over up to 4096 values; the ends, their neighbours and evenly spaced values
    otherwise). Unknown symbols (unbacked sizes) and expressions that do not evaluate count
    as holding: refusing is for guards seen to fail."""
    symbols = sorted(expr.free_symbols, key=str)
    if not symbols or any(s not in ranges for s in symbols):
        return True
    per_axis = max(4, int(GUARD_SAMPLES ** (1 / len(symbols))))
    axes = []
    for s in symbols:
        low = int(ranges[s].lower)
        high = ranges[s].upper
        high = low + (1 << 20) if not high.is_finite else int(high)
        if high - low < per_axis:
            axes.append(range(low, high + 1))
            continue
        ends = per_axis // 4
        spaced = [low + (high - low) * k // (per_axis - 2 * ends) for k in
                  range(per_axis - 2 * ends + 1)]
        axes.append(sorted({*range(low, low + ends), *range(high - ends + 1, high + 1),
                            *spaced}))
    points = list(itertools.product(*axes))
    found = truth(expr, {s: column for s, column in zip(symbols, zip(*points, strict=True), strict=True)})
    if found is not None:
        return bool(found.all())
    for point in points:
        try:
            value = expr.xreplace({s: sympy.Integer(v) for s, v in zip(symbols, point,
                                                                       strict=True)})
        except Exception:  # noqa: BLE001 - an expression sympy cannot evaluate here
            return True
        if value is sympy.false:
            return False
    return True


def failing(found: list, replacements: dict, ranges: dict) -> list:
    """The guards of `found` seen to fail somewhere in `ranges` (`holds_in`), after
    `replacements` (a derived `Dim`'s `s53 = 32*s39`: the ranges alone do not tie those sizes
    together), less those that leave the values alone (`_value_neutral`)."""
    return [g for g in found if not _value_neutral(g)
            and not holds_in(g.expr.xreplace(replacements), ranges)]


#: Words in the name of the torch function that added a guard for a tensor's layout alone
#: (contiguity, strides, whether a view needs a copy): dync's buffers are dense whatever
#: torch assumed of their strides.
_LAYOUT_FUNCTIONS = ("contiguous", "stride", "non_overlapping", "collapse_view")


def where_added(guard) -> str:
    """Where torch added `guard`: `file:line in function`, or empty."""
    return str(getattr(guard, "sloc", "") or "").strip("()")


def _value_neutral(guard) -> bool:
    """A guard from working out a layout, or a `!=` from a torch function choosing between
    ways to the same values: reshape's algorithm (the special case of two equal dims not
    taken: the general split it took holds for them too, as for Swin's windows when there
    is one), matmul's decomposition (a batch of windows of one, `b * nw != 1`, would only
    have let its reshapes view instead of copy)."""
    function = where_added(guard).rpartition(" in ")[2]
    return any(word in function for word in _LAYOUT_FUNCTIONS) or (
        isinstance(guard.expr, sympy.Ne) and function in _PATH_CHOOSING_FUNCTIONS)


#: torch functions whose `!=` guards choose between ways to the same values (`_value_neutral`).
_PATH_CHOOSING_FUNCTIONS = frozenset({"_reshape_view_helper", "matmul"})


def with_static(declared: DeclaredShapes, name: str) -> DeclaredShapes:
    """`declared` with each `Dim` named `name` made static (at the example's size)."""
    static = {name: torch.export.Dim.STATIC}
    return dataclasses.replace(declared, specs=tuple(_with_dims(spec, static)
                                                     for spec in declared.specs))
