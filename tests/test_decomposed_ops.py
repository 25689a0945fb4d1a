"""Ops user code calls over dynamic sizes that torch-mlir does not lower (the whole model ran in
eager), lowers wrong, or torch.export cannot trace, decomposed by dync
(`frontends/pytorch/decompositions.py`, `sym_floats.py`, `data_dependent.py`): each compiled
in one graph over a dynamic H x W, against eager at three sizes; and a decomposition that
would hold only for the example's sizes, refused."""

from __future__ import annotations

import itertools
import re

import pytest
import torch
import torch.nn.functional as F
from torch.export import Dim

import dync
from dync.errors import UnsupportedConstructError


def _grid(x):
    """Sample points from the image, some outside [-1, 1] (the padding mode's business)."""
    return torch.tanh(x[:, :2].permute(0, 2, 3, 1)) * 1.3


def _weight(*shape):
    return torch.linspace(-1, 1, torch.Size(shape).numel()).sin().reshape(shape)


def _put_after_slices(x):
    """`y[:, :, rows, columns] += v`: index tensors after whole dims (Nones to the importer)."""
    y = x.clone()
    y[:, :, torch.arange(x.shape[2]).flip(0)[:, None] % 3, torch.arange(x.shape[3]) // 2] += x * 2
    return y


CASES = {
    "grid_sample_zeros": lambda x: F.grid_sample(x, _grid(x), align_corners=False),
    "grid_sample_border": lambda x: F.grid_sample(x, _grid(x), padding_mode="border",
                                                  align_corners=False),
    "grid_sample_reflection": lambda x: F.grid_sample(x, _grid(x), padding_mode="reflection",
                                                      align_corners=True),
    "grid_sample_bicubic": lambda x: F.grid_sample(x, _grid(x), mode="bicubic",
                                                   align_corners=False),
    "grid_sample_nearest": lambda x: F.grid_sample(x, _grid(x), mode="nearest",
                                                   align_corners=False),
    "grid_sample_corners": lambda x: F.grid_sample(x, _grid(x), align_corners=True),
    "grid_sample_nearest_border": lambda x: F.grid_sample(x, _grid(x), mode="nearest",
                                                          padding_mode="border",
                                                          align_corners=True),
    "logsumexp": lambda x: torch.logsumexp(x, dim=(2, 3)),
    "cummax_cummin": lambda x: torch.cat([  # rounded: ties keep the later index
        v.float().flatten() for v in (*x.cummax(3), *(x * 2).round().cummin(2))]),
    "fmod_remainder": lambda x: torch.fmod(x * 5, 1.5) + torch.remainder(x * 5, -1.5),
    "instance_norm": lambda x: F.instance_norm(x, weight=torch.linspace(0.5, 2, 3),
                                               bias=torch.linspace(-1, 1, 3)),
    "diff": lambda x: torch.diff(x, n=2, dim=3, prepend=x[..., :1]),
    "div_by_a_size": lambda x: torch.cat([  # a flattened top-k's row and column
        torch.div(x.flatten(2).topk(3).indices, x.shape[3], rounding_mode="floor"),
        torch.div(x.flatten(2).topk(3).indices, x.shape[2] * x.shape[3], rounding_mode="trunc"),
        torch.div(x.flatten(2).topk(3).indices, 2.5, rounding_mode="floor")], -1).float(),
    "fold": lambda x: F.fold(F.unfold(x, (3, 2), dilation=(1, 2)) * 2, x.shape[2:], (3, 2),
                             dilation=(1, 2)),
    "fold_padded": lambda x: F.fold(F.unfold(x, (3, 3), padding=(1, 2)) * 2, x.shape[2:],
                                    (3, 3), padding=(1, 2)),
    "negative_pad": lambda x: torch.cat([  # a crop on each side, a crop beside a pad
        F.pad(x, (-1, -2, 0, -1)).flatten(), F.pad(x, (2, -1, -1, 1), value=0.5).flatten()]),
    "index_reduce": lambda x: torch.cat([  # segment max, min, product and mean of rows
        torch.full((3, x.shape[3]), -1.0).index_reduce(
            0, torch.arange(x.shape[2]) % 3, x[0, 0], reduce, include_self=include).flatten()
        for reduce in ("amax", "amin", "prod", "mean") for include in (True, False)]),
    "linspace_of_a_size": lambda x: torch.cat([  # a coordinate grid over the image
        (x + torch.linspace(-1, 1, x.shape[3]) * torch.linspace(0.5, 3, x.shape[2])[:, None]
         ).flatten(), torch.linspace(2, 2, x.shape[3] - 3),
        torch.isfinite(x.log()[0, 0, 0]).float(), torch.isfinite(x.abs().int()[0, 0, 0]).float()]),
    "index_put_after_slices": lambda x: _put_after_slices(x),
    "xlogy_kl_div": lambda x: torch.cat([  # zeros in the target: 0 log 0 = 0
        F.kl_div(F.log_softmax(x, 1), F.relu(x.softmax(1) - 0.3), reduction="none").flatten(),
        F.kl_div(x, x.relu(), reduction="sum", log_target=True).reshape(1),
        torch.xlogy(x.relu(), (x * 2).relu()).flatten()]),
    "tensordot": lambda x: torch.tensordot(x, x, dims=([1, 3], [1, 3])),
    "einsum": lambda x: torch.cat([  # a projection written with an ellipsis, a Gram matrix
        torch.einsum("...c,cd->...d", x.permute(0, 2, 3, 1),
                     torch.linspace(-1, 1, 12).reshape(3, 4)).flatten(),
        torch.einsum("bchw,bdhw->bcd", x, x.sin()).flatten(),
        torch.einsum("bc...,c", x, torch.linspace(0.5, 1.5, 3)).flatten()]),
    "broadcast_index": lambda x: x[:, :, torch.arange(x.shape[2])[:, None].flip(0),
                                   torch.arange(x.shape[3]) // 2],
    "masked_select": lambda x: torch.masked_select(x, x[:, :1] > 0).cumsum(0),
    "masked_scatter": lambda x: torch.zeros_like(x).masked_scatter(x > 0, (x * 3).flip(-1)),
    "triangle_indices": lambda x: torch.cat([  # below and above diagonals, on either side
        x[0, 0][tuple(torch.tril_indices(x.shape[2], x.shape[3], -1))],
        x[1, 1][tuple(torch.triu_indices(x.shape[2], x.shape[3], 2))],
        *[x[0, 1][tuple(f(x.shape[2], x.shape[3], offset))] * offset
          for f in (torch.tril_indices, torch.triu_indices) for offset in (-6, 0, 5)]]),
    "isin": lambda x: torch.isin((x * 3).round(), torch.tensor([0.0, 1.0, -2.0])).float(),
    "searchsorted": lambda x: torch.cat([
        torch.searchsorted(torch.linspace(-2, 2, 9), x.contiguous(), right=True),
        torch.searchsorted(x.sort(-1).values, x[..., :3].contiguous())], -1).float(),
    "histc": lambda x: torch.cat([torch.histc(x, bins=7, min=-1.5, max=2),
                                  torch.histc(x[:, 0], bins=5)]),
    "repeat_interleave": lambda x: torch.cat([
        x[0, 0].repeat_interleave((x[0, 0, :, 0].abs() * 2).long(), dim=0).sum(0),
        torch.repeat_interleave((x[1, 1, 0].abs() * 2).long()).float()]),
    "unique": lambda x: torch.cat([
        part.float().reshape(-1) for part in
        torch.unique((x[:, 0] * 2).round(), return_inverse=True, return_counts=True)]),
    "unique_rows": lambda x: torch.cat([  # unique slices along a dim, rows and columns
        part.float().reshape(-1) for part in
        [*torch.unique((x[0].permute(1, 2, 0)[:, 0] * 1.5).round().clamp(-1, 1), dim=0,
                       return_inverse=True, return_counts=True),
         *torch.unique((x[1, :2, :, 0] * 1.5).round().clamp(-1, 1), dim=1,
                       return_inverse=True, return_counts=True)]]),
    "take": lambda x: torch.take(x[0] * 2, (x[1, 0].abs() * 16).long().clamp(max=47)),
    "losses": lambda x: torch.stack([  # composites torch.export keeps, torch-mlir lacks
        F.cross_entropy(x[0].flatten(1).t(), x[1].flatten(1).argmax(0)),
        F.cross_entropy(x[0].flatten(1).t(), x[1].flatten(1).argmax(0), label_smoothing=0.1),
        F.nll_loss(F.log_softmax(x[0].flatten(1).t(), 1, dtype=torch.float32),
                   x[1].flatten(1).argmin(0)),
        F.smooth_l1_loss(x[0], x[1], beta=0.5), F.huber_loss(x[0], x[1], delta=0.5)]),
    "copies_and_windows": lambda x: torch.cat([
        x[0, 0].index_copy(1, torch.tensor([0, 2]), x[1, 0, :, :2]).flatten(),
        torch.addmv(x[0, 0, :, 0], x[0, 0], x[1, 0, 0]), x[0, 0].narrow_copy(1, 1, 2).flatten(),
        x[0, 0, 0, :4] * torch.hann_window(4)]),
    "unique_consecutive": lambda x: torch.cat([  # CTC's greedy decoding: collapse repeats
        part.float().reshape(-1) for part in
        torch.unique_consecutive((x[:, 0] * 1.5).round().clamp(-1, 1), return_inverse=True,
                                 return_counts=True)]
        + [torch.unique_consecutive(x[0, 1].argmax(0)).float()]),
    "pad_sequence": lambda x: torch.nn.utils.rnn.pad_sequence(
        [x[0, 0], x[1, 0, :2], x[1, 1, 1:]], batch_first=True, padding_value=-1.0),
    "quantile": lambda x: torch.cat([  # over a dim and over all; NaNs (9 where they make NaN)
        torch.quantile(x, 0.3, dim=3).flatten(),
        torch.quantile(x, torch.tensor([0.1, 0.5, 0.9]), dim=2, keepdim=True,
                       interpolation="midpoint").flatten(),
        torch.quantile(x[0], 0.75, interpolation="nearest").reshape(1),
        torch.nanquantile(torch.where(x > 1.5, float("nan"), x), 0.4, dim=-1).flatten(),
        torch.quantile(torch.where(x > 1.5, float("nan"), x)[:, 0], 0.5, dim=-1,
                       interpolation="lower").nan_to_num(nan=9.0).flatten()]),
    "linalg_norm": lambda x: torch.cat([  # Frobenius, the sums of magnitudes, a vector
        torch.linalg.norm(x, dim=(-2, -1)).flatten(),
        torch.linalg.norm(x, float("inf"), dim=(2, 3), keepdim=True).flatten(),
        torch.linalg.matrix_norm(x, 1).flatten(), torch.linalg.matrix_norm(x, -1).flatten(),
        torch.linalg.norm(x[0, 0]).reshape(1), torch.linalg.norm(x, 3, dim=2).flatten()]),
    "pointwise_and_index_ops": lambda x: torch.cat([v.float().flatten() for v in (
        torch.hypot(x, x.flip(-1)), torch.copysign(x, -x), torch.signbit(x), torch.sinc(x),
        torch.special.erf(x), torch.special.expit(x),
        torch.special.xlogy(x.abs(), x.abs() + 1), *torch.std_mean(x, dim=-1),
        x.index_fill(2, torch.tensor([0, -1]), -1.0),
        torch.ones_like(x).scatter(3, x.argsort(-1)[..., :2], 2.0, reduce="multiply"),
        torch.argwhere(x > 1.5).sum(0), torch.trapezoid(x, dim=-1),
        torch.linalg.vander(x[0, 0, 0]),
        torch.take_along_dim(x, x.argsort(-1)[..., :1], dim=-1))]),
    "nan_reductions_and_special_functions": lambda x: torch.cat([v.float().flatten() for v in (
        torch.nansum(torch.where(x > 1, float("nan"), x), -1),
        torch.nanmean(torch.where(x > 1, float("nan"), x), (1, 2)), torch.log10(x.abs() + 0.1),
        torch.erfc(x), torch.special.ndtr(x), torch.special.entr(x.abs()),
        torch.float_power(x.abs(), 2.5), F.pairwise_distance(x, x.flip(-1)),
        torch.bincount((x[0, 0].abs() * 3).long().flatten(), weights=x[0, 0].flatten(),
                       minlength=4))]),
    "bucketize": lambda x: torch.cat([v.float().flatten() for v in (  # ties on either side
        torch.bucketize(x.round(), torch.tensor([-1.0, 0.0, 1.0])),
        torch.bucketize(x.round(), torch.tensor([-1.0, 0.0, 1.0]), right=True, out_int32=True),
        torch.bucketize(torch.where(x > 1.5, float("nan"), x), torch.linspace(-2, 2, 300)),
        torch.zeros(4, x.shape[3]).scatter_add(  # a segment sum by bucket
            0, torch.bucketize(torch.arange(x.shape[2]), torch.tensor([2, 5, 9]))[:, None]
            .expand(-1, x.shape[3]), x[0, 0]))]),
    "boolean_masks": lambda x: torch.cat([v.float().flatten() for v in (  # none, all, some
        x[x > 0], x[x > 100], x[x > -100], x[x[:, 0, 0, 0] > 0],
        x.permute(2, 3, 0, 1)[x[0, 0] > 0.5], x.flatten(0, 1)[x.sum((2, 3)).flatten() > 0],
        torch.nonzero(x > 1), torch.nonzero(x[0, 0, 0] < 0))]),
    "conv_transpose": lambda x: torch.cat([  # strides past, within and at the kernel's
        F.conv_transpose2d(x, _weight(3, 4, 3, 3), _weight(4), 2, 1, 1).flatten(),
        F.conv_transpose2d(x, _weight(3, 2, 4, 4), None, 2, 1).flatten(),
        F.conv_transpose2d(x, _weight(3, 2, 3, 3), _weight(2), 1, 2).flatten(),
        F.conv_transpose2d(x, _weight(3, 2, 2, 3), _weight(6), (3, 2), (0, 1), groups=3)
        .flatten(),
        F.conv_transpose2d(x, _weight(3, 1, 3, 3), None, 2, 1, 1, dilation=2).flatten(),
        F.conv_transpose2d(x, _weight(3, 2, 2, 2), None, 4).flatten(),
        F.conv_transpose2d(x, _weight(3, 2, 3, 3), None, 2, 3).flatten(),  # crops a phase
        F.conv_transpose2d(x[0], _weight(3, 2, 5, 5), None, 2, 4, 1).flatten(),  # unbatched
        F.conv_transpose1d(x[:, :, 0], _weight(3, 2, 4), _weight(2), 2, 1).flatten(),
        F.conv_transpose3d(x[:, :, None], _weight(3, 2, 1, 3, 3), None, (1, 2, 2), (0, 1, 1))
        .flatten()]),
    "rnn_cells": lambda x: torch.cat([  # nn.RNNCell's ops, which IREE cannot lower
        cell(x.mean((2, 3)), x[:, 0, 0, :4], _weight(4, 3), _weight(4, 4), _weight(4), None)
        .flatten() for cell in (torch.rnn_tanh_cell, torch.rnn_relu_cell)]),
    "adaptive_max_pool2d": lambda x: torch.cat([
        v.float().flatten() for v in F.adaptive_max_pool2d(x, (2, 3), return_indices=True)]),
}


def test_triangle_indices_in_closed_form_are_torchs():
    """Every shape up to 9 x 9 and every offset that crosses it: the values and the order."""
    from dync.frontends.pytorch.data_dependent import triangle_indices

    for rows, cols, offset in itertools.product(range(10), range(10), range(-11, 12)):
        for lower, want in ((True, torch.tril_indices), (False, torch.triu_indices)):
            assert torch.equal(triangle_indices(rows, cols, offset, lower),
                               want(rows, cols, offset)), (rows, cols, offset, lower)
    big = triangle_indices(4097, 4001, -3, lower=True)  # the square root past float32's 2**24
    assert torch.equal(big, torch.tril_indices(4097, 4001, -3))


class Op(torch.nn.Module):
    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def forward(self, x):
        return CASES[self.name](x)


@pytest.mark.parametrize("name", list(CASES))
def test_op_in_one_graph_over_a_dynamic_image(name):
    h, w = Dim("h", min=4, max=32), Dim("w", min=4, max=32)
    model = Op(name).eval()
    compiled = dync.compile(model, (torch.randn(2, 3, 8, 12),),
                            dynamic_shapes=({2: h, 3: w},), mode="graph", cache=False)
    for shape in ((2, 3, 8, 12), (2, 3, 5, 7), (2, 3, 32, 4)):
        x = torch.randn(*shape)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def test_transposed_convolution_is_an_ordinary_one_over_its_phases(tmp_path):
    """A stride-2 ConvTranspose2d comes to IREE as one convolution, not transposed, over the
    input itself: its 4 phases x 8 channels as outputs, 2 x 2 taps each, the filter a literal
    (torch-mlir's own lowering convolves the input with zeros inserted between its pixels)."""
    model = torch.nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1).eval()
    dync.compile(model, (torch.randn(1, 4, 8, 8),), mode="graph", cache=False,
                 dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    convolutions = re.findall(r"torch\.aten\.convolution (.*?) \{", text)
    assert len(convolutions) == 1 and convolutions[0].split(", ")[6] == "%false"
    assert "!torch.vtensor<[32,4,2,2],f32>" in text and "conv_transpose" not in text
    # Its phase filter a literal (`dync-fold-literal-layouts`), which `dync-im2col` can read.
    assert "tensor<32x4x2x2xf32>" in text and "torch.aten.flip" not in text


class AdaptiveMaxPool(torch.nn.Module):
    def forward(self, x):
        return F.adaptive_max_pool2d(x, (2, 3))


def test_a_decomposition_that_fixes_the_example_sizes_is_refused(monkeypatch):
    """torch's own decomposition of `adaptive_max_pool2d` (dync has its own, see the case
    above) branches on `h % 2 == 0` and fixes `h // 2 == 4` (guards nothing checked after
    export): the compiled model was right on an 8 x 12 image and wrong on 5 x 7. Put back, in
    one graph it is refused; `mode="auto"` runs it as written."""
    from torch._decomp import decomposition_table

    from dync.frontends.pytorch.decompositions import DECOMPOSITIONS

    op = torch.ops.aten.adaptive_max_pool2d.default
    monkeypatch.setitem(DECOMPOSITIONS, op, decomposition_table[op])
    h, w = Dim("h", min=4, max=32), Dim("w", min=4, max=32)
    example = (torch.randn(2, 3, 8, 12),)
    with pytest.raises(UnsupportedConstructError, match="only for the example's sizes"):
        dync.compile(AdaptiveMaxPool(), example, dynamic_shapes=({2: h, 3: w},), mode="graph",
                     cache=False)
    compiled = dync.compile(AdaptiveMaxPool(), example, dynamic_shapes=({2: h, 3: w},),
                            cache=False)
    x = torch.randn(2, 3, 5, 7)
    torch.testing.assert_close(compiled(x), AdaptiveMaxPool()(x))
