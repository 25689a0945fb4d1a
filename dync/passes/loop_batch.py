"""`dync-loop-batch`: a sub-DNN whose samples are independent runs one sample at a time, in a
loop over the batch, where IREE would pack its dynamic-batch buffers poorly.

IREE 3.13 packs the buffers of one piece of work (`--iree-stream-layout-slices`) greedily
when their sizes are static, but lets a buffer of dynamic size share memory only with buffers
of the very same size expression: on a dynamic batch every distinct activation size takes
slots of its own, one after the other. The static-control ResNet of the suite reached 3.1x
the peak `dync-plan-buffers` plans (513 KiB a sample, eager PyTorch 320 KiB). Per sample the
shapes are static, IREE packs them as tightly as the plan, and the peak no longer grows with
the batch (Nimble's and SoD²'s point that a static plan beats dynamic allocation, applied by
making the plan static; digest-sod2.md 4.3).

Reads: the sub-DNNs `dync-split-subdnns` made (``dync.subdnns``) and their call sites; in
each, the symbol bound to dim 0 of its arguments and which values depend on them.

A sub-DNN is *batch-parallel* when (checked op by op, anything else rules it out)

* its arguments and results are tensors whose dim 0 is one dynamic symbol, the same for all
  of them (the batch), and all their other dims are static;
* every op that reads an argument-derived ("batched") value keeps samples apart: elementwise
  ops whose batched operands have the result's rank (other operands broadcast over the batch),
  convolutions and pools of a batched input, `linear` of a batched input, reductions over
  dims other than 0, `permute`s that keep dim 0 in place, `flatten` from dim 1 on, views and
  reshapes whose new shape starts with the batch size (`aten.size.int` of dim 0) — the only
  use allowed of that size — and casts;

and IREE would pack it poorly: its batched results of ops have at least `MIN_SIZES` distinct
per-sample sizes (with fewer, the slots of each size are all IREE needs).

Writes: each such sub-DNN's arguments, results and batched values get dim 0 = 1 (its
bindings of the batch symbol read 1), and each call site becomes an `scf.while` over the
batch that slices sample ``i`` of every argument (`tensor.extract_slice`), calls the
sub-DNN, and writes its results into row ``i`` of tensors of the full batch
(`tensor.insert_slice`); the sub-DNN's record in ``dync.subdnns`` gets ``per_sample`` = the
batch symbol. `dync-channels-last` then treats the sub-DNN as under control flow (its
filters stored HWCF), which keeps the convolutions named NHWC ones.

Measured on this host (IREE 3.13, llvm-cpu, the suite's static-control ResNet): peak 513.4
KiB x batch -> 222 KiB at every batch 1..4 (eager 320 KiB x batch); latency over the suite's
inputs (batches 1..4) 1.10 -> 1.16 ms (per-sample kernels, one submission per sample;
`python -m benchmarks resnet_static`).
"""

from __future__ import annotations

import math

from iree.compiler import ir

from ..analysis.op_kinds import (
    CONVOLUTIONS,
    ELEMENTWISE,
    POOLS,
    REDUCTIONS,
    RESHAPES,
    element_bytes,
)
from ..dialects.dync_ir import SUBDNNS_ATTR, read_subdnns
from ..dialects.literals import LITERAL
from ..dialects.symbolic import bound_dims, type_dims
from ..dialects.torch_ops import BIND, builtin_type, constant_int, constant_int_list, create
from ..dialects.versions import specialize_binding, static_type
from ..dialects.walk import call_sites, functions, nested_ops
from .pipeline import Pass

PER_SAMPLE = "per_sample"
# Fewer distinct per-sample sizes than this: IREE's per-size slots cost little.
MIN_SIZES = 3
# A loop reads the sub-DNN's weights once per sample, and a sample's matmuls have a sample's
# rows only; past a last-level cache's worth of weights that costs more than IREE's dynamic
# packing: an early-exit ResNet-50 (94 MiB of weights) at 224x224 ran batch 4 in 4x the time
# of batch 1, its last stage's 1x1 convolutions on 49 rows a sample.
MAX_WEIGHT_BYTES = 8 << 20

_CASTS = {"torch.tensor_static_info_cast", "torch.aten.contiguous", "torch.aten.clone",
          "torch.aten.detach"}
# Ops whose result's sample i reads sample i of operand 0 alone.
_PER_SAMPLE = CONVOLUTIONS | POOLS | {"torch.aten.adaptive_avg_pool2d", "torch.aten.linear"}


def _batched_type(t: ir.Type) -> bool:
    """A `!torch.vtensor` whose only dynamic dim is dim 0 (and which has a builtin type)."""
    dims = type_dims(t)
    return bool(dims) and dims[0] is None and None not in dims[1:] \
        and builtin_type(t, dynamic=True) is not None


def _dims_of(op: ir.Operation, index: int, rank: int) -> list[int] | None:
    """The constant dim list (or single dim) operand `index` of `op`, normalized to `rank`."""
    value = op.operands[index]
    dims = constant_int_list(value)
    if dims is None:
        single = constant_int(value)
        dims = None if single is None else [single]
    return None if dims is None else [d % rank for d in dims]


class _Batch:
    """Which values of a sub-DNN depend on its arguments, and whether every op on them keeps
    the samples apart."""

    def __init__(self, func: ir.Operation):
        self.block = func.regions[0].blocks[0]
        self.batched: set = set()
        self.batch_sizes: set = set()   # `aten.size.int` results of dim 0 of a batched value
        self.batch_shapes: set = set()  # shape lists led by a batch size

    def symbol(self) -> str | None:
        """The symbol bound to dim 0 of every argument, if one is."""
        names = set()
        for arg in self.block.arguments:
            if not _batched_type(arg.type):
                return None
            binds = [u.owner for u in arg.uses if u.owner.name == BIND]
            found = {_dim0_symbol(b) for b in binds}
            if len(found) != 1 or None in found:
                return None
            names |= found
        return names.pop() if len(names) == 1 else None

    def parallel(self) -> bool:
        self.batched = set(self.block.arguments)
        for op in self.block.operations:
            op = op.operation
            if op.name == "func.return":
                return all(v in self.batched and _batched_type(v.type) for v in op.operands)
            reads = [v for v in op.operands
                     if v in self.batched or v in self.batch_sizes or v in self.batch_shapes]
            if not reads or op.name == BIND:
                continue
            if op.regions or not self._keeps_samples_apart(op, reads):
                return False
            if op.name not in ("torch.aten.size.int", "torch.prim.ListConstruct"):
                self.batched.update(op.results)
        return False

    def _keeps_samples_apart(self, op: ir.Operation, reads: list[ir.Value]) -> bool:
        name = op.name
        if name == "torch.aten.size.int":
            dim = constant_int(op.operands[1])
            if dim is None:
                return False
            if dim % len(type_dims(op.operands[0].type)) == 0:
                self.batch_sizes.add(op.result)
            return True
        if name == "torch.prim.ListConstruct":
            # The shape of views/reshapes only, led by the batch size (the per-sample 1).
            if op.operands[0] not in self.batch_sizes or reads != [op.operands[0]] \
                    or not all(u.owner.name in RESHAPES and u.operand_number == 1
                               for u in op.result.uses):
                return False
            self.batch_shapes.add(op.result)
            return True
        if len(op.results) != 1 or not _batched_type(op.result.type):
            return False
        rank = len(type_dims(op.result.type))
        if name in ELEMENTWISE:
            return all(len(type_dims(v.type) or ()) == rank for v in reads)
        if name in _PER_SAMPLE or name in _CASTS:
            return reads == [op.operands[0]]
        if name in RESHAPES:
            return reads == [op.operands[0], op.operands[1]] and op.operands[1] in self.batch_shapes
        if name in REDUCTIONS:
            dims = _dims_of(op, 1, len(type_dims(op.operands[0].type)))
            return reads == [op.operands[0]] and dims is not None and 0 not in dims
        if name == "torch.aten.permute":
            dims = _dims_of(op, 1, rank)
            return reads == [op.operands[0]] and dims is not None and dims[0] == 0
        if name == "torch.aten.flatten.using_ints":
            start = constant_int(op.operands[1])
            rank_in = len(type_dims(op.operands[0].type))
            return reads == [op.operands[0]] and start is not None and start % rank_in != 0
        return False

    def distinct_sizes(self) -> int:
        """How many distinct per-sample byte sizes the batched tensors ops make have."""
        return len({math.prod(type_dims(v.type)[1:]) * element_bytes(v.type)
                    for v in self.batched
                    if not isinstance(v, ir.BlockArgument) and _batched_type(v.type)})


def _dim0_symbol(bind: ir.Operation) -> str | None:
    dims = bound_dims(bind)
    if not dims or not dims[0].is_Symbol:
        return None
    return str(dims[0])


def per_sample_type(t: ir.Type) -> ir.Type:
    """`!torch.vtensor` `t` (batched) with dim 0 = 1."""
    return static_type(t, (1, *type_dims(t)[1:]))


def make_per_sample(func: ir.Operation, symbol: str, batched: set) -> None:
    """Give `func`'s arguments, results and every `batched` value in its body dim 0 = 1, and
    bind `symbol` to 1 in its body.

    The whole body becomes static, not only its arguments (read through casts back to the
    dynamic types): torch-mlir folds a dim through such a cast and then builds ops whose
    types disagree (a permute's init static, its input dynamic: "'linalg.transpose' op
    dim(result, 0) = 1 doesn't match dim(input, permutation[0])"), which failed the strided
    blocks of a ResNet once `dync-im2col` permuted values read from the arguments."""
    block = func.regions[0].blocks[0]
    for value in batched:
        if _batched_type(value.type):
            value.set_type(per_sample_type(value.type))
    types = [arg.type for arg in block.arguments]
    for op in list(block.operations):
        if op.operation.name == BIND:
            specialize_binding(op.operation, {symbol: 1})
    for op in list(block.operations):
        op = op.operation
        if op.name == "torch.symbolic_int" and ir.StringAttr(
                op.attributes["symbol_name"]).value == symbol and not list(op.result.uses):
            op.erase()
    ret = next(op.operation for op in block.operations if op.operation.name == "func.return")
    results = [value.type for value in ret.operands]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, results))


def loop_call(call: ir.Operation) -> None:
    """Replace `call` (of a per-sample sub-DNN, with full-batch operands) by an `scf.while`
    over the batch."""
    loc, ip = call.location, ir.InsertionPoint(call)
    index = ir.IndexType.get()
    zero = create("arith.constant", index, ip, loc, value=ir.IntegerAttr.get(index, 0))
    one = create("arith.constant", index, ip, loc, value=ir.IntegerAttr.get(index, 1))
    full = [create("torch_c.to_builtin_tensor", builtin_type(v.type, dynamic=True), ip, loc,
                   operands=[v]) for v in call.operands]
    count = create("tensor.dim", index, ip, loc, operands=[full[0], zero])
    inits = [create("tensor.empty", builtin_type(r.type, dynamic=True), ip, loc,
                    operands=[count]) for r in call.results]
    carried = [index] + [v.type for v in inits]
    loop = ir.Operation.create("scf.while", results=carried, operands=[zero] + inits,
                               regions=2, loc=loc, ip=ip)
    before = loop.regions[0].blocks.append(*carried, arg_locs=[loc] * len(carried))
    bip = ir.InsertionPoint(before)
    more = create("arith.cmpi", ir.IntegerType.get_signless(1), bip, loc,
                  operands=[before.arguments[0], count],
                  predicate=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 2))  # slt
    ir.Operation.create("scf.condition", operands=[more] + list(before.arguments), loc=loc,
                        ip=bip)
    after = loop.regions[1].blocks.append(*carried, arg_locs=[loc] * len(carried))
    aip = ir.InsertionPoint(after)
    i = after.arguments[0]
    samples = []
    for value, whole in zip(call.operands, full, strict=True):
        sample = per_sample_type(value.type)
        piece = _slice("tensor.extract_slice", builtin_type(sample), [whole], i, aip, loc)
        samples.append(create("torch_c.from_builtin_tensor", sample, aip, loc,
                              operands=[piece]))
    inner = ir.Operation.create("func.call", results=[per_sample_type(r.type)
                                                      for r in call.results],
                                operands=samples,
                                attributes={"callee": call.attributes["callee"]},
                                loc=loc, ip=aip)
    rows = []
    for result, acc in zip(inner.results, after.arguments[1:], strict=True):
        row = create("torch_c.to_builtin_tensor", builtin_type(result.type), aip, loc,
                     operands=[result])
        rows.append(_slice("tensor.insert_slice", acc.type, [row, acc], i, aip, loc))
    step = create("arith.addi", index, aip, loc, operands=[i, one])
    ir.Operation.create("scf.yield", operands=[step] + rows, loc=loc, ip=aip)
    after_ip = ir.InsertionPoint(call)
    for result, out in zip(call.results, list(loop.results)[1:], strict=True):
        back = create("torch_c.from_builtin_tensor", result.type, after_ip, loc, operands=[out])
        result.replace_all_uses_with(back)
    call.erase()


def _slice(name: str, result: ir.Type, operands: list[ir.Value], i: ir.Value, ip,
           loc) -> ir.Value:
    """`tensor.extract_slice`/`insert_slice` of row `i` (dim 0); `operands`' first is the
    one-sample tensor for an insert, the result is for an extract."""
    dims = type_dims(operands[0].type if name == "tensor.insert_slice" else result)
    return create(name, result, ip, loc, operands=[*operands, i],
                  static_offsets=ir.DenseI64ArrayAttr.get(
                      [ir.ShapedType.get_dynamic_size()] + [0] * (len(dims) - 1)),
                  static_sizes=ir.DenseI64ArrayAttr.get(list(dims)),
                  static_strides=ir.DenseI64ArrayAttr.get([1] * len(dims)),
                  operandSegmentSizes=ir.DenseI32ArrayAttr.get(
                      [1] * len(operands) + [1, 0, 0]))


def _weight_bytes(func: ir.Operation) -> int:
    """Bytes of the literals `func` reads (its weights)."""
    return sum(math.prod(type_dims(op.results[0].type) or ()) * element_bytes(op.results[0].type)
               for op in nested_ops(func) if op.name == LITERAL)


def batch_parallel(func: ir.Operation) -> tuple[str, set] | None:
    """The batch symbol of sub-DNN `func` and the values that carry the batch, if it is
    batch-parallel and worth a loop."""
    batch = _Batch(func)
    symbol = batch.symbol()
    if symbol is None or not batch.parallel() or batch.distinct_sizes() < MIN_SIZES \
            or _weight_bytes(func) > MAX_WEIGHT_BYTES:
        return None
    return symbol, batch.batched


def _replace_records(module: ir.Operation, looped: dict[str, str]) -> None:
    records = []
    for record in ir.ArrayAttr(module.attributes[SUBDNNS_ATTR]):
        record = ir.DictAttr(record)
        name = ir.StringAttr(record["name"]).value
        entries = {n.name: n.attr for n in record}
        if name in looped:
            entries[PER_SAMPLE] = ir.StringAttr.get(looped[name])
        records.append(ir.DictAttr.get(entries))
    module.attributes[SUBDNNS_ATTR] = ir.ArrayAttr.get(records)


class LoopBatch(Pass):
    name = "dync-loop-batch"
    summary = ("run batch-parallel sub-DNNs one sample at a time where IREE packs their "
               "dynamic-batch buffers poorly")

    def run(self, module: ir.Operation) -> None:
        # Loaded before any op is built by name: an op of a dialect IREE's context has not
        # loaded yet is built without its properties, and IREE crashes on it.
        for dialect in ("arith", "tensor", "scf"):
            module.context.dialects[dialect]
        funcs = functions(module)
        sites = call_sites(module)
        looped: dict[str, str] = {}
        for record in read_subdnns(module):
            name = record["name"]
            func = funcs.get(name)
            if func is None or not func.regions[0].blocks or not sites.get(name):
                continue
            found = batch_parallel(func)
            if found is None:
                continue
            symbol, batched = found
            make_per_sample(func, symbol, batched)
            for call in sites[name]:
                loop_call(call)
            looped[name] = symbol
        if looped:
            _replace_records(module, looped)
