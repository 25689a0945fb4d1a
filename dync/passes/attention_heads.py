"""`dync-attention-heads`: on the CPU, attention whose scores outgrow the cache computed one head
at a time.

Reads: each softmax (`torch.aten.softmax.int`, `torch.aten._softmax`) over the last dim of a
float tensor of rank ≥ 3 — the scores — whose input is a `torch.aten.matmul` or `bmm`
(``q·kᵀ``), directly or through elementwise ops (a scale, an additive or boolean mask), and
whose one user is a product of the probabilities and the values (``p·v``) of either kind;
every value of the chain used once (shape bindings aside). The dim before the rows (the
heads) must be static and larger than 1 in the scores, and of that size or 1 (broadcast) in
every tensor the chain reads. The scores' largest size: static dims, and dynamic ones from their shape bindings and
the declared ranges of their symbols; the module's backend (only ``llvm-cpu``).

Writes: where the scores can reach `SCORES_BYTES`, in place of ``p·v``, the concatenation
(`torch.aten.cat` along the heads) of the same chain computed on each group of heads: each
tensor the chain reads sliced to the group's heads (`torch.aten.slice.Tensor`; a broadcast
one read whole), every op of the chain repeated on the slices. A group is one head, or the
fewest heads that leave at most `MAX_GROUPS` groups. The new tensors' shapes are bound from the
old ones' bindings, the heads' dim replaced by the group's size, for memory planning.

Why: IREE 3.13 computes attention as a chain of dispatches — the product, a scale, the row
maximum with the exponentials, their sum, the normalization (with the packing of a
data-tiled product) and the product with the values — each a pass over all the scores. Over
all heads at once the scores do not stay in the cache between them (12 heads x 512 x 512 x 4
bytes = 12.6 MB); over one head (1 MB) they do, and each dispatch reads what the one before it
wrote from the cache. One thread, AVX-512 (Xeon, 2 MB of L2 a core), `iree-benchmark-module`
with the caching allocator: BERT-base's attention alone over 512 tokens (dynamic), 17.2 ->
8.4 ms (eager 11.3), over 256 3.6 -> 2.0, over 64 0.21 -> 0.16; a BERT-base encoder layer
(data-tiled), 512 tokens 77 -> 70 ms, 128 and 16 tokens unchanged (17.1, 2.2 ms). Three heads
a group at 512 tokens (3 MB of scores) lost most of it (15.7 ms against 8.5). No paper
section: a kernel choice at the boundary to IREE (issue 33).
"""

from __future__ import annotations

import math

from iree.compiler import ir

from ..analysis.op_kinds import ELEMENTWISE, SOFTMAXES, element_bytes
from ..analysis.value_ranges import ValueRanges, largest_dims
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, is_tensor, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    bindings,
    constant_int,
    owner,
    users,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# Scores that can reach this many bytes are computed by groups of heads: above a core's L2
# (2 MB on the Xeon measured, 512 KB on a Zen 3), where the chain's dispatches stop reading
# from the cache; below it, the split was neutral or a gain (the docstring's 64 tokens).
SCORES_BYTES = 1 << 20
# At most this many groups: each adds a copy of the chain's dispatches to the module.
MAX_GROUPS = 16
# The two products: `matmul`, and `bmm` over heads folded into one batch dim of static size.
_PRODUCTS = ("torch.aten.matmul", "torch.aten.bmm")


class _Chain:
    """``p·v`` of one attention: `product` (``q·kᵀ``), the elementwise `steps` from it to
    the softmax, `softmax`, and `output` (``p·v``)."""

    def __init__(self, product: ir.Operation, steps: list[ir.Operation], softmax: ir.Operation,
                 output: ir.Operation):
        self.product, self.steps, self.softmax, self.output = product, steps, softmax, output
        dims = type_dims(softmax.results[0].type)
        self.rank = len(dims)
        self.axis = self.rank - 3
        self.heads = dims[self.axis]

    def ops(self) -> list[ir.Operation]:
        return [self.product, *self.steps, self.softmax, self.output]

    def chained(self, op: ir.Operation) -> ir.Value | None:
        """The operand of `op` that the op before it in the chain computed (None: the
        product's, which reads only the chain's inputs)."""
        if op is self.product:
            return None
        before = self.ops()[self.ops().index(op) - 1]
        return before.results[0]


def _only_user(value: ir.Value) -> ir.Operation | None:
    found = users(value)
    return found[0].operation if len(found) == 1 else None


def _used_only_by(value: ir.Value, op: ir.Operation) -> bool:
    user = _only_user(value)
    return user is not None and user == op


def _chain(softmax: ir.Operation) -> _Chain | None:
    """The attention around `softmax`, if the module docstring's pattern matches."""
    scores = softmax.operands[0]
    dims = type_dims(scores.type)
    dim = constant_int(softmax.operands[1])
    if dims is None or len(dims) < 3 or dim is None or dim % len(dims) != len(dims) - 1:
        return None
    if element_type(scores.type) not in FLOAT_ELEMENTS or dims[-3] is None or dims[-3] < 2:
        return None
    output = _only_user(softmax.results[0])
    if output is None or output.name not in _PRODUCTS or output.operands[0] != softmax.results[0]:
        return None
    steps, value, consumer = [], scores, softmax
    while (producer := owner(value)) is not None and producer.name in ELEMENTWISE:
        before = _scores_operand(producer)
        if before is None or not _used_only_by(value, consumer) or len(producer.results) != 1:
            return None
        steps.insert(0, producer)
        value, consumer = before, producer
    product = owner(value)
    if product is None or product.name not in _PRODUCTS or not _used_only_by(value, consumer):
        return None
    if any(op.parent.operation != output.parent.operation
           for op in (product, *steps, softmax)):
        return None
    if any(len(type_dims(v.type) or ()) < 2 for v in (*product.operands, *output.operands)):
        return None  # a vector's product: its dims do not line up with the scores'
    chain = _Chain(product, steps, softmax, output)
    return chain if all(_splittable(chain, op) for op in chain.ops()) else None


def _scores_operand(op: ir.Operation) -> ir.Value | None:
    """The operand of the elementwise `op` that carries the scores: a tensor operand of the
    result's shape, the first one (``scores + mask``) where a mask has that shape too."""
    result = type_dims(op.results[0].type)
    found = [v for v in op.operands if is_tensor(v.type) and type_dims(v.type) == result]
    return found[0] if found else None


def _head_axis(chain: _Chain, value: ir.Value) -> int | None:
    """The heads' axis of `value`, a tensor the chain reads (aligned from the right, as
    broadcasting does); None where its rank does not reach it."""
    rank = len(type_dims(value.type))
    axis = chain.axis - (chain.rank - rank)
    return axis if axis >= 0 else None


def _splittable(chain: _Chain, op: ir.Operation) -> bool:
    """Whether each tensor `op` reads from outside the chain has the heads or 1 at their dim."""
    chained = chain.chained(op)
    for value in op.operands:
        if not is_tensor(value.type) or (chained is not None and value == chained):
            continue
        dims = type_dims(value.type)
        if dims is None:
            return False
        axis = _head_axis(chain, value)
        if axis is not None and dims[axis] not in (1, chain.heads):
            return False
    return True


def _group(heads: int) -> int:
    """Heads a group: 1, or the least divisor of `heads` leaving at most MAX_GROUPS groups."""
    return next(g for g in range(1, heads + 1) if heads % g == 0 and heads // g <= MAX_GROUPS)


class _Splitter:
    """The chain's ops repeated on each group of heads, before `chain.output`."""

    def __init__(self, chain: _Chain):
        self.chain, self.b = chain, TorchBuilder(chain.output)
        self.size = _group(chain.heads)

    def rewrite(self) -> ir.Value:
        parts = [self.group(start) for start in range(0, self.chain.heads, self.size)]
        output = self.chain.output.results[0]
        return self.b("torch.aten.cat", output.type, self.b.tensors(parts),
                      self.b.int(self.chain.axis))

    def group(self, start: int) -> ir.Value:
        made: dict[ir.Value, ir.Value] = {}
        for op in self.chain.ops():
            chained = self.chain.chained(op)
            operands = [made[v] if chained is not None and v == chained else self.sliced(v, start)
                        for v in op.operands]
            old = op.results[0]
            dims = list(type_dims(old.type))
            dims[self.chain.axis] = self.size
            made[old] = self.b(op.name, vtensor_type(old.type, dims), *operands)
            self.bind(made[old], old)
        return made[self.chain.output.results[0]]

    def sliced(self, value: ir.Value, start: int) -> ir.Value:
        """`value`'s heads of the group from `start` (all of it: not a tensor, or broadcast)."""
        if not is_tensor(value.type):
            return value
        axis = _head_axis(self.chain, value)
        if axis is None or type_dims(value.type)[axis] == 1:
            return value
        part = self.b.slice(value, axis, start, start + self.size, size=self.size)
        self.bind(part, value, axis)
        return part

    def bind(self, value: ir.Value, source: ir.Value, axis: int | None = None) -> None:
        axis = self.chain.axis if axis is None else axis
        size = self.size

        def shape(exprs: list) -> list:
            return [size if n == axis else e for n, e in enumerate(exprs)]

        bind_from(value, source, shape, self.b.ip)


class AttentionHeads(HostCpuPass):
    name = "dync-attention-heads"
    summary = "attention whose scores outgrow the cache computed a head at a time (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        ranges = ValueRanges(module).symbol_ranges
        chains = []
        for op in nested_ops(module):
            chain = _chain(op) if op.name in SOFTMAXES else None
            if chain is None:
                continue
            largest = largest_dims(op.operands[0], ranges)
            if largest is not None \
                    and math.prod(largest) * element_bytes(op.operands[0].type) >= SCORES_BYTES:
                chains.append(chain)
        with module.context, ir.Location.unknown():
            for chain in chains:
                result = _Splitter(chain).rewrite()
                chain.output.results[0].replace_all_uses_with(result)
                for op in reversed(chain.ops()):
                    for binding in bindings(op.results[0]):
                        binding.erase()
                    op.erase()
