"""`dync-fuse-padding`: on the CPU, convolutions and pools read their zero padding in place.

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
when every padded op of the module has a fully static input; measured on this host (20
inputs each): shallow_deep's peak 200.4 -> 132.2 KiB, the captioner's 47.1 -> 28.8 KiB,
SkipNet's 422 -> 401 and 350 -> 321 KiB. It is a trade: in the suite's ablation (BENCHMARKS.md) the fused dispatches
ran 4-16% slower on the CNNs it applies to (geo-mean gain 0.96x), most where it saved little
memory (ConvNet-AIG 272 -> 256 KiB, RANet unchanged). Choosing per module by the predicted
peak it saves is the next step.

Per function, for shape-specialized versions (measured, not yet used): IREE keeps a
``tensor.pad`` for fusion only when its one use is a linalg op (`TensorPadToTensorInsertSlice`
with ``skipSingleLinalgOpUses``), so a preprocessing transform spec
(``--iree-preprocessing-transform-spec-filename``) that rewrites the pads of the dynamic
entry in destination-passing style (``transform.structured.rewrite_in_destination_passing_style``
on the pads under ``util.func @<entry>$async``: by then each entry has its callees inlined)
keeps the fallback's copies while the flag fuses a static version's. BlockDrop with
``specialize={'batch': [1]}``: it compiles and agrees with eager; the batch-1 version's peak
went 344704 -> 270848 B (eager 262216), latency 0.20-0.45 -> 0.25-0.57 ms. Not enough yet:
6 of the version's 22 pads still have a ``?`` batch: torch.cond's ``scf.if`` results keep
the fallback's ``?`` types, and from the sixth gated block on RDP itself has lost the
constant batch (the activation passed to that block's branch function has an unknown batch;
not traced yet), where the fully static build peaks at 196644 B.

Reads: ``dync.backend`` and every op of `op_kinds.PADDED` with nonzero padding. Writes: the
flag into the module's ``dync.iree_flags`` (llvm-cpu only: the CUDA and ARM code paths were
not measured), which the backend passes to IREE and `dync-plan-buffers` reads to stop
counting the copies.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import PADDED
from ..dialects.dync import read_backend, read_flags, request_flags
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import constant_int_list
from ..dialects.walk import nested_ops
from .pipeline import Pass

FUSE_PADDING = "--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops"


def fuses_padding(module: ir.Operation) -> bool:
    """Whether IREE will read `module`'s convolution padding in place (no padded copies)."""
    return FUSE_PADDING in read_flags(module)


def _padded_ops(module: ir.Operation) -> list[ir.Operation]:
    return [op for op in nested_ops(module) if op.name in PADDED
            and any(constant_int_list(op.operands[PADDED[op.name]]) or [1])]


class FusePadding(Pass):
    name = "dync-fuse-padding"
    summary = "ask IREE to fuse the zero padding of convolutions and pools into them (CPU, static shapes)"

    def run(self, module: ir.Operation) -> None:
        if read_backend(module) != "llvm-cpu":
            return
        padded = _padded_ops(module)
        if padded and all(None not in (type_dims(op.operands[0].type) or (None,))
                          for op in padded):
            request_flags(module, [FUSE_PADDING])
