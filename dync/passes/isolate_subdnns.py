"""`dync-isolate-subdnns`: IREE keeps each sub-DNN's work inside it, in the layout it
computes in.

IREE inlines the calls of the sub-DNNs `dync-split-subdnns` made, and then its CSE sees one
function: an op in a branch that repeats one before the branch (a convolution's zero padding
of the same tensor) is replaced by the earlier one, whose result then lives, allocated, from
before the branch to after it, and is computed even when the branch is not taken. The plan
`dync-plan-buffers` predicts (SoD² §4: a sub-DNN's intermediates die with it) no longer
holds. Measured on this host (IREE 3.13, llvm-cpu) on the feed-forward SkipNet: each gated
block's padded input was computed by the code before it (shared with the gate's padded
convolution), packed into one allocation with two copies of the activation, and that
allocation stayed alive through every skipped block.

Reads: the sub-DNNs named in ``dync.subdnns``, their call sites, the module's
``dync.iree_preprocessing``, and ``scf.if`` results. Writes:

* each tensor argument of a sub-DNN that IREE could share work on — at some call, the value
  passed is computed in the module and used elsewhere too — passes through
  ``util.optimization_barrier`` (between ``torch_c`` casts) before its first use. Not 0-d
  tensors (flags, counters: no memory to save, and the barrier would keep IREE from fusing
  their uses), nor dynamic shapes (IREE 3.13 cannot resolve the dims of a barrier's dynamic
  result: "'tensor.dim' op unexpected during shape cleanup"). The barrier compiles to no
  dispatch and no copy;
* where IREE computes convolutions in NHWC (`dync-channels-last`), a static rank-4 float
  argument crosses its barrier in NHWC, and each such result of an ``scf.if`` is yielded in
  NHWC by both branches and permuted back after it. IREE's transposes then cancel against
  these on both sides: without it a barrier (and any ``scf.if``, where IREE's transpose
  propagation stops) holds an NCHW copy of an activation next to the NHWC one and costs two
  transposes per crossing. These permutes carry ``dync.cancels``, so `dync-plan-buffers`
  counts no buffer for them. An activation with a dynamic dim crosses in NCHW: on BlockDrop
  (dynamic batch) NHWC crossings left IREE's transposes at both ends, since the unfused zero
  padding of the next convolution separates the permute back from IREE's transpose (the
  peak unchanged, 305 KiB; latency -27% on inputs running few blocks, +5% on the others).

Measured peaks (`python -m benchmarks`' memory harness, 3 inputs): SkipNet-FF 400.5 -> 204.0
KiB (eager 256.0), SkipNet-RNN 320.8 -> 204.1, ConvNet-AIG 256.0 -> 192.0, shallow-deep
132.2 -> 100.1 (eager 128.1); the others unchanged. Nothing changes in a module that was not
split.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.layout import converts_to_channels_last
from ..analysis.op_kinds import SCATTERS
from ..dialects.attributes import CANCELS_ATTR
from ..dialects.dync_ir import read_subdnns
from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import BIND, builtin_type, create, int_list, through_barrier
from ..dialects.walk import call_sites, function_argument, functions, ops_named
from .pipeline import Pass

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def _barrier(value: ir.Value, ip, loc, channels_last: bool) -> ir.Value:
    """`value` (a static `!torch.vtensor`) through a barrier; in NHWC if `channels_last` and it
    is a rank-4 float tensor."""
    nhwc = _nhwc(value.type) if channels_last else None
    crossing = value if nhwc is None else _permute(value, TO_NHWC, nhwc, ip, loc)
    back = through_barrier(crossing, ip, loc)
    return back if nhwc is None else _permute(back, TO_NCHW, value.type, ip, loc)


def _permute(value: ir.Value, to: list[int], result: ir.Type, ip, loc) -> ir.Value:
    """`value` permuted by `to`, marked as a crossing IREE's transposes cancel."""
    return create("torch.aten.permute", result, ip, loc, operands=[value, int_list(to, ip, loc)],
                  **{CANCELS_ATTR: ir.UnitAttr.get()})


def isolate_arguments(func: ir.Operation, channels_last: bool = False,
                      skip: frozenset[int] = frozenset()) -> None:
    """Route the uses of `func`'s tensor arguments (but those in `skip`) through barriers
    placed after the bindings of its arguments."""
    block = func.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    binds = [i for i, op in enumerate(ops) if op.name == BIND
             and isinstance(op.operands[0], ir.BlockArgument) and op.operands[0].owner == block]
    start = max(binds, default=-1) + 1
    ip, loc = ir.InsertionPoint(ops[start]), func.location
    for arg in block.arguments:
        if arg.arg_number in skip:
            continue
        builtin = builtin_type(arg.type)
        # Uses after the barrier only: a use above it (before a binding) keeps the argument.
        uses = [use for use in arg.uses if use.owner.name != BIND
                and _position(use.owner, block, ops) >= start]
        # A 0-d tensor (a counter, a flag) holds no memory worth a barrier, which would only
        # keep IREE from fusing its uses.
        if builtin is None or not type_dims(arg.type) or not uses:
            continue
        back = _barrier(arg, ip, loc, channels_last)
        for use in uses:
            use.owner.operands[use.operand_number] = back


def _position(op: ir.Operation, block: ir.Block, ops: list[ir.Operation]) -> int:
    """The index in `ops` (`block`'s ops) of `op` or of its ancestor in `block`."""
    op = op.operation
    while op.parent is not None and op.parent.operation != block.owner.operation:
        op = op.parent.operation
    return ops.index(op)


def _unshared(func: ir.Operation, sites: list[ir.Operation]) -> frozenset[int]:
    """The arguments of sub-DNN `func` IREE has nothing to share with: at every call (`sites`),
    the value passed is a model input (an argument of the calling function) or used by
    nothing else. A sub-DNN no call reaches (an entry point of host mode) has only such
    arguments."""
    count = len(func.regions[0].blocks[0].arguments)
    return frozenset(i for i in range(count) if all(_alone(site.operands[i]) for site in sites))


def _written(func: ir.Operation) -> frozenset[int]:
    """The arguments of `func` an op in it updates in place (the destination of a scatter).

    IREE 3.13 updates such a destination in the buffer of the value passed; through a barrier
    that update is not ordered after a barrier'd read of the same buffer in another sub-DNN,
    which then reads the updated value (measured: ONNX NonMaxSuppression, whose suppression
    flags one sub-DNN reads and another sets in the same loop trip, kept a suppressed box).
    A destination shares no work worth a barrier anyway."""
    block = func.regions[0].blocks[0]
    return frozenset(
        arg.arg_number for arg in block.arguments
        if any(use.owner.name in SCATTERS and use.operand_number == 0
               for use in _through_casts(arg)))


def _through_casts(value: ir.Value):
    for use in value.uses:
        if use.owner.name in ("torch_c.to_builtin_tensor", "torch_c.from_builtin_tensor"):
            yield from _through_casts(use.owner.results[0])
        else:
            yield use


def _alone(value: ir.Value) -> bool:
    if function_argument(value) is not None:
        return True
    return len([u for u in value.uses if u.owner.name != BIND]) <= 1


def _nhwc(t: ir.Type) -> ir.Type | None:
    """NHWC of a static rank-4 float tensor type (builtin or `!torch.vtensor`), else None."""
    dims = type_dims(t)
    if dims is None or len(dims) != 4 or None in dims \
            or not str(element_type(t)).startswith(("f", "bf")):
        return None
    n, c, h, w = dims
    return ir.Type.parse(str(t).replace(f"{n}x{c}x{h}x{w}x", f"{n}x{h}x{w}x{c}x")
                         .replace(f"[{n},{c},{h},{w}]", f"[{n},{h},{w},{c}]"))


def _vtensor(builtin: ir.Type) -> ir.Type:
    """The `!torch.vtensor` of a builtin float tensor type."""
    dims = ",".join(str(d) for d in type_dims(builtin))
    return ir.Type.parse(f"!torch.vtensor<[{dims}],{element_type(builtin)}>")


def _permute_builtin(value: ir.Value, to: list[int], result: ir.Type, ip, loc) -> ir.Value:
    """`value` (a builtin tensor) permuted by `to` with torch ops, as a builtin `result`."""
    torch_value = create("torch_c.from_builtin_tensor", _vtensor(value.type), ip, loc,
                         operands=[value])
    permuted = _permute(torch_value, to, _vtensor(result), ip, loc)
    return create("torch_c.to_builtin_tensor", result, ip, loc, operands=[permuted])


def yield_channels_last(if_op: ir.Operation) -> None:
    """Make `if_op`'s static rank-4 float results NHWC: each branch permutes what it yields,
    the uses after it read the result permuted back."""
    for i, result in enumerate(if_op.results):
        nhwc = _nhwc(result.type)
        if nhwc is None:
            continue
        nchw = result.type
        for region in if_op.regions:
            ip = ir.InsertionPoint.at_block_terminator(region.blocks[0])
            terminator = ip.ref_operation
            terminator.operands[i] = _permute_builtin(terminator.operands[i], TO_NHWC, nhwc, ip,
                                                      terminator.location)
        uses = list(result.uses)
        result.set_type(nhwc)
        back = _permute_builtin(result, TO_NCHW, nchw, ir.InsertionPoint.after(if_op),
                                if_op.location)
        for use in uses:
            use.owner.operands[use.operand_number] = back


class IsolateSubdnns(Pass):
    name = "dync-isolate-subdnns"
    summary = ("keep IREE from sharing work across sub-DNNs (barriers on their arguments), "
               "activations crossing them in NHWC")

    def run(self, module: ir.Operation) -> None:
        funcs = functions(module)
        sites = call_sites(module)
        channels_last = converts_to_channels_last(module)
        for record in read_subdnns(module):
            func = funcs.get(record["name"])
            if func is None or not func.regions[0].blocks:
                continue
            isolate_arguments(func, channels_last,
                              _unshared(func, sites.get(record["name"], [])) | _written(func))
        if channels_last:
            for if_op in ops_named(module, "scf.if"):
                yield_channels_last(if_op)
