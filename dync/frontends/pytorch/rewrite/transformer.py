"""`nn.TransformerEncoder` with a key padding mask as eager PyTorch runs it at inference.

In eval mode, without grad, an encoder built with `enable_nested_tensor=True` (the default)
runs a left-aligned padded batch (each row real tokens, then padding) as a nested tensor and
pads it back with zeros: its output is 0 at the padded positions (before its final `norm`),
where the ordinary path computes values there. torch.export traces the ordinary path (the
encoder checks the mask's alignment only outside of tracing), so a compiled
`nn.TransformerEncoder(...)(x, src_key_padding_mask=pad)` disagreed with eager at the padded
positions, failed its first-call check and ran in eager. While exporting, the encoder's output
before its `norm` is zeroed at the padded positions wherever eager would take that path: its
static conditions checked at trace time, the mask's alignment in the graph. The real
positions are the same on both paths (the padded keys are masked out).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn


def padding_zeroed_forward(module: nn.Module) -> Callable | None:
    """A replacement `forward` for an `nn.TransformerEncoder`, or None for other modules."""
    if type(module) is not nn.TransformerEncoder:
        return None
    original = module.forward

    def forward(src: torch.Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None):
        if not torch.compiler.is_exporting() or not _nested_in_eager(module, src, mask,
                                                                      src_key_padding_mask):
            return original(src, mask, src_key_padding_mask, is_causal)
        norm, module.norm = module.norm, None
        try:
            out = original(src, mask, src_key_padding_mask, is_causal)
        finally:
            module.norm = norm
        # batch first: an encoder whose layers are not has no `use_nested_tensor`
        zeroed = out.masked_fill(src_key_padding_mask.unsqueeze(-1), 0.0)
        if getattr(module, "mask_check", True):
            real = src_key_padding_mask.logical_not()
            aligned = (real[:, 1:] <= real[:, :-1]).all()
            zeroed = torch.where(aligned, zeroed, out)
        return zeroed if norm is None else norm(zeroed)

    return forward


def _nested_in_eager(encoder: nn.TransformerEncoder, src: torch.Tensor, mask: Any,
                     padding: Any) -> bool:
    """Whether eager PyTorch (no grad) runs `encoder` on a nested tensor for these arguments
    when the mask is left-aligned: `TransformerEncoder.forward`'s conditions that do not
    depend on the data."""
    return (torch.backends.mha.get_fastpath_enabled()
            and getattr(encoder, "use_nested_tensor", False)
            and not encoder.layers[0].training
            and isinstance(padding, torch.Tensor) and padding.dtype == torch.bool
            and mask is None and src.dim() == 3 and not src.is_nested
            and not torch.is_autocast_enabled())
