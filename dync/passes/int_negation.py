"""`dync-int-negation`: an integer negated is exact.

Reads: `torch.aten.neg` whose result is an int32 or int64 tensor, in every function.
Writes: each as `torch.aten.mul.Scalar` by -1, which lowers to `arith.muli`.

Why: torch-mlir's lowering in IREE 3.13 negates an integer tensor in f32 (`sitofp`, `negf`,
`fptosi`): `-x` is wrong once |x| passes 2**24, silently (-2000000001 came out -2000000000;
`lit/upstream/torch-int-neg-f32.mlir`). Both frontends produce it (`-x`, `torch.neg`, ONNX
`Neg`, and torch's own decompositions). int8 and int16 are exact in f32 and left so: IREE
3.13's compiler crashed (SIGSEGV) on an int8 multiplication by a negative constant.
No paper section: correctness at the boundary to IREE.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import element_type
from ..dialects.torch_ops import TorchBuilder
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

_WIDE = {"si32", "si64"}


class IntNegation(Pass):
    name = "dync-int-negation"
    summary = "integer negation exact (IREE computes it in f32)"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            for op in list(nested_ops(func)):
                if op.name == "torch.aten.neg" and element_type(op.results[0].type) in _WIDE:
                    b = TorchBuilder(op)
                    negated = b("torch.aten.mul.Scalar", op.results[0].type, op.operands[0],
                                b.int(-1))
                    op.results[0].replace_all_uses_with(negated)
                    op.erase()
