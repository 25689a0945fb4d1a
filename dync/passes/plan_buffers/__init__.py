"""`dync-plan-buffers`: symbolic liveness and an arena plan of intermediate tensors (Nimble's
explicit allocation, SoD² §4.4.1 memory allocation planning; digest-sod2.md sections 4.2-4.3).

Reads (last before `dync-check-ir`, the IR IREE gets): every function's tensor values and
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

import sympy
from iree.compiler import ir

from ...analysis.layout import converts_to_channels_last
from ...analysis.op_kinds import SHAPE_ONLY, VIEWS, viewed_argument
from ...analysis.padding import copies_padding
from ...analysis.sampling import Samplers, symbol_ranges
from ...dialects import dync_ir
from ...dialects.attributes import (
    BUFFER_ATTR,
    CANCELS_ATTR,
    CARRIED_ATTR,
    FRAME_ATTR,
    FUNC_BUFFERS_ATTR,
    NHWC_INPUT_ATTR,
    PAD_ATTR,
    PEAK_ATTR,
)
from ...dialects.walk import call_sites, callee, exported, functions, ops_named
from ..pipeline import Pass, PassFailure
from .buffers import Buffer, FunctionPlan, _int64
from .liveness import FunctionLiveness
from .peak import Peak, read_peak, symbol_values  # noqa: F401 - the plan read back


class PlanBuffers(Pass):
    name = "dync-plan-buffers"
    summary = ("symbolic liveness and arena plan of intermediate tensors; the predicted peak "
               "memory as a formula over the symbols")

    def run(self, module: ir.Operation) -> None:
        planner = Planner(module)
        planner.plan()
        planner.write()


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
