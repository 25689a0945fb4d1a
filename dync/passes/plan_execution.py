"""`dync-plan-execution`: the order of independent ops that keeps the fewest bytes of
intermediate tensors alive at once (SoD² §4.3, static execution planning; digest-sod2.md 4.2).

Reads (after `dync-rdp`): every block's ops and the dims of their tensors
(`analysis.tensor_sizes`: static types, RDP's symbolic bindings), the symbols' ranges.

Partitions each block, as SoD² does, into *segments*: maximal runs of ops that may trade
places. A segment ends at an op whose place is part of the program's meaning or cannot be
reasoned about: ops with regions (`scf.if`, `scf.while`), calls, host reads (``.item()``),
random ops, ops on mutable tensors or outside the torch/arith/tensor value dialects, and an op
with a result of unknown size (SoD²'s ``nac`` partition points). Inside a segment an op may
move anywhere after the ops whose results it reads.

Models each order's peak as `dync-plan-buffers` counts memory: a tensor made in the segment
is live from its producer until its last reader in the segment, or to the segment's end when
it is read after it (or returned, or yielded); a tensor made before the segment and last read
in it is live until that read; views, lists and casts alias their operand; constants and
shape queries hold nothing; an elementwise op may write over an operand of its size that
dies there. Only ops that make a tensor are ordered; the views, constants and lists they
read go right before them.

Searches the orders with a dynamic program over the sets of ops already run (the best peak
that reaches each set; exact while every step's sets fit `BEAM`, a beam of the lowest peaks
beyond, narrower for segments longer than 64 ops so that the search stays near `WORK`
steps). Symbolic sizes are compared at the middle of the symbols' ranges, and an order is
taken only when its peak is no higher than program order's at every sample point of the
ranges and lower at one: never worse for any shape the declared ranges allow (SoD²'s "mixed
constant" case; one order, not several versions).

Writes: the ops in the new order; ``dync.execution`` on the module: ``{segments, reordered,
exact}`` (segments with at least two ops that make tensors; those given a new order; those
searched exhaustively); and, when some segment was reordered, IREE's
``stream.partitioning = #stream.partitioning_config<"debug">`` on the module. IREE's stream
scheduler otherwise runs independent dispatches as one concurrent wave, which keeps both
branches' temporaries alive together whatever the order: on a two-branch network the
measured peak stayed at 1 664 000 bytes with the new order alone and fell to 844 800 with it
and serial partitioning (eager: 2 470 400). Serial execution is what the local-sync CPU
driver does anyway.
"""

from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass

import numpy as np
import sympy
from iree.compiler import ir

from ..analysis.movable import fixed
from ..analysis.op_kinds import (
    CONSTANT_OPS,
    ELEMENTWISE,
    SHAPE_ONLY,
    VIEWS,
)
from ..analysis.sampling import Sampler, Samplers, symbol_ranges
from ..analysis.tensor_sizes import TensorSizes
from ..dialects.assembly import PARTITIONING_ATTR, SERIAL
from ..dialects.attributes import EXECUTION_ATTR
from ..dialects.symbolic import is_tensor
from ..dialects.torch_ops import BIND, owner
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

# States (sets of ops already run) kept per step of the search; past it, the lowest peaks.
BEAM = 256
# A segment of n heavy ops costs about n² × beam steps: segments longer than √(WORK / BEAM)
# (64 ops; dync-im2col's strips make 200 on AVX2) keep fewer states, at least MIN_BEAM.
WORK = 1 << 20
MIN_BEAM = 32


class PlanExecution(Pass):
    name = "dync-plan-execution"
    summary = ("order independent ops to keep the fewest intermediate bytes alive (SoD² "
               "execution planning)")

    def run(self, module: ir.Operation) -> None:
        funcs = functions(module)
        samplers = Samplers(symbol_ranges(module))
        counts = {"segments": 0, "reordered": 0, "exact": 0}
        for func in funcs.values():
            sizes = TensorSizes(func)
            blocks = [func.regions[0].blocks[0]] + [
                b for op in nested_ops(func) for r in op.regions for b in r.blocks]
            for block in blocks:
                position = {op.operation: i for i, op in enumerate(block.operations)}
                for ops, anchor in _segments(block, sizes):
                    plan = _Segment(ops, block, position, sizes)
                    if len(plan.heavy) < 2:
                        continue
                    counts["segments"] += 1
                    order, exact = plan.search(samplers)
                    counts["exact"] += exact
                    if order is not None:
                        plan.apply(order, anchor)
                        counts["reordered"] += 1
        with module.context:
            i64 = ir.IntegerType.get_signless(64)
            module.attributes[EXECUTION_ATTR] = ir.DictAttr.get(
                {k: ir.IntegerAttr.get(i64, v) for k, v in counts.items()})
            if counts["reordered"]:
                module.attributes[PARTITIONING_ATTR] = ir.Attribute.parse(SERIAL)


def read_execution(module: ir.Module | ir.Operation) -> dict[str, int]:
    """The ``dync.execution`` counts `dync-plan-execution` left on `module` ({} without)."""
    op = module.operation if isinstance(module, ir.Module) else module
    if EXECUTION_ATTR not in op.attributes:
        return {}
    return {a.name: ir.IntegerAttr(a.attr).value for a in ir.DictAttr(op.attributes[EXECUTION_ATTR])}


# --- partitioning ----------------------------------------------------------------------------


def _segments(block: ir.Block, sizes: TensorSizes) -> list[tuple[list[ir.Operation], ir.Operation]]:
    """The runs of movable ops of `block`, each with the fixed op right after it."""
    out, run = [], []
    for op in block.operations:
        op = op.operation
        if fixed(op, sizes):
            if len(run) > 1:
                out.append((run, op))
            run = []
        else:
            run.append(op)
    return out


# --- one segment -----------------------------------------------------------------------------

@dataclass(eq=False)
class _Root:
    """A buffer the segment's order decides the life of."""
    size: sympy.Expr
    producer: int | None          # the heavy op making it; None: made before the segment
    readers: int = 0              # bit mask of the heavy ops reading it
    live_out: bool = False        # read after the segment: never freed in it
    values: np.ndarray | None = None  # its size at each sample point


class _Segment:
    def __init__(self, ops: list[ir.Operation], block: ir.Block,
                 position: dict[ir.Operation, int], sizes: TensorSizes):
        self.ops = ops
        self.block = block
        self.sizes = sizes
        self.position = position  # of the block's ops, before any segment of it moved
        self.first, self.last = self.position[ops[0]], self.position[ops[-1]]
        self.members = set(ops)
        self.heavy = [op for op in ops if _makes_memory(op)]
        self.index = {op: i for i, op in enumerate(self.heavy)}
        self.roots: dict[ir.Value, _Root] = {}
        self.preds = [0] * len(self.heavy)
        self.made: list[list[_Root]] = [[] for _ in self.heavy]
        self.reads: list[list[_Root]] = [[] for _ in self.heavy]
        self.overwritable: list[list[_Root]] = [[] for _ in self.heavy]
        self._deps: dict[ir.Value, int] = {}
        self._holds: dict[ir.Value, tuple[_Root, ...]] = {}
        if len(self.heavy) >= 2:
            self._analyse()

    # analysis

    def _analyse(self) -> None:
        for i, op in enumerate(self.heavy):
            for r in op.results:
                if is_tensor(r.type):
                    root = _Root(self.sizes.size(r), i)
                    self.roots[r] = root
                    self.made[i].append(root)
                    self._holds[r] = (root,)
        for i, op in enumerate(self.heavy):
            reads: dict[int, _Root] = {}
            for v in op.operands:
                self.preds[i] |= self._depends(v)
                for root in self._held(v):
                    reads[id(root)] = root
            self.reads[i] = list(reads.values())
            for root in self.reads[i]:
                root.readers |= 1 << i
            if op.name in ELEMENTWISE and len(self.made[i]) == 1:
                mine = self.made[i][0].size
                self.overwritable[i] = [r for r in self.reads[i] if r.producer != i
                                        and sympy.expand(r.size - mine) == 0]
        for value, root in self.roots.items():
            root.live_out = root.live_out or self._read_after(value)

    def _depends(self, value: ir.Value) -> int:
        """The heavy ops of the segment `value` comes from (directly or through light ops)."""
        if value in self._deps:
            return self._deps[value]
        op = owner(value)
        mask = 0
        if op is not None and op in self.members:
            if op in self.index:
                mask = 1 << self.index[op]
            else:
                for v in op.operands:
                    mask |= self._depends(v)
        self._deps[value] = mask
        return mask

    def _held(self, value: ir.Value) -> tuple[_Root, ...]:
        """The buffers `value` reads: its own, or its operand's for views, casts and lists."""
        if value in self._holds:
            return self._holds[value]
        op = owner(value)
        held: tuple[_Root, ...] = ()
        if op is None or op not in self.members:
            held = self._outside(value)
        elif op.name == "torch.prim.ListConstruct":
            held = tuple(r for v in op.operands for r in self._held(v))
        elif op.name in VIEWS and len(op.operands):
            held = self._held(op.operands[0])
        self._holds[value] = held
        return held

    def _outside(self, value: ir.Value) -> tuple[_Root, ...]:
        """The buffer of a value made before the segment (through views to its base): none
        for function arguments, constants and lists of them."""
        base = value
        while (op := owner(base)) is not None and op.name in VIEWS and len(op.operands):
            base = op.operands[0]
        op = owner(base)
        if op is None:
            if _is_function_argument(base) or not is_tensor(base.type):
                return ()
        elif op.name in CONSTANT_OPS or not is_tensor(base.type):
            if op.name == "torch.prim.ListConstruct":
                return tuple(r for v in op.operands for r in self._outside(v))
            return ()
        if base not in self.roots:
            self.roots[base] = _Root(self.sizes.size(base), None)
        return (self.roots[base],)

    def _read_after(self, value: ir.Value, seen: set | None = None) -> bool:
        """Whether `value`, or a view or list of it, is read after the segment."""
        seen = set() if seen is None else seen
        if value in seen:
            return False
        seen.add(value)
        for use in value.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user.name in SHAPE_ONLY:
                continue
            at = self._place(user)
            if at is None or at > self.last:
                return True
            if user.name in VIEWS or user.name == "torch.prim.ListConstruct":
                if any(self._read_after(r, seen) for r in user.results):
                    return True
        return False

    def _place(self, op: ir.Operation) -> int | None:
        """Position in the segment's block of the op that holds `op` (None: outside it)."""
        while op is not None:
            if op in self.position and op.block == self.block:
                return self.position[op]
            parent = op.parent
            op = parent.operation if parent is not None and parent.name != "builtin.module" \
                else None
        return None

    # search

    def search(self, samplers: Samplers) -> tuple[list[int] | None, bool]:
        """The best order found and whether the search was exhaustive; the order is None when
        it is not strictly better than program order at some point of the ranges, and no
        worse at any."""
        roots = list(self.roots.values())
        sampler = samplers([r.size for r in roots])
        for r in roots:
            r.values = sampler.values(r.size)
        middle = sampler.middle_index
        order, exact = self._best(lambda r: r.values[middle])
        program = list(range(len(self.heavy)))
        if order == program:
            return None, exact
        before, after = self.peak(program, sampler), self.peak(order, sampler)
        better = bool((after <= before).all() and (after < before).any())
        return (order if better else None), exact

    def peak(self, order: list[int], sampler: Sampler) -> np.ndarray:
        """The live bytes' high-water mark of `order`, at each sample point."""
        live = sum((r.values for r in self.roots.values() if r.producer is None),
                   np.zeros(len(sampler.points)))
        tables = _Tables(self, lambda r: r.values)
        top, done = live, 0
        for i in order:
            done |= 1 << i
            during, change = tables.step(i, done, _array_max)
            top = np.maximum(top, live + during)
            live = live + change
        return top

    def _best(self, size) -> tuple[list[int], bool]:
        """Dynamic program over the sets of heavy ops run: for each, the order reaching it
        with the lowest peak (then the fewest live bytes), sizes given by `size`."""
        n = len(self.heavy)
        start = sum(size(r) for r in self.roots.values() if r.producer is None)
        tables = _Tables(self, size)  # each op's sizes summed once: this loop is the pass's time
        everything = (1 << n) - 1
        beam = max(MIN_BEAM, min(BEAM, WORK // (n * n)))
        successors = [[j for j in range(n) if self.preds[j] >> i & 1] for i in range(n)]
        first = sum(1 << i for i in range(n) if not self.preds[i])
        # set of ops run -> (peak so far, live bytes now, the set before, the op run last,
        # the ops ready to run)
        level: dict[int, tuple[float, float, int, int, int]] = {0: (start, start, 0, -1, first)}
        levels = [level]
        exact = True
        for _ in range(n):
            nxt: dict[int, tuple[float, float, int, int, int]] = {}
            for done, (top, live, _, _, ready) in level.items():
                todo = ready
                while todo:
                    bit = todo & -todo
                    todo ^= bit
                    i = bit.bit_length() - 1
                    after = done | bit
                    during, change = tables.step(i, after, _scalar_max)
                    peak, now = max(top, live + during), live + change
                    best = nxt.get(after)
                    if best is None or (peak, now) < best[:2]:
                        unblocked = sum(1 << j for j in successors[i]
                                        if not self.preds[j] & ~after)
                        nxt[after] = (peak, now, done, i, ready & ~bit | unblocked)
            if len(nxt) > beam:
                exact = False
                nxt = dict(heapq.nsmallest(beam, nxt.items(), key=lambda kv: kv[1][:2]))
            level = nxt
            levels.append(level)
        order, done = [], everything
        for level in reversed(levels[1:]):
            _, _, done, i, _ = level[done]
            order.append(i)
        return order[::-1], exact

    # rewriting

    def apply(self, order: list[int], anchor: ir.Operation) -> None:
        """Move the segment's ops into `order` (heavy ops), each preceded by the light ops it
        reads and followed by its results' shape bindings. Light ops that read nothing the
        segment computes (constants, their lists, views of earlier values) stay in front, and
        light ops no heavy op reads stay behind, both in their program order."""
        binds: dict[ir.Value, list[ir.Operation]] = {}
        for op in self.ops:
            if op.name == BIND:
                binds.setdefault(op.operands[0], []).append(op)
        emitted: set = set()
        sequence: list[ir.Operation] = []

        def emit(op: ir.Operation) -> None:
            if op in emitted or op not in self.members:
                return
            emitted.add(op)
            for v in op.operands:
                d = owner(v)
                if d is not None:
                    emit(d)
            sequence.append(op)
            for r in op.results:
                for b in binds.get(r, ()):
                    emit(b)

        for op in self.ops:   # what reads nothing the segment computes stays in front
            if op not in self.index and not any(self._depends(v) for v in op.operands):
                emit(op)
        for i in order:
            emit(self.heavy[i])
        for op in self.ops:
            emit(op)
        for op in sequence:
            op.move_before(anchor)


class _Tables:
    """A segment's memory model under one size function: for each heavy op, the bytes it makes,
    those of its results nobody reads, and the (readers, bytes) of the buffers it reads and of
    those it may overwrite in place (none live after the segment). `step` is the one place
    that says what running an op costs; the search runs it on floats, `peak` on arrays."""

    def __init__(self, segment: _Segment, size):
        self.made = [sum(size(r) for r in rs) for rs in segment.made]
        self.unread = [sum(size(r) for r in rs if r.readers == 0 and not r.live_out)
                       for rs in segment.made]
        self.reads = [[(r.readers, size(r)) for r in rs if not r.live_out]
                      for rs in segment.reads]
        self.over = [[(r.readers, size(r)) for r in rs if not r.live_out]
                     for rs in segment.overwritable]

    def step(self, i: int, after: int, biggest):
        """Running op `i`, `after` being the set of ops run with it: the bytes it adds while
        it runs (less the largest buffer it may overwrite, now dead: `biggest` of them) and the
        change of the live bytes once it has run (less the buffers it read last)."""
        freed = self.unread[i] + sum(s for readers, s in self.reads[i] if not readers & ~after)
        credit = biggest([s for readers, s in self.over[i] if not readers & ~after])
        return self.made[i] - credit, self.made[i] - freed


def _scalar_max(values: list[float]) -> float:
    return max(values, default=0)


def _array_max(values: list[np.ndarray]):
    return functools.reduce(np.maximum, values, 0)


def _makes_memory(op: ir.Operation) -> bool:
    """Whether `op` computes a tensor with a buffer of its own (not a view, constant, list,
    shape query or binding)."""
    name = op.name
    if name in CONSTANT_OPS or name in VIEWS or name in SHAPE_ONLY or name.startswith(
            ("torch.prim.", "torch.constant.")):
        return False
    constant = all((d := owner(v)) is not None and d.name in CONSTANT_OPS for v in op.operands)
    return not constant and any(is_tensor(r.type) for r in op.results)


def _is_function_argument(value: ir.Value) -> bool:
    block = value.owner
    parent = block.owner.operation if block.owner is not None else None
    return parent is not None and parent.name in ("func.func", "util.func")
