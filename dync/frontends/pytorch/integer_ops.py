"""Integer ops torch-mlir (as bundled in IREE 3.13) does not lower, as ops it lowers exactly.
Without these a model using one ran whole in eager PyTorch."""

from __future__ import annotations

import torch

_aten = torch.ops.aten


def _by_tensor(op):
    """`op.Scalar(x, c)` as `op.Tensor(x, c)`, c a 0-d tensor of x's dtype."""
    def decomposition(x: torch.Tensor, other) -> torch.Tensor:
        return op.Tensor(x, _aten.scalar_tensor.default(other, dtype=x.dtype))
    return decomposition


def _fmod_by_scalar(x: torch.Tensor, other) -> torch.Tensor:
    """`fmod(x, c)`: of an integer tensor (whose constant torch-mlir leaves unlowered), x less
    its truncated quotient times c (`dync-int-division` checks a zero c, as eager raises); of
    a float tensor (which torch-mlir fails to lower), by c as a tensor."""
    if x.is_floating_point():
        return _by_tensor(_aten.fmod)(x, other)
    if not isinstance(other, int):
        return NotImplemented
    return x - torch.div(x, other, rounding_mode="trunc") * other


def _integer_power(x: torch.Tensor, exponent) -> torch.Tensor:
    """`x ** n` of an integer tensor, n a non-negative int (torch-mlir lowers only float
    powers): squarings and products, wrapping as eager's do."""
    if x.is_floating_point() or x.is_complex() or not isinstance(exponent, int) or exponent < 0:
        return NotImplemented
    result, square = None, x
    while True:
        if exponent & 1:
            result = square if result is None else result * square
        exponent >>= 1
        if not exponent:
            break
        square = square * square
    return torch.ones_like(x) if result is None else result.clone()


INTEGER_OPS = {
    _aten.fmod.Scalar: _fmod_by_scalar,
    _aten.bitwise_or.Scalar: _by_tensor(_aten.bitwise_or),
    _aten.__or__.Scalar: _by_tensor(_aten.bitwise_or),
    _aten.bitwise_xor.Scalar: _by_tensor(_aten.bitwise_xor),
    _aten.__xor__.Scalar: _by_tensor(_aten.bitwise_xor),
    _aten.pow.Tensor_Scalar: _integer_power,
}
"""The decompositions above, by the ATen op each replaces."""
