"""`dync-fold-literal-layouts`: a weight's reshapes, transposes, flips and zero pads done at
compile time, leaving a literal.

Reads: `torch.aten.view`, `_unsafe_view`, `reshape`, `transpose.int`, `permute`, `flip`,
`unsqueeze`, `flatten.using_ints`, `constant_pad_nd` (no negative pad), `expand` (to at most
4x its operand or 4096 elements: a larger broadcast IREE fuses into its reader) and
`slice.Tensor` (step 1 or more) whose tensor operand is a `torch.vtensor.literal` this module
can read (`literals.readable`) and whose other operands are constants, with a static result of
at most `literals.MAX_ELEMENTS` elements, in every function.

Writes: each such op becomes a literal of its value (computed with numpy, as torch defines the
op), the same kind (inline or resource) and element type as its operand; operands left without
users are erased. Chains fold whole, in program order.

Why: passes that rewrite an op by its weight (`dync-im2col`, `dync-channels-last`'s HWCF
filters under control flow, `dync-pointwise-matmuls`, `dync-pretranspose-weights`) read the
weight as a literal, and a weight computed from a parameter in the model's code (a transposed
convolution's phase filter, `frontends/pytorch/transposed_convolution.py`; a kernel reshaped
per call, `F.conv2d(x, self.weight.view(...))`) was none of theirs: IREE folds such chains at
compile time itself, but after dync's choices. A ConvTranspose2d 64->32, 4×4/2 at 64×64
(one thread, AVX-512): its 65×65 phase convolution ran as IREE's direct code, 6.6 ms (eager
1.5); as a literal, `dync-im2col` makes it matmuls. No paper section: constant folding at the
boundary to IREE.
"""

from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.literals import (
    LITERAL,
    MAX_ELEMENTS,
    erase_if_unused,
    literal_array,
    make_literal,
    readable,
)
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import constant_int, constant_int_list, constant_number, defining
from ..dialects.walk import nested_ops
from .pipeline import Pass

# An expansion of a literal is folded only up to 4x its size or this many elements.
_SMALL = 4096


def _int_or_none(value: ir.Value) -> tuple[bool, int | None]:
    """(known, the int): a `torch.constant.int`, or `torch.constant.none` (None)."""
    if defining(value, "torch.constant.none") is not None:
        return True, None
    number = constant_int(value)
    return number is not None, number


def _reshape(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    sizes = constant_int_list(op.operands[1])
    return None if sizes is None else a.reshape(sizes)


def _transpose(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    first, second = constant_int(op.operands[1]), constant_int(op.operands[2])
    return None if first is None or second is None else np.swapaxes(a, first, second)


def _permute(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    dims = constant_int_list(op.operands[1])
    return None if dims is None else np.transpose(a, dims)


def _flip(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    dims = constant_int_list(op.operands[1])
    return None if dims is None else np.flip(a, [d % a.ndim for d in dims])


def _unsqueeze(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    dim = constant_int(op.operands[1])
    return None if dim is None else np.expand_dims(a, dim % (a.ndim + 1))


def _flatten(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    start, end = constant_int(op.operands[1]), constant_int(op.operands[2])
    if start is None or end is None or a.ndim == 0:
        return None
    start, end = start % a.ndim, end % a.ndim
    return a.reshape(a.shape[:start] + (-1,) + a.shape[end + 1:])


def _pad(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    pads, value = constant_int_list(op.operands[1]), constant_number(op.operands[2])
    if pads is None or value is None or any(p < 0 for p in pads) or len(pads) > 2 * a.ndim:
        return None
    widths = [(0, 0)] * a.ndim
    for i in range(len(pads) // 2):
        widths[a.ndim - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    return np.pad(a, widths, constant_values=value)


def _expand(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    sizes = constant_int_list(op.operands[1])
    if sizes is None or len(sizes) < a.ndim:
        return None
    lead = len(sizes) - a.ndim
    shape = [s if s != -1 else a.shape[i - lead] for i, s in enumerate(sizes)]
    if int(np.prod(shape)) > max(4 * a.size, _SMALL):
        return None  # a broadcast IREE fuses into its reader: not worth a large constant
    return np.broadcast_to(a, shape)


def _slice(a: np.ndarray, op: ir.Operation) -> np.ndarray | None:
    dim = constant_int(op.operands[1])
    (known_start, start), (known_end, end) = (_int_or_none(v) for v in op.operands[2:4])
    step = constant_int(op.operands[4])
    if dim is None or not (known_start and known_end) or step is None or step < 1:
        return None
    index = [slice(None)] * a.ndim
    index[dim % a.ndim] = slice(start, end, step)
    return a[tuple(index)]


_FOLDS = {
    "torch.aten.view": _reshape, "torch.aten._unsafe_view": _reshape,
    "torch.aten.reshape": _reshape, "torch.aten.transpose.int": _transpose,
    "torch.aten.permute": _permute, "torch.aten.flip": _flip,
    "torch.aten.unsqueeze": _unsqueeze, "torch.aten.flatten.using_ints": _flatten,
    "torch.aten.constant_pad_nd": _pad, "torch.aten.expand": _expand,
    "torch.aten.slice.Tensor": _slice,
}


def _fold(op: ir.Operation) -> bool:
    dims = type_dims(op.results[0].type) if len(op.results) == 1 else None
    if not readable(op.operands[0]) or dims is None or None in dims \
            or int(np.prod(dims)) > MAX_ELEMENTS:
        return False  # (checked before reading: a large weight is not copied to be refused)
    literal = defining(op.operands[0], LITERAL)
    array = literal_array(literal)
    if array is None:
        return False
    try:
        value = _FOLDS[op.name](array, op)
    except (ValueError, IndexError):  # (numpy refusing what torch would refuse too)
        return False
    if value is None or list(value.shape) != list(dims):
        return False
    folded = make_literal(np.ascontiguousarray(value), literal, ir.InsertionPoint(op))
    op.results[0].replace_all_uses_with(folded)
    source = op.operands[0]
    op.erase()
    erase_if_unused(source)
    return True


class FoldLiteralLayouts(Pass):
    name = "dync-fold-literal-layouts"
    summary = "reshapes, transposes, flips and zero pads of literals done at compile time"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            for op in list(nested_ops(module)):
                if op.name in _FOLDS and len(op.operands) > 0:
                    _fold(op)
