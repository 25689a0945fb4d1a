"""`dync-plan-buffers`: symbolic liveness and an arena plan of intermediate tensors (Nimble's
explicit allocation, SoD² §4.4.1 memory allocation planning; digest-sod2.md sections 4.2-4.3).

Reads (last before `dync-verify`, the IR IREE gets): every function's tensor values and
their dims — static types, `torch.bind_symbolic_shape` affine facts over
`torch.symbolic_int`s, ``dync.dims`` for the non-affine ones, the ``dync.shape`` results of
the entry (``dync.entry``) — the symbols' ranges (``dync.symbols`` and the
`torch.symbolic_int`s), and the call graph.

Computes, per function (callees first):

* the *buffers*: tensors produced by ops, in program order. Function arguments are not
  intermediates (the caller owns them), nor are constants: `torch.vtensor.literal`s and every
  value computed from constants alone (IREE folds or hoists those into globals). Views
  (`view`, `reshape`, `slice`, `select`, `expand`, `clone`, `torch_c` casts, list packing and
  unpacking, `util.optimization_barrier`, ...) alias their operand's buffer, and so do the
  permutes marked ``dync.cancels`` (layout crossings `dync-isolate-subdnns` placed where
  IREE's transposes cancel them); other transposes do not (IREE moves the data). An
  elementwise op, or a scatter into its first operand, whose operand dies at that op and has
  the result's byte size writes its result in place (what IREE's producer/consumer fusion
  makes of such chains); one that has no operand of its size but arguments, read by one
  elementwise op of its shape only, has no buffer at all (IREE computes it inside its
  reader's dispatch), its operands read there. A convolution or pooling with padding reads
  a zero-padded copy of its input, which IREE materializes: the input's own buffer when it
  dies there (its producer writes the interior), a buffer of its own (``dync.pad``)
  otherwise; none when `dync-fuse-padding` had IREE read the padding in place, where an
  explicit zero padding (`constant_pad_nd`) read only by a windowed op is computed inside it
  too (`dync-patch-stages` pads a strip's border rows so). The strips of a ``dync.patches``
  concatenation are written into it in place: its buffer lives from the first strip on. When
  IREE computes convolutions in NHWC (`dync-channels-last`), one that reads an NCHW argument
  directly reads a transposed copy of it (``dync.nhwc_input``); an input that comes from
  another convolution, or across a sub-DNN boundary `dync-isolate-subdnns` laid out in NHWC,
  needs none (the transposes cancel);
* liveness over a linear numbering of the ops: nested regions are numbered where they sit, so
  the branches of an `scf.if` are disjoint in time (the peak is the max over branches) and an
  `scf.while`'s body is counted once, in its steady state (carried values are buffers born at
  the top of the body); a value defined outside a region and used inside it stays live until
  the region op ends, at the region's join point, a position of its own; shape queries are
  not uses, nor is passing a value to a callee that reads only its shape, and an `scf.if`
  result or a callee's result whose data nothing reads holds no buffer (IREE inlines the
  calls and drops them). A `func.call` reserves a *frame* at its site: the callee's peak
  less its results (which the caller counts as its own buffers from the call on), the
  callee's symbols replaced by the call site's dims. Straight-line runs of ops between
  control flow and host reads (``.item()``, a branch condition) are *execution segments*,
  what IREE submits as one piece of work; a buffer that leaves its segment (read after it,
  yielded or returned) is live from the segment's start, as IREE allocates such results
  when it launches the work;
* each buffer's byte size, numel × element size, as a sympy expression over the symbols;
* the peak: the max over program points of the live bytes (a `Max` of the points that no
  other point dominates over the symbols' ranges);
* an arena plan: buffers by decreasing size, each at the lowest candidate offset (0 or the
  end of a buffer whose lifetime overlaps it) that is provably clear of every overlapping
  buffer over the symbols' ranges (checked at the range corners and sample points, exact for
  the monotone sizes shape functions give), or else stacked on top of all of them (a `Max`).
  Offsets and the arena size are expressions evaluated at run time;
* what IREE 3.13 allocates instead (`_iree_model`): its slab per segment packs buffers of
  static size greedily by lifetime, in order of first use (IREE's algorithm, holes included),
  but lets buffers of dynamic size share memory only with buffers of
  the very same size expression, so on dynamic shapes it needs more than the plan.

Writes (discardable attributes only, so IREE compiles the module unchanged):

* ``dync.buffer`` on each op that defines a buffer: ``{offset = "...", size = "..."}`` (an
  ``in_place`` unit when it reuses its operand's buffer), an array of them for several
  results; ``dync.frame`` on calls, ``dync.pad`` on padded windowed ops, ``dync.nhwc_input``
  on convolutions whose input IREE copies into NHWC, ``dync.carried``
  on `scf.while` for its carried values;
* ``dync.buffers`` on each function: the ``peak``, ``arena``, ``frame`` (peak without the
  results) and ``iree`` formulas, and buffer counts;
* ``dync.peak`` on the module: the entry function's predicted peak ``formula``, ``arena`` and
  ``iree`` over the entry's symbols, the peak's ``min``/``max`` over the symbols' ranges, and
  the ``symbols`` ranges, and ``versions``: the ``iree`` formula of each other public
  function (shape-specialized versions, size buckets), for the call that runs one instead.
  `read_peak` reads it back; `Peak.evaluate` / `Peak.evaluate_iree` evaluate it.

The peak counts the bytes of the intermediate tensors live at once during one call, the
results included and the arguments and weights excluded: what SoD² counts as intermediate
memory, and what IREE's allocator peak of one call measures once the arguments are
subtracted (see `benchmarks/memory.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy
from iree.compiler import ir

from ..analysis.layout import converts_to_channels_last, relaid_by_iree
from ..analysis.op_kinds import (
    CONVOLUTIONS,
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
from ..analysis.padding import copies_padding
from ..analysis.sampling import Sampler, Samplers, dominant, max_of, symbol_ranges
from ..analysis.tensor_sizes import TensorSizes, terminator
from ..dialects import dync as dync_ir
from ..dialects.attributes import (
    BUFFER_ATTR,
    CANCELS_ATTR,
    CARRIED_ATTR,
    FRAME_ATTR,
    FUNC_BUFFERS_ATTR,
    NHWC_INPUT_ATTR,
    PAD_ATTR,
    PATCHES_ATTR,
    PEAK_ATTR,
)
from ..dialects.symbolic import is_symbol_name, is_tensor, parse_dim
from ..dialects.torch_ops import constant_int_list, owner, users
from ..dialects.walk import call_sites, callee, exported, functions, ops_named
from .pipeline import Pass, PassFailure

# Buffers that hold no value of the program: a call's frame, IREE's padded and transposed
# copies of an op's input. Nothing writes over them in place, and they never escape.
SCRATCH = ("frame", "pad", "transpose")

# --- the pass ------------------------------------------------------------------------------

class PlanBuffers(Pass):
    name = "dync-plan-buffers"
    summary = ("symbolic liveness and arena plan of intermediate tensors; the predicted peak "
               "memory as a formula over the symbols")

    def run(self, module: ir.Operation) -> None:
        planner = Planner(module)
        planner.plan()
        planner.write()


@dataclass(eq=False)
class Buffer:
    size: sympy.Expr
    start: int
    end: int
    op: ir.Operation | None
    result: int = 0                 # which result of `op` (carried: which carried value)
    kind: str = "result"            # "result", "carried" (a loop's), "frame" (a call's), "pad",
                                    # "transpose" (IREE's NHWC copy of a convolution's input)
    in_place: list = field(default_factory=list)  # (op, result) that reuse this buffer
    offset: sympy.Expr | None = None
    size_v: np.ndarray | None = None
    offset_v: np.ndarray | None = None
    into: Buffer | None = None      # the buffer this one was merged into (in place)
    escapes: bool = False           # outlives its execution segment (IREE: an external alloca)
    iree: sympy.Expr | None = None  # its size in IREE's allocation model (a frame's differs)
    iree_v: np.ndarray | None = None
    padded: bool = False            # holds a windowed op's zero-padded input


def _find(b: Buffer) -> Buffer:
    while b.into is not None:
        b = b.into
    return b


@dataclass
class FunctionPlan:
    name: str
    buffers: list[Buffer]
    peak: sympy.Expr                # live bytes at the worst point, results included
    arena: sympy.Expr               # the plan's arena size (>= peak)
    inner: sympy.Expr               # the peak less the results: a call's frame
    iree: sympy.Expr                # the peak IREE's allocator reaches (see `_iree_model`)
    iree_inner: sympy.Expr          # the same in IREE's model
    params: list[tuple | None]      # each argument's dims (None: not a tensor / unknown)
    results: list[tuple | None]     # each result's dims
    returns_argument: list[int | None]  # results that are (views of) an argument
    unknown: int
    aliases: int


class Planner:
    def __init__(self, module: ir.Operation):
        self.module = module
        self.functions = functions(module)
        self.ranges = symbol_ranges(module)
        self.plans: dict[str, FunctionPlan] = {}
        self.order = _callees_first(self.functions)   # every function, callees first
        self.sampler = Samplers(self.ranges)
        # Where IREE reads the padding in place (dync-fuse-padding), no padded copies to count.
        self.padded_copies = copies_padding(module)
        # IREE computes convolutions in NHWC (dync-channels-last): an NCHW input it cannot
        # take from an NHWC producer is transposed into a copy.
        self.channels_last = converts_to_channels_last(module)
        self.model_inputs = self._model_inputs() if self.channels_last else {}
        # Per function, whether it reads each argument's data (not only its shape), and the
        # results no caller reads: IREE inlines the calls and drops what nothing reads.
        self.reads: dict[str, list[bool]] = {}
        for name in self.order:
            args = self.functions[name].regions[0].blocks[0].arguments
            self.reads[name] = [self.data_read(a) for a in args]
        self.dead_results: dict[str, set[int]] = {}
        for name, calls in call_sites(module).items():
            if name in self.functions and calls:
                self.dead_results[name] = {
                    i for i in range(len(calls[0].results))
                    if not any(self.data_read(c.results[i]) for c in calls)}

    def data_read(self, value: ir.Value) -> bool:
        """Whether some op reads `value`'s data, through views, calls and `scf.if` results,
        and not only its shape."""
        for use in value.uses:
            op, i = use.owner, use.operand_number
            if op.name in SHAPE_ONLY or op.name == "torch.bind_symbolic_shape":
                continue
            if op.name in VIEWS or CANCELS_ATTR in op.attributes:
                if any(self.data_read(r) for r in op.results):
                    return True
                continue
            if op.name == "func.call":
                reads = self.reads.get(callee(op))
                if reads is not None and i < len(reads) and not reads[i]:
                    continue
            if op.name == "scf.yield" and op.parent.name == "scf.if":
                if self.data_read(op.parent.results[i]):
                    return True
                continue
            return True
        return False

    def _model_inputs(self) -> dict[str, set[int]]:
        """Per function, the arguments that are the model's inputs as the caller got them
        (in NCHW): the entry's, and those a call passes them to unchanged but for views."""
        entry = self.entry()
        if entry is None:
            return {}
        inputs = {entry: set(range(len(self.functions[entry].regions[0].blocks[0].arguments)))}
        for name in reversed(self.order):   # callers first
            mine = inputs.get(name)
            if not mine:
                continue
            for call in ops_named(self.functions[name], "func.call"):
                for i, v in enumerate(call.operands):
                    if viewed_argument(v) in mine:
                        inputs.setdefault(callee(call), set()).add(i)
        return inputs

    def plan(self) -> None:
        for name in self.order:
            self.plans[name] = FunctionLiveness(self, name, self.functions[name]).plan()

    def entry(self) -> str | None:
        for name, func in self.functions.items():
            if dync_ir.ENTRY_ATTR in func.attributes:
                return name
        return "main" if "main" in self.functions else None

    def write(self) -> None:
        with self.module.context, ir.Location.unknown():
            i64 = ir.IntegerType.get_signless(64)
            for name, plan in self.plans.items():
                func = self.functions[name]
                _write_buffers(plan)
                in_place = sum(len(b.in_place) for b in plan.buffers)
                func.attributes[FUNC_BUFFERS_ATTR] = ir.DictAttr.get({
                    "peak": ir.StringAttr.get(_text(plan.peak)),
                    "arena": ir.StringAttr.get(_text(plan.arena)),
                    "frame": ir.StringAttr.get(_text(plan.inner)),
                    "iree": ir.StringAttr.get(_text(plan.iree)),
                    "buffers": ir.IntegerAttr.get(i64, sum(b.kind != "frame" for b in plan.buffers)),
                    "in_place": ir.IntegerAttr.get(i64, in_place),
                    "unknown": ir.IntegerAttr.get(i64, plan.unknown),
                })
            entry = self.entry()
            if entry is None:
                return
            plan = self.plans[entry]
            sampler = self.sampler([plan.peak, plan.arena, plan.iree])
            peak_v = sampler.values(plan.peak)
            symbols = {n: ir.ArrayAttr.get([ir.IntegerAttr.get(i64, v) for v in sampler.range(n)])
                       for n in sampler.names}
            # The entry points dispatched to instead of the entry (shape-specialized versions,
            # size buckets): IREE's peak of each, for the function a call runs.
            versions = {name: ir.StringAttr.get(_text(self.plans[name].iree))
                        for name in exported(self.module) if name != entry and name in self.plans}
            self.module.attributes[PEAK_ATTR] = ir.DictAttr.get({
                **({"versions": ir.DictAttr.get(versions)} if versions else {}),
                "function": ir.StringAttr.get(entry),
                "formula": ir.StringAttr.get(_text(plan.peak)),
                "arena": ir.StringAttr.get(_text(plan.arena)),
                "iree": ir.StringAttr.get(_text(plan.iree)),
                "min": ir.IntegerAttr.get(i64, _int64(peak_v.min())),
                "max": ir.IntegerAttr.get(i64, _int64(peak_v.max())),
                "symbols": ir.DictAttr.get(symbols),
            })


def _int64(value) -> int:
    """`value` as an i64 attribute can hold it (symbols with unbounded ranges give huge
    extremes)."""
    return max(-(2**63), min(2**63 - 1, int(value)))


def _expand(e: sympy.Expr) -> sympy.Expr:
    return e if e.has(sympy.Max, sympy.Min) else sympy.expand(e)


def _substitute(e: sympy.Expr, mapping: Mapping[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
    if not mapping or not (e.free_symbols & set(mapping)):
        return e
    if e.has(sympy.Max, sympy.Min):
        with sympy.evaluate(False):
            return e.xreplace(dict(mapping))
    return sympy.expand(e.xreplace(dict(mapping)))


# --- liveness of one function --------------------------------------------------------------

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
        if (name in CONVOLUTIONS and self.planner.channels_last and operands
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


def _live_max(buffers: list[Buffer], positions: tuple[int, int], sampler: Sampler,
              iree: bool = False) -> sympy.Expr:
    """The max over `positions` (first, last) of the bytes of the buffers live there (their
    sizes in IREE's model when `iree`)."""
    lo, hi = positions
    buffers = [b for b in buffers if b.start <= hi and b.end >= lo]
    if not buffers:
        return sympy.Integer(0)
    delta = np.zeros((hi - lo + 2, len(sampler.points)))
    for b in buffers:
        v = b.iree_v if iree else b.size_v
        delta[max(b.start, lo) - lo] += v
        delta[min(b.end, hi) - lo + 1] -= v
    live = np.cumsum(delta, axis=0)[: hi - lo + 1]
    rows, first = np.unique(live, axis=0, return_index=True)
    terms = []
    for k in dominant(rows):
        p = int(first[k]) + lo
        terms.append(sympy.Add(*[b.iree if iree else b.size
                                 for b in buffers if b.start <= p <= b.end]))
    return max_of(terms, sampler)


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


def _align(n: int, to: int = 64) -> int:
    return (n + to - 1) // to * to


def _greedy_slab(slices: list[tuple[int, int, int]]) -> int:
    """The slab IREE's `--iree-stream-layout-slices` packs static slices (start, end, bytes)
    into: in order of their first use (the order IREE lists them), each goes into the
    tightest gap below a reservation whose lifetime overlaps its own, else on top of all of
    them. Greedy strip packing leaves holes, so the slab can exceed the most bytes live at
    once: the two agree only when lifetimes nest."""
    placed: list[tuple[int, int, int, int]] = []   # (offset, bytes, start, end) by offset
    top = 0
    for start, end, size in sorted(slices, key=lambda s: s[0]):   # stable: ties keep order
        size = _align(size)
        best, best_fit, current = None, None, 0
        for offset, taken, s, e in placed:
            if e < start or end < s:
                continue
            aligned = _align(current)
            # The fit tested from the aligned offset but recorded from the unaligned one, as
            # IREE's packStaticSlicesGreedily does (a near-tie between gaps goes its way).
            if aligned + size <= offset and (best_fit is None or offset - aligned < best_fit):
                best, best_fit = aligned, offset - current
            current = max(current, offset + taken)
        if best is None:
            best = _align(current)
        placed.append((best, size, start, end))
        placed.sort(key=lambda r: r[0])
        top = max(top, best + size)
    return _align(top)


def _overlap(lives: list[tuple[int, int]]) -> int:
    """The most intervals [start, end] that hold one point."""
    events = sorted([(s, 0) for s, _ in lives] + [(e, 1) for _, e in lives])
    most = now = 0
    for _, kind in events:
        now += 1 if kind == 0 else -1
        most = max(most, now)
    return most


# --- helpers -------------------------------------------------------------------------------

def _callees_first(funcs: Mapping[str, ir.Operation]) -> list[str]:
    calls: dict[str, set[str]] = {}
    for name, func in funcs.items():
        calls[name] = {callee(call) for call in ops_named(func, "func.call")} & set(funcs)
    order: list[str] = []
    state: dict[str, int] = {}

    def visit_func(name: str) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise PassFailure(f"recursive call through @{name}: no static buffer plan")
        state[name] = 1
        for called in sorted(calls[name]):
            visit_func(called)
        state[name] = 2
        order.append(name)

    for name in funcs:
        visit_func(name)
    return order


@functools.lru_cache(maxsize=4096)
def _text(expr: sympy.Expr) -> str:
    """`expr` as text; large expressions unsorted (sympy's term ordering is slow on them)."""
    nodes = 0
    for _ in sympy.preorder_traversal(expr):
        nodes += 1
        if nodes > 80:
            return sympy.sstr(expr, order="none")
    return str(expr)


def _buffer_attr(b: Buffer | None, in_place: bool = False) -> ir.Attribute:
    if b is None:
        return ir.DictAttr.get({})
    entries = {"offset": ir.StringAttr.get(_text(b.offset)),
               "size": ir.StringAttr.get(_text(b.size))}
    if in_place:
        entries["in_place"] = ir.UnitAttr.get()
    return ir.DictAttr.get(entries)


def _write_buffers(plan: FunctionPlan) -> None:
    results: dict[ir.Operation, dict[int, tuple[Buffer, bool]]] = {}
    carried: dict[ir.Operation, dict[int, tuple[Buffer, bool]]] = {}
    frames: dict[ir.Operation, Buffer] = {}
    copies: dict[str, dict[ir.Operation, Buffer]] = {"pad": {}, "transpose": {}}
    for b in plan.buffers:
        if b.kind == "frame":
            frames[b.op] = b
        elif b.kind in copies:
            copies[b.kind][b.op] = b
        elif b.op is not None:
            table = carried if b.kind == "carried" else results
            table.setdefault(b.op, {})[b.result] = (b, False)
        for op, index in b.in_place:
            results.setdefault(op, {})[index] = (b, True)
    for attr, table in ((CARRIED_ATTR, carried), (BUFFER_ATTR, results)):
        for op, entries in table.items():
            n = len(op.results) if attr == BUFFER_ATTR else max(entries) + 1
            if attr == BUFFER_ATTR and n == 1:
                op.attributes[attr] = _buffer_attr(*entries[0])
            else:
                op.attributes[attr] = ir.ArrayAttr.get(
                    [_buffer_attr(*entries[i]) if i in entries else _buffer_attr(None)
                     for i in range(n)])
    for op, b in frames.items():
        op.attributes[FRAME_ATTR] = _buffer_attr(b)
    for attr, kind in ((PAD_ATTR, "pad"), (NHWC_INPUT_ATTR, "transpose")):
        for op, b in copies[kind].items():
            op.attributes[attr] = _buffer_attr(b)


# --- reading the plan back -----------------------------------------------------------------

@dataclass(frozen=True)
class Peak:
    """The predicted peak of intermediate memory of one call of the entry function, in bytes,
    as a formula over the entry's symbols (``dync.peak``)."""

    formula: str
    arena: str
    iree: str
    min: int
    max: int
    symbols: dict[str, tuple[int, int]]
    versions: dict[str, str] = field(default_factory=dict)  # other entry point -> its `iree`

    @property
    def expr(self) -> sympy.Expr:
        return parse_dim(self.formula, evaluate=False)

    def _eval(self, text: str, values: Mapping[str, int], missing: str) -> int:
        expr = parse_dim(text, evaluate=False)
        subs = {}
        for s in expr.free_symbols:
            if s.name in values:
                subs[s] = int(values[s.name])
            elif missing in ("min", "max") and s.name in self.symbols:
                subs[s] = self.symbols[s.name][0 if missing == "min" else 1]
            else:
                raise KeyError(f"no value for symbol {s.name!r} of the predicted peak "
                               f"{self.formula}")
        return int(sympy.floor(expr.xreplace(subs)))

    def evaluate(self, symbol_values: Mapping[str, int], missing: str = "error") -> int:
        """The peak in bytes for these symbol values. A symbol not given (one known only at
        run time, such as a `nonzero` count) raises KeyError, or takes the ``"min"`` or
        ``"max"`` of its range when `missing` says so."""
        return self._eval(self.formula, symbol_values, missing)

    def evaluate_arena(self, symbol_values: Mapping[str, int], missing: str = "error") -> int:
        """The arena size the plan's offsets need for these symbol values."""
        return self._eval(self.arena, symbol_values, missing)

    def evaluate_iree(self, symbol_values: Mapping[str, int], missing: str = "error",
                      function: str | None = None) -> int:
        """The peak IREE 3.13's own allocation reaches (its slab packing shares memory
        between dynamic sizes only when they are equal), for these symbol values, in the
        entry or in `function` (a shape-specialized version or bucket the call runs)."""
        return self._eval(self.versions.get(function, self.iree), symbol_values, missing)

    def bounds(self, symbol_values: Mapping[str, int]) -> tuple[int, int]:
        """(min, max) of the peak over the ranges of the symbols not given."""
        return (self.evaluate(symbol_values, "min"), self.evaluate(symbol_values, "max"))

    @classmethod
    def from_report(cls, peak: Mapping) -> Peak | None:
        """The peak a compile report carries (`Report.peak`; no symbol ranges), None if the
        pass did not run."""
        if not peak:
            return None
        return cls(peak["formula"], peak["arena"], peak["iree"], int(peak["min"]),
                   int(peak["max"]), {}, dict(peak.get("versions", {})))


def read_peak(module: ir.Module | ir.Operation | str) -> Peak | None:
    """The ``dync.peak`` a run of the pass left on `module` (an MLIR module, or its text);
    None if the pass did not run."""
    if isinstance(module, str):
        with ir.Context():
            return read_peak(ir.Module.parse(module))
    attrs = module.operation.attributes
    if PEAK_ATTR not in attrs:
        return None
    data = dync_ir.to_python(attrs[PEAK_ATTR])
    return Peak(formula=data["formula"], arena=data["arena"], iree=data["iree"],
                min=int(data["min"]),
                max=int(data["max"]),
                symbols={k: (int(v[0]), int(v[1])) for k, v in data["symbols"].items()},
                versions=dict(data.get("versions", {})))


def symbol_values(signature, args) -> dict[str, int]:
    """The values the entry's symbols take for concrete arguments (numpy arrays or torch
    tensors), read from the dims the signature names by a bare symbol."""
    values: dict[str, int] = {}
    for spec, arg in zip(signature.inputs, args, strict=False):
        for want, got in zip(spec.shape, tuple(arg.shape), strict=False):
            if isinstance(want, str) and is_symbol_name(want):
                values[want] = int(got)
    return values
