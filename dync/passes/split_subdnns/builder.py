"""Outlining one block's sub-DNNs: the `_Builder` that grows each run of tensor ops into a private
function, passing constants and bindings in, and replaces the run by a call.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from iree.compiler import ir

from ...analysis.op_kinds import CONSTANT_OPS
from ...dialects.walk import callee, nested_ops

if TYPE_CHECKING:
    from . import _Splitter


_IDENTITY_OPS = {
    "torch.aten.clone",
    "torch.aten.detach",
    "torch.aten.alias",
    "torch.aten.contiguous",
    "torch.aten.lift_fresh_copy",
}


# Types a call may carry: tensors and the scalars torch-mlir's backend type conversion maps.
_PASSABLE = re.compile(r"^(!torch\.(vtensor|int|float|bool)\b|tensor<|i\d+$|f\d+$|index$)")


class _CannotOutline(Exception):
    """A run that this pass leaves in the skeleton."""


def _is_block_arg(value: ir.Value) -> bool:
    return isinstance(value.owner, ir.Block)


def _ops(block: ir.Block) -> list[ir.Operation]:
    # Always plain Operations: an OpView's `name` may be a property of the op (func.func).
    return [op.operation for op in block.operations]


def _is_constant(op: ir.Operation) -> bool:
    name = op.name
    if name in CONSTANT_OPS:
        return True
    if name == "torch.prim.ListConstruct":
        return all(_defined_by_constant(v) for v in op.operands)
    return False


def _defined_by_constant(value: ir.Value) -> bool:
    return not _is_block_arg(value) and _is_constant(value.owner.operation)


def _passable(ty: ir.Type) -> bool:
    return bool(_PASSABLE.match(str(ty)))


def _bindings_only(value: ir.Value) -> list[ir.Operation] | None:
    """The shape bindings of `value` when nothing else uses it, else None."""
    binds = []
    for use in value.uses:
        owner = use.owner.operation
        if owner.name != "torch.bind_symbolic_shape" or use.operand_number != 0:
            return None
        binds.append(owner)
    return binds


def _erase_dead(block: ir.Block) -> None:
    """Erase ops whose results only feed shape bindings (and those bindings), last first."""
    for op in reversed(_ops(block)):
        if not len(op.results):
            continue
        binds = [_bindings_only(r) for r in op.results]
        if all(b is not None for b in binds):
            for bind in (b for bs in binds for b in bs):
                bind.erase()
            op.erase()


def _leaves_region(value: ir.Value) -> bool:
    """Whether `value` is yielded out of an scf region (directly or through a torch_c cast).
    Such copies stay in the sub-DNN: IREE 3.13 fails at run time ("indirect buffer reference
    slot 0 is out range of the declared binding capacity") on an `scf.if` whose branch yields
    a buffer defined outside it while the other branch computes its own."""
    for use in value.uses:
        owner = use.owner.operation
        if owner.name in ("scf.yield", "scf.condition"):
            return True
        if owner.name == "torch_c.to_builtin_tensor" and _leaves_region(owner.results[0]):
            return True
    return False


def _clone_constant(op: ir.Operation, ip: ir.InsertionPoint) -> ir.Value:
    """Clone constant `op` (with its constant operands) at `ip`."""
    return _clone_with(op, [_clone_constant(v.owner.operation, ip) for v in op.operands], ip)


def _clone_with(op: ir.Operation, operands: list[ir.Value], ip: ir.InsertionPoint) -> ir.Value:
    """Clone single-result `op` at `ip` with new operands."""
    new = op.clone(ip=ip)
    for i, v in enumerate(operands):
        new.operands[i] = v
    return new.result


def _erase_dead_constants(func: ir.Operation) -> None:
    """Erase the constants of `func` left without uses (users before their operands)."""
    for op in reversed(nested_ops(func)):
        if _is_constant(op) and not any(list(r.uses) for r in op.results):
            op.erase()


class _Builder:
    """Builds one sub-DNN from a run: clones the ops, tracks the liveness of their values."""

    def __init__(self, splitter: _Splitter, block: ir.Block):
        self.splitter = splitter
        self.block = block
        self.end = ir.InsertionPoint(block)
        self.map: dict[ir.Value, ir.Value] = {}  # skeleton/callee value -> sub-DNN value
        self.origin: dict[ir.Value, ir.Operation] = {}  # sub-DNN value -> op it was cloned from
        self.args: list[ir.Value] = []  # the skeleton value passed for each argument
        self.symbols: dict[str, ir.Value] = {}
        self.last_symbol: ir.Operation | None = None
        self.moved: list[ir.Operation] = []  # skeleton ops that move into the sub-DNN
        self.defined: set[ir.Value] = set()  # skeleton values they define
        self.results: list[ir.Value] = []  # sub-DNN values returned
        self.live_out: list[tuple[ir.Value, tuple]] = []  # skeleton value, how to rebuild it

    # --- building --------------------------------------------------------------------

    def build(self, run: list[ir.Operation]) -> None:
        for op in run:
            if _is_constant(op) or op.name == "torch.symbolic_int":
                continue  # cloned where used
            if op.name == "torch.bind_symbolic_shape" and op.operands[0] not in self.defined:
                continue  # binds a skeleton value: stays, and is repeated for an argument
            self.emit(op)
            self.moved.append(op)
            self.defined.update(op.results)

    def emit(self, op: ir.Operation) -> None:
        if op.name == "func.call":
            self.inline(op)
            return
        operands = [self.lookup(v) for v in op.operands]
        new = op.clone(ip=self.end)
        for i, v in enumerate(operands):
            new.operands[i] = v
        for old, r in zip(op.results, new.results, strict=True):
            self.map[old] = r
            self.origin[r] = op

    def inline(self, call: ir.Operation) -> None:
        name = callee(call)
        body = self.splitter.funcs[name].regions[0].blocks[0]
        for formal, actual in zip(body.arguments, call.operands, strict=True):
            self.map[formal] = self.lookup(actual)
        ops = _ops(body)
        for inner in ops[:-1]:
            if not (_is_constant(inner) or inner.name == "torch.symbolic_int"):
                self.emit(inner)
        for old, returned in zip(call.results, ops[-1].operands, strict=True):
            self.map[old] = self.lookup(returned)
        self.splitter.inlined.add(name)

    def lookup(self, value: ir.Value) -> ir.Value:
        if value in self.map:
            return self.map[value]
        if not _is_block_arg(value):
            op = value.owner.operation
            if op.name == "torch.symbolic_int":
                return self._symbol(op)
            if _is_constant(op) or (op.name == "torch.prim.ListConstruct"
                                    and not _passable(value.type)):
                new = _clone_with(op, [self.lookup(v) for v in op.operands], self.end)
                self.map[value] = new
                self.origin[new] = op
                return new
        if not _passable(value.type):
            raise _CannotOutline(f"cannot pass a {value.type} to a sub-DNN")
        arg = self.block.add_argument(value.type, value.location)
        self.args.append(value)
        self.map[value] = arg
        for use in list(value.uses):  # repeat the skeleton's shape facts about the argument
            if use.owner.operation.name == "torch.bind_symbolic_shape" and use.operand_number == 0:
                self.emit(use.owner.operation)
        return arg

    def _symbol(self, op: ir.Operation) -> ir.Value:
        name = ir.StringAttr(op.attributes["symbol_name"]).value
        if name not in self.symbols:
            new = op.clone(ip=ir.InsertionPoint.at_block_begin(self.block))
            if self.last_symbol is not None:
                new.move_after(self.last_symbol)
            self.last_symbol = new
            self.symbols[name] = new.result
        self.map[op.result] = self.symbols[name]
        return self.symbols[name]

    # --- results -------------------------------------------------------------------

    def finish(self) -> bool | None:
        """Decide the results and drop dead ops; None when no tensor work is left to call."""
        moved = set(self.moved)
        for op in self.moved:
            for r in op.results:
                if any(u.owner.operation not in moved for u in r.uses):
                    self.live_out.append((r, self._plan(self.map[r], _leaves_region(r))))
        ir.Operation.create("func.return", operands=self.results, ip=self.end)
        _erase_dead(self.block)
        for i in reversed(range(len(self.block.arguments))):
            binds = _bindings_only(self.block.arguments[i])
            if binds is not None:
                for bind in binds:
                    bind.erase()
                self.block.erase_argument(i)
                del self.args[i]
        _erase_dead(self.block)
        self.block.owner.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in self.block.arguments], [r.type for r in self.results]))
        if any(op.name.startswith("torch.aten.") for op in _ops(self.block)):
            return True
        if self.results:
            raise _CannotOutline("no tensor work left, but values to return")
        return None

    def _plan(self, inner: ir.Value, keep_copies: bool = False) -> tuple:
        """How the skeleton gets the value that is `inner` in the sub-DNN."""
        while (not keep_copies and not _is_block_arg(inner)
               and inner.owner.operation.name in _IDENTITY_OPS
               and inner.owner.operands[0].type == inner.type):
            inner = inner.owner.operands[0]
        if _is_block_arg(inner):  # a copy of an argument
            return ("value", self.args[inner.arg_number])
        op = inner.owner.operation
        if _is_constant(op) or (op.name == "torch.prim.ListConstruct"
                                and not _passable(inner.type)):
            return ("clone", self.origin[inner], [self._plan(v) for v in op.operands])
        if not _passable(inner.type):
            raise _CannotOutline(f"cannot return a {inner.type} from a sub-DNN")
        if inner not in self.results:
            self.results.append(inner)
        return ("result", self.results.index(inner))

    def commit(self, callee: str | None) -> ir.Operation | None:
        """Replace the moved ops in the skeleton by a call to `callee` (None: no call)."""
        first = self.moved[0]
        ip = ir.InsertionPoint(first)
        call = None
        if callee is not None:
            call = ir.Operation.create(
                "func.call",
                results=[r.type for r in self.results],
                operands=self.args,
                attributes={"callee": ir.FlatSymbolRefAttr.get(callee, context=first.context)},
                loc=first.location,
                ip=ip,
            )

        def rebuild(plan: tuple) -> ir.Value:
            kind = plan[0]
            if kind == "value":
                return plan[1]
            if kind == "result":
                return call.results[plan[1]]
            return _clone_with(plan[1], [rebuild(p) for p in plan[2]], ip)

        for old, plan in self.live_out:
            old.replace_all_uses_with(rebuild(plan))
        for op in reversed(self.moved):
            op.erase()
        return call
