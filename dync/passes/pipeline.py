"""Pass registry and runner: dync's Python passes mixed with textual MLIR pipelines.

Python passes run as real MLIR passes through `PassManager.add(callable)`. They cannot be
cloned, so they are anchored on `builtin.module` and walk the functions themselves.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

from iree.compiler import ir
from iree.compiler.passmanager import PassManager

from ..dialects.dync_ir import read_backend
from ..errors import CompilationError, PassFailure

# Pass name -> module defining it (imported on first use so `dync-opt --help` stays fast).
_PASS_MODULES = {
    "dync-bias-pointwise-convs": "dync.passes.bias_pointwise_convs",
    "dync-bucket": "dync.passes.bucket",
    "dync-canonicalize": "dync.passes.canonicalize",
    "dync-collapse-views": "dync.passes.collapse_views",
    "dync-check-indices": "dync.passes.check_indices",
    "dync-check-ir": "dync.passes.check_ir",
    "dync-channels-last": "dync.passes.channels_last",
    "dync-attention-heads": "dync.passes.attention_heads",
    "dync-data-tiling": "dync.passes.data_tiling",
    "dync-decompose-softmax": "dync.passes.decompose_softmax",
    "dync-depthwise-nhwc": "dync.passes.depthwise_nhwc",
    "dync-distinct-fills": "dync.passes.distinct_fills",
    "dync-exact-loops": "dync.passes.exact_loops",
    "dync-pretranspose-weights": "dync.passes.pretranspose_weights",
    "dync-fence-region-reads": "dync.passes.fence_region_reads",
    "dync-fold-literal-layouts": "dync.passes.fold_literal_layouts",
    "dync-fuse-padding": "dync.passes.fuse_padding",
    "dync-im2col": "dync.passes.im2col",
    "dync-im2col-within-filter": "dync.passes.im2col",
    "dync-max-pool-slices": "dync.passes.max_pool_slices",
    "dync-nan-extremes": "dync.passes.nan_extremes",
    "dync-narrow-rows": "dync.passes.narrow_rows",
    "dync-width-strips": "dync.passes.width_strips",
    "dync-widen-int8": "dync.passes.widen_int8",
    "dync-inline-subdnns": "dync.passes.inline_subdnns",
    "dync-int-division": "dync.passes.int_division",
    "dync-int-negation": "dync.passes.int_negation",
    "dync-isolate-subdnns": "dync.passes.isolate_subdnns",
    "dync-near-zero": "dync.passes.near_zero",
    "dync-loop-batch": "dync.passes.loop_batch",
    "dync-pack-sort-keys": "dync.passes.pack_sort_keys",
    "dync-patch-stages": "dync.passes.patch_stages",
    "dync-plan-buffers": "dync.passes.plan_buffers",
    "dync-plan-execution": "dync.passes.plan_execution",
    "dync-conv1d-linear": "dync.passes.conv1d_linear",
    "dync-copy-within": "dync.passes.copy_within",
    "dync-pointwise-matmuls": "dync.passes.pointwise_matmuls",
    "dync-pool-extents": "dync.passes.pool_extents",
    "dync-rdp": "dync.passes.rdp",
    "dync-rotate-while": "dync.passes.rotate_while",
    "dync-running-extremes": "dync.passes.running_extremes",
    "dync-scatter-as-select": "dync.passes.scatter_as_select",
    "dync-sink-into-branches": "dync.passes.sink_into_branches",
    "dync-softmax-row-blocks": "dync.passes.softmax_row_blocks",
    "dync-spatial-reductions": "dync.passes.spatial_reductions",
    "dync-split-reductions": "dync.passes.split_reductions",
    "dync-sums-as-matvecs": "dync.passes.sums_as_matvecs",
    "dync-fence-reductions": "dync.passes.fence_reductions",
    "dync-fence-gathered-reductions": "dync.passes.fence_gathered_reductions",
    "dync-specialize": "dync.passes.specialize",
    "dync-split-subdnns": "dync.passes.split_subdnns",
    "dync-strided-views": "dync.passes.strided_views",
    "dync-tie-region-shapes": "dync.passes.tie_region_shapes",
}

# torch.prim.If/Loop -> scf.if/scf.while, the last step of every import (the frontends are
# handed `lower_control_flow`): the control-flow form of dync IR, with the two repairs of the
# upstream lowering that make loops exact and compilable by IREE. Then
# upstream canonicalization, which IREE runs first thing anyway: it drops the results of an
# `scf.if` nobody reads (a Python variable assigned in a branch and not read after it), which
# would otherwise become sub-DNN results, live to the end of the branch in dync's plan.
CONTROL_FLOW_TO_SCF: tuple[str, ...] = (
    "dync-exact-loops",
    "func.func(convert-torch-to-scf)",
    "dync-rotate-while",
    "func.func(canonicalize)",
)


def lower_control_flow(module: ir.Module) -> None:
    """An importer's torch.prim.If/Loop as scf.if/scf.while (`CONTROL_FLOW_TO_SCF`)."""
    run_pipeline(module, CONTROL_FLOW_TO_SCF)


# What `dync.compile` runs on dync IR before handing it to IREE.
DEFAULT_PIPELINE: tuple[str, ...] = (
    "dync-specialize", "dync-bucket", "dync-canonicalize", "dync-fold-literal-layouts",
    "dync-collapse-views",
    "dync-pool-extents", "dync-rdp",
    "dync-sink-into-branches",
    "dync-split-subdnns", "dync-loop-batch", "dync-pretranspose-weights", "dync-conv1d-linear",
    "dync-pointwise-matmuls", "dync-bias-pointwise-convs", "dync-im2col", "dync-width-strips",
    "dync-max-pool-slices", "dync-data-tiling", "dync-narrow-rows", "dync-attention-heads",
    "dync-decompose-softmax", "dync-softmax-row-blocks", "dync-channels-last",
    "dync-depthwise-nhwc", "dync-spatial-reductions", "dync-split-reductions",
    "dync-sums-as-matvecs", "dync-scatter-as-select", "dync-fence-reductions",
    "dync-fence-gathered-reductions",
    "dync-plan-execution", "dync-patch-stages", "dync-isolate-subdnns",
    "dync-canonicalize", "dync-plan-buffers", "dync-check-indices", "dync-int-division",
    "dync-int-negation", "dync-widen-int8", "dync-near-zero", "dync-nan-extremes",
    "dync-running-extremes",
    "dync-pack-sort-keys", "dync-distinct-fills", "dync-copy-within", "dync-strided-views", "dync-inline-subdnns",
    "dync-tie-region-shapes", "dync-fence-region-reads", "dync-check-ir")

# The default pipeline with `dync-fuse-padding` (convolutions read their zero padding in place,
# no padded copy of their input, where IREE can) and without im2col's strips (whose columns
# outweigh the convolution's input), for a lower peak at a cost in speed (see the passes):
# `dync.compile(..., passes=dync.passes.LOW_MEMORY_PIPELINE)`.
_AFTER_PATCH_STAGES = DEFAULT_PIPELINE.index("dync-patch-stages") + 1
LOW_MEMORY_PIPELINE: tuple[str, ...] = tuple(
    "dync-im2col-within-filter" if p == "dync-im2col" else p
    for p in DEFAULT_PIPELINE[:_AFTER_PATCH_STAGES] + ("dync-fuse-padding",)
    + DEFAULT_PIPELINE[_AFTER_PATCH_STAGES:])


# The passes a module needs to compile to the right answers, whatever else runs: lowerings of
# ops IREE lacks (`dync-running-extremes`, `dync-pack-sort-keys`), mends of IREE 3.13's
# miscompilations (each pass's docstring has its case and its `lit/upstream/` reproducer) and
# the checks of the IR handed to IREE. `dync.compile` adds those a `passes=` list leaves out
# (`with_required_passes`): a list without them compiled modules that disagree with eager
# (the mixture of experts with `passes=[]`: by 0.42). They are cheap where they find nothing.
REQUIRED_PASSES: tuple[str, ...] = (
    "dync-canonicalize", "dync-collapse-views", "dync-pool-extents", "dync-fence-reductions",
    "dync-fence-gathered-reductions", "dync-int-division", "dync-int-negation",
    "dync-widen-int8", "dync-near-zero", "dync-nan-extremes", "dync-running-extremes",
    "dync-pack-sort-keys",
    "dync-distinct-fills", "dync-copy-within", "dync-strided-views", "dync-inline-subdnns",
    "dync-tie-region-shapes", "dync-fence-region-reads", "dync-check-ir")


def with_required_passes(passes: Sequence[str]) -> tuple[str, ...]:
    """`passes` with the `REQUIRED_PASSES` it leaves out, each where `DEFAULT_PIPELINE` runs
    it: before the first of `passes` that the default pipeline runs after it (at the end if
    none). The steps of `passes` keep their order; those outside the default pipeline
    (upstream elements, opt-in passes) keep their place."""
    listed = set(passes)
    pending = [(at, p) for at, p in enumerate(DEFAULT_PIPELINE)
               if p in REQUIRED_PASSES and p not in listed]
    completed: list[str] = []
    for step in passes:
        if step in DEFAULT_PIPELINE:
            at = DEFAULT_PIPELINE.index(step)
            completed += [p for before, p in pending if before < at]
            pending = [(before, p) for before, p in pending if before >= at]
        completed.append(step)
    return tuple(completed) + tuple(p for _, p in pending)


class Pass:
    """Base class of dync passes. Subclasses set `name`, `summary` and implement `run`."""

    name: str = ""
    summary: str = ""
    # The names of the passes of a pipeline that started, in order (`run_pipeline`'s), for an
    # error that does not name its pass: IR a pass left that fails to verify.
    started: list[str] | None = None

    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError

    def __call__(self, op: ir.Operation, pass_) -> None:
        if self.started is not None:
            self.started.append(self.name)
        try:
            self.run(op)
        except PassFailure as failure:
            op.location.emit_error(f"{self.name}: {failure}")
            pass_.signal_pass_failure()
        except Exception as e:  # a bug in the pass: fail the pipeline, never the process
            where = traceback.extract_tb(e.__traceback__)[-1]
            op.location.emit_error(
                f"{self.name}: internal error {type(e).__name__}: {e} "
                f"({where.filename}:{where.lineno})"
            )
            pass_.signal_pass_failure()


class HostCpuPass(Pass):
    """A kernel choice measured on the host CPU only: `run_on_cpu` runs for ``llvm-cpu``
    modules, other backends' modules are left as they are."""

    def run(self, module: ir.Operation) -> None:
        if read_backend(module) == "llvm-cpu":
            self.run_on_cpu(module)

    def run_on_cpu(self, module: ir.Operation) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class PassInfo:
    name: str
    summary: str


def _pass_class(name: str) -> type[Pass]:
    module = importlib.import_module(_PASS_MODULES[name])
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Pass) and value.name == name:
            return value
    raise LookupError(f"{_PASS_MODULES[name]} defines no pass named {name}")


def registry() -> dict[str, PassInfo]:
    """All dync passes by name."""
    return {n: PassInfo(n, _pass_class(n).summary) for n in sorted(_PASS_MODULES)}


def parse_pipeline(text: str) -> list[str]:
    """Split `builtin.module(a,b{x=1},func.func(c))` (or `a,b`) into top-level elements."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module(") : -1]
    elements, depth, current = [], 0, []
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            elements.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        elements.append("".join(current).strip())
    return elements


def run_pipeline(module: ir.Module, steps: Sequence[str]) -> None:
    """Run `steps` (dync pass names or upstream textual pipeline elements) on `module`."""
    if not steps:
        return
    started: list[str] = []
    with module.context:
        pm = PassManager("builtin.module")
        for step in steps:
            if step in _PASS_MODULES:
                cls = _pass_class(step)
                instance = cls()
                instance.started = started
                pm.add(instance, name=cls.name, argument=cls.name, description=cls.summary)
            else:
                try:
                    pm.add(step)
                except ValueError as e:
                    raise CompilationError(f"cannot parse pass pipeline element {step!r}: {e}") from e
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            diagnostics = [_format(d) for d in e.error_diagnostics]
            named = started and any(d.startswith(f"{started[-1]}: ") or f": {started[-1]}: " in d
                                    for d in diagnostics)
            last = f" (the last dync pass to run: {started[-1]})" if started and not named else ""
            raise CompilationError(f"pass pipeline {','.join(steps)} failed{last}",
                                   diagnostics) from e


def _format(diagnostic) -> str:
    text = f"{diagnostic.location}: {diagnostic.message}"
    for note in diagnostic.notes:
        text += f"\n  note: {note.location}: {note.message}"
    return text
