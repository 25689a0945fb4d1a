"""`dync-bucket`: padded static versions of the entry function for ranges of its dynamic dims.

Shape-bucketed kernels (DESIGN.md's Nimble line; Nimble itself dispatches on residues,
digest-nimble-dali.md A.7), the way ECOSYSTEM.md's gap list has it: one static copy of the
program per bucket, the smallest bucket holding a call chosen on the host and the input
zero-padded up to it (MIGraphX's `bucket_by_optimals` does the same) inside the copy, so
that IREE plans static tiles and buffers for a whole range of sizes instead of one
(`dync-specialize`) or none (the dynamic entry). Padding is only sound as far as the padded rows cannot reach the
true ones, so the copy keeps the padding exactly as long as every op provably leaves the
valid region as it was, and crops back to the true size (a slice) before any other use:

* elementwise ops (`op_kinds.ELEMENTWISE`) whose other tensor operands are padded alike or
  broadcast along the padded axes, and `torch.aten.batch_norm` in inference, keep it (the
  padded tail holds garbage from then on);
* convolutions and max/average pools keep it along spatial axes when their last valid
  output reads no padded row: ``(E'-1)*stride - pad + dilation*(k-1) <= E-1`` for every
  value of the symbols in the bucket (E, E' the true input and output extents, from the
  `torch.bind_symbolic_shape` facts), or, for a convolution, when its input is an argument,
  whose tail is zeros just like the convolution's own padding; along the batch axis always;
* `torch.aten.size.int` of a padded axis reads the true size instead;
* anything else (reductions, reshapes, indexing, calls, regions, returns) gets the crop.

Reads: the module attribute ``dync.bucket``, a list of buckets, each a dictionary {symbol:
largest value} over ``dync.symbols`` (put there by `dync.compile(..., buckets=...)`); the
entry function (``dync.entry``) with its ``dync.shape`` argument attributes and its bindings.

Writes, per bucket: a public copy of the entry named ``<entry>__bucket__<symbol>_<value>...``
carrying ``dync.bucket`` = {symbol: value} and ``dync.sizes`` = the names of the symbols its
extra arguments give; its arguments are the entry's, followed by one
``!torch.vtensor<[],si64>`` per symbol of ``dync.sizes`` holding that symbol's true value.
At the top, after the arguments' bindings (torch-mlir reads an argument after its binding),
each argument with a dim over the bucket's symbols is zero-padded at the end of those dims
to the bucket's values (`torch.aten.constant_pad_nd` to a static type) through a
``util.optimization_barrier``, and the body reads the padded value; its crop is the argument
itself. Padding in the module, not on the host: IREE reads the argument into the NHWC copy
it makes for a first convolution anyway, and `dync-patch-stages` gathers strips from the
unpadded argument, so the padded image need not exist at all (yolo_nms at 224x320, bucket
256x320: peak 1962 -> 1008 KiB, eager 1120; the host's padded copy was 964 KiB of it).
Where a padded argument would keep a dynamic dim (a bucket over some of its dynamic dims),
IREE 3.13 can neither take a barrier on it ("'tensor.dim' op unexpected during shape
cleanup") nor, without one, convert the pad it folds into the convolution's own to NHWC; that
version takes the argument static at the bucket's sizes, as padded by the runtime
(`dync.runtime.versions`), and carries ``dync.host_padding``. Bindings of padded values are
dropped; each crop is bound to the value's original dims. Removes ``dync.bucket``. Inputs
beyond every bucket run the dynamic entry.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from iree.compiler import ir

from ..analysis.layout import maybe_transposed
from ..analysis.op_facts import window
from ..analysis.op_kinds import BATCH_NORMS, CONVOLUTIONS, ELEMENTWISE, POOLS
from ..dialects import dync_ir
from ..dialects.attributes import BUCKET_ATTR, HOST_PADDING_ATTR, SIZES_ATTR
from ..dialects.symbolic import (
    bound_dims,
    declarations_first,
    is_tensor,
    nonpositive_at_each,
    parse_dim,
    to_affine,
    type_dims,
)
from ..dialects.torch_ops import (
    BIND,
    builtin_type,
    constant_int,
    constant_int_list,
    create,
    defining,
    float_constant,
    int_constant,
    int_expression,
    through_barrier,
)
from ..dialects.versions import (
    check_request,
    read_requests,
    requested_entry,
    static_copy,
    static_type,
)
from ..dialects.walk import functions
from .pipeline import Pass, PassFailure

_ENUMERATE = 4096  # symbol assignments a window check tries one by one; beyond, it crops


def bucket_name(entry: str, values: dict[str, int]) -> str:
    return entry + "__bucket" + "".join(f"__{n}_{v}" for n, v in sorted(values.items()))


def read_buckets(module: ir.Operation) -> list[dict]:
    """{"function", "symbols": {name: bucket value}, "sizes": [symbol, ...]} of each bucket
    version in `module`, with "host_padding": True where the caller pads the arguments."""
    return [{"function": name,
             "symbols": dync_ir.to_python(func.attributes[BUCKET_ATTR]),
             "sizes": dync_ir.to_python(func.attributes[SIZES_ATTR]),
             **({"host_padding": True} if HOST_PADDING_ATTR in func.attributes else {})}
            for name, func in functions(module).items() if SIZES_ATTR in func.attributes]


@dataclass(frozen=True)
class Padded:
    """A value padded along some axes: per axis, its true extent (over the symbols) and its
    padded one; `zero_tail` while the padding is still the runtime's zeros."""

    axes: dict[int, tuple[sympy.Expr, int]]
    zero_tail: bool = False


class _Version:
    """The rewrite of one bucket copy."""

    def __init__(self, func: ir.Operation, values: dict[str, int], ranges: dict):
        self.func = func
        self.block = func.regions[0].blocks[0]
        # In this copy a bucketed symbol ranges up to its bucket.
        self.ranges = {n: (lo, min(hi, values.get(n, hi))) for n, (lo, hi) in ranges.items()}
        self.padded: dict[ir.Value, Padded] = {}
        self.facts: dict[ir.Value, tuple[sympy.Expr, ...]] = {}
        self.symbols: dict[str, ir.Value] = {}  # symbol -> its torch.symbolic_int
        self.sizes: dict[str, ir.Value] = {}  # symbol -> its true value, a !torch.int
        self.ints: dict[sympy.Expr, ir.Value] = {}
        self.crops: dict[ir.Value, ir.Value] = {}
        self.top = None  # the first op of the original body: sizes and argument crops go before it
        self.dynamic_types: dict[ir.Value, ir.Type] = {}  # padded values: their types in the entry

    # -- the extra arguments: true sizes ---------------------------------------------------
    def add_size_arguments(self, names: list[str]) -> None:
        loc = self.func.location
        scalar = ir.Type.parse("!torch.vtensor<[],si64>")
        for name in names:
            arg = self.block.add_argument(scalar, loc)
            self.sizes[name] = create("torch.aten.item", "!torch.int", ir.InsertionPoint(self.top),
                                      loc, operands=[arg])
        attrs = list(ir.ArrayAttr(self.func.attributes["arg_attrs"]))
        self.func.attributes["arg_attrs"] = ir.ArrayAttr.get(
            attrs + [ir.DictAttr.get({dync_ir.SHAPE_ATTR: dync_ir.shape_attr(())})] * len(names))
        old = ir.FunctionType(ir.TypeAttr(self.func.attributes["function_type"]).value)
        self.func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            list(old.inputs) + [scalar] * len(names), list(old.results)))
        self.func.attributes[SIZES_ATTR] = ir.ArrayAttr.get(
            [ir.StringAttr.get(n) for n in names])

    def int_value(self, expr: sympy.Expr) -> ir.Value:
        """`expr` over the symbols as a !torch.int computed from the size arguments."""
        value = int_expression(expr, self._true_size, ir.InsertionPoint(self.top),
                               self.func.location, self.ints)
        if value is None:
            raise PassFailure(f"cannot compute {expr} as a size")
        return value

    def _true_size(self, name: str) -> ir.Value:
        if name not in self.sizes:
            raise PassFailure(f"no true size of {name} to crop to")
        return self.sizes[name]

    def pad_argument(self, arg: ir.Value, axes: dict[int, tuple[sympy.Expr, int]]) -> None:
        """Zero-pad `arg` at the top to its bucket's extents along `axes` ({axis: (true
        extent, padded extent)}); the body reads the padded value, a crop of it is `arg`."""
        ip, loc = ir.InsertionPoint(self.top), self.func.location
        # torch-mlir rewrites the argument's uses to those after its binding: bind it first.
        first = declarations_first(self.block)
        for use in list(arg.uses):
            if use.owner.operation.name == BIND and use.owner.operation != first:
                use.owner.operation.move_before(first)
        rank = len(type_dims(arg.type))
        widths = []
        for axis in range(rank - 1, min(axes) - 1, -1):
            widths.append(int_constant(0, ip, loc))
            widths.append(self.int_value(axes[axis][1] - axes[axis][0]) if axis in axes
                          else int_constant(0, ip, loc))
        widths = create("torch.prim.ListConstruct", "!torch.list<int>", ip, loc,
                        operands=widths)
        padded = Padded(axes, zero_tail=True)
        pad = padded_through_barrier(arg, widths, padded_type(arg.type, padded), ip, loc)
        for use in list(arg.uses):
            user = use.owner.operation
            if user != pad.owner.operation and user.name not in (BIND, "torch.aten.size.int"):
                user.operands[use.operand_number] = pad
        self.padded[pad] = padded
        self.dynamic_types[pad] = arg.type
        self.crops[pad] = arg

    # -- the analysis ----------------------------------------------------------------------
    def read_facts(self) -> None:
        for op in list(self.block.operations):
            op = op.operation
            if op.name == "torch.symbolic_int":
                self.symbols[ir.StringAttr(op.attributes["symbol_name"]).value] = op.result
            elif op.name == BIND:
                self.facts[op.operands[0]] = bound_dims(op)

    def holds(self, expr: sympy.Expr) -> bool:
        """Whether `expr <= 0` for every value of its symbols in this bucket."""
        return nonpositive_at_each(expr, self.ranges, _ENUMERATE)

    def result_padding(self, op: ir.Operation) -> Padded | None:
        """The padding of `op`'s one result if `op` keeps its operands' padding valid."""
        name = op.name
        if len(op.results) != 1 and name not in BATCH_NORMS:
            return None
        if name in ELEMENTWISE:
            return self._elementwise(op)
        if name in BATCH_NORMS:
            return self._batch_norm(op)
        if name in CONVOLUTIONS:
            return self._window(op, conv=True)
        if name in POOLS:
            return self._window(op, conv=False)
        return None

    def _elementwise(self, op: ir.Operation) -> Padded | None:
        rank = len(type_dims(op.results[0].type) or ())
        axes: dict[int, tuple[sympy.Expr, int]] = {}
        tensors = [v for v in op.operands if is_tensor(v.type)]
        for value in tensors:
            for axis, extent in self.padded.get(value, Padded({})).axes.items():
                out = axis + rank - len(type_dims(value.type))
                if axes.setdefault(out, extent) != extent:
                    return None
        for value in tensors:
            dims = type_dims(value.type)
            mine = self.padded.get(value, Padded({})).axes
            for out, extent in axes.items():
                axis = out - rank + len(dims)
                if axis >= 0 and mine.get(axis) != extent and dims[axis] != 1:
                    return None
        return Padded(axes)

    def _batch_norm(self, op: ir.Operation) -> Padded | None:
        source = self.padded.get(op.operands[0])
        training = defining(op.operands[5], "torch.constant.bool") \
            if op.name == "torch.aten.batch_norm" else None
        if source is None or 1 in source.axes or any(v in self.padded for v in op.operands[1:]):
            return None
        if training is not None and ir.BoolAttr(training.attributes["value"]).value:
            return None
        return Padded(source.axes)

    def _window(self, op: ir.Operation, conv: bool) -> Padded | None:
        operands = list(op.operands)
        source = self.padded.get(operands[0])
        if source is None or any(v in self.padded for v in operands[1:]) or 1 in source.axes:
            return None
        facts = window(op.name)
        stride, padding = (constant_int_list(operands[i]) for i in (facts.stride, facts.padding))
        dilation = [1] if facts.dilation is None else constant_int_list(operands[facts.dilation])
        if conv:
            if maybe_transposed(op):
                return None
            spatial = len(type_dims(operands[0].type)) - 2
            kernel = (type_dims(operands[1].type) or ())[2:]
        else:
            spatial = facts.spatial
            kernel = constant_int_list(operands[1])
            ceil_mode = defining(operands[facts.ceil_mode], "torch.constant.bool")
            if ceil_mode is None or ir.BoolAttr(ceil_mode.attributes["value"]).value:
                return None
            if not stride:
                stride = kernel
        params = [kernel, stride, padding, dilation]
        if any(p is None or len(p) == 0 for p in params) or None in kernel:
            return None
        params = [list(p) * spatial if len(p) == 1 else list(p) for p in params]
        out_dims = self.facts.get(op.result)
        axes = {}
        for axis, (true, size) in source.axes.items():
            if axis == 0:
                axes[0] = (true, size)
                continue
            if out_dims is None:
                return None
            k, s, p, d = (q[axis - 2] for q in params)
            out_true = out_dims[axis]
            out_size = (size + 2 * p - d * (k - 1) - 1) // s + 1
            last_read = (out_true - 1) * s - p + d * (k - 1)
            reads_tail = not self.holds(last_read - (true - 1))
            if reads_tail and not (conv and source.zero_tail):
                return None
            if not self.holds(out_true - out_size):
                return None
            axes[axis] = (out_true, out_size)
        return Padded(axes)

    def crop(self, value: ir.Value) -> ir.Value:
        """`value` sliced back to its true extent along each padded axis (made once)."""
        if value in self.crops:
            return self.crops[value]
        loc = self.func.location
        sized = [(axis, self.int_value(true)) for axis, (true, _) in
                 sorted(self.padded[value].axes.items())]
        ip = ir.InsertionPoint(self.top) if isinstance(value.owner, ir.Block) \
            else ir.InsertionPoint.after(value.owner.operation)
        dynamic = self.dynamic_types[value]
        cropped = value
        for axis, end in sized:
            cropped = create("torch.aten.slice.Tensor", dynamic, ip, loc, operands=[
                cropped, int_constant(axis, ip, loc), int_constant(0, ip, loc), end,
                int_constant(1, ip, loc)])
        if value in self.facts:
            self._bind(cropped, self.facts[value], ip)
        self.crops[value] = cropped
        return cropped

    def _bind(self, value: ir.Value, dims: tuple[sympy.Expr, ...], ip: ir.InsertionPoint) -> None:
        names = sorted({s.name for d in dims for s in d.free_symbols})
        if any(n not in self.symbols for n in names):
            return
        exprs = [to_affine(d, names) for d in dims]
        if any(e is None for e in exprs):
            return
        ir.Operation.create(BIND, operands=[value] + [self.symbols[n] for n in names],
                            attributes={"shape_expressions": ir.AffineMapAttr.get(
                                ir.AffineMap.get(0, len(names), exprs))},
                            loc=self.func.location, ip=ip)

    def rewrite(self) -> None:
        """Propagate the padding through the ops that keep it; crop before every other use."""
        kept: set[ir.Operation] = set()
        for op in list(self.block.operations):
            op = op.operation
            if op.name != BIND and any(v in self.padded for v in op.operands):
                padding = self.result_padding(op)
                if padding is not None:
                    result = op.results[0]
                    self.padded[result] = padding
                    self.dynamic_types[result] = result.type
                    result.set_type(padded_type(result.type, padding))
                    kept.add(op)
        for value in list(self.padded):
            for use in list(value.uses):
                user, index = use.owner.operation, use.operand_number
                if user in kept:
                    continue
                if user.name == BIND:
                    user.erase()
                elif user.name == "torch.aten.size.int" and \
                        (axis := _axis(user, value)) in self.padded[value].axes:
                    user.result.replace_all_uses_with(
                        self.int_value(self.padded[value].axes[axis][0]))
                    user.erase()
                else:
                    user.operands[index] = self.crop(value)


def padded_through_barrier(value: ir.Value, widths: ir.Value, result: ir.Type, ip,
                           loc) -> ir.Value:
    """`value` zero-padded by `widths` (a `constant_pad_nd` list) to the static `result`,
    through a barrier. Without it IREE 3.13 folds the pad into the next convolution's own
    padding, and its NHWC conversion then fails on the folded pad's dynamic type
    ("'tensor.collapse_shape' op expected dimension 1 of collapsed type to be dynamic")."""
    zero = float_constant(0.0, ip, loc)
    pad = create("torch.aten.constant_pad_nd", result, ip, loc, operands=[value, widths, zero])
    return through_barrier(pad, ip, loc)


def padded_type(old: ir.Type, padding: Padded) -> ir.Type:
    """`old` with the padded axes static at their padded extents."""
    rank = len(type_dims(old) or ())
    return static_type(old, tuple(padding.axes[a][1] if a in padding.axes else "?"
                                   for a in range(rank)))


def _axis(size: ir.Operation, value: ir.Value) -> int | None:
    axis = constant_int(size.operands[1])
    rank = len(type_dims(value.type) or ())
    return None if axis is None else axis % rank if rank else None


class Bucket(Pass):
    name = "dync-bucket"
    summary = "zero-padded static copies of the entry function for buckets of its dynamic dims"

    def run(self, module: ir.Operation) -> None:
        requests = read_requests(module, BUCKET_ATTR)
        if not requests:
            return
        entry = requested_entry(module)
        symbols = dync_ir.read_symbols(module)
        ranges = {n: (s.min, s.max) for n, s in symbols.items()}
        entry_name = ir.StringAttr(entry.attributes["sym_name"]).value
        existing = set(functions(module))
        for values in requests:
            check_request(values, symbols, "bucket")
            name = bucket_name(entry_name, values)
            if not values or name in existing:
                continue
            existing.add(name)
            self._make(module, entry, name, values, ranges)

    @staticmethod
    def _make(module: ir.Operation, entry: ir.Operation, name: str, values: dict[str, int],
              ranges: dict) -> None:
        # The padded arguments are used at their static type (no cast back): the ops that keep
        # the padding get static result types, which torch-to-linalg needs to agree.
        func, dynamic_types = static_copy(entry, name, BUCKET_ATTR, values, cast_back=False)
        version = _Version(func, values, ranges)
        # (Not a binding or a size: the rewrite may erase those.)
        version.top = next(op.operation for op in version.block.operations
                           if op.operation.name not in ("torch.symbolic_int", BIND,
                                                        "torch.aten.size.int"))
        arg_attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
        entry_attrs = list(ir.ArrayAttr(entry.attributes["arg_attrs"]))
        sizes: set[str] = set()
        padding = {}
        for index in dynamic_types:
            true = dync_ir.read_shape(ir.DictAttr(entry_attrs[index])[dync_ir.SHAPE_ATTR])
            padded = dync_ir.read_shape(ir.DictAttr(arg_attrs[index])[dync_ir.SHAPE_ATTR])
            padding[index] = {axis: (parse_dim(t) if isinstance(t, str) else sympy.Integer(t), p)
                              for axis, (t, p) in enumerate(zip(true, padded, strict=True))
                              if isinstance(p, int) and not isinstance(t, int)}
            sizes |= {s.name for t in true if isinstance(t, str) for s in parse_dim(t).free_symbols}
        # The version takes the arguments at their true sizes, as the entry does, and pads
        # them itself: IREE reads the argument once, into the padded (NHWC) copy it makes for
        # the first convolution anyway, or strip by strip (dync-patch-stages), where a copy
        # padded on the host would be one more whole activation. Not where a padded argument
        # keeps a dynamic dim: IREE 3.13 can neither take a barrier on it nor convert the pad
        # it would fold into the convolution's own to NHWC. The runtime pads those.
        in_module = all(builtin_type(version.block.arguments[i].type) is not None
                        for i in padding)
        if in_module:
            _restore_arguments(func, entry, dynamic_types)
        else:
            func.attributes[HOST_PADDING_ATTR] = ir.UnitAttr.get()
        version.read_facts()
        version.add_size_arguments(sorted(sizes))
        for index, axes in padding.items():
            arg = version.block.arguments[index]
            if in_module:
                version.pad_argument(arg, axes)
            else:
                version.padded[arg] = Padded(axes, zero_tail=True)
                version.dynamic_types[arg] = dynamic_types[index]
        version.rewrite()
        module.regions[0].blocks[0].append(func)


def _restore_arguments(func: ir.Operation, entry: ir.Operation,
                       dynamic_types: dict[int, ir.Type]) -> None:
    """`func`'s arguments `static_copy` made static back at the entry's types and shapes."""
    block = func.regions[0].blocks[0]
    attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
    entry_attrs = list(ir.ArrayAttr(entry.attributes["arg_attrs"]))
    for index, dynamic in dynamic_types.items():
        block.arguments[index].set_type(dynamic)
        attrs[index] = entry_attrs[index]
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], list(old.results)))

