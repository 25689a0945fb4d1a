"""`dync-fuse-padding`: on the CPU, convolutions and pools read their zero padding in place.

Not in the default pipeline: `dync.passes.LOW_MEMORY_PIPELINE` adds it. It lowers the peak and
costs speed. IREE's fused dispatch pads each vector tile of the input inside the convolution's
loops, and ran 25-40% slower than the same convolution over a padded copy (llvm-cpu,
znver5, one thread, a 3x3 conv + BN + ReLU: 36.9 -> 48.6 us at 32x32x16, 1081 -> 1500 us at
56x56x64, eager 1102); a padded input that dies at its convolution costs no memory as a copy
(its producer writes the copy's interior), one still read afterwards (a residual block's
input, a model input) costs its padded size. On the suite (2 threads, 30 inputs, same
process; KiB measured by IREE's allocator): shallow_deep 0.097 vs 0.124 ms, 168 vs 100 KiB
with the pass (eager 128); ConvNet-AIG 0.244 vs 0.307 ms, 145 vs 128 (eager 192); SkipNet-FF
0.365 vs 0.448, 286 vs 204 (eager 256); the captioner 0.173 vs 0.184, 30.5 vs 19.9 (eager 24);
the CIFAR ResNet 0.92 vs 1.22 ms; yolo_nms 0.61 vs 0.69.

IREE 3.13 materializes the zero-padded input of every padded convolution or pool as a buffer
of its own (``tensor.pad`` becomes a dispatch writing a copy), unless told to fuse the pad
into its consumer (``--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops``),
which then reads the border as zeros. That copy is most of the gap between dync's peak
intermediate memory and eager PyTorch's on the suite's CNNs (SoD² §4 counts the same
intermediates; `dync-plan-buffers` models the copies as ``dync.pad`` buffers).

The flag is off in IREE by default, and with reason here: with a dynamic dim on a padded
op's input, llvm-cpu fails to translate the fused dispatch ("failed to run translation of
source executable", measured on the suite's dynamic-batch ResNet and BlockDrop), and on the
dynamic H x W detector it ran slower. The cause: the convolution's workgroup tile over a
dynamic batch is 64, so the fused pad's tile keeps a dynamic size and
`iree-codegen-concretize-pad-result-shape` fails. ``--iree-llvmcpu-distribution-size=1``
compiles it, but it is a process-wide LLVM option (not a session flag) and tiles every
dynamic dim by 1: BlockDrop 0.9 -> 6-13 ms. Padding written out as zeros and a slice update
is folded back into a ``tensor.pad`` and fails the same way. So the pass asks for it only
for entry points whose padded ops all have a fully static input (below); measured on this
host with every padded op of a module static (20 inputs each): shallow_deep's peak 200.4 ->
132.2 KiB, the captioner's 47.1 -> 28.8 KiB, SkipNet's 422 -> 401 and 350 -> 321 KiB. It is
a trade, which is why the pass is opt-in (above; BENCHMARKS.md's ablation: "with
dync-fuse-padding").

Per entry point: the pass asks for the flag when at least one entry point (the entry, a
shape-specialized version, a size bucket) has only static padded ops, and names the others in
``dync.iree_copied_padding``. IREE keeps a ``tensor.pad`` for fusion only when its one use is
a linalg op (`TensorPadToTensorInsertSlice` with ``skipSingleLinalgOpUses``), so the backend
hands IREE a preprocessing transform spec (``--iree-preprocessing-transform-spec-filename``,
a file named by its hash under the temp directory, so cache keys stay put) that rewrites the
pads of those entry points in destination-passing style
(``transform.structured.rewrite_in_destination_passing_style`` on the pads under
``util.func @<entry>$async``: by then each has its callees inlined). The fallback keeps its
copies and compiles; the static versions read their padding in place. BlockDrop with
``specialize={'batch': [1]}`` (its deployment's choice, `benchmarks/models/blockdrop.py`):
the batch-1 version peaks at 196740-209024 B against eager's 262216 B (344704 B before this
and `dync-rdp`'s signature refinement), latency 0.27-0.61 ms, exact against eager.

Reads: ``dync.backend``, the module's public functions and every op of `op_kinds.PADDED` with
nonzero padding they reach. Writes: the flag into the module's ``dync.iree_flags`` and the
entry points that keep their copies into ``dync.iree_copied_padding`` (llvm-cpu only: the
CUDA and ARM code paths were not measured); the backend passes both to IREE and
`dync-plan-buffers` reads them (`analysis.padding.copies_padding`) to count copies only where
IREE makes them.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import PADDED
from ..analysis.padding import FUSE_PADDING
from ..dialects.dync_ir import (
    read_backend,
    request_copied_padding,
    request_flags,
)
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import constant_int_list
from ..dialects.walk import exported, functions, nested_ops, reachable
from .pipeline import Pass


def _padded_ops(func: ir.Operation) -> list[ir.Operation]:
    return [op for op in nested_ops(func) if op.name in PADDED
            and any(constant_int_list(op.operands[PADDED[op.name]]) or [1])]


def _static_input(op: ir.Operation) -> bool:
    return None not in (type_dims(op.operands[0].type) or (None,))


class FusePadding(Pass):
    name = "dync-fuse-padding"
    summary = ("ask IREE to fuse the zero padding of convolutions and pools into them (CPU, "
               "entry points whose padded ops are static)")

    def run(self, module: ir.Operation) -> None:
        if read_backend(module) != "llvm-cpu":
            return
        funcs = functions(module)
        fusable, copied = [], []
        for entry in exported(module):
            padded = [op for name in reachable(module, [entry]) for op in _padded_ops(funcs[name])]
            if padded:
                (fusable if all(_static_input(op) for op in padded) else copied).append(entry)
        if fusable:
            request_flags(module, [FUSE_PADDING])
            request_copied_padding(module, copied)
