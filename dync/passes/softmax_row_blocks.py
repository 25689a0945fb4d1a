"""`dync-softmax-row-blocks`: on the CPU, a softmax over rows of dynamic number is computed over
blocks of `ROWS` rows, so that the dim IREE vectorizes beside the reduced one is static.

Reads: `torch.aten.softmax.int`, `torch.aten._softmax`, `torch.aten.log_softmax.int` and
`torch.aten._log_softmax` over the last dim of a floating-point tensor of rank ≥ 2 whose
next-to-last dim (the rows) is dynamic, in every function; the module's backend (only
``llvm-cpu``).

Writes: in place of each, the input padded with zero rows to a multiple of `ROWS`
(`torch.aten.constant_pad_nd`), viewed as ``... x blocks x ROWS x R``, the same softmax over
the last dim, the result viewed back to ``... x padded rows x R`` and sliced to the rows the
input had. A zero row's softmax is finite (uniform), and rows are independent, so the rows kept
are the op's. Left alone in a module IREE data-tiles (`dync-data-tiling`, before this pass):
a blocked softmax whose reduced dim is dynamic too, fused there with the packing of the next
matmul's operand, exceeded IREE's stack limit for a dispatch (540672 bytes against 32768 in a
BERT-base layer over a sequence of at most 512), and the module then lost data tiling. With
``--iree-llvmcpu-stack-allocation-limit=1048576`` that layer ran 43.7 ms at 512 tokens against
95.5 unblocked (eager 75.8); but the stack it needs grows with the sequence bound, and in
DeeBERT's form of attention (scores divided by sqrt(d) before the softmax) IREE then failed
otherwise ("'memref.alloca' op all stack allocations need to be hoisted to the entry
block"), so it is not taken.

Why: IREE 3.13's CPU code for a softmax tiles the dim beside the reduction by 8 and, where
that dim is dynamic, runs about 4x slower than where it is static: `softmax(x, -1)` on
``12 x s x 128`` (s = 512, one thread, AVX-512) 4.4 ms against 1.07 for a static ``s``; with
the rows in blocks of 16 (pad and slice included) 1.5 ms. Over attention scores
``12 x s x s``, whose reduced dim is dynamic too, 80 ms against 11-13 (iree-benchmark-module
on the two forms). Attention over a dynamic sequence spent most of its time there (a
BERT-base layer at 512 tokens: 496 ms against eager's 163). No paper section: a kernel
choice at the boundary to IREE (issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.dync_ir import DATA_TILING, read_flags
from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import (
    BIND,
    TorchBuilder,
    bindings,
    constant_int,
    float_constant,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# Rows per block: the dim beside the reduction IREE tiles by 8; 16 measured a little faster
# than 8 (1.56 against 1.77 ms on 12 x 512 x 128) and wastes at most 15 rows.
ROWS = 16
SOFTMAXES = ("torch.aten.softmax.int", "torch.aten._softmax", "torch.aten.log_softmax.int",
             "torch.aten._log_softmax")
_FLOATS = ("f16", "bf16", "f32", "f64")
_INT = "!torch.int"


def _blocked(op: ir.Operation, data_tiled: bool) -> bool:
    """Whether `op` is a softmax this pass computes over blocks of rows (in a module IREE
    data-tiles: one whose reduced dim is static)."""
    if op.name not in SOFTMAXES:
        return False
    dims = type_dims(op.operands[0].type)
    dim = constant_int(op.operands[1])
    if dims is None or len(dims) < 2 or dim is None or dim % len(dims) != len(dims) - 1:
        return False
    if data_tiled and dims[-1] is None:
        return False  # see the module's docstring
    return dims[-2] is None and element_type(op.operands[0].type) in _FLOATS


def _over_row_blocks(op: ir.Operation) -> None:
    b = TorchBuilder(op)
    x = op.operands[0]
    dims = type_dims(x.type)
    rank = len(dims)
    out_type = op.results[0].type

    def size(axis: int) -> ir.Value:
        if dims[axis] is not None:
            return b.int(dims[axis])
        return b("torch.aten.size.int", ir.Type.parse(_INT), x, b.int(axis))

    def int_list(*values: ir.Value) -> ir.Value:
        return b("torch.prim.ListConstruct", ir.Type.parse("!torch.list<int>"), *values)

    rows = size(rank - 2)
    blocks = b("torch.aten.floordiv.int", ir.Type.parse(_INT),
               b("torch.aten.add.int", ir.Type.parse(_INT), rows, b.int(ROWS - 1)), b.int(ROWS))
    padded_rows = b("torch.aten.mul.int", ir.Type.parse(_INT), blocks, b.int(ROWS))
    extra = b("torch.aten.sub.int", ir.Type.parse(_INT), padded_rows, rows)
    padded = b("torch.aten.constant_pad_nd", x.type, x,
               int_list(b.int(0), b.int(0), b.int(0), extra), float_constant(0.0, b.ip, b.loc))
    lead = [size(axis) for axis in range(rank - 2)]
    last = size(rank - 1)
    in_blocks = b("torch.aten.view", vtensor_type(x.type, [*dims[:-2], None, ROWS, dims[-1]]),
                  padded, int_list(*lead, blocks, b.int(ROWS), last))
    soft = b(op.name, vtensor_type(out_type, [*dims[:-2], None, ROWS, dims[-1]]), in_blocks,
             b.int(-1), *op.operands[2:])
    back = b("torch.aten.view", out_type, soft, int_list(*lead, padded_rows, last))
    result = b("torch.aten.slice.Tensor", out_type, back, b.int(rank - 2), b.int(0), rows,
               b.int(1))
    _bind_blocks(x, padded, in_blocks, soft, back, b.ip)
    op.results[0].replace_all_uses_with(result)  # with its binding: the slice has the op's shape
    op.erase()


def _bind_blocks(x: ir.Value, padded: ir.Value, in_blocks: ir.Value, soft: ir.Value,
                 back: ir.Value, ip: ir.InsertionPoint) -> None:
    """Bind the new tensors' shapes from the input's binding (rows r: padded to
    ``ceildiv(r, ROWS) * ROWS``), so that memory planning knows their sizes."""
    for bind in bindings(x)[:1]:
        exprs = list(ir.AffineMapAttr(bind.attributes["shape_expressions"]).value.results)
        symbols = list(bind.operands)[1:]
        count = len(symbols)
        block = ir.AffineConstantExpr.get(ROWS)
        blocks = ir.AffineCeilDivExpr.get(exprs[-2], block)
        rows = ir.AffineMulExpr.get(blocks, block)
        flat = [*exprs[:-2], rows, exprs[-1]]
        nested = [*exprs[:-2], blocks, block, exprs[-1]]
        for value, shape in ((padded, flat), (in_blocks, nested), (soft, nested), (back, flat)):
            ir.Operation.create(BIND, operands=[value, *symbols], attributes={
                "shape_expressions": ir.AffineMapAttr.get(ir.AffineMap.get(0, count, shape))},
                loc=bind.location, ip=ip)


class SoftmaxRowBlocks(HostCpuPass):
    name = "dync-softmax-row-blocks"
    summary = "softmax over a dynamic number of rows computed over blocks of 16 rows (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        data_tiled = DATA_TILING in read_flags(module)
        softmaxes = [op for op in nested_ops(module) if _blocked(op, data_tiled)]
        with module.context, ir.Location.unknown():
            for op in softmaxes:
                _over_row_blocks(op)
