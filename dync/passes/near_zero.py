"""`dync-near-zero`: odd functions accurate for arguments near 0.

Reads: `torch.aten.sin`, `tan`, `sinh`, `asinh` and `atanh` of a float tensor, in every
function (both frontends produce them: `torch.sin`, ONNX `Sin`, and decompositions such as
`sinc`'s `sin(pi x) / (pi x)`).
Writes: where |x| is small, each as a series or an identity that keeps its relative accuracy,
and the op itself elsewhere (`where.self`, elementwise: IREE fuses both sides into the op's
dispatch):

- sin(x) for |x| < pi/4: x (1 - x^2/3! + x^4/5! - ... - x^10/11!), truncated at 7e-12;
- tan(x) for |x| < pi/4: that series over cos(x) (accurate near 0);
- sinh(x) for |x| < 1: x (1 + x^2/3! + ... + x^10/11!), truncated at 1.6e-10;
- asinh(x) for |x| < 1: sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2)));
- atanh(x) everywhere: log1p(2x / (1 - x)) / 2 (±1 and |x| > 1 come out as eager's).

Why: IREE 3.13's approximations on the CPU (MLIR's polynomial approximation) are accurate
only to about 1e-7 absolute near 0, not relative: sin(-1e-8) came out +6.2e-8, sinc near 0
was off by up to 2.98, sinh/asinh/atanh of 1e-8 were 0 or twice the answer, and relative
errors of 1e-3 remained at 1e-3 (`lit/upstream/iree-sin-near-zero.mlir`). Eager's are
accurate to an ulp or two.
No paper section: correctness at the boundary to IREE.
"""

from __future__ import annotations

import math

from iree.compiler import ir

from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import TorchBuilder, vtensor_of
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

# The series of sin(x)/x and sinh(x)/x in x^2, from x^2 up to x^10 (1/3!, 1/5!, ..., 1/11!).
_INVERSE_FACTORIALS = tuple(1.0 / math.factorial(n) for n in (3, 5, 7, 9, 11))


class _Builder(TorchBuilder):
    """Elementwise torch ops over tensors of one type (`like`)."""

    def __init__(self, before: ir.Operation, like: ir.Type):
        super().__init__(before)
        self.type = like

    def unary(self, name: str, x: ir.Value) -> ir.Value:
        return self(f"torch.aten.{name}", self.type, x)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self("torch.aten.mul.Tensor", self.type, a, b)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self("torch.aten.div.Tensor", self.type, a, b)

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self("torch.aten.add.Tensor", self.type, a, b, self.int(1))

    def scaled(self, a: ir.Value, factor: float) -> ir.Value:
        return self("torch.aten.mul.Scalar", self.type, a, self.float(factor))

    def plus(self, a: ir.Value, term: float) -> ir.Value:
        return self("torch.aten.add.Scalar", self.type, a, self.float(term), self.int(1))

    def rsub(self, a: ir.Value, term: float) -> ir.Value:
        """term - a."""
        return self("torch.aten.rsub.Scalar", self.type, a, self.float(term), self.int(1))

    def series(self, x: ir.Value, alternating: bool) -> ir.Value:
        """x (1 + c1 x^2 + c2 x^4 + ...) with c_k = ±1/(2k+1)!, by Horner's rule in x^2."""
        square = self.mul(x, x)
        signs = [(-1.0) ** (k + 1) if alternating else 1.0
                 for k in range(len(_INVERSE_FACTORIALS))]
        *rest, last = [s * c for s, c in zip(signs, _INVERSE_FACTORIALS, strict=True)]
        total = self.scaled(square, last)
        for c in reversed(rest):
            total = self.mul(self.plus(total, c), square)
        return self.mul(x, self.plus(total, 1.0))

    def below(self, x: ir.Value, bound: float) -> ir.Value:
        """|x| < bound, as a boolean tensor."""
        mask = vtensor_of(type_dims(x.type), "i1")
        return self("torch.aten.lt.Scalar", mask, self.unary("abs", x), self.float(bound))

    def where(self, mask: ir.Value, then: ir.Value, otherwise: ir.Value) -> ir.Value:
        return self("torch.aten.where.self", self.type, mask, then, otherwise)


def _sin(b: _Builder, x: ir.Value) -> ir.Value:
    return b.where(b.below(x, math.pi / 4), b.series(x, alternating=True), b.unary("sin", x))


def _tan(b: _Builder, x: ir.Value) -> ir.Value:
    near = b.div(b.series(x, alternating=True), b.unary("cos", x))
    return b.where(b.below(x, math.pi / 4), near, b.unary("tan", x))


def _sinh(b: _Builder, x: ir.Value) -> ir.Value:
    return b.where(b.below(x, 1.0), b.series(x, alternating=False), b.unary("sinh", x))


def _asinh(b: _Builder, x: ir.Value) -> ir.Value:
    square = b.mul(x, x)
    root = b.plus(b.unary("sqrt", b.plus(square, 1.0)), 1.0)
    magnitude = b.unary("log1p", b.add(b.unary("abs", x), b.div(square, root)))
    return b.where(b.below(x, 1.0), b.mul(b.unary("sign", x), magnitude), b.unary("asinh", x))


def _atanh(b: _Builder, x: ir.Value) -> ir.Value:
    ratio = b.div(b.scaled(x, 2.0), b.rsub(x, 1.0))
    return b.scaled(b.unary("log1p", ratio), 0.5)


_REWRITES = {"torch.aten.sin": _sin, "torch.aten.tan": _tan, "torch.aten.sinh": _sinh,
             "torch.aten.asinh": _asinh, "torch.aten.atanh": _atanh}


class NearZero(Pass):
    name = "dync-near-zero"
    summary = "sin, tan, sinh, asinh, atanh accurate near 0 (IREE's are not, relatively)"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            for op in list(nested_ops(func)):
                rewrite = _REWRITES.get(op.name)
                if rewrite is None:
                    continue
                result, x = op.results[0], op.operands[0]
                if element_type(result.type) not in FLOAT_ELEMENTS or x.type != result.type:
                    continue
                result.replace_all_uses_with(rewrite(_Builder(op, result.type), x))
                op.erase()
