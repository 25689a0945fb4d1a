"""Torch functions torch.export cannot trace over sizes it does not know, traced as their
definition instead while dync exports a model:

* `repeat_interleave` by a tensor of counts, whose result's size depends on data (MoE dispatch
  writes `torch.repeat_interleave(experts, counts)`; torch's meta function needs the output
  size and export fails with "Cannot cast FakeTensor to number"). The result's length is then
  an unbacked size, the counts' sum, as `nonzero`'s count is.
* `affine_grid_generator` (`F.affine_grid`, a spatial transformer's sampling grid) over a
  dynamic size: torch's decomposition builds each axis with `torch.linspace(steps=size)`,
  which specializes the size to the example's ("You marked h as dynamic but your code
  specialized it to be a constant"). Here each axis is an `arange` scaled as linspace would.
* `torch.linspace(start, end, steps)` with a dynamic `steps` (a coordinate grid over an
  image: CoordConv, positional grids), which specializes it likewise: here an `arange`
  scaled as torch's kernel does, from `start` up to the middle and from `end` back after it.
* `Tensor.contiguous()`, which asks whether its tensor is contiguous already: over dynamic
  sizes, a guard that a size is not 1, or that two sizes differ (Swin's
  `x[:, :H, :W].contiguous()` after its windows tied h and w so). Here the tensor itself
  where its layout is contiguous at every size, else a copy in the contiguous layout, which
  asks nothing. The values are the same. One difference: eager returns the tensor itself
  where it happens to be contiguous at the call's sizes, so a write into the result then
  writes into it too; the copy does not.
* sizes given as 0-d integer tensors (`n = int(batch.max()) + 1` then `torch.zeros(n, C)`,
  `x.new_zeros(n, C)`, `F.one_hot(i, n)`: the rewrite keeps `int()` and `.item()` of a
  traced tensor a tensor, for branches on it), which torch reads as a Python int, a
  data-dependent guard that fails the export: here each is `.item()`, an unbacked size.
* `F.one_hot` with a count of classes read from data (given so, or left to the largest
  class, `num_classes=-1`), which torch's own makes a Python int: here the comparison with
  an `arange` of the count. (A class outside it is a row of zeros, where eager raises.)
* `take_along_dim`, which specializes dynamic sizes while broadcasting: a `gather`.
* `torch.linalg.norm`/`matrix_norm` over two dims with an `ord` (1, inf, ...), whose
  torch implementation specializes a dynamic size: the sums of magnitudes and their extreme.
* `tril_indices`/`triu_indices` of a dynamic size (the pairs below a diagonal: pairwise
  features, graph edges, DLRM's dot interaction), which specializes it likewise: here the
  indices in closed form, in the same row-major order, their count a size expression.
* `F.embedding` with a `max_norm` (`nn.Embedding(..., max_norm=1.0)`), which first rescales
  the rows it reads of the weight in place (`embedding_renorm_`: IREE has no lowering for it,
  and the compiled module cannot keep a write of a parameter): here the rows read, then
  scaled as the write scales them. No later result differs, as a row written so is within
  the norm from then on; the model's weight is left as it was, where eager changes it.
"""

from __future__ import annotations

import torch
from torch._prims_common import is_contiguous_or_false
from torch.overrides import TorchFunctionMode

from .decompositions import linalg_norm, repeat_interleave


class DataDependentOps(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.contiguous and _over_dynamic_sizes(*args, **kwargs):
            x = args[0]
            if is_contiguous_or_false(x):
                return x
            return x.clone(memory_format=torch.contiguous_format)
        if func in _SIZE_TAKERS and (sized := _with_tensor_sizes(func, args, kwargs)):
            args, kwargs = sized
        if func in _REPLACEMENTS:
            result = _REPLACEMENTS[func](*args, **kwargs)
            if result is not NotImplemented:
                return result
        return func(*args, **kwargs)


#: Functions that take sizes (or counts) as ints, where a 0-d tensor may stand for one: how
#: many leading arguments are tensors (the tensor a method is called on) and not sizes.
_SIZE_TAKERS = {
    torch.full: 0, torch.zeros: 0, torch.ones: 0, torch.empty: 0, torch.arange: 0,
    torch.Tensor.new_zeros: 1, torch.Tensor.new_ones: 1, torch.Tensor.new_empty: 1,
    torch.Tensor.new_full: 1, torch.Tensor.view: 1, torch.Tensor.reshape: 1, torch.reshape: 1,
    torch.Tensor.expand: 1, torch.Tensor.repeat: 1, torch.Tensor.narrow: 1, torch.narrow: 1,
    torch.nn.functional.one_hot: 1}


def _matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    return linalg_norm(x, ord, dim, keepdim, dtype=dtype)


def take_along_dim(x, indices, dim=None):
    """`take_along_dim`, whose torch implementation broadcasts through shape comparisons that
    specialize dynamic sizes: a `gather` of the two expanded to each other's sizes but along
    `dim`, where a size of 1 is broadcast (or of the flattened tensors, without `dim`)."""
    if dim is None:
        return x.reshape(-1).gather(0, indices.reshape(-1))
    if x.dim() != indices.dim():
        return NotImplemented
    dim %= x.dim()
    sizes = [b if isinstance(a, int) and a == 1 else a for a, b in zip(x.shape, indices.shape,
                                                                         strict=True)]
    sizes[dim] = -1  # each keeps its own size along `dim`
    return x.expand(sizes).gather(dim, indices.expand(sizes))


def one_hot(x: torch.Tensor, num_classes=-1) -> torch.Tensor:
    """`F.one_hot(x, num_classes)` where the count of classes is read from data (an unbacked
    size, or -1: the largest class + 1); NotImplemented otherwise (torch's own)."""
    if isinstance(num_classes, int) and num_classes >= 0 or not isinstance(x, torch.Tensor):
        return NotImplemented
    if isinstance(num_classes, int):  # -1: eager refuses an empty x, as max() here does
        num_classes = x.max().item() + 1
    elif num_classes.node.hint is not None:  # a size the export knows: torch's own takes it
        return NotImplemented
    return (x[..., None] == torch.arange(num_classes, device=x.device)).to(torch.int64)


def _size_tensor(value) -> bool:
    return (isinstance(value, torch.Tensor) and value.dim() == 0 and value.dtype != torch.bool
            and not value.is_floating_point() and not value.is_complex())


def _with_tensor_sizes(func, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
    """`args` and `kwargs` of `func` with each 0-d integer tensor given as a size (in lists
    and tuples too) read as one (`.item()`); None where there is none."""
    skip = _SIZE_TAKERS[func]
    sizes = [*args[skip:], *kwargs.values()]
    if not any(_size_tensor(v) or isinstance(v, list | tuple) and any(map(_size_tensor, v))
               for v in sizes):
        return None
    return (*args[:skip], *map(_as_size, args[skip:])), {k: _as_size(v) for k, v in kwargs.items()}


def _as_size(value):
    if _size_tensor(value):
        return value.item()
    if isinstance(value, list | tuple):
        return type(value)(_as_size(v) for v in value)
    return value


def _functional_affine_grid(theta: torch.Tensor, size: list,
                            align_corners: bool | None = None) -> torch.Tensor:
    return affine_grid(theta, size, bool(align_corners))


def affine_grid(theta: torch.Tensor, size: list, align_corners: bool) -> torch.Tensor:
    """`torch.affine_grid_generator(theta, size, align_corners)` for a 4-d or 5-d `size`
    (N, C, [D,] H, W) with a dynamic spatial size; NotImplemented for static ones (torch's
    own then)."""
    spatial = list(size[2:])
    if len(spatial) not in (2, 3) or not any(isinstance(s, torch.SymInt) for s in spatial):
        return NotImplemented
    # Per axis (x along W first, the order of the grid's last dim), linspace(-a, a, n) with
    # a = (n - 1) / n, or 1 with align_corners; a single step is 0 either way. Each axis is
    # broadcast along its own dim of the grid, and the grid is theta's affine map of them,
    # elementwise (no stacked base grid: a stack of dynamic shapes is a copy per part in IREE).
    k = len(spatial)
    grid = theta[:, :, k].reshape(-1, *[1] * k, k)  # the translation
    for axis, n in enumerate(reversed(spatial)):
        steps = torch.arange(n, dtype=theta.dtype, device=theta.device)
        scale = torch.sym_max(n - 1, 1) if align_corners else n
        coordinate = ((2 * steps - (n - 1)) / scale).reshape(
            [n if d == k - 1 - axis else 1 for d in range(k)] + [1])
        grid = grid + theta[:, :, axis].reshape(-1, *[1] * k, k) * coordinate
    return grid.expand(theta.shape[0], *spatial, k)


def _over_dynamic_sizes(x, memory_format=torch.contiguous_format) -> bool:
    """Whether `x.contiguous(memory_format)` is of a tensor with a dynamic size, in the
    default layout."""
    return memory_format == torch.contiguous_format and isinstance(x, torch.Tensor) \
        and any(isinstance(n, torch.SymInt) for n in x.shape)


def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None,
             requires_grad=False, out=None):
    """`torch.linspace` with a dynamic number of `steps` between numbers `start` and `end`, the
    values torch's kernel gives: `start + i * step` below the middle, `end - (steps - 1 - i) *
    step` from it, `step` computed in the result's dtype; NotImplemented otherwise."""
    if not isinstance(steps, torch.SymInt) or out is not None or requires_grad \
            or isinstance(start, torch.Tensor) or isinstance(end, torch.Tensor):
        return NotImplemented
    dtype = dtype or torch.get_default_dtype()
    if not dtype.is_floating_point:
        return NotImplemented
    i = torch.arange(steps, device=device).to(dtype)  # a float arange guards steps != 1
    first, last = (torch.scalar_tensor(v, dtype=dtype, device=device) for v in (start, end))
    step = (last - first) / (steps - 1)
    single = ~torch.isfinite(step)  # one step (a division by 0): torch gives `start`
    step = torch.where(single, torch.zeros_like(step), step)
    values = torch.where(i < steps // 2, first + step * i, last - step * ((steps - 1) - i))
    return torch.where(single, first, values)


# `F.affine_grid` reaches the mode itself (the generator it calls then runs without it).
_AFFINE_GRIDS = {torch.affine_grid_generator: affine_grid,
                 torch.nn.functional.affine_grid: _functional_affine_grid}


def _triangle(lower: bool):
    def indices(row, col, offset=0, *, dtype=torch.int64, device=None, layout=None,
                pin_memory=None):
        if not any(isinstance(n, torch.SymInt) for n in (row, col)):
            return NotImplemented
        return triangle_indices(row, col, offset, lower, device).to(dtype)

    return indices


def triangle_indices(rows, cols, offset, lower: bool, device=None) -> torch.Tensor:
    """`torch.tril_indices(rows, cols, offset)` (`lower`) or `triu_indices`, computed from
    positions: the same values, with a count that is a size expression."""
    if lower:
        r, c = _lower_triangle(rows, cols, offset, device)
        return torch.stack([r, c])
    # Reversing both axes maps the upper triangle on the lower one of offset
    # cols - rows - offset, in reverse row-major order.
    r, c = _lower_triangle(rows, cols, cols - rows - offset, device, reverse=True)
    return torch.stack([(rows - 1) - r, (cols - 1) - c])


def _lower_triangle(rows, cols, offset, device, reverse: bool = False):
    """The (row, column) of the elements of a `rows` x `cols` matrix at or below diagonal
    `offset`, in row-major order (reversed with `reverse`), in closed form: their count is a
    size expression, not a `nonzero`'s count read back. Row `r` holds
    `clamp(r + offset + 1, 0, cols)` elements: none before row `first`, then a staircase of
    `a, a + 1, ...` up to row `full`, then full rows. A position in the staircase is
    inverted through the quadratic `S(k) = k * a + k * (k - 1) / 2`, corrected by one either
    way for the rounding of the square root."""
    first = torch.sym_min(torch.sym_max(0, -offset), rows)
    full = torch.sym_min(torch.sym_max(cols - offset - 1, first), rows)
    a = first + offset + 1

    def start(k):  # S(k): the elements of the staircase's first k rows
        return k * a + k * (k - 1) // 2

    stair = start(full - first)
    total = stair + (rows - full) * cols
    p = torch.arange(total, device=device)
    if reverse:
        p = (total - 1) - p
    b = 2 * a - 1
    k = ((torch.sqrt((p * 8 + b * b).double()) - b) / 2).floor().long()
    k = k + (start(k + 1) <= p).long() - (start(k) > p).long()
    q = (p - stair).clamp(min=0)
    width = torch.sym_max(cols, 1)
    in_stair = p < stair
    r = torch.where(in_stair, first + k, full + q // width)
    c = torch.where(in_stair, p - start(k), q % width)
    # The clamps change nothing (nothing is left to clamp where a bound is -1: there are no
    # elements); they show the bounds to dync's index checks.
    return r.clamp(0, rows - 1), c.clamp(0, cols - 1)


_TRIANGLES = {torch.tril_indices: _triangle(lower=True), torch.triu_indices: _triangle(lower=False)}


#: The functions this module replaces, and what it calls instead (NotImplemented: torch's own
#: after all).
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if max_norm is None:
        return NotImplemented
    rows = torch.nn.functional.embedding(input, weight, padding_idx, None, norm_type,
                                         scale_grad_by_freq, sparse)
    norms = torch.linalg.vector_norm(rows, norm_type, dim=-1, keepdim=True)
    return rows * torch.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)


_REPLACEMENTS = {
    torch.repeat_interleave: repeat_interleave, torch.Tensor.repeat_interleave: repeat_interleave,
    **_TRIANGLES, **_AFFINE_GRIDS, torch.linspace: linspace,
    torch.nn.functional.one_hot: one_hot,
    torch.linalg.norm: linalg_norm, torch.linalg.matrix_norm: _matrix_norm,
    torch.take_along_dim: take_along_dim, torch.Tensor.take_along_dim: take_along_dim,
    torch.nn.functional.embedding: embedding}
