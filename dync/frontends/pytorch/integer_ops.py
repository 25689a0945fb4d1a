"""Integer ops torch-mlir (as bundled in IREE 3.13) does not lower, as ops it lowers exactly
(without these a model using one ran whole in eager PyTorch), and powers by an integer."""

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


def _power(x: torch.Tensor, exponent) -> torch.Tensor:
    """`x ** n` for an int n: of an integer tensor (torch-mlir lowers only float powers) by
    squarings and products, wrapping as eager's do; of a float tensor with n from -1 to -4, 1
    over the positive power, as eager's kernel takes -1 and -2 (IREE's pow gave -inf for
    0 ** -2). Other powers as they are."""
    if not isinstance(exponent, int) or x.is_complex():
        return NotImplemented
    if x.is_floating_point():
        return 1 / _product_power(x, -exponent) if -4 <= exponent <= -1 else NotImplemented
    return NotImplemented if exponent < 0 else _product_power(x, exponent)


def _product_power(x: torch.Tensor, exponent: int) -> torch.Tensor:
    """x ** exponent (>= 0) by squarings and products."""
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
    _aten.pow.Tensor_Scalar: _power,
}
"""The decompositions above, by the ATen op each replaces."""
