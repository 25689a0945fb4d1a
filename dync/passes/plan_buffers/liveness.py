"""Liveness of one function's buffers, over a linear numbering of its ops (regions numbered
where they sit), and its arena plan: what `dync-plan-buffers` computes per function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import sympy
from iree.compiler import ir

from ...analysis.layout import relaid_by_iree
from ...analysis.op_kinds import (
    CONVOLUTIONS_2D,
    ELEMENTWISE,
    HOST_READS,
    PADDED,
    REGION_OPS,
    SCATTERS,
    SHAPE_ONLY,
    TERMINATORS,
    VIEWS,
    element_bytes,
    from_constants,
    viewed_argument,
)
from ...analysis.sampling import Sampler, max_of
from ...analysis.tensor_sizes import TensorSizes, terminator
from ...dialects.attributes import CANCELS_ATTR, PATCHES_ATTR
from ...dialects.symbolic import is_tensor
from ...dialects.torch_ops import constant_int_list, owner, users
from ...dialects.walk import callee
from .buffers import (
    SCRATCH,
    Buffer,
    FunctionPlan,
    _expand,
    _find,
    _greedy_slab,
    _live_max,
    _overlap,
    _substitute,
)

if TYPE_CHECKING:
    from . import Planner


@dataclass(eq=False)
class _Open:
    """A region op being numbered: its start, and its end once known."""
    start: int
    end: int = -1


class FunctionLiveness:
    """Numbers one function's ops, finds its buffers and their lifetimes, and plans them."""

    def __init__(self, planner: Planner, name: str, func: ir.Operation):
        self.planner = planner
        self.name = name
        self.func = func
        self.segments: list[int] = []    # position -> execution segment
        self.segment = 0
        self.defined: dict[ir.Value, int] = {}
        self.holds: dict[ir.Value, tuple[Buffer, ...]] = {}  # value -> buffers it aliases
        self.argument: dict[ir.Value, int] = {}   # arguments and their views -> index
        self.uses: list[tuple[ir.Value, int, tuple[_Open, ...]]] = []
        self.open: list[_Open] = []
        self.buffers: list[Buffer] = []
        self.inplace: list[tuple[int, ir.Operation, Buffer, list[ir.Value]]] = []
        self.pads: list[tuple[int, Buffer, ir.Value]] = []
        self.concats: list[tuple[int, Buffer, list[ir.Value]]] = []
        self.escaping: list[ir.Value] = []
        self.returned: list[ir.Value] = []
        self.constant: set[ir.Value] = set()
        self.aliases = 0
        self.sizes = TensorSizes(func)
        self.dims = self.sizes.dims
        self.size = self.sizes.size

    # numbering

    def plan(self) -> FunctionPlan:
        entry = self.func.regions[0].blocks[0]
        for i, arg in enumerate(entry.arguments):
            self.defined[arg] = -1
            self.holds[arg] = ()
            self.argument[arg] = i
        self.sizes.read_entry_results(self.func)
        self._block(entry)
        self._finish_liveness()
        self._merge_in_place()
        self._reserve_escaping()
        for b in self.buffers:
            if b.iree is None:
                b.iree = b.size
        sampler = self.planner.sampler([b.size for b in self.buffers]
                                       + [b.iree for b in self.buffers])
        for b in self.buffers:
            b.size_v = sampler.values(b.size)
            b.iree_v = sampler.values(b.iree)
        returned = {id(_find(b)): _find(b) for v in self.returned
                    for b in self.holds.get(v, ())}
        positions = (0, len(self.segments) - 1)
        peak = _live_max(self.buffers, positions, sampler)
        iree = self._iree_model(sampler)
        # A call's frame: what the callee adds at its peak beside its results, which the
        # caller counts as its own buffers from the call on.
        inner = _expand(peak - sum(b.size for b in returned.values()))
        iree_inner = _expand(iree - sum(b.iree for b in returned.values()))
        arena = self._arena(sampler)
        term = terminator(entry)
        return FunctionPlan(
            self.name, self.buffers, peak, arena, inner, iree, iree_inner,
            params=[self.dims(a) if is_tensor(a.type) else None for a in entry.arguments],
            results=[self.dims(v) if is_tensor(v.type) else None for v in term.operands],
            returns_argument=[self.argument.get(v) for v in term.operands],
            unknown=self.sizes.unknown, aliases=self.aliases)

    def _next(self) -> int:
        self.segments.append(self.segment)
        return len(self.segments) - 1

    def _new_segment(self) -> None:
        self.segment += 1

    def _block(self, block: ir.Block) -> None:
        for op in block.operations:
            self._op(op.operation)

    def _use(self, value: ir.Value, pos: int) -> None:
        """`value` is read at `pos` (a list stands for its tensors)."""
        op = owner(value)
        if op is not None and op.name == "torch.prim.ListConstruct":
            for v in op.operands:
                self._use(v, pos)
            return
        if value in self.holds:
            self.uses.append((value, pos, tuple(self.open)))

    def _new(self, op: ir.Operation | None, result: int, value: ir.Value, pos: int) -> Buffer:
        buf = Buffer(self.size(value), pos, pos, op, result)
        self.buffers.append(buf)
        self.holds[value] = (buf,)
        self.defined[value] = pos
        return buf

    def _none(self, value: ir.Value, pos: int) -> None:
        self.holds[value] = ()
        self.defined[value] = pos

    def _op(self, op: ir.Operation) -> None:
        name = op.name
        if name in ("torch.bind_symbolic_shape", "torch.symbolic_int"):
            return
        if name in REGION_OPS:
            self._region_op(op)
            return
        if name == "func.call":
            self._call(op)
            return
        pos = self._next()
        operands = list(op.operands)
        if name not in SHAPE_ONLY:
            for v in operands:
                self._use(v, pos)
        if name in TERMINATORS:
            parent = op.parent
            if parent.name == "scf.if":
                operands = [v for v, r in zip(operands, parent.results, strict=True)
                            if self.planner.data_read(r)]
            elif name == "func.return":
                dead = self.planner.dead_results.get(self.name, set())
                operands = [v for i, v in enumerate(operands) if i not in dead]
                self.returned.extend(operands)
            self.escaping.extend(operands)
            return
        if name in HOST_READS:
            self._new_segment()
        if from_constants(op, self.constant):
            for r in op.results:
                self.constant.add(r)
                self._none(r, pos)
            return
        if name == "torch.prim.ListConstruct":
            return
        if (name in VIEWS or CANCELS_ATTR in op.attributes or self._fused_pad(op)) \
                and operands:
            held = self._held(operands[0])
            for r in op.results:
                self.holds[r] = held
                self.defined[r] = pos
                if operands[0] in self.argument:
                    self.argument[r] = self.argument[operands[0]]
            self.aliases += len(op.results)
            return
        tensors = [r for r in op.results if is_tensor(r.type)]
        if name in ELEMENTWISE and len(tensors) == 1 and _fuses_into_consumer(op) and all(
                v in self.argument for v in operands
                if is_tensor(v.type) and str(v.type) == str(tensors[0].type)):
            # IREE computes it inside its consumer's dispatch (it has no operand of its own
            # size to write over, which `_merge_in_place` would take): no buffer, its
            # operands are read there
            self.holds[tensors[0]] = tuple(b for v in operands for b in self._held(v))
            self.defined[tensors[0]] = pos
            self.aliases += 1
            return
        for i, r in enumerate(op.results):
            if is_tensor(r.type):
                self._new(op, i, r, pos)
            else:
                self._none(r, pos)
        if name in PADDED and operands and is_tensor(operands[0].type) \
                and self.name in self.planner.padded_copies:
            self._pad(op, pos, operands[0], operands[PADDED[name]])
        if (name in CONVOLUTIONS_2D and self.planner.channels_last and operands
                and self._transposed_by_iree(op)):
            buf = Buffer(self.size(self._conv_input(op)), pos, pos, op, 0, kind="transpose")
            self.buffers.append(buf)
        if PATCHES_ATTR in op.attributes:
            self.concats.append((pos, self.holds[tensors[0]][0],
                                 list(owner(operands[0]).operands)))
        if len(tensors) == 1 and (name in ELEMENTWISE or name in SCATTERS):
            candidates = operands if name in ELEMENTWISE else operands[:1]
            self.inplace.append((pos, op, self.holds[tensors[0]][0],
                                 [v for v in candidates if is_tensor(v.type)]))

    def _pad(self, op: ir.Operation, pos: int, x: ir.Value, padding: ir.Value) -> None:
        pads = constant_int_list(padding)
        dims = self.dims(x)
        if not pads or not any(pads) or dims is None or len(pads) > len(dims):
            return
        pads = [2 * p for p in pads]   # symmetric: before and after each spatial dim
        padded = list(dims)
        for i, p in enumerate(pads):
            padded[len(dims) - len(pads) + i] += p
        size = sympy.expand(sympy.Mul(*padded) * element_bytes(x.type))
        buf = Buffer(size, pos, pos, op, 0, kind="pad")
        self.buffers.append(buf)
        self.pads.append((pos, buf, x))

    def _fused_pad(self, op: ir.Operation) -> bool:
        """Whether `op` is a zero padding IREE computes inside its one reader, a windowed op
        (`dync-fuse-padding`; `dync-patch-stages` pads a strip's rows so)."""
        if op.name != "torch.aten.constant_pad_nd" or self.name in self.planner.padded_copies:
            return False
        readers = users(op.results[0])
        return len(readers) == 1 and readers[0].name in PADDED

    def _conv_input(self, conv: ir.Operation) -> ir.Value:
        """What `conv` reads its data from: its input, or the input of a fused padding."""
        x = conv.operands[0]
        pad = owner(x)
        return pad.operands[0] if pad is not None and self._fused_pad(pad) else x

    def _transposed_by_iree(self, conv: ir.Operation) -> bool:
        """Whether IREE copies `conv`'s input into NHWC: a model input read directly (an NHWC
        producer's transpose cancels against the conversion's), with channels to move."""
        x = self._conv_input(conv)
        dims = self.dims(x)
        return (viewed_argument(x) in self.planner.model_inputs.get(self.name, ())
                and relaid_by_iree(conv) and dims is not None and len(dims) == 4
                and dims[1] != 1)

    def _held(self, value: ir.Value) -> tuple[Buffer, ...]:
        op = owner(value)
        if op is not None and op.name == "torch.prim.ListConstruct":
            return tuple(b for v in op.operands for b in self._held(v))
        return self.holds.get(value, ())

    def _region_op(self, op: ir.Operation) -> None:
        start = self._next()
        for v in op.operands:
            self._use(v, start)
        region_op = _Open(start)
        self.open.append(region_op)
        for k, region in enumerate(op.regions):
            for block in region.blocks:
                self._new_segment()
                first = self._next()
                for i, arg in enumerate(block.arguments):
                    if op.name == "scf.while" and k == 1:
                        cond = terminator(op.regions[0].blocks[0])
                        self.holds[arg] = self._held(cond.operands[i + 1])
                        self.defined[arg] = first
                    elif is_tensor(arg.type):
                        self._new(op, i, arg, first).kind = "carried"
                    else:
                        self._none(arg, first)
                self._block(block)
        self.open.pop()
        # The join point, a segment of its own: no work runs there, so what the region read
        # dies there before the next segment's results are allocated.
        self._new_segment()
        end = self._next()
        self._new_segment()
        region_op.end = end
        for i, r in enumerate(op.results):
            if is_tensor(r.type) and (op.name != "scf.if" or self.planner.data_read(r)):
                self._new(op, i, r, end)
            else:   # an scf.if result read for its shape only: IREE drops it
                self._none(r, end)

    def _call(self, op: ir.Operation) -> None:
        pos = self._next()
        operands = list(op.operands)
        name = callee(op)
        plan = self.planner.plans.get(name)
        reads = self.planner.reads.get(name, [])
        for i, v in enumerate(operands):
            # an operand the callee reads only the shape of is no use of its data (IREE
            # inlines the call and drops the dead tensor)
            if i >= len(reads) or reads[i]:
                self._use(v, pos)
        dead = self.planner.dead_results.get(name, set())
        mapping: dict[sympy.Symbol, sympy.Expr] = {}
        if plan is not None:
            for param, arg in zip(plan.params, operands, strict=False):
                dims = self.dims(arg) if is_tensor(arg.type) else None
                if param is None or dims is None or len(param) != len(dims):
                    continue
                for p, a in zip(param, dims, strict=True):
                    if isinstance(p, sympy.Symbol) and p != a:
                        mapping[p] = a
            if plan.inner != 0 or plan.iree_inner != 0:
                frame = Buffer(_substitute(plan.inner, mapping), pos, pos, op, 0, kind="frame")
                frame.iree = _substitute(plan.iree_inner, mapping)
                self.buffers.append(frame)
        for i, r in enumerate(op.results):
            if not is_tensor(r.type) or i in dead:
                self._none(r, pos)
                continue
            k = plan.returns_argument[i] if plan is not None else None
            if k is not None and k < len(operands):
                self.holds[r] = self._held(operands[k])
                self.defined[r] = pos
                self.aliases += 1
                continue
            if plan is not None and self.sizes.direct_dims(r) is None \
                    and plan.results[i] is not None:
                self.sizes.set_dims(r, tuple(_substitute(d, mapping) for d in plan.results[i]))
            self._new(op, i, r, pos)

    # liveness

    def _finish_liveness(self) -> None:
        for value, pos, opened in self.uses:
            born = self.defined.get(value, -1)
            for region_op in opened:   # outermost first
                if born < region_op.start:
                    pos = max(pos, region_op.end)
                    break
            for buf in self.holds.get(value, ()):
                buf.end = max(buf.end, pos)

    def _sole_buffer(self, value: ir.Value) -> Buffer | None:
        """The one buffer `value` is held in (after merges), None if it is in none or several
        (a value chosen by a branch)."""
        held = {id(_find(b)): _find(b) for b in self.holds.get(value, ())}
        return next(iter(held.values())) if len(held) == 1 else None

    def _merge_in_place(self) -> None:
        """Results of elementwise ops and scatters take over an operand's buffer when that
        buffer dies at the op and has the same byte size; the strips of a concatenation of
        patches are written into it; an input that dies at its windowed op is written padded
        by its producer."""
        merged: set[int] = set()
        for pos, op, result, candidates in self.inplace:
            for v in candidates:
                buf = self._sole_buffer(v)
                if (buf is None or buf is result or buf.end != pos or buf.kind in SCRATCH
                        or sympy.expand(buf.size - result.size) != 0):
                    continue
                buf.end = max(buf.end, result.end)
                buf.in_place.append((op, result.result))
                result.into = buf
                merged.add(id(result))
                break
        for pos, whole, pieces in self.concats:
            # IREE writes each strip straight into the concatenation of patches
            for v in pieces:
                buf = self._sole_buffer(v)
                if buf is not None and buf.end == pos and buf.kind == "result" \
                        and buf is not whole:
                    whole.start = min(whole.start, buf.start)
                    buf.into = whole
                    merged.add(id(buf))
        for pos, pad, x in self.pads:
            # an input that dies at the windowed op is written padded by its producer
            buf = self._sole_buffer(x)
            if buf is not None and buf.end == pos and buf.start < pos and buf.kind == "result":
                buf.size = pad.size
                buf.padded = True
                merged.add(id(pad))
                continue
            pad.padded = True
        self.buffers = [b for b in self.buffers if id(b) not in merged]

    def _reserve_escaping(self) -> None:
        """A buffer that outlives its execution segment (read after it, returned or yielded)
        is allocated when the segment starts, as IREE allocates an execution region's results
        when it launches the region."""
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for pos, seg in enumerate(self.segments):
            first.setdefault(seg, pos)
            last[seg] = pos
        self.segment_range = {seg: (first[seg], last[seg]) for seg in first}
        escaping = {id(_find(b)) for v in self.escaping for b in self.holds.get(v, ())}
        for b in self.buffers:
            if b.kind in SCRATCH:
                continue
            seg = self.segments[b.start]
            if b.end > last[seg] or id(b) in escaping:
                b.start = first[seg]
                b.escapes = True

    def _iree_model(self, sampler: Sampler) -> sympy.Expr:
        """The peak IREE 3.13's allocator reaches. Per execution segment, IREE allocates one
        transient slab for the whole segment, packed by `--iree-stream-layout-slices`: static
        slices greedily (`_greedy_slab`), each aligned to 64 bytes; dynamic slices only share with
        slices of the very same size expression, so each size class takes as many slots as
        it has slices live at once, and the classes are laid out one after another. Values
        that leave the segment are allocated apart, when it starts."""
        terms = []
        for lo, hi in self.segment_range.values():
            transients = [b for b in self.buffers if not b.escapes and lo <= b.start <= hi]
            # an op's scratch copy (its input, padded or transposed) is written before its
            # result: first among the slices of one start
            static = sorted((b for b in transients if b.iree.is_number),
                            key=lambda b: b.kind not in SCRATCH)
            slab: sympy.Expr = sympy.Integer(_greedy_slab(
                [(b.start, min(b.end, hi), int(b.iree)) for b in static]))
            classes: dict[sympy.Expr, list[tuple[int, int]]] = {}
            for b in transients:
                if not b.iree.is_number:
                    classes.setdefault(b.iree, []).append((b.start, b.end))
            for size, lives in classes.items():
                slab += _overlap(lives) * 64 * sympy.ceiling(size / 64)
            external = [b for b in self.buffers if b.escapes and b.start <= hi and b.end >= lo]
            terms.append(slab + _live_max(external, (lo, hi), sampler, iree=True))
        return max_of(terms, sampler)

    # arena

    def _arena(self, sampler: Sampler) -> sympy.Expr:
        order = sorted(self.buffers, key=lambda b: (-b.size_v.max(), -b.size_v.sum(), b.start))
        placed: list[Buffer] = []
        tops: list[sympy.Expr] = []
        for b in order:
            if b.size_v.max() == 0:
                b.offset, b.offset_v = sympy.Integer(0), np.zeros_like(b.size_v)
                continue
            clash = [p for p in placed if p.start <= b.end and b.start <= p.end]
            candidates = [(sympy.Integer(0), np.zeros_like(b.size_v))]
            candidates += [(p.offset + p.size, p.offset_v + p.size_v) for p in clash]
            candidates.sort(key=lambda c: (c[1].mean(), c[1].max()))
            chosen = None
            if clash:
                lo = np.stack([p.offset_v for p in clash])
                hi = lo + np.stack([p.size_v for p in clash])
                for expr, vec in candidates:
                    if ((vec + b.size_v <= lo) | (vec >= hi)).all():
                        chosen = (expr, vec)
                        break
                if chosen is None:   # no candidate is clear over all ranges: stack on top
                    chosen = (max_of([p.offset + p.size for p in clash], sampler),
                              np.max(hi, axis=0))
            else:
                chosen = candidates[0]
            b.offset = _expand(chosen[0])
            b.offset_v = chosen[1]
            placed.append(b)
            tops.append(b.offset + b.size)
        return max_of(tops, sampler)


def _fuses_into_consumer(op: ir.Operation) -> bool:
    """Whether elementwise `op`'s result is read by one elementwise op only, in its block, of
    the same shape: IREE's elementwise fusion computes both in one dispatch."""
    result = op.results[0]
    readers = users(result)
    if len(readers) != 1 or readers[0].name not in ELEMENTWISE:
        return False
    reader = readers[0].operation
    return (reader.block == op.block and len(reader.results) == 1
            and str(reader.results[0].type) == str(result.type))
