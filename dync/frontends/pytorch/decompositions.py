"""ATen decompositions applied after export, for ops torch-mlir (as bundled in IREE) cannot
lower, or lowers into code much slower than the op's definition. Each is the op's definition in
ops torch-mlir does lower."""

import torch
from torch._decomp import get_decompositions

from .rewrite.recurrent import linear, recurrent_layers, step


def _lstm_cell(x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return step("LSTM", linear(x, w_ih, b_ih), tuple(hx), w_hh, b_hh)


def _gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    return step("GRU", linear(x, w_ih, b_ih), (h,), w_hh, b_hh)[0]


def _recurrent(mode: str, lstm: bool = False):
    """`aten.gru.input` & co. (a recurrent layer called functionally; `nn.GRU` modules are
    rewritten before export, see `rewrite/recurrent.py`)."""

    def decomposition(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                      batch_first):
        return recurrent_layers(mode, input, list(hx) if lstm else [hx], params, has_biases,
                                num_layers, bidirectional, batch_first)

    return decomposition


def _batch_norm_inference(x, weight, bias, running_mean, running_var, momentum, eps):
    """Inference batch norm as elementwise ops (torch-mlir has no lowering for this ATen op)."""
    shape = [1, -1] + [1] * (x.dim() - 2)
    scale = torch.rsqrt(running_var + eps)
    if weight is not None:
        scale = scale * weight
    out = (x - running_mean.reshape(shape)) * scale.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    empty = x.new_zeros((0,))
    return out, empty, empty


def _index_add(x, dim, index, source, alpha=1):
    """index_add as an accumulating index_put (a scatter-add in IREE)."""
    moved = x.movedim(dim, 0)
    added = torch.ops.aten.index_put.default(moved, [index], source.movedim(dim, 0) * alpha, True)
    return added.movedim(0, dim)


def _index(x, indices):
    """`x[mask]` -> `x[nonzero(mask)...]` (torch-mlir would lower the mask with its own
    nonzero, see `_nonzero`); `x[i, j, ...]` with several index tensors on the leading dims ->
    one linear index (torch-mlir lowers a single index tensor but not several with dynamic
    sizes)."""
    if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
        expanded = []
        for i in indices:
            masked = i is not None and i.dtype in (torch.bool, torch.uint8)
            expanded.extend(_nonzero(i).unbind(1) if masked else [i])
        linear = _index(x, expanded)
        return torch.ops.aten.index.Tensor(x, expanded) if linear is NotImplemented else linear
    k = len(indices)
    if k < 2 or any(i is None for i in indices) or any(i.dim() != 1 for i in indices):
        return NotImplemented
    linear = indices[0]
    for axis in range(1, k):
        linear = linear * x.shape[axis] + indices[axis]
    return x.reshape((-1, *x.shape[k:]))[linear]


def _unsafe_index(x, indices):
    """`_unsafe_index` (torch's decompositions of interpolation and reflection padding: in-range
    indices) whose index tensors each vary along one dim of their broadcast, `x[..., i[:, None],
    j]`: one `index_select` per indexed dim (torch-mlir lowers no several dynamic index
    tensors); else as `index`."""
    k = next((a for a, i in enumerate(indices) if i is not None), len(indices))
    tensors = list(indices[k:])
    m = len(tensors)
    separable = m > 0 and all(
        t is not None and t.dtype not in (torch.bool, torch.uint8) and t.dim() <= m
        for t in tensors)
    for j, t in enumerate(tensors if separable else ()):
        shape = [1] * (m - t.dim()) + list(t.shape)
        separable &= all(isinstance(n, int) and n == 1 for p, n in enumerate(shape) if p != j)
    if not separable:
        return torch.ops.aten.index.Tensor(x, indices)
    for j, t in enumerate(tensors):
        x = x.index_select(k + j, t.reshape(-1))
    return x


def _pad(x, pad, mode="constant", value=None):
    """`F.pad` in reflect or circular mode: an `index_select` per padded dim of the positions
    it reads (torch-mlir's lowering of reflection padding over a dynamic size fails IREE's
    codegen, and it has none for circular padding). Other modes: torch-mlir's own."""
    if mode not in ("reflect", "circular"):
        return NotImplemented
    for i in range(len(pad) // 2):
        dim, before, after = x.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        if not (before or after):
            continue
        n = x.shape[dim]
        at = torch.arange(-before, n + after, device=x.device)
        if mode == "reflect":
            at = (n - 1) - ((n - 1) - at.abs()).abs()
        else:
            at = torch.where(at < 0, at + n, torch.where(at >= n, at - n, at))
        x = x.index_select(dim, at)
    return x


def _index_put(x, indices, values, accumulate=False):
    """`x[mask] = v`: with one boolean mask over x's leading dims and a value of one element,
    `where` (no data-dependent size); with masks among other indices, the masks through
    `_nonzero`. torch-mlir lowers a masked index_put with its own nonzero, which in IREE 3.13
    writes element 0 when the mask is all false (`tests/test_constructs.py`)."""
    if not any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
        return NotImplemented
    (mask, *rest) = indices
    single = values.dim() == 0 or all(isinstance(n, int) and n == 1 for n in values.shape)
    if not rest and not accumulate and single and mask is not None and mask.dim() <= x.dim():
        mask = mask.bool().reshape(tuple(mask.shape) + (1,) * (x.dim() - mask.dim()))
        return torch.where(mask, values.reshape(()).to(x.dtype), x)
    expanded = []
    for i in indices:
        masked = i is not None and i.dtype in (torch.bool, torch.uint8)
        expanded.extend(_nonzero(i).unbind(1) if masked else [i])
    return torch.ops.aten.index_put.default(x, expanded, values, accumulate)


def _nonzero(x):
    """nonzero as a sort of unique keys (true positions first, in order) cut to the count.

    torch-mlir's own lowering (scan + scatter into a shared init tensor) gives wrong indices
    in IREE 3.13 as soon as a function has two nonzeros (see `lit/frontends/nonzero.py`)."""
    flat = x.reshape(-1) != 0
    n = flat.shape[0]
    positions = torch.arange(n, device=x.device)
    first = torch.sort(torch.where(flat, positions, positions + n)).values
    count = flat.sum().item()
    torch._check(count >= 0)
    torch._check(count <= n)
    index = first[:count]
    coords, stride = [], 1
    for size in reversed(x.shape):
        coords.append(index // stride % size)
        stride = stride * size
    return torch.stack(coords[::-1], dim=1)


def _nonzero_per_dim(x):
    """`torch.where(cond)` and `nonzero(as_tuple=True)`: the indices of the nonzeros, one
    tensor per dim (through `nonzero`, decomposed in turn)."""
    return torch.ops.aten.nonzero.default(x).unbind(1)


def _meshgrid(tensors, indexing="ij"):
    """meshgrid as reshape + expand (torch-mlir's own decomposition yields non-value tensors
    that IREE rejects: "operand types should have the same type as the list contained type")."""
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t.numel() for t in tensors]
    grids = [t.reshape([-1 if i == k else 1 for i in range(len(tensors))]).expand(shape)
             for k, t in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def _attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
               enable_gqa=False):
    """`scaled_dot_product_attention` as q·kᵀ·scale, softmax, ·v — eager's math definition,
    rows that a mask leaves empty giving 0 as eager's do. IREE 3.13 lowers the op to one fused
    online-softmax dispatch that is 15-25x slower on the CPU than the two matmuls and softmax
    it replaces (12 heads x 128 tokens x 64: 28.7 ms against eager's 1.16 ms; the chain, 1.4 ms;
    `python -m benchmarks ops`), and returns NaN on CUDA."""
    if dropout_p != 0.0:
        return NotImplemented  # a training graph: left to IREE
    if enable_gqa and q.size(-3) != k.size(-3):
        groups = q.size(-3) // k.size(-3)
        k, v = k.repeat_interleave(groups, -3), v.repeat_interleave(groups, -3)
    factor = scale if scale is not None else q.size(-1) ** -0.5
    scores = (q @ k.transpose(-2, -1)) * factor
    if is_causal:
        rows = torch.arange(q.size(-2), device=q.device).unsqueeze(-1)
        attn_mask = torch.arange(k.size(-2), device=q.device) <= rows
    if attn_mask is None:
        return torch.softmax(scores, dim=-1) @ v
    if attn_mask.dtype == torch.bool:
        scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
    else:
        scores = scores + attn_mask
    # Rows the mask leaves empty are zeroed after the product, not before (the same for finite
    # values: a row of P·V is that row of P times V). Zeroed before it, the row maximum over a
    # dynamic sequence is fused into the packing of P for a data-tiled product, which IREE
    # 3.13 cannot generate code for ("'affine.delinearize_index' op no basis element may be
    # statically non-positive", lit/upstream/iree-reduction-into-pack-dynamic.mlir): a
    # decoder's masked attention over a dynamic length lost data tiling, the greedy
    # Transformer's matmuls ran untiled.
    empty = scores.amax(dim=-1, keepdim=True) == float("-inf")
    return (torch.softmax(scores, dim=-1) @ v).masked_fill(empty, 0.0)


# ATen ops without a (correct, or fast) torch-mlir lowering, decomposed before import: torch's
# own decompositions of interpolation and reflection padding (IREE 3.13 fails on torch-mlir's
# lowerings of both over a dynamic H x W) and im2col (`F.unfold`, not lowered), then dync's.
_aten = torch.ops.aten
DECOMPOSITIONS = get_decompositions([
    _aten.upsample_bilinear2d.vec, _aten.upsample_bilinear2d.default,
    _aten.upsample_bicubic2d.vec, _aten.upsample_trilinear3d.vec, _aten.upsample_linear1d.vec,
    _aten.reflection_pad1d, _aten.reflection_pad2d, _aten.reflection_pad3d, _aten.im2col,
]) | {
    torch.ops.aten._native_batch_norm_legit_no_training.default: _batch_norm_inference,
    torch.ops.aten.index_add.default: _index_add,
    torch.ops.aten.index.Tensor: _index,
    torch.ops.aten._unsafe_index.Tensor: _unsafe_index,
    torch.ops.aten.pad.default: _pad,
    torch.ops.aten.index_put.default: _index_put,
    torch.ops.aten.nonzero.default: _nonzero,
    torch.ops.aten.meshgrid.indexing: _meshgrid,
    torch.ops.aten.meshgrid.default: _meshgrid,
    torch.ops.aten.where.default: _nonzero_per_dim,
    torch.ops.aten.nonzero_numpy.default: _nonzero_per_dim,  # nonzero(as_tuple=True)
    torch.ops.aten.lstm_cell.default: _lstm_cell,
    torch.ops.aten.gru_cell.default: _gru_cell,
    torch.ops.aten.gru.input: _recurrent("GRU"),
    torch.ops.aten.lstm.input: _recurrent("LSTM", lstm=True),
    torch.ops.aten.rnn_tanh.input: _recurrent("RNN_TANH"),
    torch.ops.aten.rnn_relu.input: _recurrent("RNN_RELU"),
    torch.ops.aten.scaled_dot_product_attention.default: _attention,
}
