"""ATen decompositions applied after export, for ops torch-mlir (as bundled in IREE) cannot
lower, or lowers into code much slower than the op's definition. Each is the op's definition in
ops torch-mlir does lower."""

import functools
import itertools
import math

import torch
from torch._decomp import decomposition_table, get_decompositions
from torch.fx.experimental.symbolic_shapes import statically_known_true

from .einsum import einsum_as_matmul
from .integer_ops import INTEGER_OPS
from .rewrite.recurrent import linear, recurrent_layers, step
from .shape_exprs import size_range
from .special_functions import FROM_TORCH, SPECIAL_FUNCTIONS
from .transposed_convolution import per_dim, transposed_convolution


def _lstm_cell(x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return step("LSTM", linear(x, w_ih, b_ih), tuple(hx), w_hh, b_hh)


def _gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    return step("GRU", linear(x, w_ih, b_ih), (h,), w_hh, b_hh)[0]


def _rnn_cell(mode: str):
    """`aten.rnn_tanh_cell` / `rnn_relu_cell` (`nn.RNNCell`), which IREE cannot lower."""
    def decomposition(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
        return step(mode, linear(x, w_ih, b_ih), (h,), w_hh, b_hh)[0]

    return decomposition


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
    one linear index, of their broadcast shape (torch-mlir lowers a single index tensor but
    not several with dynamic sizes)."""
    if len(indices) == 1 and indices[0] is not None and indices[0].dtype == torch.bool \
            and indices[0].dim() >= 1:
        # One mask over the leading dims: x's rows at the flat positions it holds.
        mask = indices[0]
        return x.reshape((-1, *x.shape[mask.dim():]))[_true_positions(mask)]
    if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
        expanded = []
        for i in indices:
            masked = i is not None and i.dtype in (torch.bool, torch.uint8)
            expanded.extend(_nonzero(i).unbind(1) if masked else [i])
        linear = _index(x, expanded)
        return torch.ops.aten.index.Tensor(x, expanded) if linear is NotImplemented else linear
    k = len(indices)
    if k < 2 or any(i is None for i in indices):
        return NotImplemented
    # Each index read through its dim's positions first: eager's range for each ([-n, n),
    # checked by dync-check-indices) and its negatives wrapped, which the linear index alone
    # would lose (x[i, -1] read the row before's last element, x[0, 5] of 3 x 4 x[1, 1]).
    linear = None
    for axis, index in enumerate(indices):
        position = torch.arange(x.shape[axis], device=index.device)[index]
        linear = position if linear is None else linear * x.shape[axis] + position
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
    codegen, and it has none for circular padding). A negative constant pad (a crop, as
    `F.fold`'s col2im writes its padding) is a slice, the rest padded: torch-mlir's lowering
    gave IREE negative offsets ("expected offsets to be non-negative"). A constant pad by
    amounts of a sign known only at run time (`F.pad(up, [d // 2, d - d // 2])` of a size
    difference `d`: U-Net's skip connections, padded or cropped to the encoder's odd sizes)
    reads `x` by positions too, `value` outside it, along the dims padded so (torch-mlir's
    lowering took a negative amount as an offset: reads off the end of a buffer at run
    time); dims padded by amounts never negative stay a pad. Other modes: torch-mlir's own."""
    if mode == "constant":
        if all(_never_negative(p) for p in pad):
            return NotImplemented
        if all(isinstance(p, int) for p in pad):
            return _cropped(x, pad, value)
    elif mode not in ("reflect", "circular"):
        return NotImplemented
    fill = 0 if value is None else value
    for i in range(len(pad) // 2):
        dim, before, after = x.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        if statically_known_true(before == 0) and statically_known_true(after == 0):
            continue  # a pad computed from a size is not read as a bool (a guard on it)
        if mode == "constant" and _never_negative(before) and _never_negative(after):
            x = torch.constant_pad_nd(x, [0, 0] * i + [before, after], fill)
            continue
        n = x.shape[dim]
        at = torch.arange(-before, n + after, device=x.device)
        if mode == "reflect":
            at = (n - 1) - ((n - 1) - at.abs()).abs()
        elif mode == "circular":
            at = torch.where(at < 0, at + n, torch.where(at >= n, at - n, at))
        # A no-op for every pad eager takes (less than n; export asserts it of a pad that is
        # a size) that shows `dync-check-indices` the reads in range: no run-time check.
        read = x.index_select(dim, at.clamp(0, n - 1))
        x = read if mode != "constant" else read.masked_fill(
            ((at < 0) | (at >= n)).view([-1] + [1] * (x.dim() - 1 - dim)), fill)
    return x


def _never_negative(size) -> bool:
    return size >= 0 if isinstance(size, int) else statically_known_true(size >= 0)


def _cropped(x, pad, value):
    """`x` sliced where `pad` (F.pad's order, last dim first) is a negative int, then padded
    by the rest."""
    rest = []
    for i in range(len(pad) // 2):
        dim, before, after = x.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        start = -before if isinstance(before, int) and before < 0 else 0
        cut = -after if isinstance(after, int) and after < 0 else 0
        if start or cut:
            x = x.narrow(dim, start, x.shape[dim] - start - cut)
        rest += [before if start == 0 else 0, after if cut == 0 else 0]
    if all(isinstance(p, int) and p == 0 for p in rest):
        return x.clone()
    return torch.constant_pad_nd(x, rest, 0 if value is None else value)


def linalg_norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):
    """`torch.linalg.norm` (torch-mlir lowers no `linalg_norm` over two dims): a vector norm
    (`ord=None` over any dims is the 2-norm of their elements, Frobenius for a matrix), and
    the matrix norms of sums of magnitudes, `ord` 1, -1, inf, -inf; NotImplemented for the
    spectral ones (2, -2, 'nuc': singular values)."""
    dims = [dim] if isinstance(dim, int) else list(dim) if dim is not None else None
    if dtype is not None:
        x = x.to(dtype)
    if ord is None or ord == "fro" or (dims is not None and len(dims) == 1) or (
            dims is None and x.dim() == 1):
        if isinstance(ord, str) and ord != "fro":
            return NotImplemented
        order = 2 if ord is None or ord == "fro" else ord
        return torch.linalg.vector_norm(x, order, dims, keepdim)
    if dims is None:
        dims = [-2, -1]
    if len(dims) != 2 or ord not in (1, -1, math.inf, -math.inf):
        return NotImplemented
    rows, columns = (d % x.dim() for d in dims)
    summed, other = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = x.abs().sum(summed, keepdim=True)
    result = sums.amax(other, keepdim=True) if ord > 0 else sums.amin(other, keepdim=True)
    return result if keepdim else result.squeeze(max(rows, columns)).squeeze(min(rows, columns))


def _hypot(a, b):
    """`hypot` as eager computes it without overflow: the larger magnitude times
    sqrt(1 + ratio^2); an infinite side is inf, even beside a NaN."""
    a, b = a.abs(), b.abs()
    big, small = torch.maximum(a, b), torch.minimum(a, b)
    ratio = torch.where(big == 0, torch.zeros_like(big), small / big)
    result = big * torch.sqrt(1 + ratio * ratio)
    return torch.where(torch.isinf(a) | torch.isinf(b), torch.full_like(result, math.inf), result)


def _signbit(x):
    """`signbit`: the sign bit, also of -0.0 and of NaNs (through the integer bits)."""
    if not x.is_floating_point():
        return x < 0
    bits = {torch.float32: torch.int32, torch.float64: torch.int64,
            torch.float16: torch.int16}.get(x.dtype)
    return x.view(bits) < 0 if bits is not None else x < 0


def _copysign(a, b):
    """`copysign`: |a| with b's sign bit (-0.0 and negative NaNs count as negative)."""
    b = b if isinstance(b, torch.Tensor) else torch.scalar_tensor(b, dtype=torch.float64)
    magnitude = a.abs() if a.is_floating_point() else a.abs().to(torch.get_default_dtype())
    return torch.where(_signbit(b), -magnitude, magnitude)


def _sinc(x):
    """`sinc`: sin(pi x) / (pi x), 1 at 0."""
    scaled = x * math.pi
    return torch.where(x == 0, torch.ones_like(x), torch.sin(scaled) / scaled)


def _std_mean(x, dim=None, *, correction=None, keepdim=False, unbiased=None):
    """`std_mean` (torch-mlir lowers none): `var_mean`'s square root."""
    if unbiased is not None and correction is None:
        correction = 1 if unbiased else 0
    var, mean = torch.var_mean(x, dim, correction=correction, keepdim=keepdim)
    return var.sqrt(), mean


def _index_fill(x, dim, index, value):
    """`index_fill` (torch-mlir lowers none): `value` where the position along `dim` is one
    of `index` (negatives counted from the end), x elsewhere."""
    dim %= max(x.dim(), 1)
    n = x.shape[dim] if x.dim() else 1
    index = torch.where(index < 0, index + n, index).reshape(-1)
    hit = (torch.arange(n, device=x.device)[:, None] == index[None, :]).any(1)
    shape = [1] * x.dim()
    if x.dim():
        shape[dim] = n
    value = value if isinstance(value, torch.Tensor) else torch.scalar_tensor(value)
    return torch.where(hit.reshape(shape), value.to(x.dtype), x)


def _scatter_reduce_mode(x, dim, index, src, reduce):
    """`scatter(..., reduce="add" | "multiply")` as `scatter_reduce` sum or prod onto x."""
    if not isinstance(src, torch.Tensor):
        src = torch.full_like(index, src, dtype=x.dtype)
    return torch.scatter_reduce(x, dim % x.dim(), index, src,
                                {"add": "sum", "multiply": "prod"}[reduce], include_self=True)


def _argwhere(x):
    """`argwhere`: `nonzero` (dync's own)."""
    return torch.nonzero(x)


def _trapezoid(y, dx=1, dim=-1):
    """`trapezoid` with a constant spacing: dx times the sum less half the ends."""
    n = y.shape[dim]
    if n == 0:
        return y.sum(dim) * 0
    return dx * (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) / 2)


def _vander(x, N=None):
    """`linalg_vander`: the powers 0 .. N - 1 of each x along a new last dim, as products
    (a float power of a negative base is NaN in IREE's `powf`)."""
    n = x.shape[-1] if N is None else N
    column = x[..., None]
    return torch.cat([torch.ones_like(column), column.expand(*x.shape, n - 1)], -1).cumprod(-1)


def _log10(x):
    """`log10` as `log(x) / ln 10`: IREE 3.13's CPU backend failed to link the `log10` it
    lowers to (a library call)."""
    return torch.log(x) * (1 / math.log(10))


def _nansum(x, dim=None, keepdim=False, *, dtype=None):
    """`nansum`: the sum with NaNs as 0."""
    x = x if dtype is None else x.to(dtype)
    if x.is_floating_point():
        x = torch.where(x.isnan(), torch.zeros_like(x), x)
    return x.sum(dim, keepdim=keepdim) if dim is not None else x.sum()


def _nanmean(x, dim=None, keepdim=False, *, dtype=None):
    """`nanmean`: the sum of the values that are not NaN over their count (NaN where none)."""
    x = x if dtype is None else x.to(dtype)
    count = x.isnan().logical_not().to(x.dtype)
    total = _nansum(x, dim, keepdim)
    return total / (count.sum(dim, keepdim=keepdim) if dim is not None else count.sum())


def _erfc(x):
    """`erfc` as 1 - erf (torch-mlir lowers no erfc); loses the tail's relative precision
    beyond |x| of about 4, where erfc is below 1e-8."""
    return 1 - torch.erf(x)


def _ndtr(x):
    """`special.ndtr`, the standard normal's distribution function: (1 + erf(x / sqrt 2)) / 2."""
    return 0.5 * (1 + torch.erf(x * (1 / math.sqrt(2))))


def _entr(x):
    """`special.entr`: -x log x, 0 at 0, -inf below 0 (NaN stays NaN)."""
    entropy = -torch.xlogy(x, x)
    return torch.where(x < 0, torch.full_like(x, -math.inf), entropy)


def _float_power(x, exponent):
    """`float_power`: the power in float64."""
    x = x.to(torch.float64) if isinstance(x, torch.Tensor) else x
    if isinstance(exponent, torch.Tensor):
        exponent = exponent.to(torch.float64)
    return torch.pow(x, exponent)


def _pairwise_distance(a, b, p=2.0, eps=1e-6, keepdim=False):
    """`pairwise_distance`: the p-norm of a - b + eps along the last dim."""
    return torch.linalg.vector_norm(a - b + eps, p, -1, keepdim)


def _bincount(x, weights=None, minlength=0):
    """`bincount` with weights (torch-mlir lowers it without them): the weights added into
    the bins of the unweighted count's length."""
    if weights is None:
        return NotImplemented
    bins = torch.bincount(x, None, minlength)
    dtype = torch.float32 if weights.dtype == torch.float32 else torch.float64  # eager's
    return torch.zeros_like(bins, dtype=dtype).index_add(0, x, weights.to(dtype))


def _isfinite(x):
    """`isfinite` (torch-mlir has no lowering): below infinity in magnitude, NaN not."""
    if x.is_complex():
        return NotImplemented
    if not x.is_floating_point():
        return torch.ones_like(x, dtype=torch.bool)
    return x.abs() < math.inf


def _index_reduce(x, dim, index, source, reduce, *, include_self=True):
    """`index_reduce` (segment max, min, product or mean by an index along `dim`) as the
    `scatter_reduce` of the index broadcast along the other dims; torch-mlir has no lowering
    of it."""
    dim %= max(x.dim(), 1)
    shape = [1] * source.dim()
    shape[dim] = -1
    index = index.reshape(shape).expand_as(source)
    return x.scatter_reduce(dim, index, source, reduce, include_self=include_self)


def _source_positions(n, m, align_corners, scale, cubic, device):
    """Where each of the m output positions along a dim reads the n inputs, as ATen's CPU
    kernels compute it (`area_pixel_compute_source_index`, in float32). Over a dynamic size
    the ratio is computed in tensor arithmetic: the FX importer takes no `sym_float`, which
    torch's own decompositions use."""
    at = torch.arange(m, device=device, dtype=torch.float32)
    one = torch.ones((), device=device, dtype=torch.float32)
    if align_corners:
        ratio = (one * (n - 1)) / (one * (m - 1)).clamp(min=1.0)
        return at * ratio
    ratio = one / scale if scale is not None and scale > 0 else (one * n) / m
    src = ratio * (at + 0.5) - 0.5
    return src if cubic else src.clamp(min=0.0)


def _cubic_weights(t):
    """The four taps' weights at fraction t (ATen's `get_cubic_upsample_coefficients`, A=-0.75)."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _taps(kind, t):
    """(offset from floor(src), weight) of the inputs an output at fraction t reads."""
    if kind == "cubic":
        return list(zip((-1, 0, 1, 2), _cubic_weights(t), strict=True))
    return [(0, 1 - t), (1, t)]


def _resample_dim(x, dim, m, align_corners, scale, kind):
    """`x` resampled along `dim` to m positions (any ratio, `align_corners` or not): the rows
    each output reads gathered by `index_select` and blended by their weights."""
    n = x.shape[dim]
    src = _source_positions(n, m, align_corners, scale, kind == "cubic", x.device)
    shape = [-1] + [1] * (x.dim() - 1 - dim)
    floor = src.floor()
    base = floor.to(torch.int64)
    frac = src - floor
    if kind == "linear":  # src >= 0; at the last row the upper tap is clamped
        frac = frac.clamp(0.0, 1.0)
    taps = [(x.index_select(dim, (base + offset).clamp(0, n - 1)),
             weight.to(x.dtype).reshape(shape)) for offset, weight in _taps(kind, frac)]
    return _blend(taps)


def _blend(taps):
    (first, _), *rest = taps
    if len(taps) == 2:  # x1 + (x2 - x1) * t, as ATen's kernels blend two rows
        (second, t), = rest
        return first + (second - first) * t
    return sum(tap * weight for tap, weight in taps)


def _upsample_by(x, dim, k, kind):
    """`x` upsampled along `dim` by an integer factor k (align_corners=False): output row
    k*i + r reads rows i + offset at weights that depend on r only, so the output, viewed as
    [..., i, r, ...], is one elementwise sum of shifted slices of `x` (edge rows repeated, as
    ATen clamps) times weights broadcast along r. No gathers and no interleaving copies:
    IREE 3.13 scalarizes a gather over a dynamic size (a bilinear x2 of 32x64x96 ran 6.6x
    slower than eager through `index_select`s)."""
    n = x.shape[dim]
    wide = [*x.shape[:dim + 1], k, *x.shape[dim + 1:]]
    if kind == "nearest":
        return x.unsqueeze(dim + 1).expand(wide).flatten(dim, dim + 1)
    # Phase r reads src = (r + 0.5) / k - 0.5 around row i; the offsets its taps reach:
    srcs = [(r + 0.5) / k - 0.5 for r in range(k)]
    reach = 2 if kind == "cubic" else 1
    offsets = sorted({math.floor(src) + offset for src in srcs
                      for offset, weight in _taps(kind, src - math.floor(src)) if weight != 0})
    first, last = x.narrow(dim, 0, 1), x.narrow(dim, n - 1, 1)
    padded = torch.cat([first] * reach + [x] + [last] * reach, dim)
    along = [1] * (x.dim() + 1)
    along[dim + 1] = k
    # A tensor built in the graph: a constant tensor made inside a decomposition is not one
    # torch.export tracks.
    phase = (torch.arange(k, device=x.device, dtype=torch.float32) + 0.5) / k - 0.5
    out = None
    for offset in offsets:
        w = _kernel(kind, phase - offset).to(x.dtype).reshape(along)
        term = padded.narrow(dim, reach + offset, n).unsqueeze(dim + 1) * w
        out = term if out is None else out + term
    return out.flatten(dim, dim + 1)


def _kernel(kind, d):
    """The interpolation kernel's weight at distance d from a tap (tent, or Keys' cubic)."""
    d = d.abs()
    if kind != "cubic":
        return (1 - d).clamp(min=0.0)
    near, far = _cubic_weights(d)[1], _cubic_weights(d - 1)[0]
    return torch.where(d <= 1, near, torch.where(d < 2, far, torch.zeros_like(d)))


def _integer_factor(n, m, scale):
    """k when m = k * n for an integer k >= 1 (and a given scale, if any, is k), else None."""
    candidates = [int(scale)] if scale is not None and scale > 0 and scale == int(scale) \
        else range(1, 9)
    return next((k for k in candidates if k >= 1 and statically_known_true(m == k * n)), None)


def _resample(kind, vec=False):
    """`upsample_nearest*`, `upsample_linear1d`, `bilinear2d`, `trilinear3d` and `bicubic2d`
    as one resampling per spatial dim (rows, then columns, ...): by an integer factor, a blend
    of shifted slices (`_upsample_by`); otherwise two gathers and a blend per dim (four for
    bicubic) over the partly resampled image, where torch's decomposition gathers all 2^d
    (4^d) corners of the output. Nearest resampling by other factors is left to
    torch-mlir's lowering."""

    def decomposition(x, output_size, *rest):
        align_corners, *scales = (False, *rest) if kind == "nearest" else rest
        spatial = x.dim() - 2
        if vec:
            (factors,) = scales
            if output_size is None:
                output_size = [_scaled_size(x.shape[2 + d], f) for d, f in enumerate(factors)]
            scales = factors
        scales = list(scales or ()) + [None] * (spatial - len(scales or ()))
        factors = [None if align_corners else
                   _integer_factor(x.shape[2 + d], output_size[d], scales[d])
                   for d in range(spatial)]
        if kind == "nearest" and None in factors:
            return NotImplemented
        for d, k in enumerate(factors):
            if k == 1:
                continue
            x = (_upsample_by(x, 2 + d, k, kind) if k is not None else
                 _resample_dim(x, 2 + d, output_size[d], align_corners, scales[d], kind))
        return x.contiguous()

    return decomposition


def _scaled_size(n, factor):
    return n * int(factor) if int(factor) == factor else torch.sym_int(n * factor)


def _kthvalue(x, k, dim=-1, keepdim=False):
    """The k-th smallest along `dim` and its index: a stable sort, then row k - 1 (NaN sorts
    last, as eager's `kthvalue` counts it largest; of equal values, the first). torch-mlir
    lowers no `kthvalue`, nor `median` (below)."""
    values, indices = torch.sort(x, dim=dim, stable=True)
    return _picked(values, indices, dim, k - 1, keepdim)


def _median(x, dim, keepdim=False):
    """The lower median along `dim` and its index (`kthvalue` at (n + 1) // 2); a row with a
    NaN has the NaN as median, at its first NaN, as eager's does."""
    if x.dim() == 0:
        return x, torch.zeros_like(x, dtype=torch.int64)
    values, indices = _kthvalue(x, (x.shape[dim] + 1) // 2, dim, keepdim)
    if not x.is_floating_point():
        return values, indices
    nan = x.isnan()
    first = nan.to(torch.uint8).argmax(dim, keepdim=keepdim)
    found = nan.any(dim, keepdim=keepdim)
    return (torch.where(found, torch.full_like(values, float("nan")), values),
            torch.where(found, first, indices))


def _nanmedian(x, dim, keepdim=False):
    """The lower median of the values that are not NaN along `dim` and its index (NaN where
    a row has only NaNs): row (count - 1) // 2 of a stable sort, NaNs sorted last."""
    if x.dim() == 0 or not x.is_floating_point():
        return _median(x, dim, keepdim)
    values, indices = torch.sort(x, dim=dim, stable=True)
    count = x.isnan().logical_not().sum(dim, keepdim=True)
    at = ((count - 1) // 2).clamp(min=0)
    picked = values.gather(dim, at), indices.gather(dim, at)
    return tuple(p if keepdim else p.squeeze(dim) for p in picked)


def _quantile(ignore_nan: bool):
    """`quantile`/`nanquantile` (torch-mlir lowers neither) as eager computes them: the sorted
    values (NaNs last), the rank q * (n - 1) of each q (of the values that are not NaN for
    `nanquantile`; the last, a NaN, where `quantile` meets one), the values at the ranks
    below and above it, and eager's interpolation between them."""

    def quantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
        values = x.reshape(-1) if dim is None or x.dim() == 0 else x.movedim(dim, -1)
        values = torch.sort(values, dim=-1).values
        many = isinstance(q, torch.Tensor) and q.dim() == 1
        qs = (q if isinstance(q, torch.Tensor) else torch.scalar_tensor(q, dtype=x.dtype))
        qs = qs.reshape(-1, *[1] * values.dim())  # (Q, 1, ..., 1)
        if ignore_nan:
            ranks = (qs * (values.isnan().logical_not().sum(-1, keepdim=True) - 1)).clamp(min=0)
        else:
            last = values.shape[-1] - 1
            ranks = torch.where(values.isnan().any(-1, keepdim=True), qs * 0 + last, qs * last)
        if interpolation in ("lower", "higher", "nearest"):
            ranks = {"lower": torch.floor, "higher": torch.ceil, "nearest": torch.round}[
                interpolation](ranks)
        stacked = values.unsqueeze(0).expand(qs.shape[0], *values.shape)
        below = ranks.to(torch.int64)
        result = stacked.gather(-1, below)
        if interpolation in ("linear", "midpoint"):
            above = stacked.gather(-1, torch.ceil(ranks).to(torch.int64))
            weight = ranks - below if interpolation == "linear" else torch.full_like(ranks, 0.5)
            result = torch.where(weight < 0.5, result + weight * (above - result),
                                 above - (above - result) * (1 - weight))
        result = result.squeeze(-1)  # (Q, *the other dims)
        if keepdim:
            result = (result.reshape(result.shape[0], *[1] * x.dim()) if dim is None
                      else result.unsqueeze(1 + dim % x.dim()) if x.dim() else result)
        return result if many else result.squeeze(0)

    return quantile


def _picked(values, indices, dim, at, keepdim):
    picked = values.narrow(dim, at, 1), indices.narrow(dim, at, 1)
    return tuple(p if keepdim else p.squeeze(dim) for p in picked)


def _whole(statistic):
    """`median()`/`nanmedian()` of every element: the statistic of the flattened tensor."""
    return lambda x: statistic(x.reshape(-1), 0)[0]


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2010): single-precision
# polynomials in w = -log(1 - y^2), below and above w = 5.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfinv(y):
    """erfinv (torch-mlir lowers none): Giles' approximation, within 3e-7 (relative) of
    eager's over [-1, 1] in float32; +-inf at +-1, NaN beyond. Not in float64, where it would
    lose precision (Newton steps on `erf` would restore it, but IREE 3.13 lowers no float64
    `erf`, and its float32 one is too coarse in the tails for a step to help)."""
    if y.dtype == torch.float64:
        return NotImplemented
    wide = y.dtype in (torch.float16, torch.bfloat16)
    z = y.float() if wide else y
    w = -torch.log((1 - z) * (1 + z))

    def poly(coefficients, t):
        value = torch.full_like(t, coefficients[0])
        for c in coefficients[1:]:
            value = value * t + c
        return value

    central = poly(_ERFINV_CENTRAL, w - 2.5)
    tail = poly(_ERFINV_TAIL, torch.sqrt(w.clamp(min=5.0)) - 3.0)
    x = torch.where(w < 5.0, central, tail) * z
    x = torch.where(z.abs() == 1, z * float("inf"), x)
    x = torch.where(z.abs() > 1, float("nan"), x)
    return x.to(y.dtype) if wide else x


def _without_nones(x, indices):
    """Index tensors for `indices` with the whole of each leading dim a None stands for (an
    arange shaped to broadcast before the other indices) and trailing Nones dropped, or None
    where a None lies between index tensors. The importer takes no None in an index list
    (`F.fold`: torch's col2im puts `[None, None, rows, columns]`)."""
    indices = list(indices)
    while indices and indices[-1] is None:
        indices.pop()
    lead = next((k for k, i in enumerate(indices) if i is not None), len(indices))
    if any(i is None or i.dtype in (torch.bool, torch.uint8) for i in indices[lead:]):
        return None  # a mask stands for as many index tensors as its dims: `_index_put`'s
    rank = max((i.dim() for i in indices[lead:]), default=0)
    return [torch.arange(x.shape[k], device=x.device).reshape(
        [-1 if j == k else 1 for j in range(lead)] + [1] * rank) for k in range(lead)] + \
        indices[lead:]


def _unsafe_index_put(x, indices, values, accumulate=False):
    """`_unsafe_index_put` with Nones in its indices (`_without_nones`) as an `index_put`."""
    if all(i is not None for i in indices) or (filled := _without_nones(x, indices)) is None:
        return NotImplemented
    return torch.ops.aten.index_put.default(x, filled, values, accumulate)


def _index_put(x, indices, values, accumulate=False):
    """`x[mask] = v`: with one boolean mask over x's leading dims and a value of one element,
    `where` (no data-dependent size); with masks among other indices, the masks through
    `_nonzero`. torch-mlir lowers a masked index_put with its own nonzero, which in IREE 3.13
    writes element 0 when the mask is all false (`tests/test_constructs.py`). Nones among the
    indices: `_without_nones`."""
    if any(i is None for i in indices) and (filled := _without_nones(x, indices)) is not None:
        return torch.ops.aten.index_put.default(x, filled, values, accumulate)
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
    """nonzero: the coordinates of `_true_positions`."""
    index = _true_positions(x)
    coords, stride = [], 1
    for size in reversed(x.shape):
        coords.append(index // stride % size)
        stride = stride * size
    return torch.stack(coords[::-1], dim=1)


def _true_positions(x):
    """The flat positions of x's nonzeros, in order: a scatter of the true positions to their
    ranks (cumsum), cut to the count.

    torch-mlir's own lowering of nonzero (scan + scatter into a shared init tensor) gives wrong
    indices in IREE 3.13 as soon as a function has two nonzeros (see
    `lit/frontends/pytorch_nonzero.py`); a sort of the positions is right but O(n^2) in IREE's
    sort on the CPU."""
    flat = x.reshape(-1) != 0
    n = flat.shape[0]
    positions = torch.arange(n, device=x.device)
    # Clamped (a no-op on the true positions) so that `dync-check-indices` sees the scatter's
    # index in range: the false positions add up in the last slot, which only a full mask (no
    # false) reads.
    ranks = torch.clamp(torch.cumsum(flat, 0) - 1, 0, n - 1)
    slots = torch.where(flat, ranks, n - 1)
    first = torch.ops.aten.index_put.default(torch.zeros_like(positions), [slots], positions, True)
    count = flat.sum().item()
    torch._check(count >= 0)
    torch._check(count <= n)
    # Clamped again (a no-op: each read slot holds one position) for whatever indexes with it.
    return first[:count].clamp(0, n - 1)


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
        hidden = attn_mask.logical_not()
        scores = scores.masked_fill(hidden, float("-inf"))
        empty = hidden.all(dim=-1, keepdim=True)
    else:
        scores = scores + attn_mask
        empty = (attn_mask == float("-inf")).all(dim=-1, keepdim=True)
    # Rows the mask leaves empty (all -inf: finite q·kᵀ never is) are zeroed after the product,
    # not before (the same for finite values: a row of P·V is that row of P times V). Zeroed
    # before it, the row maximum over a dynamic sequence is fused into the packing of P for a
    # data-tiled product, which IREE 3.13 cannot generate code for ("'affine.delinearize_index'
    # op no basis element may be statically non-positive",
    # lit/upstream/iree-reduction-into-pack-dynamic.mlir): a decoder's masked attention over a
    # dynamic length lost data tiling, the greedy Transformer's matmuls ran untiled. Read from
    # the mask, not the scores: the scores then feed the softmax alone, a chain
    # `dync-attention-heads` can run a head at a time, and the mask is the smaller tensor.
    return (torch.softmax(scores, dim=-1) @ v).masked_fill(empty, 0.0)


# ATen ops without a (correct, or fast) torch-mlir lowering, decomposed before import:
# interpolation (dync's: IREE 3.13 fails on torch-mlir's lowerings over a dynamic H x W, and
# torch's decompositions compute with `sym_float` or gather every corner), torch's own
# decompositions of reflection padding (IREE fails on torch-mlir's) and im2col (`F.unfold`,
# not lowered), then dync's others.
_aten = torch.ops.aten
_RESAMPLING = {
    _aten.upsample_nearest1d: "nearest", _aten.upsample_nearest2d: "nearest",
    _aten.upsample_nearest3d: "nearest", _aten.upsample_linear1d: "linear",
    _aten.upsample_bilinear2d: "linear", _aten.upsample_trilinear3d: "linear",
    _aten.upsample_bicubic2d: "cubic",
}
def _by_scalar_tensor(op):
    """`op.Scalar(x, c)` of a float tensor as `op.Tensor(x, c)` with c a 0-d tensor of x's
    dtype (torch-mlir fails to lower a float remainder by a scalar)."""
    def decomposition(x, other):
        if not x.is_floating_point():  # lowered (and index checks read `i % size`)
            return NotImplemented
        return op.Tensor(x, torch.ops.aten.scalar_tensor.default(other, dtype=x.dtype))
    return decomposition


def _gelu(x, *, approximate="none"):
    """`gelu(x, approximate="tanh")` as eager's kernel writes it: torch-mlir's own was off by
    up to 5e-5 at x = 1.33 (relative error 1 near -5), though IREE's tanh is within 3e-7."""
    if approximate != "tanh":
        return NotImplemented
    beta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
    return 0.5 * x * (1 + torch.tanh(beta * (x + 0.044715 * x * x * x)))


def _roll(x, shifts, dims=()):
    """`roll` without dims (of the flattened tensor, which torch-mlir does not lower) as a
    roll of the flattened tensor along its one dim."""
    if dims:
        return NotImplemented
    return torch.ops.aten.roll.default(x.reshape(-1), shifts, [0]).view(x.shape)


def _div_by_size(x, other, rounding_mode=None):
    """`div.Tensor_mode(x, n)` with `n` a size (`torch.div(i, h * w, rounding_mode="floor")`,
    decoding a flattened top-k): torch.export passes the SymInt where the op takes a tensor,
    which the importer refuses; `n` as a 0-d tensor, of the dtype a scalar promotes as."""
    if isinstance(other, torch.Tensor):
        return NotImplemented
    dtype = torch.int64 if isinstance(other, int | torch.SymInt) else torch.get_default_dtype()
    return torch.ops.aten.div.Tensor_mode(
        x, torch.ops.aten.scalar_tensor.default(other, dtype=dtype), rounding_mode=rounding_mode)


def _squeeze_dims(x, dims):
    """`squeeze.dims` (torch's `logsumexp` over several dims keeps them, then squeezes them
    together) as one `squeeze.dim` per dim, last first: torch-mlir lowers no `squeeze.dims`."""
    for d in sorted((d % max(x.dim(), 1) for d in dims), reverse=True):
        x = torch.ops.aten.squeeze.dim(x, d)
    return x


def _instance_norm(x, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                   cudnn_enabled):
    """`F.instance_norm` (`nn.InstanceNorm*`): each (sample, channel) normalized over its
    spatial dims by its own statistics (or the running ones), then scaled and shifted per
    channel; torch-mlir's lowering fails in IREE (an `unsqueeze` of a missing weight)."""
    channel = [1, -1] + [1] * (x.dim() - 2)
    if use_input_stats:
        dims = list(range(2, x.dim()))
        var, mean = torch.var_mean(x, dims, correction=0, keepdim=True)
    else:
        mean, var = running_mean.reshape(channel), running_var.reshape(channel)
    out = (x - mean) * torch.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(channel)
    if bias is not None:
        out = out + bias.reshape(channel)
    return out


def _diff(x, n=1, dim=-1, prepend=None, append=None):
    """`torch.diff` as differences of shifted slices, `n` times (torch-mlir lowers none)."""
    x = torch.cat([t for t in (prepend, x, append) if t is not None], dim) if (
        prepend is not None or append is not None) else x
    for _ in range(n):
        later, earlier = x.narrow(dim, 1, x.shape[dim] - 1), x.narrow(dim, 0, x.shape[dim] - 1)
        x = torch.logical_xor(later, earlier) if x.dtype == torch.bool else later - earlier
    return x


def _kl_div(x, target, reduction=1, log_target=False):
    """`aten.kl_div` as ATen defines it: `xlogy(t, t) - t * x` (a zero target adds 0; torch-mlir's
    lowering took `t * log(t)`, NaN there), or `exp(t) * (t - x)` for a log target; reduction
    0 none, 1 mean, 2 sum."""
    if log_target:
        out = torch.exp(target) * (target - x)
    else:
        out = torch.xlogy(target, target) - target * x
    return out if reduction == 0 else out.mean() if reduction == 1 else out.sum()


def _tensordot(a, b, dims_a, dims_b):
    """`torch.tensordot` as one matmul of the operands permuted and flattened (torch-mlir
    lowers none)."""
    dims_a = [d % a.dim() for d in dims_a]
    dims_b = [d % b.dim() for d in dims_b]
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    left = a.permute(free_a + dims_a).reshape(math.prod(a.shape[d] for d in free_a), -1)
    right = b.permute(dims_b + free_b).reshape(-1, math.prod(b.shape[d] for d in free_b))
    return (left @ right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


def _matmul(a, b):
    """`a @ b` with one operand a vector and the other of rank 3 or more: the vector as a
    one-row (one-column) matrix, the product's extra dim squeezed away (torch-mlir, as bundled
    in IREE 3.13, leaves such a matmul over a dynamic dim unlowered)."""
    if a.dim() == 1 and b.dim() >= 3:
        return torch.matmul(a.unsqueeze(0), b).squeeze(-2)
    if b.dim() == 1 and a.dim() >= 3:
        return torch.matmul(a, b.unsqueeze(-1)).squeeze(-1)
    return NotImplemented


def _split_with_sizes(x, split_sizes, dim=0):
    """`torch.split(x, sizes)` over sizes or a dim not all static, as one slice per part
    (torch-mlir lowers `split_with_sizes` and `split.Tensor` only with static sizes: IREE
    failed on a `torch.constant.int` left over)."""
    if all(isinstance(size, int) for size in split_sizes) and isinstance(x.shape[dim], int):
        return NotImplemented
    parts, start = [], 0
    for size in split_sizes:
        parts.append(torch.ops.aten.slice.Tensor(x, dim, start, start + size))
        start = start + size
    return parts


def _split(x, split_size, dim=0):
    """`torch.split(x, n)` and `torch.chunk` over a dynamic dim: the trace fixes the number of
    parts (a guard), the last part takes what is left; see `_split_with_sizes`."""
    length = x.shape[dim]
    if isinstance(length, int) and isinstance(split_size, int):
        return NotImplemented
    from torch.fx.experimental.symbolic_shapes import guard_int

    parts = guard_int((length + split_size - 1) // split_size)
    return _split_with_sizes(x, [split_size] * (parts - 1)
                             + [length - split_size * (parts - 1)], dim)


def _nonnegative_dim(op):
    """`op(x, dim, ...)` with a negative `dim` as its non-negative equal: IREE 3.13 (its
    torch-mlir) crashed compiling `x.scatter(-1, index, value)`, a one-hot of an argmax."""

    def decomposition(x, dim, *args, **kwargs):
        if dim >= 0:
            return NotImplemented
        return op(x, dim + x.dim(), *args, **kwargs)

    return decomposition


def _masked_select(x, mask):
    """`masked_select` (torch-mlir lowers none): the broadcast input indexed by the broadcast
    mask, through `_index`'s nonzero."""
    # Broadcast by arithmetic: IREE failed on the casts `broadcast_tensors`' expands bring.
    everywhere = torch.ones_like(mask)
    x, mask = torch.where(everywhere, x, x), mask & torch.ones_like(x, dtype=torch.bool)
    return _index(x, [mask])


def _masked_scatter(x, mask, source):
    """`masked_scatter` (torch-mlir lowers none): the positions the broadcast mask selects,
    in row-major order, take the source's elements one after another; the rank of each
    selected position is the cumulative count of the mask before it."""
    everywhere = mask & torch.ones_like(x, dtype=torch.bool)
    flat = everywhere.reshape(-1)
    rank = (torch.cumsum(flat.to(torch.int64), 0) - 1).clamp(min=0)
    taken = source.reshape(-1).index_select(0, rank)
    return torch.where(flat, taken, x.reshape(-1)).reshape(x.shape)


def _isin(elements, test_elements, *, assume_unique=False, invert=False):
    """`torch.isin` (torch-mlir lowers none): each element compared with every test element."""
    if isinstance(test_elements, torch.Tensor):
        hit = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    else:
        hit = elements == test_elements
    return hit.logical_not() if invert else hit


def _searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                  sorter=None):
    """`torch.searchsorted` (torch-mlir lowers none) as a count of the sorted values below
    each value (at or below it, on the right side): one comparison per pair, as a binary
    search's answer for a sorted row; a NaN value goes after every element, as eager's."""
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    if sorted_sequence.dim() > 1:
        sorted_sequence = sorted_sequence.unsqueeze(-2)
    v = values.unsqueeze(-1)
    below = sorted_sequence <= v if right or side == "right" else sorted_sequence < v
    count = below.sum(-1)
    count = torch.where(values.isnan(), sorted_sequence.shape[-1], count) if (
        values.is_floating_point()) else count
    return count.to(torch.int32 if out_int32 else torch.int64)


# Boundaries up to this many: bucketize counts them (one comparison each, one fused
# dispatch); more: torch's binary search, a gather and a run-time index check per step.
_COUNTED_BOUNDARIES = 256


def _bucketize(values, boundaries, *, out_int32=False, right=False):
    """`torch.bucketize` over few boundaries as `_searchsorted` (torch's binary search reads
    the boundaries at a computed midpoint, whose run-time check stops IREE's queue at every
    step: 2 steps for 3 boundaries made 7 of a segment pool's 14 dispatches)."""
    count = boundaries.shape[-1]
    if not (isinstance(count, int) and count <= _COUNTED_BOUNDARIES):
        return torch._refs.bucketize(values, boundaries, out_int32=out_int32, right=right)
    return _searchsorted(boundaries, values, out_int32=out_int32, right=right)


def _histc(x, bins=100, min=0, max=0):  # noqa: A002 - ATen's argument names
    """`torch.histc` (torch-mlir lowers none): each element's bin, counted by a scatter-add;
    elements outside [min, max] not counted, the maximum in the last bin, the data's range
    where min == max (widened by 1 each way if that is one value too), as eager's."""
    flat = x.reshape(-1)
    if min == max:
        low, high = flat.min(), flat.max()
        same = low == high
        low, high = torch.where(same, low - 1, low), torch.where(same, high + 1, high)
    else:
        low, high = torch.scalar_tensor(min, dtype=x.dtype), torch.scalar_tensor(max, dtype=x.dtype)
    inside = (flat >= low) & (flat <= high)
    index = ((flat - low) * bins / (high - low)).floor().to(torch.int64).clamp(0, bins - 1)
    counts = torch.zeros(bins, dtype=x.dtype, device=x.device)
    return counts.scatter_add(0, index, inside.to(x.dtype))


def _pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """`pad_sequence` (torch-mlir lowers none): each sequence padded to the longest, stacked."""
    longest = functools.reduce(torch.sym_max, [s.shape[0] for s in sequences])
    padded = []
    for s in sequences:
        extra = longest - s.shape[0]
        pads = [0, 0] * (s.dim() - 1) + ([0, extra] if padding_side == "right" else [extra, 0])
        padded.append(torch.ops.aten.constant_pad_nd.default(s, pads, padding_value))
    return torch.stack(padded, 0 if batch_first else 1)


def repeat_interleave(x, repeats=None, dim=None, output_size=None):
    """`repeat_interleave` by a tensor of counts (torch-mlir lowers none; torch.export cannot
    trace it without the output size, see `data_dependent`): the index of the source of each
    output row is the number of segment ends at or before it; the output's length, the
    counts' sum, is data-dependent (as the op's). `repeat_interleave(counts)` is the index
    itself. NotImplemented for counts that are a number."""
    if repeats is None:
        return repeat_index(x, output_size) if x.dim() == 1 else NotImplemented
    if not isinstance(repeats, torch.Tensor):
        return NotImplemented
    if dim is None:
        x, dim = x.reshape(-1), 0
    if repeats.dim() == 0 or statically_known_true(repeats.shape[0] == 1):
        repeats = repeats.reshape(-1).expand(x.shape[dim])  # one count for every element
    return x.index_select(dim, repeat_index(repeats, output_size))


def repeat_index(repeats, output_size=None):
    """`repeat_interleave(repeats)`: each position `i` repeated `repeats[i]` times, as the
    number of segment ends at or before each output position."""
    ends = repeats.cumsum(0)
    # Not `.item()`: traced at export, its decomposition fails on a fake tensor.
    total = output_size if output_size is not None else (
        torch.ops.aten._local_scalar_dense.default(ends[-1]))
    torch._check(total >= 0)
    positions = torch.arange(total, device=repeats.device)
    return (ends.unsqueeze(0) <= positions.unsqueeze(1)).sum(1)


def _unique(x, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    """`torch.unique` (sorted; torch-mlir lowers no `_unique2`): the runs of a stable sort."""
    if not sorted:
        return NotImplemented
    values, order = torch.sort(x.reshape(-1), stable=True)
    return _runs(values, x.shape, order, return_inverse, return_counts)


def _unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    """`torch.unique_consecutive` (CTC's greedy decoding collapses repeats with it; torch-mlir
    lowers none) over the flattened input, or a vector's only dim: its runs."""
    if dim is not None and not (x.dim() == 1 and dim in (0, -1)):
        return NotImplemented
    return _runs(x.reshape(-1), x.shape, None, return_inverse, return_counts)


def _unique_dim(x, dim, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    """`torch.unique(x, dim=d)` (torch-mlir lowers no `unique_dim`): the slices along `d`
    sorted lexicographically (a stable sort by each of their elements, the last first; at
    most `_UNIQUE_ROW_WIDTH` of them), then the runs of equal slices."""
    slices = x.movedim(dim, 0)
    n, rest = slices.shape[0], slices.shape[1:]
    rows = slices.reshape(n, -1)
    width = rows.shape[1]
    if not isinstance(width, int) or width > _UNIQUE_ROW_WIDTH:
        return NotImplemented
    order = rows[:, width - 1].sort(stable=True).indices if width else torch.arange(n)
    for column in reversed(range(width - 1)):
        order = order[rows[order, column].sort(stable=True).indices]
    values, inverse, counts = _runs(rows[order], (n,), order, return_inverse, return_counts)
    return values.reshape(-1, *rest).movedim(0, dim), inverse, counts


# The most elements a slice `_unique_dim` sorts by may have (a stable sort each).
_UNIQUE_ROW_WIDTH = 16


def _runs(values, shape, order, return_inverse, return_counts):
    """The first value of each run of equal `values` (of equal rows, for 2-d `values`: where
    a new one starts: their count, data-dependent, is the result's length, through
    `nonzero`), each element's run for the inverse (put back in place through `order`, the
    permutation that made `values`), and the gaps between starts for the counts."""
    n = values.shape[0]
    differs = values[1:] != values[:-1]
    starts_here = torch.cat([torch.ones((1,), dtype=torch.bool),
                             differs if differs.dim() == 1 else differs.any(-1)])
    starts = torch.ops.aten.nonzero.default(starts_here).reshape(-1)
    inverse = counts = values.new_empty((0,), dtype=torch.int64)
    if return_inverse:
        group = starts_here.to(torch.int64).cumsum(0) - 1
        inverse = (group if order is None
                   else torch.empty_like(group).scatter(0, order, group)).reshape(shape)
    if return_counts:
        counts = torch.cat([starts[1:], starts.new_full((1,), n)]) - starts
    return values[starts], inverse, counts


def _grid_sampler(x, grid, interpolation, padding, align_corners):
    """`aten.grid_sampler` (what `F.grid_sample` exports to) of an image. torch-mlir's lowering
    reads outside the input for a point outside it (whatever memory holds there) and ignores
    border and reflection padding and bicubic interpolation. Bilinear and nearest sampling with
    zeros or border padding are one gather of every tap (the 4 neighbours, or the nearest
    point) from the flattened image, weighted (0 outside it) and summed: torch's own
    decomposition, kept for reflection padding and bicubic, gathers each neighbour apart through
    masked 4-d indices (36 dispatches for a spatial transformer's sampling, slower than eager).
    A volumetric one is left to torch-mlir."""
    if x.dim() != 4:
        return NotImplemented
    if interpolation not in (0, 1) or padding not in (0, 1):
        return decomposition_table[_aten.grid_sampler_2d.default](
            x, grid, interpolation, padding, align_corners)
    n, c, h, w = x.shape
    ix = _unnormalized(grid[..., 0], w, align_corners)
    iy = _unnormalized(grid[..., 1], h, align_corners)
    if padding == 1:  # border: the image's nearest point
        ix, iy = ix.clamp(0, w - 1), iy.clamp(0, h - 1)
    if interpolation == 0:  # bilinear: the four neighbours, by the areas opposite them
        # Broadcast against the taps' offsets rather than stacked: a stack of dynamic shapes is
        # a copy per part in IREE, and these stay one elementwise dispatch.
        tap = torch.arange(4, device=ix.device).reshape(1, 4, 1, 1)
        right, below = (tap % 2).to(ix.dtype), (tap // 2).to(ix.dtype)  # 0 1 0 1, 0 0 1 1
        x0, y0 = ix.floor().unsqueeze(1), iy.floor().unsqueeze(1)
        dx, dy = ix.unsqueeze(1) - x0, iy.unsqueeze(1) - y0
        xs, ys = x0 + right, y0 + below
        weights = ((right * dx + (1 - right) * (1 - dx))
                   * (below * dy + (1 - below) * (1 - dy)))
    else:  # nearest, a half to even as eager's nearbyint
        xs, ys = ix.round().unsqueeze(1), iy.round().unsqueeze(1)
        weights = torch.ones_like(xs)
    inside = (xs >= 0) & (xs <= w - 1) & (ys >= 0) & (ys <= h - 1)
    weights = torch.where(inside, weights, 0)
    # Clamped again as integers (a no-op) to show `dync-check-indices` the gather in range.
    at = (ys.clamp(0, h - 1).to(torch.int64).clamp(0, h - 1) * w
          + xs.clamp(0, w - 1).to(torch.int64).clamp(0, w - 1))
    taps, out_h, out_w = at.shape[1:]
    picked = x.reshape(n, c, h * w).gather(2, at.reshape(n, 1, -1).expand(n, c, -1))
    return (picked.reshape(n, c, taps, out_h, out_w) * weights.unsqueeze(1)).sum(2)


def _unnormalized(coordinate, size, align_corners):
    """A grid coordinate in [-1, 1] as a position along a dim of `size` points."""
    if align_corners:
        return (coordinate + 1) / 2 * (size - 1)
    return ((coordinate + 1) * size - 1) / 2


def _scatter_reduce(x, dim, index, src, reduce, *, include_self=True):
    """`scatter_reduce` (and `scatter_add`) in forms IREE 3.13 compiles. An index that is one
    vector broadcast along the other dims (message passing's `index.unsqueeze(-1).expand_as(src)`)
    scatters whole rows, a sum or mean as an accumulating `index_put`: torch-mlir scatters each
    element with its coordinates, which failed to compile at 64 features a row ("exceeded stack
    allocation limit"). Otherwise `include_self=False`, which failed at any width, is the
    `include_self=True` form onto the reduction's identity, `x` kept where nothing is
    scattered; a mean divides by the count scattered."""
    dim %= max(x.dim(), 1)
    rows = _row_index(x, dim, index, src)
    floating = x.is_floating_point()
    if rows is not None and reduce in ("sum", "mean"):
        into, source = x.movedim(dim, 0), src.movedim(dim, 0)
        total = torch.zeros_like(into).index_put((rows,), source, accumulate=True)
        counts = _counts(into.shape[0], rows, x.dtype)
        counts = counts.reshape(-1, *[1] * (into.dim() - 1))
        if include_self:
            total, counts = total + into, counts + 1
        if reduce == "mean":
            total = _mean(total, counts, floating)
        return (total if include_self else torch.where(counts > 0, total, into)).movedim(0, dim)
    if reduce in ("amax", "amin", "prod") \
            and (rows is not None or x.dim() == index.dim() == src.dim() == 1):
        into, source = x.movedim(dim, 0), src.movedim(dim, 0)
        rows = index if rows is None else rows
        if reduce == "prod":
            return _segment_products(into, rows, source, include_self).movedim(0, dim)
        written = _segment_extremes(into, rows, source, reduce)
        if include_self:
            written = (torch.maximum if reduce == "amax" else torch.minimum)(written, into)
        return written.movedim(0, dim)
    if include_self:
        return NotImplemented
    info = torch.finfo(x.dtype) if floating else torch.iinfo(x.dtype)
    identity = {"sum": 0, "mean": 0, "prod": 1, "amax": -math.inf if floating else info.min,
                "amin": math.inf if floating else info.max}[reduce]
    op = "sum" if reduce == "mean" else reduce
    reduced = torch.full_like(x, identity).scatter_reduce(dim, index, src, op, include_self=True)
    counts = torch.zeros_like(x).scatter_reduce(dim, index, torch.ones_like(src), "sum",
                                                include_self=True)
    if reduce == "mean":
        reduced = _mean(reduced, counts, floating)
    return torch.where(counts > 0, reduced, x)


def _segment_extremes(into, rows, source, reduce):
    """`into` (rows first) with each row that `rows` sends `source` rows to replaced by
    their max (min). torch-mlir scatters each element with a max combiner, which IREE 3.13
    failed to compile over a dynamic size at any width ("exceeded stack allocation limit":
    the updates on the stack, as many as the largest size). Here: the rows sorted by where
    they go, the extreme of each run by doubling scans from both ends (log2 of the largest
    size steps each), written back where every duplicate carries its run's value."""
    if into.dim() == 1:  # as rows of one (a scatter of single elements failed to compile)
        return _segment_extremes(into.unsqueeze(1), rows, source.unsqueeze(1), reduce)[:, 0]
    pick = torch.maximum if reduce == "amax" else torch.minimum
    runs, values = _sorted_runs(into, rows, source)
    n = runs.shape[0]
    shape = (-1, *[1] * (values.dim() - 1))
    positions = torch.arange(n)
    scans = []
    for direction in (-1, 1):
        scan = values
        for stride in _doubling_steps(n):
            other = torch.clamp(positions + direction * stride, 0, n - 1)
            same = (runs.index_select(0, other) == runs).reshape(shape)
            scan = torch.where(same, pick(scan, scan.index_select(0, other)), scan)
        scans.append(scan)
    return into.index_put((runs,), pick(*scans))


def _sorted_runs(into, rows, source):
    """The rows `rows` sends `source` rows to, sorted (a negative one made out of range), and
    the source rows in that order."""
    # a negative index is out of range for the scatter (eager raises), not a row from the end
    # as for an `index_put`: made one that `dync-check-indices` refuses
    rows = torch.where(rows < 0, into.shape[0], rows)
    order = torch.argsort(rows, stable=True)
    return rows[order], source.index_select(0, order)


def _segment_products(into, rows, source, include_self):
    """`into` (rows first) with each row that `rows` sends `source` rows to replaced by their
    product (times the row, with `include_self`): the rows sorted by where they go, products
    within each run by doubling steps back, then the run's last carried to all of it by
    doubling steps ahead. torch-mlir's product scatter beside another scatter failed IREE
    3.13's LLVM translation ("builtin.unrealized_conversion_cast")."""
    if into.dim() == 1:
        return _segment_products(into.unsqueeze(1), rows, source.unsqueeze(1),
                                 include_self)[:, 0]
    runs, scan = _sorted_runs(into, rows, source)
    n = runs.shape[0]
    shape = (-1, *[1] * (scan.dim() - 1))
    positions = torch.arange(n)
    for direction in (-1, 1):
        for stride in _doubling_steps(n):
            other = torch.clamp(positions + direction * stride, 0, n - 1)
            inside = positions >= stride if direction < 0 else other != positions
            same = (runs.index_select(0, other) == runs) & inside
            taken = scan.index_select(0, other)
            scan = torch.where(same.reshape(shape), scan * taken if direction < 0 else taken,
                               scan)
    if include_self:
        scan = scan * into.index_select(0, torch.clamp(runs, max=into.shape[0] - 1))
    return into.index_put((runs,), scan)


def _upper_bound(size) -> int:
    """The largest value a size may take (its declared range), at most 2**31."""
    upper = size_range(size)[1]
    return 2 ** 31 if upper is None else min(upper, 2 ** 31)


def _doubling_steps(size):
    """1, 2, 4, ... below the largest value `size` may take: the steps of a scan by doubling
    over a dim of that size."""
    stride = 1
    while stride < _upper_bound(size):
        yield stride
        stride *= 2


# The element types whose `cummax`/`cummin` the pass `dync-running-extremes` lowers (two
# scans, linear in the dim): the op is kept for it.
_SCANNED_EXTREMES = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64,
                              torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
                              torch.bool})


def _running_extreme(largest: bool):
    """`aten.cummax`/`cummin` (torch-mlir lowers neither) of element types other than
    `_SCANNED_EXTREMES` (the unsigned ones wider than a byte), and of a 0-d tensor, as a scan
    by doubling steps: at step s each position takes the earlier position s back when that
    one's value is the greater (the lesser), as many steps as the dim's declared size needs.
    A tie keeps the later index and a NaN, once met, stays with its index, as eager's do."""

    def running(x, dim):
        if x.dtype in _SCANNED_EXTREMES and x.dim() > 0:
            return NotImplemented
        if x.dim() == 0:
            return x.clone(), torch.zeros((), dtype=torch.int64)
        values = x.movedim(dim, -1)
        n = values.shape[-1]
        positions = torch.arange(n)
        indices = positions.expand(values.shape).clone()
        for stride in _doubling_steps(n):
            back = torch.clamp(positions - stride, min=0)
            earlier, earlier_at = values.index_select(-1, back), indices.index_select(-1, back)
            better = values >= earlier if largest else values <= earlier
            keep = better | values.isnan() | (positions < stride)
            if values.dtype.is_floating_point:
                keep = keep & ~(earlier.isnan() & ~values.isnan())
            values = torch.where(keep, values, earlier)
            indices = torch.where(keep, indices, earlier_at)
        return values.movedim(-1, dim), indices.movedim(-1, dim)

    return running


def _counts(length, index, dtype):
    """How often each of 0 .. length - 1 occurs in the 1-D `index`: a `scatter_add` (a 1-D
    accumulating `index_put` kept its scatter's updates on the stack, as many as the index's
    largest size: "exceeded stack allocation limit" at a million edges)."""
    return torch.zeros(length, dtype=dtype).scatter_add(0, index, torch.ones_like(index, dtype=dtype))


def _mean(total, counts, floating: bool):
    counts = counts.clamp(min=1)
    return total / counts if floating else torch.div(total, counts, rounding_mode="floor")


def _scatter_add(x, dim, index, src):
    return _scatter_reduce(x, dim, index, src, "sum")


def _row_index(x, dim, index, src):
    """The vector (along `dim`) that `index` broadcasts along every other dim, where it spans
    `src` and `x` there; else None."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    if not (x.dim() == index.dim() == src.dim() >= 2):
        return None
    for d in range(index.dim()):
        if d == dim:
            continue
        if not (statically_known_true(index.shape[d] == src.shape[d])
                and statically_known_true(index.shape[d] == x.shape[d])):
            return None
        if index.stride(d) != 0 and not statically_known_true(index.shape[d] == 1):
            return None
    return index.movedim(dim, 0)[(slice(None),) + (0,) * (index.dim() - 1)]


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """`nn.EmbeddingBag` (mode 0 sum, 1 mean, 2 max) over 1-D indices cut into bags at
    `offsets`: each index's bag from the starts marked and summed up, the rows scattered into
    their bags (the padding index's and those past the last offset into one dropped bag); an
    empty bag is zeros, as eager's. torch-mlir lowers only the sum. The results past the
    first (what backward reads) are the bag ids, sizes and sizes again (zeros for max)."""
    if indices.dim() != 1 or offsets is None or offsets.dim() != 1:
        return NotImplemented
    n = indices.shape[0]
    starts = offsets[:-1] if include_last_offset else offsets
    bags = starts.shape[0]
    marks = _counts(n + 1, starts, torch.int64)
    bag = marks[:n].cumsum(0) - 1
    kept = torch.ones_like(indices, dtype=torch.bool)
    if padding_idx is not None and padding_idx >= 0:
        kept = indices != padding_idx
    if include_last_offset:
        kept = kept & (torch.arange(n) < offsets[-1])
    into = torch.where(kept, bag, bags)  # bag `bags`: dropped
    rows = weight.index_select(0, indices)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    size = _counts(bags + 1, into, torch.int64)[:bags]
    empty = weight.new_zeros((bags + 1, weight.shape[1]))
    if mode == 2:
        spread = into.unsqueeze(1).expand(rows.shape)
        out = _scatter_reduce(empty, 0, spread, rows, "amax", include_self=False)[:bags]
        return out, bag, size, torch.zeros_like(out, dtype=torch.int64)
    out = empty.index_put((into,), rows, accumulate=True)[:bags]  # rows at a time
    if mode == 1:
        out = out / size.clamp(min=1).unsqueeze(1).to(out.dtype)
    return out, bag, size, size


def _embedding_bag_no_padding(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                              sparse=False, per_sample_weights=None, include_last_offset=False):
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset)


def _cdist(x1, x2, p=2.0, compute_mode=None):
    """`torch.cdist` as the distance of each pair: eager's own formula for small sets (for
    p = 2 over more than 25 rows eager takes the matmul form, whose rounding it differs from
    by; a point's distance to itself is 0 here, a rounding error there)."""
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if p == math.inf:
        return diff.amax(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    return diff.pow(p).sum(-1).pow(1.0 / p)


def _convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    """A 1-d or 2-d convolution whose number of groups is a size (CondConv and other
    per-sample kernels fold the batch into the groups: `conv2d(x.view(1, b*c, h, w),
    w.view(b*o, c, k, k), groups=b)`) as one batched matmul over its kernel's taps, each tap a
    strided slice of the padded input; torch-mlir lowers only a constant number of groups."""
    spatial = x.dim() - 2
    if transposed:
        return transposed_convolution(x, weight, bias, stride, padding, output_padding, groups,
                                      dilation)
    if isinstance(groups, int) or spatial not in (1, 2):
        return NotImplemented
    stride, padding, dilation = (per_dim(v, spatial) for v in (stride, padding, dilation))
    n, channels = x.shape[:2]
    out_channels, per_group, *kernel = weight.shape
    sizes = x.shape[2:]
    # Output sizes as the convolution defines them.
    outs = [(sizes[d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1
            for d in range(spatial)]
    padded = _aten.constant_pad_nd(
        x, [p for d in reversed(range(spatial)) for p in (padding[d], padding[d])], 0.0)
    taps = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        tap = padded
        for d, at in enumerate(offsets):
            start = at * dilation[d]
            tap = _aten.slice(tap, 2 + d, start, start + (outs[d] - 1) * stride[d] + 1,
                              stride[d])
        taps.append(tap)
    columns = torch.stack(taps, 2)  # n, groups * per_group, taps, *outs
    columns = columns.reshape(n, groups, per_group * len(taps), -1)
    kernels = weight.reshape(groups, out_channels // groups, per_group * len(taps))
    y = (kernels.unsqueeze(0) @ columns).reshape(n, out_channels, *outs)
    if bias is not None:
        y = y + bias.reshape(1, -1, *([1] * spatial))
    return y


def _conv_transpose(spatial: int):
    """`aten.conv_transposeNd` (kept whole by export): `transposed_convolution`, batched."""

    def decomposition(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                      dilation=1):
        unbatched = x.dim() == spatial + 1
        y = transposed_convolution(x.unsqueeze(0) if unbatched else x, weight, bias, stride,
                                   padding, output_padding, groups, dilation)
        return y.squeeze(0) if unbatched and y is not NotImplemented else y

    return decomposition


def _adaptive_max_pool2d(x, output_size):
    """`F.adaptive_max_pool2d` (values and flat indices): torch's decomposition where H and W
    are static; over a dynamic H or W, each output cell's window `[floor(i*H/oh),
    ceil((i+1)*H/oh))` (and the same along W) as a slice, its max and the first position of
    it. torch's branches on `H % oh == 0` (evenly divisible: a max pool), which fixed that to
    the example's and gave wrong values at other sizes."""
    h, w = x.shape[-2:]
    out_h, out_w = output_size
    if isinstance(h, int) and isinstance(w, int):
        return decomposition_table[_aten.adaptive_max_pool2d.default](x, output_size)
    if not 0 < out_h * out_w <= 64:
        return NotImplemented
    rows = [(i * h // out_h, -((-(i + 1) * h) // out_h)) for i in range(out_h)]
    columns = [(j * w // out_w, -((-(j + 1) * w) // out_w)) for j in range(out_w)]
    values, indices = [], []
    for top, bottom in rows:
        for left, right in columns:
            best, at = x[..., top:bottom, left:right].flatten(-2).max(-1)
            width = right - left
            values.append(best)
            indices.append((at // width + top) * w + at % width + left)
    shape = (*x.shape[:-2], out_h, out_w)
    return torch.stack(values, -1).reshape(shape), torch.stack(indices, -1).reshape(shape)


def _conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """`aten.conv1d`/`conv2d` (kept whole by export): `_convolution` for a number of groups
    that is a size."""
    return _convolution(x, weight, bias, stride, padding, dilation, False, None, groups)


def _softmax_in(core):
    """`log_softmax.int`/`softmax.int` given a dtype (`F.cross_entropy`'s decomposition passes
    the input's): the input converted, then the op without one. torch-mlir lowers them only
    with none, and the whole model failed to compile."""
    def softmax(x, dim, dtype=None):
        if dtype is None:
            return NotImplemented
        return core(x.to(dtype), dim, False)
    return softmax


def _kept_composites() -> dict:
    """Composite ops (CompositeImplicitAutograd) that torch.export keeps and torch-mlir lowers
    none of, by their own decomposition as `torch.export.default_decompositions` gives it:
    `F.nll_loss` (`nll_loss_nd`, then `nll_loss`) became an op IREE refused, and
    `F.cross_entropy(..., label_smoothing=0.1)` one it failed to legalize; the model ran in
    eager. (`nll_loss_forward`, which they come to, is decomposed too: torch-mlir's lowering
    left an unranked tensor over a dynamic batch.)"""
    table = torch.export.default_decompositions()
    return {op: table[op] for op in (_aten.nll_loss_nd.default, _aten.nll_loss.default,
                                     _aten.cross_entropy_loss.default)}


DECOMPOSITIONS = get_decompositions([
    _aten.reflection_pad1d, _aten.reflection_pad2d, _aten.reflection_pad3d, _aten.im2col,
    _aten.logsumexp, _aten.affine_grid_generator, _aten.col2im,
    _aten.max_unpool2d, _aten.pixel_unshuffle, _aten.xlogy, _aten.take, _aten.index_copy,
    _aten.addmv, _aten.narrow_copy, _aten.smooth_l1_loss, _aten.huber_loss, _aten.hann_window,
    _aten.nll_loss_forward,
    *FROM_TORCH,
]) | _kept_composites() | SPECIAL_FUNCTIONS | INTEGER_OPS | {
    _aten.bucketize.Tensor: _bucketize,
    _aten.log_softmax.int: _softmax_in(_aten._log_softmax.default),
    _aten.softmax.int: _softmax_in(_aten._softmax.default),
    **{op.default: _resample(kind) for op, kind in _RESAMPLING.items()},
    _aten.grid_sampler.default: _grid_sampler,
    _aten.scatter_reduce.two: _scatter_reduce,
    _aten.scatter_add.default: _scatter_add,
    _aten.embedding_bag.padding_idx: _embedding_bag,
    _aten.embedding_bag.default: _embedding_bag_no_padding,
    _aten._embedding_bag.default: _embedding_bag,
    _aten._cdist_forward.default: _cdist,
    _aten.cdist.default: _cdist,
    _aten.squeeze.dims: _squeeze_dims,
    _aten.instance_norm.default: _instance_norm,
    _aten.diff.default: _diff,
    _aten.kl_div.default: _kl_div,
    _aten.div.Tensor_mode: _div_by_size,
    _aten.tensordot.default: _tensordot,
    _aten.einsum.default: einsum_as_matmul,
    _aten.matmul.default: _matmul,
    _aten.split.Tensor: _split,
    **{op: _nonnegative_dim(op) for op in (_aten.scatter.src, _aten.scatter.value)},
    _aten.scatter.reduce: _scatter_reduce_mode,
    _aten.scatter.value_reduce: _scatter_reduce_mode,
    _aten.split_with_sizes.default: _split_with_sizes,
    _aten.masked_select.default: _masked_select,
    _aten.masked_scatter.default: _masked_scatter,
    _aten.isin.Tensor_Tensor: _isin,
    _aten.isin.Tensor_Scalar: _isin,
    _aten.searchsorted.Tensor: _searchsorted,
    _aten.histc.default: _histc,
    _aten.pad_sequence.default: _pad_sequence,
    _aten.repeat_interleave.self_Tensor: repeat_interleave,
    _aten.repeat_interleave.Tensor: repeat_index,
    _aten._unique2.default: _unique,
    _aten.unique_consecutive.default: _unique_consecutive,
    _aten.unique_dim.default: _unique_dim,
    _aten.remainder.Scalar: _by_scalar_tensor(_aten.remainder),
    _aten.roll.default: _roll,
    _aten.gelu.default: _gelu,
    **{op.vec: _resample(kind, vec=True) for op, kind in _RESAMPLING.items()},
    _aten.kthvalue.default: _kthvalue,
    _aten.cummax.default: _running_extreme(largest=True),
    _aten.cummin.default: _running_extreme(largest=False),
    _aten.convolution.default: _convolution,
    _aten.adaptive_max_pool2d.default: _adaptive_max_pool2d,
    _aten.conv1d.default: _conv,
    _aten.conv2d.default: _conv,
    _aten.conv_transpose1d.default: _conv_transpose(1),
    _aten.conv_transpose2d.input: _conv_transpose(2),
    _aten.conv_transpose3d.input: _conv_transpose(3),
    _aten.erfinv.default: _erfinv,
    _aten.median.dim: _median,
    _aten.median.default: _whole(_median),
    _aten.nanmedian.dim: _nanmedian,
    _aten.nanmedian.default: _whole(_nanmedian),
    **{op: _quantile(ignore_nan=False) for op in (_aten.quantile.scalar, _aten.quantile.default)},
    **{op: _quantile(ignore_nan=True) for op in (_aten.nanquantile.scalar,
                                                   _aten.nanquantile.default)},
    torch.ops.aten._native_batch_norm_legit_no_training.default: _batch_norm_inference,
    torch.ops.aten.index_add.default: _index_add,
    torch.ops.aten.index_reduce.default: _index_reduce,
    torch.ops.aten.isfinite.default: _isfinite,
    torch.ops.aten.hypot.default: _hypot,
    torch.ops.aten.bincount.default: _bincount,
    torch.ops.aten.log10.default: _log10,
    torch.ops.aten.nansum.default: _nansum,
    torch.ops.aten.nanmean.default: _nanmean,
    torch.ops.aten.erfc.default: _erfc,
    torch.ops.aten.special_ndtr.default: _ndtr,
    torch.ops.aten.special_entr.default: _entr,
    torch.ops.aten.float_power.Tensor_Scalar: _float_power,
    torch.ops.aten.float_power.Tensor_Tensor: _float_power,
    torch.ops.aten.float_power.Scalar: _float_power,
    torch.ops.aten.pairwise_distance.default: _pairwise_distance,
    torch.ops.aten.signbit.default: _signbit,
    torch.ops.aten.copysign.Tensor: _copysign,
    torch.ops.aten.copysign.Scalar: _copysign,
    torch.ops.aten.sinc.default: _sinc,
    torch.ops.aten.special_erf.default: torch.erf,
    torch.ops.aten.special_expit.default: torch.sigmoid,
    torch.ops.aten.special_xlogy.default: torch.xlogy,
    torch.ops.aten.std_mean.dim: _std_mean,
    torch.ops.aten.std_mean.correction: _std_mean,
    torch.ops.aten.index_fill.int_Scalar: _index_fill,
    torch.ops.aten.index_fill.int_Tensor: _index_fill,
    torch.ops.aten.argwhere.default: _argwhere,
    torch.ops.aten.trapezoid.dx: _trapezoid,
    torch.ops.aten.linalg_vander.default: _vander,
    torch.ops.aten.linalg_norm.default: linalg_norm,
    torch.ops.aten.index.Tensor: _index,
    torch.ops.aten._unsafe_index.Tensor: _unsafe_index,
    torch.ops.aten.pad.default: _pad,
    torch.ops.aten.index_put.default: _index_put,
    torch.ops.aten._unsafe_index_put.default: _unsafe_index_put,
    torch.ops.aten.nonzero.default: _nonzero,
    torch.ops.aten.meshgrid.indexing: _meshgrid,
    torch.ops.aten.meshgrid.default: _meshgrid,
    torch.ops.aten.where.default: _nonzero_per_dim,
    torch.ops.aten.nonzero_numpy.default: _nonzero_per_dim,  # nonzero(as_tuple=True)
    torch.ops.aten.lstm_cell.default: _lstm_cell,
    torch.ops.aten.gru_cell.default: _gru_cell,
    torch.ops.aten.rnn_tanh_cell.default: _rnn_cell("RNN_TANH"),
    torch.ops.aten.rnn_relu_cell.default: _rnn_cell("RNN_RELU"),
    torch.ops.aten.gru.input: _recurrent("GRU"),
    torch.ops.aten.lstm.input: _recurrent("LSTM", lstm=True),
    torch.ops.aten.rnn_tanh.input: _recurrent("RNN_TANH"),
    torch.ops.aten.rnn_relu.input: _recurrent("RNN_RELU"),
    torch.ops.aten.scaled_dot_product_attention.default: _attention,
}
