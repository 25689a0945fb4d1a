"""`dync-softmax-row-blocks`: on the CPU, a softmax over rows of dynamic number is computed over
blocks of `ROWS` rows, so that the dim IREE vectorizes beside the reduced one is static.

Reads: `torch.aten.softmax.int`, `torch.aten._softmax`, `torch.aten.log_softmax.int` and
`torch.aten._log_softmax` over the last dim of a floating-point tensor of rank ≥ 2 whose
next-to-last dim (the rows) is dynamic, in every function (an f32 softmax outside a
data-tiled module is gone by then: `dync-decompose-softmax` runs first); the module's backend
(only ``llvm-cpu``).

Writes: in place of each, the rows in blocks of `ROWS` viewed as ``... x blocks x ROWS x R``,
the same softmax over the last dim, the result viewed back, in one of two forms:

* padded (most modules): the input padded with zero rows to a multiple of `ROWS`
  (`torch.aten.constant_pad_nd`), the result sliced back to the rows the input had; a zero
  row's softmax is finite (uniform), and rows are independent, so the rows kept are the op's;
* split (a module IREE data-tiles, `dync-data-tiling`, before this pass): the whole blocks
  sliced off the input and blocked, the last rows (fewer than `ROWS`) softmaxed as they are,
  and the two concatenated. The padded form, fused there with the packing of the next
  matmul's operand, needed a stack that grows with the reduced dim's bound (540672 bytes
  against IREE's 32 KiB limit in a BERT-base layer over at most 512 tokens; with the limit
  raised, DeeBERT's form of attention failed otherwise: "all stack allocations need to be
  hoisted"), and the module lost data tiling. Elsewhere the split form is slower (its
  concatenation is a copy: a d=128 layer at 512 tokens 8.0 ms against 6.2).

Shapes of the new tensors are bound from the input's binding, for memory planning.

Why: IREE 3.13's CPU code for a softmax tiles the dim beside the reduction by 8 and, where
that dim is dynamic, runs about 4x slower than where it is static: `softmax(x, -1)` on
``12 x s x 128`` (s = 512, one thread, AVX-512) 4.4 ms against 1.07 for a static ``s``; with
the rows in blocks of 16 (pad and slice included) 1.5 ms. Over attention scores
``12 x s x s``, whose reduced dim is dynamic too, 80 ms against 11-13 (iree-benchmark-module
on the two forms). Attention over a dynamic sequence spent most of its time there: one
thread, 512 tokens, a d=128 encoder layer 23.6 -> 6.2 ms (eager 4.4), a BERT-base layer
(data-tiled, split form) 95.5 -> 50.1 ms (eager 80.0). No paper section: a kernel choice at
the boundary to IREE (issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import LOG_SOFTMAXES, SOFTMAXES
from ..dialects.dync_ir import data_tiled
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    constant_int,
    float_constant,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# Rows per block: the dim beside the reduction IREE tiles by 8; 16 measured a little faster
# than 8 (1.56 against 1.77 ms on 12 x 512 x 128) and wastes at most 15 rows.
ROWS = 16
_INT = "!torch.int"


def _blocked(op: ir.Operation) -> bool:
    """Whether `op` is a softmax this pass computes over blocks of rows."""
    if op.name not in SOFTMAXES and op.name not in LOG_SOFTMAXES:
        return False
    dims = type_dims(op.operands[0].type)
    dim = constant_int(op.operands[1])
    if dims is None or len(dims) < 2 or dim is None or dim % len(dims) != len(dims) - 1:
        return False
    return dims[-2] is None and element_type(op.operands[0].type) in FLOAT_ELEMENTS


class _Rewriter:
    """Builds the blocked form of one softmax `op` before it: split (`split`) or padded."""

    def __init__(self, op: ir.Operation, split: bool):
        self.op, self.b, self.split = op, TorchBuilder(op), split
        self.x = op.operands[0]
        self.dims = type_dims(self.x.type)
        self.rank = len(self.dims)
        self.out_type = op.results[0].type
        self.lead = [self.size(axis) for axis in range(self.rank - 2)]
        self.rows, self.last = self.size(self.rank - 2), self.size(self.rank - 1)
        self.binding = _Binding(self.x, ceil=not split)

    def rewrite(self) -> ir.Value:
        return self.split_rows() if self.split else self.padded()

    def size(self, axis: int) -> ir.Value:
        return self.b.size(self.x, axis)

    def int_op(self, name: str, a: ir.Value, b: ir.Value | int) -> ir.Value:
        return self.b(name, ir.Type.parse(_INT), a, self.b.int(b) if isinstance(b, int) else b)

    def rows_slice(self, x: ir.Value, start: ir.Value | int, end: ir.Value) -> ir.Value:
        start = self.b.int(start) if isinstance(start, int) else start
        return self.b("torch.aten.slice.Tensor", x.type, x, self.b.int(self.rank - 2), start,
                      end, self.b.int(1))

    def softmax(self, x: ir.Value, result: ir.Type) -> ir.Value:
        return self.b(self.op.name, result, x, self.b.int(-1), *self.op.operands[2:])

    def in_blocks(self, x: ir.Value, blocks: ir.Value, rows: ir.Value) -> ir.Value:
        """Softmax of `x` (`rows` = `blocks` * ROWS rows) over blocks of ROWS rows."""
        nested = [*self.dims[:-2], None, ROWS, self.dims[-1]]
        viewed = self.b("torch.aten.view", vtensor_type(x.type, nested), x,
                        self.b.ints([*self.lead, blocks, self.b.int(ROWS), self.last]))
        soft = self.softmax(viewed, vtensor_type(self.out_type, nested))
        back = self.b("torch.aten.view", self.out_type, soft,
                      self.b.ints([*self.lead, rows, self.last]))
        self.binding.bind(viewed, soft, rows="nested", ip=self.b.ip)
        self.binding.bind(back, ip=self.b.ip)
        return back

    def padded(self) -> ir.Value:
        blocks = self.int_op("torch.aten.floordiv.int",
                             self.int_op("torch.aten.add.int", self.rows, ROWS - 1), ROWS)
        rows = self.int_op("torch.aten.mul.int", blocks, ROWS)
        extra = self.int_op("torch.aten.sub.int", rows, self.rows)
        zero = self.b.int(0)
        padded = self.b("torch.aten.constant_pad_nd", self.x.type, self.x,
                        self.b.ints([zero, zero, zero, extra]),
                        float_constant(0.0, self.b.ip, self.b.loc))
        self.binding.bind(padded, ip=self.b.ip)
        return self.rows_slice(self.in_blocks(padded, blocks, rows), 0, self.rows)

    def split_rows(self) -> ir.Value:
        blocks = self.int_op("torch.aten.floordiv.int", self.rows, ROWS)
        rows = self.int_op("torch.aten.mul.int", blocks, ROWS)
        head = self.rows_slice(self.x, 0, rows)
        self.binding.bind(head, ip=self.b.ip)
        rest = self.rows_slice(self.x, rows, self.rows)
        tail = self.softmax(rest, self.out_type)
        self.binding.bind(rest, tail, rows="rest", ip=self.b.ip)
        listed = self.b.tensors([self.in_blocks(head, blocks, rows), tail])
        return self.b("torch.aten.cat", self.out_type, listed, self.b.int(self.rank - 2))


class _Binding:
    """Shape bindings of the blocked tensors, from the input's (rows r: ``ceildiv(r, ROWS)``
    or ``floordiv(r, ROWS)`` blocks); nothing where the input has none."""

    def __init__(self, x: ir.Value, ceil: bool):
        self.x = x
        self.divide = ir.AffineCeilDivExpr if ceil else ir.AffineFloorDivExpr

    def bind(self, *values: ir.Value, ip: ir.InsertionPoint, rows: str = "whole") -> None:
        """Bind `values` with the input's shape, its rows as `rows` says: ``whole`` (the
        blocks' rows), ``nested`` (blocks x ROWS), ``rest`` (the rows after the blocks)."""

        def shape(exprs: list) -> list:
            block = ir.AffineConstantExpr.get(ROWS)
            blocks = self.divide.get(exprs[-2], block)
            middle = {"whole": [ir.AffineMulExpr.get(blocks, block)], "nested": [blocks, block],
                      "rest": [ir.AffineModExpr.get(exprs[-2], block)]}[rows]
            return [*exprs[:-2], *middle, exprs[-1]]

        for value in values:
            bind_from(value, self.x, shape, ip)


class SoftmaxRowBlocks(HostCpuPass):
    name = "dync-softmax-row-blocks"
    summary = "softmax over a dynamic number of rows computed over blocks of 16 rows (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        split = data_tiled(module)
        softmaxes = [op for op in nested_ops(module) if _blocked(op)]
        with module.context, ir.Location.unknown():
            for op in softmaxes:
                result = _Rewriter(op, split).rewrite()
                op.results[0].replace_all_uses_with(result)  # with its binding: the op's shape
                op.erase()
