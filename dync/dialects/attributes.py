"""The dync IR's attributes, each declared once: where it sits, what it holds, who writes it and
who reads it.

dync IR is upstream MLIR (`func`, `scf`, the torch dialect) plus discardable ``dync.*``
attributes, so it round-trips through MLIR text and IREE compiles it unchanged. This table is the
contract between the frontends, the passes, `dync.compile` and the backend: a pass's docstring
(``Reads:``/``Writes:``) names the attributes it reads and writes, and the test of this table
checks that every pass listed below does. `dync-opt --list-attributes` prints it.

Writers and readers are pass names (``dync-rdp``) or the components outside the pass pipeline:
``frontends`` (the importers), ``dync.compile`` (the orchestration in `dync.api`), ``backend``
(the IREE invocation), ``analysis.<module>`` (facts several passes ask for).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IrAttribute:
    name: str
    on: str                  # the kind of IR object that carries it
    holds: str               # the value's form
    written_by: tuple[str, ...]
    read_by: tuple[str, ...]
    meaning: str


CATALOGUE: dict[str, IrAttribute] = {}


def _declare(name: str, on: str, holds: str, written_by: tuple[str, ...],
             read_by: tuple[str, ...], meaning: str) -> str:
    assert name not in CATALOGUE, f"{name} declared twice"
    CATALOGUE[name] = IrAttribute(name, on, holds, written_by, read_by, meaning)
    return name


# --- the entry's signature -------------------------------------------------------------------

SYMBOLS_ATTR = _declare(
    "dync.symbols", "module", "{<symbol> = {min = i64, max = i64}}",
    ("frontends",),
    ("dync-rdp", "dync-specialize", "dync-bucket", "dync-plan-buffers", "analysis.sampling"),
    "every shape symbol of the model and its declared range")
ENTRY_ATTR = _declare(
    "dync.entry", "function", "unit",
    ("frontends",),
    ("dync-canonicalize", "dync-rdp", "dync-specialize", "dync-bucket", "dync-plan-buffers",
     "analysis.tensor_sizes"),
    "marks the entry function (`main`); versions and sub-DNNs are copies without it")
SHAPE_ATTR = _declare(
    "dync.shape", "entry function argument or result", "[i64 | \"<symbol or expression>\", ...]",
    ("frontends", "dync-specialize", "dync-bucket"),
    ("dync-rdp", "dync-specialize", "dync-bucket", "dync-plan-buffers", "analysis.tensor_sizes"),
    "the dims of an argument or result, ints for static dims, strings for symbols and "
    "expressions over them")

# --- requests to IREE ------------------------------------------------------------------------

BACKEND_ATTR = _declare(
    "dync.backend", "module", "\"llvm-cpu\" | \"cuda\" | \"arm\"",
    ("dync.compile",), ("dync-fuse-padding", "dync-bias-pointwise-convs"),
    "the backend the module is compiled for, for passes whose rewrite pays off on one only")
VECTOR_ISA_ATTR = _declare(
    "dync.vector_isa", "module", "\"avx512\" | \"avx2\" | \"sse\" | \"neon\"",
    ("dync.compile",), ("dync-im2col",),
    "the widest vector extension the CPU code may use (the target preset's; \"host\" read "
    "from this machine), for kernel choices measured to differ by it")
PREPROCESSING_ATTR = _declare(
    "dync.iree_preprocessing", "module", "[\"<IREE preprocessing pass>\", ...]",
    ("dync-channels-last",), ("backend", "analysis.layout"),
    "IREE preprocessing passes the module asks for (IREE's NHWC conversion of convolutions)")
FLAGS_ATTR = _declare(
    "dync.iree_flags", "module", "[\"<iree-compile flag>\", ...]",
    ("dync-fuse-padding",), ("backend", "dync.compile", "analysis.padding",
                             "dync-decompose-softmax", "dync-sums-as-matvecs"),
    "IREE compiler flags the module asks for (dropped again if IREE rejects them)")
TILING_WORK_ATTR = _declare(
    "dync.tiling_work", "module", "{wide = i64, narrow = i64, dynamic_rows = i64}",
    ("dync-data-tiling",), ("frontends",),
    "the work (M*N*K) of the module's contractions that data tiling speeds up (wide) and slows "
    "down (narrow), and whether one has dynamic rows (all 0 where it has none): host mode's "
    "one module weighs its sub-DNNs' records together (dync_ir.linked_flags), as "
    "dync-data-tiling weighs one module")
COPIED_PADDING_ATTR = _declare(
    "dync.iree_copied_padding", "module", "[\"<entry point>\", ...]",
    ("dync-fuse-padding",), ("backend", "analysis.padding"),
    "entry points whose convolution padding IREE writes out as copies while the module asks "
    "for pad fusion (the backend keeps them with a transform spec)")

# --- versions of the entry -------------------------------------------------------------------

SPECIALIZE_REQUEST_ATTR = _declare(
    "dync.specialize", "module", "[{<symbol> = i64}, ...]",
    ("dync.compile",), ("dync-specialize",),
    "the shape-specialized versions asked for (`specialize=`); removed by the pass")
VERSION_ATTR = _declare(
    "dync.version", "function", "{<symbol> = i64}",
    ("dync-specialize",), ("dync-rdp", "dync.compile"),
    "a static copy of the entry for these values of its symbols")
BUCKET_ATTR = _declare(
    "dync.bucket", "module (a request), function (a version)", "[{<symbol> = i64}, ...] | "
    "{<symbol> = i64}",
    ("dync.compile", "dync-bucket"), ("dync-bucket", "dync.compile"),
    "on the module, the size buckets asked for (`buckets=`; removed by the pass); on a "
    "function, the bucket it is the padded static copy for")
SIZES_ATTR = _declare(
    "dync.sizes", "function", "[\"<symbol>\", ...]",
    ("dync-bucket",), ("dync.compile",),
    "the symbols a bucket version takes its true values of as extra 0-d arguments")
HOST_PADDING_ATTR = _declare(
    "dync.host_padding", "function", "unit",
    ("dync-bucket",), ("dync.compile",),
    "a bucket version whose arguments the runtime pads (static at the bucket's sizes)")

# --- shapes ----------------------------------------------------------------------------------

RDP_ATTR = _declare(
    "dync.rdp", "module", "{static = i64, symbolic = i64, unknown = i64, ...}",
    ("dync-rdp",), ("dync.compile",),
    "how many tensor dims RDP proved static, symbolic or left unknown (the report)")
DIMS_ATTR = _declare(
    "dync.dims", "op", "[[\"<dim>\", ...] | [], ...] (one per result)",
    ("dync-rdp",), ("dync-plan-buffers", "analysis.tensor_sizes"),
    "result dims RDP proved that are not affine (max, min, floor division of a product), "
    "which `torch.bind_symbolic_shape` cannot hold")

# --- sub-DNNs --------------------------------------------------------------------------------

SUBDNNS_ATTR = _declare(
    "dync.subdnns", "module",
    "[{name, source, ops, calls, arguments, results}, ...]",
    ("dync-split-subdnns", "dync-loop-batch"), ("dync-isolate-subdnns", "dync.compile"),
    "one record per sub-DNN outlined from the host skeleton")
SOURCE_ATTR = _declare(
    "dync.source", "sub-DNN function", "\"<file>:<first>-<last>\"",
    ("dync-split-subdnns",), (),
    "the user's lines a sub-DNN's ops come from, for people reading the IR and IREE's dumps")
CANCELS_ATTR = _declare(
    "dync.cancels", "torch.aten.permute", "unit",
    ("dync-isolate-subdnns", "dync-patch-stages"), ("dync-plan-buffers",),
    "a permute placed where IREE's own transposes cancel it (a layout crossing): it moves no "
    "data")
PATCHES_ATTR = _declare(
    "dync.patches", "torch.aten.cat", "i64",
    ("dync-patch-stages",), ("dync-plan-buffers",),
    "a convolution computed in this many strips, concatenated here")

# --- plans -----------------------------------------------------------------------------------

EXECUTION_ATTR = _declare(
    "dync.execution", "module", "{segments = i64, reordered = i64, exact = i64}",
    ("dync-plan-execution",), ("dync.compile",),
    "the execution plan's counts: segments, those reordered, those searched exhaustively")
PEAK_ATTR = _declare(
    "dync.peak", "module", "{function, formula, arena, iree, min, max, symbols, versions}",
    ("dync-plan-buffers",), ("dync.compile",),
    "the entry's predicted peak of intermediate memory over its symbols (the report)")
FUNC_BUFFERS_ATTR = _declare(
    "dync.buffers", "function", "{peak, arena, frame, iree, buffers, in_place}",
    ("dync-plan-buffers",), ("dync-plan-buffers",),
    "a function's peak, arena and frame formulas and buffer counts (a caller reserves the "
    "frame)")
BUFFER_ATTR = _declare(
    "dync.buffer", "op defining a tensor", "{offset = \"...\", size = \"...\"[, in_place]}",
    ("dync-plan-buffers",), (),
    "where the arena plan puts the op's result, for people and lit tests")
FRAME_ATTR = _declare(
    "dync.frame", "func.call", "{offset = \"...\", size = \"...\"}",
    ("dync-plan-buffers",), (),
    "the arena space a call reserves for its callee's intermediates")
PAD_ATTR = _declare(
    "dync.pad", "convolution or pooling", "{offset = \"...\", size = \"...\"}",
    ("dync-plan-buffers",), (),
    "the buffer of the zero-padded copy of the input IREE makes")
NHWC_INPUT_ATTR = _declare(
    "dync.nhwc_input", "convolution", "{offset = \"...\", size = \"...\"}",
    ("dync-plan-buffers",), (),
    "the buffer of the NHWC copy of an NCHW input IREE makes")
CARRIED_ATTR = _declare(
    "dync.carried", "scf.while", "[{offset = \"...\", size = \"...\"}, ...]",
    ("dync-plan-buffers",), (),
    "the buffers of the loop's carried values")


def table() -> str:
    """The catalogue as a Markdown table (`dync-opt --list-attributes`)."""
    rows = ["| attribute | on | holds | written by | read by | meaning |",
            "|---|---|---|---|---|---|"]
    for a in CATALOGUE.values():
        cells = [f"`{a.name}`", a.on, f"`{a.holds}`", ", ".join(a.written_by),
                 ", ".join(a.read_by) or "-", a.meaning]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)
