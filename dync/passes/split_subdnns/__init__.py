"""`dync-split-subdnns`: outline the sub-DNNs of dync IR and leave a host skeleton (DyCL).

Follows DyCL §5.3 (HCFCG construction) and §5.4 (sub-DNN graph optimization); see
`shared/papers/digest-dycl-terra.md` A.3.

Reads: every function of the module. The *skeleton* functions are the public ones (the
`dync.entry` function) and every function that contains control flow (an op with regions:
`scf.if`, `scf.while`, ...; a multi-block body; a call to such a function or to one without
a body), directly or through its calls.

Writes:
- Each maximal branch-free run of torch ops in a block of a skeleton function (no op with
  regions, no terminator, no `torch_c` cast but those around a `util.optimization_barrier`
  on a torch value, no call to a skeleton function) that does
  tensor work (a `torch.aten.*` op) becomes a private function `@subdnn_<k>` called from
  where the run was. Arguments and results come from liveness: the values the run uses but
  does not define, and the values it defines that are used outside it. `k` follows creation
  order: functions in module order, blocks in pre-order.
- A call to a private branch-free function inside a run is inlined into the sub-DNN (that
  is what a branch function called from an `scf.if` region becomes: one sub-DNN); the
  function is erased once nothing calls it any more.
- Constant-like ops (`torch.constant.*`, `torch.vtensor.literal`, `arith.constant`,
  `torch.prim.ListConstruct` of constants) and `torch.symbolic_int` stay in the skeleton and
  are cloned into each sub-DNN that uses them, so weights stay literals. A constant that all
  call sites of a private skeleton function pass for one argument is first sunk into it and
  the argument dropped (branch functions get their weights as arguments).
  Lists are never passed across a call: a `torch.prim.ListConstruct` is rebuilt on the side
  that needs it; a run whose boundary would carry another non-scalar, non-tensor value is
  left alone.
- `torch.bind_symbolic_shape` ops move with the tensor they bind; a binding of a value that
  becomes an argument is also repeated at the top of the sub-DNN, with the needed
  `torch.symbolic_int` ops re-declared there (the form of dync's branch functions).
- Copies and constants go to the host (DyCL step 3, by dataflow instead of path
  enumeration): a result that is an argument seen through identity ops (`aten.clone`,
  `detach`, ...) or a constant is not returned; the skeleton uses the argument or a clone
  of the constant. Copies that the skeleton would yield out of an `scf` region stay (an
  IREE 3.13 run-time bug, see `_leaves_region`). Dead ops are then dropped from the sub-DNN, unused arguments too; a run
  left with no tensor work gets no sub-DNN at all (a branch that only copies its inputs).
  Constant-foldable computations (`aten.zeros` of constant sizes) stay in the sub-DNN.
- Structurally identical sub-DNNs (same ops, attributes - hence the same weights - and
  operand wiring) are merged into the first one.
- Each sub-DNN carries `dync.source = "<file>:<first>-<last>"` (the lines of its ops in the
  first file seen in their locations, the outermost caller of a call-site location;
  "unknown" without one). The module gets `dync.subdnns`: an array of
  `{name, source, ops, calls, arguments, results}` dictionaries, `ops` counting the
  `torch.aten.*` ops of the sub-DNN, `calls` its call sites, `arguments`/`results` the
  symbolic shapes of its values ("[n, 8]", from their bindings). A module that already has
  `dync.subdnns` is left as it is (the pass is idempotent).

What the skeleton keeps: control flow, `torch_c` casts, calls (predicates arrive as
`!torch.bool` results of sub-DNNs), `torch.symbolic_int` and the bindings of its own values,
and the constants it still uses (branch-free runs without tensor work stay too).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from iree.compiler import ir

from ...dialects.attributes import SOURCE_ATTR, SUBDNNS_ATTR
from ...dialects.locations import source_span
from ...dialects.symbolic import bound_dims, is_tensor, type_dims
from ...dialects.torch_ops import BARRIER, owner
from ...dialects.walk import callee, functions, ops_named
from ..pipeline import Pass, PassFailure
from .builder import (
    _Builder,
    _CannotOutline,
    _clone_constant,
    _defined_by_constant,
    _erase_dead_constants,
    _ops,
)


def _in_barrier(op: ir.Operation) -> bool:
    """Whether `op` is a `util.optimization_barrier` on a torch value or one of its two
    `torch_c` casts (`dync-bucket` pads an argument through one), which stay in the run."""
    if op.name == BARRIER:
        return True
    if op.name == "torch_c.to_builtin_tensor":
        readers = [use.owner.name for use in op.results[0].uses]
        return bool(readers) and all(name == BARRIER for name in readers)
    return op.name == "torch_c.from_builtin_tensor" and owner(op.operands[0]) is not None \
        and owner(op.operands[0]).name == BARRIER


class SplitSubDNNs(Pass):
    name = "dync-split-subdnns"
    summary = "outline branch-free tensor regions into @subdnn_<k> functions (DyCL HCFCG)"

    def run(self, module: ir.Operation) -> None:
        if not module.regions or not module.regions[0].blocks:
            raise PassFailure("expected a module with a body")
        if SUBDNNS_ATTR in module.attributes:  # already split: a second run changes nothing
            return
        with module.context, module.location:
            _Splitter(module).run()


@dataclass
class _SubDNN:
    func: ir.Operation
    calls: list[ir.Operation] = field(default_factory=list)
    source: str = "unknown"


def _constant_key(op: ir.Operation) -> str:
    """Equal keys: the two constant ops make the same value."""
    attrs = ",".join(f"{n}={op.attributes[n]}" for n in op.attributes)
    operands = ",".join(_constant_key(v.owner.operation) for v in op.operands)
    return f"{op.name}{{{attrs}}}({operands}):{','.join(str(r.type) for r in op.results)}"


def _structure_key(func: ir.Operation) -> str:
    """The body up to SSA renaming (the sub-DNN's name and source are not part of it)."""
    block = func.regions[0].blocks[0]
    ids: dict[ir.Value, str] = {a: f"%a{i}" for i, a in enumerate(block.arguments)}
    parts = [str(ir.TypeAttr(func.attributes["function_type"]).value)]
    for op in _ops(block):
        operands = ",".join(ids[v] for v in op.operands)
        attrs = ",".join(f"{n}={op.attributes[n]}" for n in op.attributes)
        parts.append(f"{op.name}({operands}){{{attrs}}}:{','.join(str(r.type) for r in op.results)}")
        for r in op.results:
            ids[r] = f"%{len(ids)}"
    return "\n".join(parts)


class _Splitter:
    def __init__(self, module: ir.Operation):
        self.module = module
        self.body = module.regions[0].blocks[0]
        self.funcs = functions(module)
        self.control: dict[str, bool] = {}
        self.has_aten: dict[str, bool] = {}
        self.inlined: set[str] = set()
        self.skeleton: set[str] = set()
        self.subdnns: list[_SubDNN] = []

    # --- classification -------------------------------------------------------------

    def is_control(self, name: str) -> bool:
        if name in self.control:
            return self.control[name]
        func = self.funcs.get(name)
        self.control[name] = True  # external functions and recursion stay in the skeleton
        if func is None or len(func.regions[0].blocks) != 1:
            return True
        result = False
        for op in _ops(func.regions[0].blocks[0]):
            if len(op.regions) or op.name == "func.call_indirect":
                result = True
            elif op.name == "func.call" and self.is_control(callee(op)):
                result = True
            if result:
                break
        self.control[name] = result
        return result

    def in_run(self, op: ir.Operation) -> bool:
        if len(op.regions):
            return False
        if op.name == "func.call":
            name = callee(op)
            return name in self.funcs and name not in self.skeleton and not self.is_control(name)
        return op.name.startswith("torch.") or _in_barrier(op)

    def does_tensor_work(self, op: ir.Operation) -> bool:
        if op.name.startswith("torch.aten."):
            return True
        if op.name != "func.call":
            return False
        name = callee(op)
        if name not in self.has_aten:
            self.has_aten[name] = False
            body = self.funcs[name].regions[0].blocks[0]
            self.has_aten[name] = any(self.does_tensor_work(o) for o in _ops(body))
        return self.has_aten[name]

    def runs(self, op: ir.Operation) -> Iterator[list[ir.Operation]]:
        """Maximal runs of branch-free ops under `op`, in pre-order."""
        for region in op.regions:
            for block in region.blocks:
                ops = _ops(block)
                current: list[ir.Operation] = []
                for i, inner in enumerate(ops):
                    if i < len(ops) - 1 and self.in_run(inner):
                        current.append(inner)
                        continue
                    if current:
                        yield current
                    current = []
                    if len(inner.regions):
                        yield from self.runs(inner)
                if current:
                    yield current

    # --- the pass ------------------------------------------------------------------

    def run(self) -> None:
        skeleton = [
            f for name, f in self.funcs.items()
            if f.regions[0].blocks
            and (self.is_control(name) or self._visibility(f) != "private")
        ]
        self.skeleton = {ir.StringAttr(f.attributes["sym_name"]).value for f in skeleton}
        self.sink_constant_arguments(skeleton)
        for func in skeleton:
            for run in list(self.runs(func)):
                if any(self.does_tensor_work(op) for op in run):
                    self.outline(run)
        self.deduplicate()
        self.name_and_record()
        for func in skeleton:
            _erase_dead_constants(func)
        self.erase_inlined_functions()

    @staticmethod
    def _visibility(func: ir.Operation) -> str:
        attr = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
        return ir.StringAttr(attr).value if attr is not None else "public"

    def calls_by_callee(self) -> dict[str, list[ir.Operation]]:
        calls: dict[str, list[ir.Operation]] = {}
        for op in ops_named(self.module, "func.call"):
            calls.setdefault(callee(op), []).append(op)
        return calls

    def sink_constant_arguments(self, skeleton: list[ir.Operation]) -> None:
        """Clone into a private skeleton function the constants all its callers pass for an
        argument, and drop that argument (the constant then lands in the sub-DNN using it)."""
        private = [f for f in skeleton
                   if self._visibility(f) == "private" and "arg_attrs" not in f.attributes]
        sunk: dict[str, set[int]] = {}
        changed = True
        while changed:  # sinking into a function can make the constants it passes on known
            changed = False
            calls = self.calls_by_callee()
            for func in private:
                name = ir.StringAttr(func.attributes["sym_name"]).value
                sites = calls.get(name, [])
                if not sites:
                    continue
                entry = func.regions[0].blocks[0]
                for i, arg in enumerate(entry.arguments):
                    if i in sunk.get(name, ()):
                        continue
                    passed = [site.operands[i] for site in sites]
                    if not all(_defined_by_constant(v) for v in passed):
                        continue
                    if len({_constant_key(v.owner.operation) for v in passed}) != 1:
                        continue
                    top = next(o for o in _ops(entry) if o.name != "torch.symbolic_int")
                    ip = ir.InsertionPoint(top)
                    arg.replace_all_uses_with(_clone_constant(passed[0].owner.operation, ip))
                    sunk.setdefault(name, set()).add(i)
                    changed = True
        calls = self.calls_by_callee()
        for name, dropped in sunk.items():
            func = self.funcs[name]
            entry = func.regions[0].blocks[0]
            keep = [i for i in range(len(entry.arguments)) if i not in dropped]
            for i in sorted(dropped, reverse=True):
                entry.erase_argument(i)
            ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
            func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([ftype.inputs[i] for i in keep], ftype.results))
            for call in calls[name]:
                new = ir.Operation.create(
                    "func.call",
                    results=[r.type for r in call.results],
                    operands=[call.operands[i] for i in keep],
                    attributes={n: call.attributes[n] for n in call.attributes},
                    loc=call.location,
                    ip=ir.InsertionPoint(call),
                )
                for old, r in zip(call.results, new.results, strict=True):
                    old.replace_all_uses_with(r)
                call.erase()

    def outline(self, run: list[ir.Operation]) -> None:
        with run[0].context, run[0].location:
            temp = f"__dync_subdnn_{len(self.subdnns)}"
            func = ir.Operation.create(
                "func.func",
                attributes={
                    "sym_name": ir.StringAttr.get(temp),
                    "sym_visibility": ir.StringAttr.get("private"),
                    "function_type": ir.TypeAttr.get(ir.FunctionType.get([], [])),
                },
                regions=1,
                ip=ir.InsertionPoint(self.body),
            )
            block = func.regions[0].blocks.append()
            builder = _Builder(self, block)
            try:
                builder.build(run)
                plan = builder.finish()
            except _CannotOutline:
                func.erase()
                return
        if plan is None:  # nothing left to compute: the host takes the copies and constants
            func.erase()
            builder.commit(None)
            return
        call = builder.commit(temp)
        self.subdnns.append(_SubDNN(func, [call], source_span(_ops(block))))

    def deduplicate(self) -> None:
        first: dict[str, _SubDNN] = {}
        kept = []
        for sub in self.subdnns:
            key = _structure_key(sub.func)
            if key in first:
                first[key].calls.extend(sub.calls)
                sub.func.erase()
            else:
                first[key] = sub
                kept.append(sub)
        self.subdnns = kept

    def name_and_record(self) -> None:
        taken = set(self.funcs)
        records, k = [], 0
        for sub in self.subdnns:
            while f"subdnn_{k}" in taken:
                k += 1
            name = f"subdnn_{k}"
            k += 1
            sub.func.attributes["sym_name"] = ir.StringAttr.get(name)
            sub.func.attributes[SOURCE_ATTR] = ir.StringAttr.get(sub.source)
            for call in sub.calls:
                call.attributes["callee"] = ir.FlatSymbolRefAttr.get(name)
            body = sub.func.regions[0].blocks[0]
            aten = sum(op.name.startswith("torch.aten.") for op in _ops(body))
            i64 = ir.IntegerType.get_signless(64)
            records.append(ir.DictAttr.get({
                "name": ir.StringAttr.get(name),
                "source": ir.StringAttr.get(sub.source),
                "ops": ir.IntegerAttr.get(i64, aten),
                "calls": ir.IntegerAttr.get(i64, len(sub.calls)),
                "arguments": _shapes(list(body.arguments), body),
                "results": _shapes(list(_ops(body)[-1].operands), body),
            }))
        self.module.attributes[SUBDNNS_ATTR] = ir.ArrayAttr.get(records)

    def erase_inlined_functions(self) -> None:
        called = self.calls_by_callee()
        for name in sorted(self.inlined):
            func = self.funcs[name]
            if name not in called and self._visibility(func) == "private":
                func.erase()


def _shapes(values: list[ir.Value], body: ir.Block) -> ir.ArrayAttr:
    """Each value's dims as text, `?` dims by their binding in `body` ("[n, 8]", "!torch.int")."""
    bound = {op.operands[0]: [str(d) for d in bound_dims(op)]
             for op in _ops(body) if op.name == "torch.bind_symbolic_shape"}
    texts = []
    for v in values:
        dims = type_dims(v.type) if is_tensor(v.type) else None
        if dims is None:
            texts.append(str(v.type))
        else:
            exprs = bound.get(v, ["?"] * len(dims))
            texts.append("[" + ", ".join(str(d) if d is not None else e
                                         for d, e in zip(dims, exprs, strict=True)) + "]")
    return ir.ArrayAttr.get([ir.StringAttr.get(t) for t in texts])
