"""`dync-int-division`: integer division is exact, and a zero divisor an error, not a crash.

Reads: `floor_divide`, `div` with a rounding mode, `remainder` and `fmod` (tensor and scalar
divisors) whose result is a signed integer tensor, in every function.
Writes: before each whose divisor is not a nonzero constant, the divisor with its zeros
replaced by a positive constant of the op's own in the op (a scalar proven nonzero is left
as it is), and, unless `analysis.value_ranges` proves it nonzero (a size declared from 1
up, counts clamped to at least 1: a tensor's check is a reduction and a wait of the host), a
`torch.runtime.assert` that no divisor is zero (its message starts with `DIVISION_CHECK` and
names the op and its `file:line`; the runtime turns it into
`dync.IntegerDivisionByZeroError`, as eager PyTorch raises too).
A floor division becomes the truncating division `q` corrected by one where the remainder
`x - q*y` is nonzero with a sign other than `y`'s: floor(x / y) exactly, for every int64.

Why: torch-mlir's lowering in IREE 3.13 computes an integer floor division in f32
(`sitofp`, `divf`, `floor`, `fptosi`): `x // y` is wrong once |x| passes 2**24 —
(2**40 + 12345) // 7 came out 157073096704 for eager's 157073091445, silently
(`lit/upstream/torch-int-floor-divide-f32.mlir`). The truncating division and the remainder
lower to `arith.divsi`/`remsi`, exact, but a zero divisor there is undefined behaviour: on
x86 the process dies of SIGFPE. No paper section: correctness at the boundary to IREE.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.value_ranges import ValueRanges
from ..dialects.locations import where_in_model
from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    constant_ints,
    constant_str,
    none_set,
    vtensor_of,
)
from ..dialects.walk import functions, nested_ops
from ..errors import DIVISION_CHECK
from .pipeline import Pass

# op -> whether its divisor (operand 1) is a tensor
_DIVISIONS = {
    "torch.aten.floor_divide": True, "torch.aten.floor_divide.Scalar": False,
    "torch.aten.div.Tensor_mode": True, "torch.aten.div.Scalar_mode": False,
    "torch.aten.remainder.Tensor": True, "torch.aten.remainder.Scalar": False,
    "torch.aten.fmod.Tensor": True, "torch.aten.fmod.Scalar": False,
}
_FLOOR = {"torch.aten.floor_divide", "torch.aten.floor_divide.Scalar"}
_MODE = {"torch.aten.div.Tensor_mode", "torch.aten.div.Scalar_mode"}
_SIGNED = {"si8", "si16", "si32", "si64"}
_FILLS = 100  # distinct fills of divisors' zeros, all in int8's range


class IntDivision(Pass):
    name = "dync-int-division"
    summary = "integer floor division exact (IREE computes it in f32); a zero divisor an error"

    def run(self, module: ir.Operation) -> None:
        divisions, ranges = 0, None
        for func in functions(module).values():
            for op in list(nested_ops(func)):
                if op.name in _DIVISIONS and element_type(op.results[0].type) in _SIGNED:
                    divisions += 1
                    if ranges is None:
                        ranges = ValueRanges(module)
                    _rewrite(op, _DIVISIONS[op.name], fill=divisions % _FILLS + 1,
                             proven=ranges.nonzero(op.operands[1]))


def _rewrite(op: ir.Operation, divisor_is_tensor: bool, fill: int, proven: bool) -> None:
    b = TorchBuilder(op)
    # A tensor proven nonzero still has its zeros filled (none, but the lanes IREE divides
    # past a dynamic length's end may read 0 where the divisor was computed in another
    # dispatch, see `_checked_divisor`): only the check goes.
    if not _nonzero_constant(op.operands[1]) and (divisor_is_tensor or not proven):
        op.operands[1] = _checked_divisor(b, op, op.operands[1], divisor_is_tensor, fill,
                                          check=not proven)
    x, y = op.operands[0], op.operands[1]
    if op.name in _FLOOR or (op.name in _MODE and _rounding(op) == "floor"):
        result = op.results[0]
        divisor = y if divisor_is_tensor else b("torch.prim.NumToTensor.Scalar",
                                                vtensor_of((), "si64"), y)
        op.results[0].replace_all_uses_with(_floor_division(b, x, divisor, result.type))
        op.erase()


def _floor_division(b: TorchBuilder, x: ir.Value, y: ir.Value, result: ir.Type) -> ir.Value:
    """floor(x / y) as `div.Tensor_mode` "trunc" (arith.divsi) corrected by one where
    the remainder is nonzero and its sign differs from `y`'s."""
    flags = vtensor_of(type_dims(result), "i1")
    q = b("torch.aten.div.Tensor_mode", result, x, y, b.str("trunc"))
    r = b("torch.aten.sub.Tensor", result, x, b("torch.aten.mul.Tensor", result, q, y), b.int(1))
    remainder_negative = b("torch.aten.lt.Scalar", flags, r, b.int(0))
    divisor_negative = b("torch.aten.lt.Scalar", vtensor_of(type_dims(y.type), "i1"), y, b.int(0))
    signs_differ = b("torch.aten.ne.Tensor", flags, remainder_negative, divisor_negative)
    inexact = b("torch.aten.ne.Scalar", flags, r, b.int(0))
    correct = b("torch.aten.logical_and", flags, inexact, signs_differ)
    return b("torch.aten.sub.Tensor", result, q, correct, b.int(1))


def _checked_divisor(b: TorchBuilder, op: ir.Operation, y: ir.Value,
                     is_tensor: bool, fill: int, check: bool = True) -> ir.Value:
    """`y`, checked by an assert that it holds no zero (with `check`), with each zero replaced
    by `fill`:
    IREE may run the division before the host evaluates the assert, and must not fault
    meanwhile. A tensor's fill is the division's own (1, 2, ...): two divisions by one divisor
    sharing one filled divisor (`x % y, x // y`), IREE 3.13 could keep it in memory between
    dispatches and divide the vector lanes past a dynamic length's end, read there as 0, by
    it (SIGFPE: `b % c, b // c` of uint8 over 4 elements); its own fill stays in its division's
    dispatch, where those lanes are filled too."""
    if is_tensor:
        zero = b("torch.aten.eq.Scalar", vtensor_of(type_dims(y.type), "i1"), y, b.int(0))
        safe = b("torch.aten.masked_fill.Scalar", y.type, y, zero, b.int(fill))
        if not check:
            return safe
        ok = none_set(zero, b.ip, b.loc)
    elif str(y.type) == "!torch.int":
        zero = b("torch.aten.eq.int", ir.Type.parse("!torch.bool"), y, b.int(0))
        ok = b("torch.aten.ne.int", zero.type, y, b.int(0))  # IREE cannot legalize __not__
        safe = b("torch.aten.add.int", y.type, y,
                 b("torch.aten.Int.bool", ir.Type.parse("!torch.int"), zero))
    else:
        return y  # a float divisor: the result is not an integer
    where = where_in_model(op) or "an unknown line"
    ir.Operation.create("torch.runtime.assert", operands=[ok], loc=b.loc, ip=b.ip, attributes={
        "message": ir.StringAttr.get(
            f"{DIVISION_CHECK} {op.name.removeprefix('torch.aten.')} at {where} divides an "
            "integer by zero")})
    return safe


def _nonzero_constant(y: ir.Value) -> bool:
    values = constant_ints(y)
    return values is not None and 0 not in values


def _rounding(op: ir.Operation) -> str | None:
    return constant_str(op.operands[2])
