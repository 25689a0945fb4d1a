"""`dync-fuse`: fusion where dync knows more than IREE — attention chains whose dims RDP proves
compatible, and weight layouts under control flow.

Reads: `torch.aten.softmax.int`, `torch.aten.matmul`, `torch.aten.linear` and the
`torch.bind_symbolic_shape` facts RDP left (run it after `dync-rdp` and `dync-split-subdnns`).

Writes:
* **attention** — ``matmul(softmax(matmul(q, kᵀ) · s, -1), v)`` (the scale `s` a constant
  ``mul``/``div``, or none) becomes one `torch.aten.scaled_dot_product_attention(q, k, v,
  scale=s)`, which IREE lowers to a single fused attention dispatch (online softmax) instead of
  two batched matmuls, a softmax and the scores tensor between them. The rewrite needs what
  SDPA assumes and the chain only implies: q, k and v of one rank with equal batch dims, q and k
  the same head dim, k and v the same sequence dim — proved from the static types and RDP's
  symbolic dims (``seq`` = ``seq``), never assumed. The scores and probabilities must have no
  other use.
* **weight layouts under control flow** — `torch.aten.linear(x, W, b)` over a batched `x`
  (rank 3 or more) with a literal `W` that runs inside an `scf` region (directly, or in a
  function called from one) becomes ``matmul(x, Wᵀ) + b`` with ``Wᵀ`` a new literal computed
  here. IREE 3.13 lowers such a `linear` to a transpose of `W` feeding a batched matmul; its
  constant hoisting folds that transpose only for ops at a function's top level, so in a gated
  block, a loop body or an early-exit tail the weight was transposed again, as its own
  dispatch, on every call (18 of early_exit_bert's 112 dispatches). Where IREE needs no
  transpose it is not done: at the top level, and for a 2-D `x` (IREE fuses the transpose into
  the matmul; the pre-transposed layout measured no faster there).

The attention rewrite is made for the CPU backends only (``dync.backend``, set by
`dync.compile`; "llvm-cpu" when absent): IREE 3.13's CUDA attention kernel returned NaN for
every input of early_exit_bert's attention on an H100, where the unfused chain is exact.

Follows SoD² §5 (operator fusion guided by the RDP results, digest-sod2.md 5) and DyCL's
sub-DNN compilation (the regions are where dync differs from a static compiler). Numerics:
SDPA's online softmax sums in another order (|Δ| ~1e-6 relative).
"""

from __future__ import annotations

import math

import sympy
from iree.compiler import ir

from ..dialects.dync import read_backend
from ..dialects.literals import erase_if_unused, transformed_literal
from ..dialects.symbolic import bound_dims, element_type, type_dims
from ..dialects.torch_ops import (
    BIND,
    bindings,
    bool_constant,
    constant_int,
    constant_number,
    create,
    defining,
    float_constant,
    int_constant,
    none_constant,
    users,
)
from ..dialects.walk import functions_under_control_flow, nested_ops, under_control_flow
from .pipeline import Pass

FLOATS = ("f16", "bf16", "f32", "f64")
# Backends whose IREE attention kernel is correct (see the module docstring).
ATTENTION_BACKENDS = ("llvm-cpu", "arm")


# -- helpers ---------------------------------------------------------------------------------
def _dims(value: ir.Value) -> tuple | None:
    """The dims of a tensor value: ints where static, RDP's sympy expressions where bound, None
    where nothing is known (then no equality can be proved)."""
    static = type_dims(value.type)
    if static is None:
        return None
    bound = next((bound_dims(b) for b in bindings(value)), None)
    return tuple(sympy.Integer(d) if d is not None else (bound[i] if bound else None)
                 for i, d in enumerate(static))


def _equal(a, b) -> bool:
    return a is not None and b is not None and sympy.simplify(a - b) == 0


def _copy_bindings(source: ir.Value, target: ir.Value, ip: ir.InsertionPoint) -> None:
    for bind in bindings(source):
        ir.Operation.create(BIND, operands=[target] + list(bind.operands)[1:],
                            attributes={"shape_expressions": bind.attributes["shape_expressions"]},
                            loc=bind.location, ip=ip)


def _erase(op: ir.Operation) -> None:
    for result in op.results:
        for bind in bindings(result):
            bind.erase()
    op.erase()


# -- attention -------------------------------------------------------------------------------
def _scale_of(scores: ir.Value) -> tuple[ir.Value, float, ir.Operation | None] | None:
    """(the q·kᵀ value, the factor applied to it, the op applying it)."""
    for name, invert in (("torch.aten.div.Scalar", True), ("torch.aten.mul.Scalar", False)):
        op = defining(scores, name)
        if op is not None:
            factor = constant_number(op.operands[1])
            if not factor:
                return None
            return op.operands[0], (1.0 / factor if invert else float(factor)), op
    return scores, 1.0, None


def _last_two_swapped(op: ir.Operation, rank: int) -> bool:
    dims = {constant_int(op.operands[1]), constant_int(op.operands[2])}
    return {d % rank if d is not None else None for d in dims} == {rank - 1, rank - 2}


def _fuse_attention(softmax: ir.Operation) -> bool:
    scores = softmax.operands[0]
    rank = len(type_dims(scores.type) or ())
    if rank < 3 or element_type(scores.type) not in FLOATS:
        return False
    if constant_int(softmax.operands[1]) not in (-1, rank - 1):
        return False
    if defining(softmax.operands[2], "torch.constant.none") is None:
        return False
    consumers = users(softmax.result)
    if (len(consumers) != 1 or consumers[0].name != "torch.aten.matmul"
            or consumers[0].operands[0] != softmax.result):
        return False
    out = consumers[0]
    scaled = _scale_of(scores)
    if scaled is None:
        return False
    product, scale, scale_op = scaled
    if scale_op is not None and len(users(product)) != 1 or len(users(scores)) != 1:
        return False
    first = defining(product, "torch.aten.matmul")
    if first is None:
        return False
    q, kt = first.operands
    transpose = defining(kt, "torch.aten.transpose.int")
    if transpose is None or not _last_two_swapped(transpose, rank):
        return False
    k, v = transpose.operands[0], out.operands[1]
    qd, kd, vd = _dims(q), _dims(k), _dims(v)
    if qd is None or kd is None or vd is None or not len(qd) == len(kd) == len(vd) == rank:
        return False
    same_batch = all(_equal(a, b) and _equal(a, c) for a, b, c in zip(qd[:-2], kd[:-2], vd[:-2], strict=True))
    if not (same_batch and _equal(qd[-1], kd[-1]) and _equal(kd[-2], vd[-2])):
        return False

    ip, loc = ir.InsertionPoint(out), out.location
    none = none_constant(ip, loc)
    dropout = float_constant(0.0, ip, loc)
    false = bool_constant(False, ip, loc)
    default = qd[-1].is_Integer and math.isclose(scale, 1.0 / math.sqrt(int(qd[-1])), rel_tol=1e-7)
    scale_value = none if default else float_constant(scale, ip, loc)
    attention = create("torch.aten.scaled_dot_product_attention", out.results[0].type, ip, loc,
                        operands=[q, k, v, none, dropout, false, scale_value, false])
    out.results[0].replace_all_uses_with(attention)
    for op in (out, softmax, scale_op, first):
        if op is not None:
            _erase(op)
    if not users(kt):
        _erase(transpose)
    return True


# -- weight layouts --------------------------------------------------------------------------
def _pretranspose_linear(linear: ir.Operation, transposed: dict) -> bool:
    x, weight, bias = linear.operands
    if len(type_dims(weight.type) or ()) != 2 or element_type(weight.type) not in FLOATS:
        return False
    if len(type_dims(x.type) or ()) < 3:
        return False  # IREE fuses the transpose into a 2-D matmul itself
    weight_t = transformed_literal(weight, lambda w: w.T, transposed)
    if weight_t is None:
        return False
    ip, loc = ir.InsertionPoint(linear), linear.location
    result = linear.results[0]
    product = create("torch.aten.matmul", result.type, ip, loc, operands=[x, weight_t])
    if defining(bias, "torch.constant.none") is None:
        _copy_bindings(result, product, ip)
        product = create("torch.aten.add.Tensor", result.type, ip, loc,
                         operands=[product, bias, int_constant(1, ip, loc)])
    result.replace_all_uses_with(product)
    linear.erase()
    erase_if_unused(weight)
    return True


class Fuse(Pass):
    name = "dync-fuse"
    summary = "attention chains RDP proves compatible as one SDPA; linear weights pre-transposed under control flow"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            if read_backend(module) in ATTENTION_BACKENDS:
                for op in list(nested_ops(module)):
                    if op.name == "torch.aten.softmax.int":
                        _fuse_attention(op)
            hot = functions_under_control_flow(module)
            transposed: dict = {}
            for op in list(nested_ops(module)):
                if op.name == "torch.aten.linear" and under_control_flow(op, hot):
                    _pretranspose_linear(op, transposed)
