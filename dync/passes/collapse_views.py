"""`dync-collapse-views`: views of tensors with dynamic dims in the forms torch-mlir and IREE
get right: a merge of dims one `flatten` at a time, and a merge undone after a permute as a
permute of the unmerged dims.

Reads: `torch.aten.view`, `reshape` and `_unsafe_view` whose input has two or more dynamic
dims and whose result merges runs of consecutive input dims (each result dim the product of
a run, as the shape bindings of input and result state it), one run holding a dynamic dim
and another dim, in every function.
Writes: in its place one `torch.aten.flatten.using_ints` per run of two or more dims (the last
run first, so the earlier dims keep their positions), each bound from the input's binding.

Reads, too: a view (`view`, `reshape`, `_unsafe_view`, `unflatten.int`) of a `transpose.int`
or `permute` of a view, where the first view merges a dynamic dim with others (its dims
products of runs of the dims both views are made of, "atoms", splitting only static dims of
its input) and the last view splits the permuted tensor into exactly those atoms.
Writes: in its place the input split into the atoms (`unflatten.int`, static sizes) and
permuted into the last view's order; each new tensor bound from the input's binding.

Why: torch-mlir's lowering of `aten.view` in IREE 3.13 pairs the result's dynamic dims with
the input's one to one: `[s, b, 2, 16] -> [s*b, 32]` (the heads of `nn.MultiheadAttention`
merged back, `F.multi_head_attention_forward`, over a dynamic batch and length) became a
collapse of `?x1x2x16`, asserting at run time that the batch is 1 or returning `s` rows
instead of `s*b` (`lit/upstream/torch-view-merging-dynamic-dims.mlir`): every
`nn.MultiheadAttention` and `nn.TransformerEncoderLayer` over a dynamic batch and a dynamic
length returned wrong values, or failed at the first call. `flatten.using_ints` names the
dims it merges, and lowers right. The heads are split out the same way they are merged
back: `[s, b, 32] -> [s, b*2, 16]`, transposed, `-> [b, 2, s, 16]`; IREE computed the
attention scores of that chain wrong from about 100 tokens on over a dynamic batch (64 were
right; found on a padded Transformer encoder, kept by the construct "attention over long
sequences of a dynamic batch"), and right from `[s, b, 2, 16]` permuted.

Reads, too: a view that regroups dims, one of them dynamic: its input and result both merges
of runs of the same atoms, some input dim split and some result dim merging atoms of two
input dims (`[s, b*4, 8] -> [s*b, 32]`: `nn.MultiheadAttention` returning its weights merges
the heads back from `[s, b*H, e/H]`). Writes: the input split into the atoms
(`unflatten.int`, the one dynamic atom of a dim as -1) and the runs flattened. torch-mlir took
the `b*4` of that view for a static 4 (`lit/upstream/torch-view-regrouping-dynamic-dims.mlir`),
and the attention's products read past their tensors: values of 1e+30 over any batch.

Reads, last: a view of a view that restores the first's input dims (the padding mask of
`nn.MultiheadAttention`: `[b, 1, 1, s]` expanded over the heads, merged to `[b*H, 1, s]`,
split to `[b, H, 1, s]`). Writes: the input itself in its place. With data tiling on, IREE
added that mask to the scores wrong from about 100 tokens on, also at batch 1.

Reads, as a last resort: any other view whose dims are not regroupings of its input's that
the shape bindings can prove, past the leading and trailing dims it keeps (a size that is
the input's own `size.int` or the same static size): where those middle input dims hold two
or more dynamic ones, or where the middle result dims have a -1 and a dim their type leaves
unknown though the size list states it. Padding a length up to a multiple of 4, then
`reshape(-1, 4, C)` over a dynamic batch (Swin's windows, DPRNN's chunks) is one: torch
gives the 4 as `(b*t)//((b*t)//4)`, and torch-mlir paired the input's `[b, t]` with the
result's `[?, ?]`, a run-time failure ("mismatching contracting dimension") after the module
wrote out of bounds, corrupting the heap of the calling process
(`lit/upstream/torch-view-splitting-merged-dynamic-dims.mlir`). Writes: the middle input dims
flattened to one and split into the middle sizes by `unflatten.int`, with the -1 computed
from the flattened dim (the -1 counted in the product where a type left a stated dim
unknown: "expected sizes to be non-negative, but got -32"; beside a size known only at run
time, torch-mlir's unflatten read past its input,
`lit/upstream/torch-unflatten-dynamic-size-beside-inferred.mlir`).
No paper section: a repair at the boundary to torch-mlir and IREE.
"""

from __future__ import annotations

import math

import sympy
from iree.compiler import ir

from ..dialects.symbolic import bound_dims, merged_runs, type_dims
from ..dialects.torch_ops import (
    BIND,
    TorchBuilder,
    bind_from,
    bindings,
    constant_int,
    constant_int_list,
    defining,
    int_list,
    owner,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import Pass

VIEWS = ("torch.aten.view", "torch.aten.reshape", "torch.aten._unsafe_view")
PERMUTES = ("torch.aten.transpose.int", "torch.aten.permute")


def _dims(value: ir.Value) -> tuple[sympy.Expr, ...] | None:
    found = bindings(value)[:1]
    return bound_dims(found[0]) if found else None


def _merges(op: ir.Operation) -> list[tuple[int, int]] | None:
    """The runs of input dims view `op` merges, where it is one this pass rewrites."""
    if op.name not in VIEWS:
        return None
    x = op.operands[0]
    dims = type_dims(x.type)
    if dims is None or sum(d is None for d in dims) < 2 or type_dims(op.results[0].type) is None:
        return None
    given, made = _dims(x), _dims(op.results[0])
    runs = None if given is None or made is None else merged_runs(given, made)
    if runs is None:
        return None
    merged = [(a, b) for a, b in runs if b > a]
    if not any(None in dims[a:b + 1] for a, b in merged):
        return None
    flat = tuple(None if None in dims[a:b + 1] else int(sympy.prod(dims[a:b + 1]))
                 for a, b in runs)
    if flat != type_dims(op.results[0].type):
        return None  # the flattens' types would not be the view's (a dim torch left unknown)
    return merged


def _flatten(b: TorchBuilder, value: ir.Value, first: int, last: int, bind: bool) -> ir.Value:
    """`value` with dims first..last merged by `flatten.using_ints`, bound from `value`'s
    binding where `bind` (else it takes a view's own binding with its uses)."""
    dims = list(type_dims(value.type))
    run = dims[first:last + 1]
    merged = None if None in run else int(sympy.prod(run))
    shape = dims[:first] + [merged] + dims[last + 1:]
    flat = b("torch.aten.flatten.using_ints", vtensor_type(value.type, shape), value,
             b.int(first), b.int(last))

    def merge(e):
        product = e[first]
        for factor in e[first + 1:last + 1]:
            product = product * factor
        return e[:first] + [product] + e[last + 1:]

    if bind:
        bind_from(flat, value, merge, b.ip)
    return flat


def _flattened(op: ir.Operation, value: ir.Value, runs: list[tuple[int, int]]) -> ir.Value:
    """`value` with each of `runs` (dims first..last) flattened, in place of view `op`."""
    b = TorchBuilder(op)
    for step, (first, last) in enumerate(reversed(runs)):
        value = _flatten(b, value, first, last, bind=step < len(runs) - 1)
    return value


def _divides(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """b / a where it is a product of dims (no denominator); else None."""
    quotient = sympy.cancel(b / a)
    return quotient if sympy.fraction(quotient)[1] == 1 else None


def _atoms(xs, ys) -> tuple[list, list[list[int]], list[list[int]]] | None:
    """The dims `xs` and `ys` are both merges of runs of (in order), and for each dim of
    `xs` and of `ys`, the positions of its run; None where there are none."""
    atoms: list = []
    runs_x: list[list[int]] = [[] for _ in xs]
    runs_y: list[list[int]] = [[] for _ in ys]
    i = j = 0
    x, y = (xs[0], ys[0]) if xs and ys else (None, None)
    while i < len(xs) and j < len(ys):
        runs_x[i].append(len(atoms))
        runs_y[j].append(len(atoms))
        if sympy.expand(x - y) == 0:
            atoms.append(x)
            i, j = i + 1, j + 1
            x, y = (xs[i] if i < len(xs) else None), (ys[j] if j < len(ys) else None)
        elif (rest := _divides(y, x)) is not None:
            atoms.append(y)
            x, j = rest, j + 1
            y = ys[j] if j < len(ys) else None
        elif (rest := _divides(x, y)) is not None:
            atoms.append(x)
            y, i = rest, i + 1
            x = xs[i] if i < len(xs) else None
        else:
            return None
    return (atoms, runs_x, runs_y) if i == len(xs) and j == len(ys) else None


def _permutation(op: ir.Operation, rank: int) -> list[int] | None:
    if op.name == "torch.aten.permute":
        perm = constant_int_list(op.operands[1])
        return [d % rank for d in perm] if perm is not None and len(perm) == rank else None
    a, b = constant_int(op.operands[1]), constant_int(op.operands[2])
    if a is None or b is None:
        return None
    perm = list(range(rank))
    perm[a % rank], perm[b % rank] = perm[b % rank], perm[a % rank]
    return perm


def _split_after_permute(op: ir.Operation):
    """(input, its splits, the permutation of atoms) where `op` is a view of a permute of a
    view this pass rewrites (see the module docstring); else None."""
    if op.name not in VIEWS + ("torch.aten.unflatten.int",):
        return None
    permute = owner(op.operands[0])
    if permute is None or permute.name not in PERMUTES:
        return None
    merge = owner(permute.operands[0])
    if merge is None or merge.name not in VIEWS:
        return None
    x = merge.operands[0]
    xs, ms, cs = _dims(x), _dims(merge.results[0]), _dims(op.results[0])
    x_types = type_dims(x.type)
    if xs is None or ms is None or cs is None or x_types is None:
        return None
    found = _atoms(xs, ms)
    perm = _permutation(permute, len(ms))
    if found is None or perm is None:
        return None
    atoms, runs_x, runs_m = found
    if not any(len(runs_m[k]) > 1 and any(not atoms[a].is_number for a in runs_m[k])
               for k in range(len(ms))):
        return None  # no dynamic dim merged
    if any(len(run) > 1 and x_types[k] is None for k, run in enumerate(runs_x)):
        return None  # a dynamic dim of the input would be split
    order = [a for k in perm for a in runs_m[k]]
    if len(order) != len(cs) or any(sympy.expand(atoms[a] - c) != 0
                                    for a, c in zip(order, cs, strict=True)):
        return None
    splits = [(k, [int(atoms[a]) for a in run]) for k, run in enumerate(runs_x) if len(run) > 1]
    return x, splits, order


def _split(b: TorchBuilder, value: ir.Value, splits: list[tuple[int, list[int]]]) -> ir.Value:
    """`value` with each (dim, sizes) of `splits` split by `unflatten.int`, the last dims first
    so the earlier keep their positions; one size may be -1 (the dim divided by the others),
    each new tensor bound from `value`'s binding."""
    for dim, sizes in reversed(splits):
        dims = list(type_dims(value.type))
        known_part = math.prod(s for s in sizes if s > 0)
        split = b("torch.aten.unflatten.int",
                  vtensor_type(value.type, dims[:dim] + [s if s > 0 else None for s in sizes]
                               + dims[dim + 1:]),
                  value, b.int(dim), int_list(sizes, b.ip, b.loc))

        def spread(e, dim=dim, sizes=sizes, known_part=known_part):
            unknown = ir.AffineFloorDivExpr.get(e[dim], ir.AffineConstantExpr.get(known_part))
            return e[:dim] + [s if s > 0 else unknown for s in sizes] + e[dim + 1:]

        bind_from(split, value, spread, b.ip)
        value = split
    return value


def _unmerged(op: ir.Operation, x: ir.Value, splits, order: list[int]) -> ir.Value:
    b = TorchBuilder(op)
    value = _split(b, x, splits)
    return b("torch.aten.permute", op.results[0].type, value, int_list(order, b.ip, b.loc))


def _erased_if_unused(op: ir.Operation) -> bool:
    """Erase `op` (and its shape bindings) where nothing else reads its result."""
    if any(use.owner.name != BIND for use in op.results[0].uses):
        return False
    for bind in bindings(op.results[0]):
        bind.erase()
    op.erase()
    return True


def _undone(op: ir.Operation) -> ir.Value | None:
    """The tensor a view of a view gives back unchanged (the second restores the first's
    input dims, as `nn.MultiheadAttention` does with its padding mask: merged with the heads,
    split again); None for any other op."""
    if op.name not in VIEWS + ("torch.aten.unflatten.int",):
        return None
    merge = owner(op.operands[0])
    if merge is None or merge.name not in VIEWS + ("torch.aten.flatten.using_ints",):
        return None
    x = merge.operands[0]
    xs, cs = _dims(x), _dims(op.results[0])
    if xs is None or cs is None or len(xs) != len(cs) or x.type != op.results[0].type \
            or any(sympy.expand(a - c) != 0 for a, c in zip(xs, cs, strict=True)):
        return None
    return x


def _regrouping(op: ir.Operation):
    """(atoms, runs of the input, runs of the result) where `op` is a view that regroups dims
    with dynamic ones among them: some input dim splits into atoms (at most one of them
    dynamic) and some result dim merges atoms of different input dims (see the module
    docstring); else None."""
    if op.name not in VIEWS:
        return None
    x = op.operands[0]
    dims, made = type_dims(x.type), type_dims(op.results[0].type)
    if dims is None or made is None or sum(d is None for d in dims) < 2:
        return None
    xs, ys = _dims(x), _dims(op.results[0])
    found = None if xs is None or ys is None else _atoms(xs, ys)
    if found is None:
        return None
    atoms, runs_x, runs_y = found
    if all(len(run) == 1 for run in runs_x) or all(len(run) == 1 for run in runs_y):
        return None  # a merge of runs (`_merges`) or a split only
    if any(sum(not atoms[a].is_number for a in run) > 1 for run in runs_x):
        return None  # unflatten splits a dim into one unknown size at most
    sizes = [int(a) if a.is_number else None for a in atoms]
    if tuple(None if None in (run_sizes := [sizes[a] for a in run]) else math.prod(run_sizes)
             for run in runs_y) != made:
        return None  # the flattens' types would not be the view's (a dim torch left unknown)
    return atoms, runs_x, runs_y


def _regrouped(op: ir.Operation, atoms: list, runs_x: list[list[int]],
               runs_y: list[list[int]]) -> ir.Value:
    """View `op`'s input split into `atoms` (`unflatten.int`, the last dims first) and merged
    into the view's dims (`flatten.using_ints`)."""
    splits = [(dim, [int(atoms[a]) if atoms[a].is_number else -1 for a in run])
              for dim, run in enumerate(runs_x) if len(run) > 1]
    value = _split(TorchBuilder(op), op.operands[0], splits)
    return _flattened(op, value, [(run[0], run[-1]) for run in runs_y if len(run) > 1])


def _kept(x: ir.Value, dims: tuple, at: int, size: ir.Value) -> bool:
    """Whether a view's size `size` keeps dim `at` of its input `x` (dims `dims`)."""
    read = defining(size, "torch.aten.size.int")
    if read is not None:
        return read.operands[0] == x and constant_int(read.operands[1]) in (at, at - len(dims))
    return dims[at] is not None and constant_int(size) == dims[at]


def _unprovable(op: ir.Operation) -> tuple[int, int, list[ir.Value]] | None:
    """(first, last) input dims and the sizes they become, where view `op` is one
    torch-mlir may lower wrong and the bindings cannot regroup (see the module docstring);
    else None."""
    if op.name not in VIEWS:
        return None
    x = op.operands[0]
    dims, made = type_dims(x.type), type_dims(op.results[0].type)
    listed = defining(op.operands[1], "torch.prim.ListConstruct")
    if dims is None or made is None or listed is None or not dims \
            or len(listed.operands) != len(made):
        return None
    sizes = list(listed.operands)
    stated = [constant_int(size) for size in sizes]
    if stated.count(-1) > 1 or any(c is not None and c < -1 for c in stated):
        return None
    head = 0
    while head < min(len(dims), len(sizes)) - 1 and _kept(x, dims, head, sizes[head]):
        head += 1
    tail = 0
    while tail < min(len(dims), len(sizes)) - head - 1 \
            and _kept(x, dims, len(dims) - 1 - tail, sizes[-1 - tail]):
        tail += 1
    middle = slice(head, len(sizes) - tail)
    unknown_stated = -1 in stated[middle] and any(
        m is None and c is not None and c >= 0
        for m, c in zip(made[middle], stated[middle], strict=True))
    if sum(d is None for d in dims[head:len(dims) - tail]) < 2 and not unknown_stated:
        return None
    xs, ys = _dims(x), _dims(op.results[0])
    if xs is not None and ys is not None and _atoms(xs, ys) is not None and not unknown_stated:
        return None
    return head, len(dims) - 1 - tail, sizes[middle]


def _split_middle(op: ir.Operation, first: int, last: int, sizes: list[ir.Value]) -> ir.Value:
    """View `op`'s input with dims first..last flattened to one and split into `sizes`, a
    -1 among them computed from the flattened dim; of the view's type."""
    b = TorchBuilder(op)
    x, made = op.operands[0], op.results[0].type
    flat = _flatten(b, x, first, last, bind=True) if last > first else x
    if len(sizes) == 1:
        return flat if flat.type == made else b("torch.tensor_static_info_cast", made, flat)
    if -1 in (stated := [constant_int(size) for size in sizes]):
        at = stated.index(-1)
        int_type = ir.Type.parse("!torch.int")
        others = None
        for k, size in enumerate(sizes):
            if k != at:
                others = size if others is None else b("torch.aten.mul.int", int_type, others,
                                                       size)
        inferred = b("torch.aten.floordiv.int", int_type, b.size(flat, first), others)
        sizes = sizes[:at] + [inferred] + sizes[at + 1:]
    return b("torch.aten.unflatten.int", made, flat, b.int(first), b.ints(sizes))


class CollapseViews(Pass):
    name = "dync-collapse-views"
    summary = "views of tensors with dynamic dims in forms torch-mlir and IREE lower right"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            for op, x in [(op, x) for op in nested_ops(module) if (x := _undone(op))]:
                for bind in bindings(op.results[0]):  # the tensor it gives back has its own
                    bind.erase()
                op.results[0].replace_all_uses_with(x)
                op.erase()
            for op, found in [(op, found) for op in nested_ops(module)
                              if (found := _split_after_permute(op))]:
                op.results[0].replace_all_uses_with(_unmerged(op, *found))
                permute = owner(op.operands[0])
                op.erase()
                # The permute and the merging view it read, unused now: not left for the
                # regrouping below to rewrite.
                for dead in (permute, owner(permute.operands[0])):
                    if not _erased_if_unused(dead):
                        break
            for op, runs in [(op, runs) for op in nested_ops(module) if (runs := _merges(op))]:
                op.results[0].replace_all_uses_with(_flattened(op, op.operands[0], runs))
                op.erase()
            for op, found in [(op, found) for op in nested_ops(module)
                              if (found := _regrouping(op))]:
                op.results[0].replace_all_uses_with(_regrouped(op, *found))
                op.erase()
            for op, found in [(op, found) for op in nested_ops(module)
                              if (found := _unprovable(op))]:
                op.results[0].replace_all_uses_with(_split_middle(op, *found))
                op.erase()
