"""nn.Module + example args + dynamic_shapes -> dync IR (via torch.export and the FX importer)."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import io
import itertools
import json
import logging
import operator
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import sympy
import torch
from iree.compiler import ir
from iree.compiler.extras.fx_importer import FxImporter
from torch.utils import _pytree as pytree
from torch.utils._sympy.numbers import int_oo

from ...errors import DyncError, OptionError, UnsupportedConstructError
from ...output_tree import CONSTANT_NODE, NONE_NODE, OPTIONAL_NODE, SCALAR_NODE, namedtuple_node
from ...signature import Signature, SymbolSpec, TensorSpec, dtype_name
from ..common import ImportedProgram, Lowering, finish_import
from . import guards, shape_exprs
from .data_dependent import DataDependentOps
from .declared_shapes import DeclaredShapes
from .decompositions import DECOMPOSITIONS
from .held_weights import HeldWeights
from .importer import DyncGraphNodeImporter
from .inferred_view_sizes import explicit_inferred_view_sizes
from .masked_updates import masked_updates_as_where
from .rewrite import Rewrite, rewritten
from .rewrite.decisions import active_recorder, recording_compiled_branches
from .rewrite.optionals import MaybeTensor
from .scalar_outputs import TENSOR, scalar_outputs_as_tensors
from .source import (
    is_user_file,
    source_line,
    user_frame_from_message,
    user_frame_from_stack_trace,
    user_frame_from_traceback,
)
from .sym_floats import as_tensor_arithmetic, integer_rounding
from .view_writes import forward_view_writes

INT64_MAX = 2**63 - 1


def import_module(
    model: torch.nn.Module,
    args: Sequence[Any],
    dynamic_shapes: Any,
    context: ir.Context,
    *,
    lower: Lowering,
    func_name: str = "main",
    trace_branches: bool = False,
    input_writes: bool = False,
) -> ImportedProgram:
    """`dynamic_shapes` as torch.export takes them, or already read (`DeclaredShapes`);
    `lower`: the control-flow lowering that ends the import (`dync.passes.lower_control_flow`).
    `trace_branches`: the module also returns its branch trace (see `_WithBranchTrace`).
    `input_writes`: a forward that writes an input in place (`x.mul_(2)`) is taken, the new
    value returned first among the results and named in `Signature.input_writes` (the
    runtime writes it back into the caller's argument); else it is refused."""
    args = _unaliased(tuple(args))
    declared = DeclaredShapes.of(_forward_of(model), args, dynamic_shapes)
    args = guards.past_one(declared, args)
    export_shapes = declared.for_export()
    if trace_branches:
        model, export_shapes = _WithBranchTrace(model), declared.for_varargs()
    with recording_compiled_branches() if trace_branches else contextlib.nullcontext() as recorder:
        try:
            ep, rewrite = _export(model, args, export_shapes)
            guarded = None
        except DyncError as error:
            ep, rewrite, guarded = _export_guarded(model, args, declared, trace_branches, error)
    if not input_writes:  # (`_decomposed` refused writes of buffers)
        _refuse_state_writes(ep, _INPUT_WRITE)
    names = _user_symbol_names(declared, args, ep)
    weights = HeldWeights()
    importer = FxImporter(context=context, graph_node_importer_cls=DyncGraphNodeImporter,
                          py_attr_tracker=weights)
    signature = _signature(ep, names, ep.graph_module.meta[_LEAF_KINDS])
    notes = _tighten_ranges_from_asserts(ep, signature, names)
    if guarded is not None:
        notes.extend(_narrowed(signature, guarded(names)))
    importer.import_frozen_program(_WithUnsavedBuffers(ep), func_name=func_name,
                                   import_symbolic_shape_expressions=True)
    weights.hold()
    module = importer.module
    _apply_symbols(module, names, signature.symbols)
    program = finish_import(module, signature, "pytorch", lower, func_name)
    program.notes.extend(notes)
    program.rewritten = rewrite.sources
    program.branch_sites = list(recorder.sites) if trace_branches else []
    return program


def _export_guarded(model, args: tuple, declared: DeclaredShapes, trace_branches: bool,
                    error: DyncError):
    """torch.export again with `Dim.DYNAMIC` hints after `error`, when the trace held for
    only part of the declared ranges (`guards`); `error` again when that does not help.
    Returns the program, its rewrite and a function of the symbol names giving the ranges
    where it holds."""
    hints = guards.hinted(declared, args) if guards.violated(error) else None
    if hints is None:
        return _export_suggested(model, args, declared, trace_branches, error)
    try:  # `model` is wrapped already when `trace_branches`
        ep, rewrite = _export(model, args, hints.for_varargs() if trace_branches
                              else hints.for_export(), hinted=True)
    except DyncError:
        raise error from None

    def ranges(names: dict[str, str]) -> dict[str, SymbolSpec]:
        found = guards.guarded_ranges(ep, declared, args, names)
        if found is None:
            raise error
        return found

    return ep, rewrite, ranges


def _export_suggested(model, args: tuple, declared: DeclaredShapes, trace_branches: bool,
                      error: DyncError):
    """torch.export again over the ranges torch's suggested fixes for `error` give (where the
    `Dim`s cannot be hinted: one `Dim` on several arguments); `error` again when there are no
    such ranges or they do not help."""
    found = guards.suggested(declared, args, error) if guards.violated(error) else None
    if found is None:
        raise error
    narrowed, symbols = found
    try:
        ep, rewrite = _export(model, args, narrowed.for_varargs() if trace_branches
                              else narrowed.for_export())
    except DyncError:
        raise error from None
    return ep, rewrite, lambda names: symbols


def _narrowed(signature: Signature, ranges: dict[str, SymbolSpec]) -> list[str]:
    """Give `signature` the ranges the trace holds over; a note for each one narrowed."""
    notes = []
    for name, spec in ranges.items():
        signature.symbols[name] = spec
        if spec.declared is not None:
            notes.append(
                f"torch.export's trace holds for {name} in [{spec.min}, {spec.max}] of its "
                f"declared [{spec.declared[0]}, {spec.declared[1]}] (it assumes "
                f"{spec.assumes}): compiled for that range; mode='auto' traces the rest "
                "again (compiled.pieces), and runs in eager PyTorch what none takes")
    return notes


def check_model(model: torch.nn.Module, args: Sequence[Any]) -> None:
    """Refuse, before anything runs, a model or example dync cannot compile for a reason
    that has nothing to do with its code: tensors without data, bfloat16."""
    inputs = [a for a in pytree.tree_leaves(tuple(args)) if isinstance(a, torch.Tensor)]
    for i, a in enumerate(inputs):
        if a.is_meta:
            raise DyncError(f"example input {i} is on the meta device: it holds no data to "
                            "trace with; pass real tensors (e.g. torch.randn on the CPU)")
    state = [*model.named_parameters(), *model.named_buffers()]
    for name, tensor in state:
        if tensor.is_meta:
            raise DyncError(f"the model's {name} is on the meta device (its weights were never "
                            "loaded): materialize it first (model.to_empty(device='cpu') and "
                            "load_state_dict)")
    if any(t.dtype == torch.bfloat16 for t in [*(t for _, t in state), *inputs]):
        raise DyncError(
            "bfloat16 is not supported: IREE 3.13's CPU code generation fails on bfloat16 "
            "arithmetic ('arith.constant' op failed to verify) and the runtime's numpy bridge "
            "has no bfloat16; convert the model and inputs with .float() (or .half())")


@contextlib.contextmanager
def _refusing_prints():
    """`print()` called by the model while it is traced is refused with its line: a compiled
    graph would drop the side effect (mode="auto" then runs the forward's Python in host
    mode, where it prints). Torch's own prints and other threads' pass through."""
    import builtins
    import threading

    real, tracing = builtins.print, threading.get_ident()

    def refused(*args, **kwargs):
        caller = sys._getframe(1)
        if threading.get_ident() != tracing or not is_user_file(caller.f_code.co_filename):
            return real(*args, **kwargs)  # another thread, or torch itself
        raise UnsupportedConstructError(
            "print()", "a compiled graph drops the side effect of print(); mode='auto' and "
            "mode='host' run the forward's Python, which prints",
            f"{caller.f_code.co_filename}:{caller.f_lineno}")

    builtins.print = refused
    try:
        yield
    finally:
        builtins.print = real


def _unaliased(args: tuple) -> tuple:
    """`args` with every tensor that shares storage with an earlier one cloned. torch.export
    traces aliased example inputs as one placeholder, leaving the other unused: `f(q, k)`
    exported with `(x, x)` would compute `f(k, k)` on every later call."""
    seen: set[int] = set()

    def distinct(value):
        if not isinstance(value, torch.Tensor) or value.numel() == 0:
            return value
        key = value.untyped_storage().data_ptr()
        if key in seen:
            return value.clone()
        seen.add(key)
        return value

    return pytree.tree_map(distinct, args)


class _WithBranchTrace(torch.nn.Module):
    """`model` whose outputs are `(outputs, trace)`: the int64 codes `2 * site + taken` of
    every branch decision, in order, gathered by the active `BranchRecorder` (its `sites`
    lists the sites, file:line)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *args):
        recorder = active_recorder()
        recorder.restart()
        outputs = self.model(*args)
        return outputs, recorder.trace()


def _forward_of(model: Any) -> Any:
    return model.forward if isinstance(model, torch.nn.Module) else model


def _export(model: torch.nn.Module, args: tuple, dynamic_shapes: Any, hinted: bool = False,
            ) -> tuple[torch.export.ExportedProgram, Rewrite]:
    """`hinted`: `dynamic_shapes` are `Dim.DYNAMIC` hints, whose guards `guards.guarded_ranges`
    checks afterwards, rather than the user's `Dim`s, whose guards must hold over their ranges."""
    if not isinstance(model, torch.nn.Module):
        raise OptionError(
            f"dync.compile expects an nn.Module or an ONNX model, got {type(model).__name__}")
    for i, a in enumerate(pytree.tree_leaves(args)):
        if not isinstance(a, torch.Tensor):
            raise UnsupportedConstructError(
                "non-tensor input", f"argument leaf {i} is a {type(a).__name__}; pass tensors only"
            )
    rewrite = Rewrite()
    try:
        # Inference only: without autograd, control-flow HOPs take lifted parameters as
        # plain operands.
        with torch.no_grad(), rewritten(model) as rewrite, _refusing_prints():
            return _decomposed(_quiet_export(model, args, dynamic_shapes), hinted), rewrite
    except UnsupportedConstructError:
        raise
    except Exception as e:  # torch raises many types; all become one clear dync error
        error = e
    if rewrite.functions:
        # The rewrite keeps `.item()` a 0-d tensor so that conditions on it become
        # `torch.cond`; a model that uses it as a Python number instead (a size, in
        # `torch._check`) exports as written. A branch on data fails that export too, so no
        # path is frozen.
        try:
            with torch.no_grad(), _refusing_prints():
                return _decomposed(_quiet_export(model, args, dynamic_shapes), hinted), Rewrite()
        except UnsupportedConstructError:
            raise
        except Exception:
            pass
    raise _export_error(error) from error


def _decomposed(ep: torch.export.ExportedProgram, hinted: bool = False) -> torch.export.ExportedProgram:
    """Functional inference IR (no in-place ops), plus the decompositions of the ops
    torch-mlir cannot lower. Refuses a trace whose guards fail in the declared ranges
    (`hinted`: the ranges are found later, `guards.guarded_ranges`)."""
    shape_env = _shape_env(ep)
    known = len(shape_env.guards) if shape_env is not None else 0
    if shape_env is not None and not hinted:
        _refuse_unchecked_guards(shape_env.guards, shape_env.replacements,
                                 shape_env.var_to_range)
    with warnings.catch_warnings():  # torch's own deprecated pytree use, not the user's
        warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)
        masked_updates_as_where(ep.graph_module)
        ep = ep.run_decompositions(DECOMPOSITIONS)
    _refuse_state_writes(ep, _BUFFER_WRITE)
    _refuse_state_writes(ep, _PARAMETER_WRITE)
    forward_view_writes(ep.graph_module)
    explicit_inferred_view_sizes(ep.graph_module)
    if shape_env is not None:
        _refuse_specialization(shape_env, shape_env.guards[known:])
        ep.graph_module.meta[guards.TRACED_GUARDS] = known
    ep.graph_module.meta[_LEAF_KINDS] = scalar_outputs_as_tensors(ep)
    _importable_sym_ops(ep)
    return ep


#: Where `_decomposed` keeps `scalar_outputs_as_tensors`' account of the outputs.
_LEAF_KINDS = "dync_leaf_kinds"


class _WithUnsavedBuffers:
    """`ep` with its non-persistent buffers (`register_buffer(..., persistent=False)`, as
    BERT's `position_ids`) in its state dict, where the importer looks for every buffer:
    torch.export keeps them in `constants`, and the import failed ("Could not find state
    mapping for buffer"). Everything else is `ep`'s."""

    def __init__(self, ep: torch.export.ExportedProgram):
        self._ep = ep
        unsaved = ep.graph_signature.non_persistent_buffers
        self.state_dict = {**ep.state_dict, **{name: ep.constants[name] for name in unsaved}}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ep, name)


_INPUT_WRITE = (torch.export.graph_signature.OutputKind.USER_INPUT_MUTATION, "its input")
_BUFFER_WRITE = (torch.export.graph_signature.OutputKind.BUFFER_MUTATION, "the buffer")
_PARAMETER_WRITE = (torch.export.graph_signature.OutputKind.PARAMETER_MUTATION, "the parameter")


def _refuse_state_writes(ep: torch.export.ExportedProgram, refused: tuple[Any, str]) -> None:
    """Refuse a forward that writes in place what `refused` names (an output kind, and what
    it is in words): a buffer (`self.calls += 1`), a parameter (`self.w.mul_(0.5)` under
    `no_grad`: the compiled module returned the new weight as a result), or an input (`x.mul_(2)`) where the
    caller does not take the new value. torch.export returns the new value beside the
    results, and the compiled module, which takes buffers as constants, would leave them as
    they were, unlike eager. `mode="auto"` runs such a model in eager PyTorch."""
    made = {n.name: n for n in ep.graph.nodes}
    kind, what = refused
    for spec in ep.graph_signature.output_specs:
        if spec.kind is not kind:
            continue
        node = made.get(getattr(spec.arg, "name", None))
        source = user_frame_from_stack_trace(node.meta.get("stack_trace")) if node else None
        raise UnsupportedConstructError(
            "in-place write of an input or buffer",
            f"forward writes {what} {spec.target!r} in place; the compiled module would "
            "leave it as it was (write a copy, `x = x * 2` for `x.mul_(2)`, or keep the state "
            "outside the model)", source)


def _shape_env(ep: torch.export.ExportedProgram):
    for node in ep.graph.nodes:
        fake = getattr(node.meta.get("val"), "fake_mode", None)
        if fake is not None:
            return fake.shape_env
    return None


def _refuse_unchecked_guards(found: list, replacements: dict, ranges: dict) -> None:
    """torch.export's own check of its guards against the user's `Dim`s misses some: the
    batch recovered as `int(rows / (Lp * C / C))` with a padded `Lp` (`Mod` in the sizes)
    was fixed at the example's 2, the graph's output shape with it, and no error raised.
    Each guard is evaluated over the declared ranges instead; one seen to fail refuses the
    trace as torch.export does (the error says "Constraints violated", and the export is
    tried again with `Dim.DYNAMIC` hints over the same ranges, `guards.guarded_ranges`);
    `guards.failing` says which guards count; `!=` guards are left to torch.export, which
    checks them (and leaves Swin's `Ne(Hp // 7, 1)`, a single window, by design)."""
    failing = guards.failing([g for g in found if not isinstance(g.expr, sympy.Ne)],
                             replacements, ranges)
    if failing:
        where = guards.where_added(failing[0])
        raise DyncError(
            f"Constraints violated: torch.export's trace assumes "
            f"{', '.join(str(g.expr) for g in failing[:4])} of the dynamic sizes ({where}), "
            "which fails for other sizes in the declared ranges")


def _refuse_specialization(shape_env, added: list) -> None:
    """Refuse the guards a decomposition's code added (torch.export checked the model's own;
    these come after it, and nothing would check them) that fail somewhere in the declared
    ranges: the program would be right only for sizes like the example's. torch's decomposition of
    `adaptive_max_pool2d` branches on `h % 2 == 0` and then fixes `h // 2 == 4`: every other
    image size came out wrong."""
    assumed = guards.failing([g for g in added if any(
        part in guards.where_added(g) for part in _DECOMPOSING_CODE)],
        shape_env.replacements, shape_env.var_to_range)
    if assumed:
        where = guards.where_added(assumed[0])
        raise UnsupportedConstructError(
            "a decomposition that holds only for the example's sizes",
            f"lowering an op ({where}) assumed {', '.join(str(g.expr) for g in assumed[:4])} "
            "of the dynamic sizes, which fails for other sizes in the declared ranges")


#: Where a guard added while decomposing comes from when a decomposition's own code branched
#: on a size; guards torch adds inside an op (strides, contiguity: a dim of 1 or not) leave
#: the program's values alone.
_DECOMPOSING_CODE = ("_decomp/", "_refs/", "pytorch/decompositions.py")

def _importable_sym_ops(ep: torch.export.ExportedProgram) -> None:
    """Arithmetic on sizes in forms the FX importer lowers and IREE compiles:
    `torch.sym_sum([a, b, c])` (a strided conv's output size inside a branch) as `a + b + c`,
    `torch.sym_not(b)` (a runtime check on an unbacked size) as `aten.__not__`,
    `torch.sym_max`/`sym_min` of ints (Python's `max(1, s // 2)`) as `prim.max.int`/`min.int`,
    `s ** k` of an int size by a small literal (a square's element count, `tril_indices`'
    bound) as a product; `a % b` of ints as `a - (a // b) * b`: the importer takes `%` for `fmod`, which IREE
    does not lower, and aten's `remainder.int` lowers to a truncating remainder, where
    Python's `%` (`(-s) % 8`, padding to a multiple) floors, as `//` does in both; and a
    size's float arithmetic rounded back to an int (`trunc(sym_float(s) * 0.5)`,
    `F.interpolate`'s output size) in integer arithmetic (the importer takes no `sym_float`);
    other float arithmetic on sizes that tensor ops use, in 0-d tensors (both `sym_floats`)."""
    for module in ep.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        graph = module.graph
        for node in list(graph.nodes):
            if node.op != "call_function":
                continue
            if node.target is torch.sym_not:
                node.target = torch.ops.aten.__not__.default
            elif node.target in _INT_MIN_MAX and _of_ints(node):
                node.target = _INT_MIN_MAX[node.target]
            elif node.target is operator.mod and _of_ints(node):
                _replace(graph, node, _floor_mod, *node.args)
            elif node.target is operator.pow and _of_ints(node) and isinstance(
                    node.args[1], int) and 1 <= node.args[1] <= 8:
                _replace(graph, node, _power, *node.args)
            elif node.target is torch.sym_sum and any(
                    isinstance(term, torch.fx.Node) for term in node.args[0]):
                _replace(graph, node, _sum, *node.args[0])
            elif node.target in _SCALAR_COMPARISONS and _float_against_int(node):
                node.args = (node.args[0], float(node.args[1]), *node.args[2:])
            elif (rounding := integer_rounding(node)) is not None:
                (expression,) = node.args
                _replace(graph, node, rounding)
                _erase_unused_floats(graph, expression)
        as_tensor_arithmetic(graph)
        module.recompile()


_aten = torch.ops.aten
_SCALAR_COMPARISONS = {_aten.lt.Scalar, _aten.le.Scalar, _aten.gt.Scalar, _aten.ge.Scalar,
                       _aten.eq.Scalar, _aten.ne.Scalar}


def _float_against_int(node: torch.fx.Node) -> bool:
    """A float tensor compared with an int literal (`steps < 3`, a counter kept as a float
    tensor): torch-mlir's folder of the comparison reads the int as a float, undefined
    behaviour that crashed IREE's compile now and then and, where it did not, could fold the
    comparison to garbage (wrong loop trip counts); the literal as a float is what eager
    compares with (the scalar is cast to the tensor's dtype)."""
    value = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    scalar = node.args[1] if len(node.args) > 1 else None
    return (isinstance(value, torch.Tensor) and value.is_floating_point()
            and type(scalar) is int and abs(scalar) < 2 ** 24)


def _erase_unused_floats(graph: torch.fx.Graph, node: Any) -> None:
    """`node`, a float expression of sizes, and its operands in turn, where nothing uses them."""
    if (isinstance(node, torch.fx.Node) and node.op == "call_function" and not node.users
            and isinstance(node.meta.get("val"), torch.SymFloat | torch.SymInt)):
        operands = node.args
        graph.erase_node(node)
        for operand in operands:
            _erase_unused_floats(graph, operand)


def _floor_mod(op, a, b):
    return op(operator.sub, a, op(operator.mul, op(operator.floordiv, a, b), b))


def _power(op, base, exponent: int):
    product = base
    for _ in range(exponent - 1):
        product = op(operator.mul, product, base)
    return product


def _sum(op, *terms):
    return functools.reduce(lambda total, term: op(operator.add, total, term), terms)


def _replace(graph: torch.fx.Graph, node: torch.fx.Node, build, *args) -> None:
    """`node` replaced by what `build(op, *args)` makes, `op(target, *operands)` adding a node
    (typed as `node` is: ints, for the importer)."""
    def op(target, *operands):
        made = graph.call_function(target, operands)
        made.meta = dict(node.meta)
        return made

    with graph.inserting_before(node):
        result = build(op, *args)
    node.replace_all_uses_with(result)
    graph.erase_node(node)


def _of_ints(node: torch.fx.Node) -> bool:
    return all(isinstance(_meta_value(a), int | torch.SymInt) for a in node.args)


_INT_MIN_MAX = {torch.sym_max: torch.ops.prim.max.int, torch.sym_min: torch.ops.prim.min.int}


def _meta_value(arg: Any) -> Any:
    return arg.meta.get("val") if isinstance(arg, torch.fx.Node) else arg


def _quiet_export(model, args, dynamic_shapes) -> torch.export.ExportedProgram:
    """torch.export, without the partial FX graph torch prints to stderr when it fails: the
    error dync raises names the user's line, and `mode="auto"` may go on in host mode.
    `torch.distributions` do not check their arguments meanwhile: the check (`Categorical(
    logits=...)`, an early exit's entropy) is a Python bool of data, which ends the graph;
    a compiled model computes with arguments eager would refuse (NaN logits) instead."""
    captured = io.StringIO()
    validate = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        with contextlib.redirect_stderr(captured), _quiet_shape_solver(), DataDependentOps():
            try:
                ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes, strict=False)
            except Exception as e:
                if "in output, which is not a known type" not in str(e) or not _register_dataclasses(
                        model, args):
                    raise
                ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes, strict=False)
    finally:
        torch.distributions.Distribution.set_default_validate_args(validate)
    sys.stderr.write(captured.getvalue())
    return ep


@contextlib.contextmanager
def _quiet_shape_solver():
    """torch's shape solver's warnings silenced, unless the user asked for them
    (`TORCH_LOGS="+dynamic"`): "Failed to reduce inequalities", with a traceback of torch's
    own printer (`AssertionError: 1/2`) and some 180 lines a model, comes of a range that
    does not hold for a dynamic dim, which dync then traces with hints (`guards`) and reports
    itself."""
    log = logging.getLogger("torch.fx.experimental.symbolic_shapes")
    level = log.level
    if log.getEffectiveLevel() >= logging.WARNING:
        log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _register_dataclasses(model, args: tuple) -> bool:
    """Register with torch's pytree the dataclasses that `model(*args)` returns results in
    (`@dataclass class Output: logits: Tensor ...`), which torch.export refuses unregistered;
    whether there were any. Registered for the process, as `torch.export.register_dataclass`
    would be by hand: the compiled module returns them too."""
    found: list[type] = []

    def walk(value: Any) -> None:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            if type(value) not in pytree.SUPPORTED_NODES and type(value) not in found:
                found.append(type(value))
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name))
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    with torch.no_grad():
        walk(model(*args))
    for cls in found:
        torch.export.register_dataclass(cls, serialized_type_name=f"{cls.__module__}.{cls.__qualname__}")
    return bool(found)


def _export_error(e: Exception) -> DyncError:
    message = str(e).split("The error above occurred when calling torch.export")[0].strip()
    lines = [ln for ln in message.splitlines() if ln.strip()][:12] or [type(e).__name__]
    source = user_frame_from_traceback(e.__traceback__) or user_frame_from_message(message)
    text = "\n  ".join(lines)
    if "data-dependent" in message or "GuardOnDataDependent" in type(e).__name__:
        line = source_line(source)
        reason = (
            "a value read from a tensor is used as a Python number here (a size, an index, "
            "`int()`, `.tolist()`), so the program is not one graph; mode='auto' runs such "
            "code in host mode" + (f"\n    {line}" if line else "") + f"\n  torch.export: {lines[0]}"
        )
        return UnsupportedConstructError("data-dependent Python value", reason, source)
    where = f" (at {source})" if source else ""
    if "specialized it to be a constant (1)" in message or "specialized it to be a constant (0)" in message:
        # The call's example contradicts its own dynamic_shapes: a mistake in the call.
        return OptionError(
            f"torch.export failed{where}:\n  {text}\n  hint: torch.export specializes dims "
            "whose example size is 0 or 1 (dync traces a size of 1 repeated to 2 where the "
            "range allows); give the example input a size of at least 2 on each dynamic dim")
    return DyncError(f"torch.export failed{where}:\n  {text}")


def _user_symbol_names(declared: DeclaredShapes, args: tuple, ep) -> dict[str, str]:
    """Map torch's symbol names (s77) to the user's `Dim` names (batch)."""
    if not declared.given:
        return {}
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    leaves = iter(ep.graph_signature.user_inputs)
    names: dict[str, str] = {}
    for i, arg in enumerate(args):
        taken = [next(leaves, None) for _ in pytree.tree_leaves(arg)]
        placeholder = taken[0] if taken else None
        fake = placeholders[placeholder].meta.get("val") if placeholder in placeholders else None
        if not isinstance(arg, torch.Tensor) or not isinstance(fake, torch.Tensor):
            continue
        for axis, dim in declared.dims(args, i).items():
            size = fake.shape[axis]
            if not isinstance(size, torch.SymInt):
                continue
            root = getattr(dim, "root", dim)
            free = size.node.expr.free_symbols
            if len(free) == 1 and hasattr(root, "__name__"):
                names.setdefault(str(next(iter(free))), root.__name__)
    return names


def _dims(shape, names: dict[str, str]) -> tuple:
    dims = []
    for s in shape:
        if isinstance(s, torch.SymInt):
            expr = shape_exprs.integral(s.node.expr)
            expr = expr.subs({sym: sympy.Symbol(names.get(str(sym), str(sym))) for sym in expr.free_symbols})
            dims.append(int(expr) if expr.is_number else str(expr))
        else:
            dims.append(int(s))
    return tuple(dims)


def _bound(value, default: int) -> int:
    """An int from a sympy range bound; `default` for the infinities (`int_oo`)."""
    if value in (int_oo, -int_oo, sympy.oo, -sympy.oo):
        return default
    return max(min(int(value), INT64_MAX), 0)


def _signature(ep: torch.export.ExportedProgram, names: dict[str, str],
               leaf_kinds: list[tuple[str | None, Any]]) -> Signature:
    """`ep`'s inputs, outputs (what `scalar_outputs_as_tensors` left, `leaf_kinds` its
    account of the model's outputs), symbols and output tree."""
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    inputs = []
    for name in ep.graph_signature.user_inputs:
        val = placeholders[name].meta["val"]
        inputs.append(TensorSpec(name, dtype_name(val.dtype), _dims(val.shape, names)))
    outputs = []
    output_node = next(n for n in ep.graph.nodes if n.op == "output")
    for i, out in enumerate(output_node.args[0]):
        val = out.meta.get("val") if isinstance(out, torch.fx.Node) else out
        if not isinstance(val, torch.Tensor):
            raise UnsupportedConstructError(
                "non-tensor output", f"output {i} is {type(val).__name__}; return tensors, "
                "numbers, strings, None, and tuples, lists, dicts or dataclasses of them")
        outputs.append(TensorSpec(f"output_{len(outputs)}", dtype_name(val.dtype),
                                  _dims(val.shape, names)))
    symbols = {}
    for sym, vr in ep.range_constraints.items():
        if not sym.is_Symbol:  # a derived dim (2*n): its root symbol carries the range
            continue
        name = names.get(str(sym), str(sym))
        symbols[name] = SymbolSpec(name, _bound(vr.lower, 0), _bound(vr.upper, INT64_MAX))
    writes = _input_writes(ep)
    leaves = leaf_kinds[len(writes):]  # those the output tree nests
    tree = _tree_text(ep.call_spec.out_spec, leaves) if ep.call_spec.out_spec else None
    if tree is None and any(kind is not TENSOR for kind, _ in leaves):
        raise UnsupportedConstructError("non-tensor output", "outputs without a tree spec")
    return Signature(inputs, outputs, symbols, tree, input_writes=writes)


def _input_writes(ep: torch.export.ExportedProgram) -> tuple[tuple[int, int], ...]:
    """(output, input) for each input the forward writes in place: torch.export returns each
    new value first among the outputs, in `output_specs`' order."""
    inputs = list(ep.graph_signature.user_inputs)
    return tuple((k, inputs.index(spec.target))
                 for k, spec in enumerate(ep.graph_signature.output_specs)
                 if spec.kind is torch.export.graph_signature.OutputKind.USER_INPUT_MUTATION)


def _tree_text(spec: pytree.TreeSpec, leaves: list[tuple[str | None, Any]]) -> str:
    """`treespec_dumps(spec)`, but torch's named tuples of results (`torch.return_types.sort`,
    a `max(dim)`'s), which torch's serializer has no name for, written as
    `torch.return_types.<name>`, the model's own namedtuples by module, name and fields, and
    the leaves that are no plain tensor (`scalar_outputs_as_tensors`: numbers, constants,
    None) as their kinds (`output_tree` rebuilds them all)."""
    return json.dumps([1, _tree_json(spec, iter(leaves))])


def _tree_json(spec: pytree.TreeSpec, leaves: Iterator[tuple[str | None, Any]]) -> dict:
    children = [_tree_json(child, leaves) for child in spec.children()]
    if spec.is_leaf():
        kind, value = next(leaves, (TENSOR, None))
        context = json.dumps(value) if kind == CONSTANT_NODE else \
            {TENSOR: None, NONE_NODE: "null", SCALAR_NODE: value}[kind]
        return {"type": kind, "context": context, "children_spec": []}
    if pytree.is_structseq_class(spec.type) and spec.type.__module__ == "torch.return_types":
        kind, context = f"torch.return_types.{spec.type.__name__}", "null"
    elif spec.type is MaybeTensor:
        kind, context = OPTIONAL_NODE, None
    elif spec.type is collections.namedtuple and not _serializable(spec.context):
        kind, context = namedtuple_node(spec.context)  # pytree's context: the class
    else:  # torch's own serialization of this node, its children as leaves
        alone = pytree.TreeSpec(spec.type, spec.context,
                                [pytree.treespec_leaf() for _ in children])
        node = json.loads(pytree.treespec_dumps(alone))[1]
        kind, context = node["type"], node["context"]
    return {"type": kind, "context": context, "children_spec": children}


def _serializable(cls: type) -> bool:
    """Whether torch serializes the namedtuple class `cls` itself (registered by name)."""
    return cls in pytree.SUPPORTED_SERIALIZED_TYPES


_COMPARISONS = {operator.ge: 0, operator.gt: 1, operator.le: 0, operator.lt: -1}


def _tighten_ranges_from_asserts(ep, signature: Signature, names: dict[str, str]) -> list[str]:
    """torch.export may add runtime asserts (`u0 >= 2`) on input dims beyond the declared
    range; fold `dim >= k` / `dim <= k` asserts into the symbol ranges so the runtime rejects
    such inputs up front with a clear message instead of failing inside the module."""
    notes = []
    for node in ep.graph.nodes:
        if node.target is not torch.ops.aten._assert_scalar.default:
            continue
        cmp = node.args[0]
        if not isinstance(cmp, torch.fx.Node) or cmp.target not in _COMPARISONS:
            continue
        size, bound = cmp.args
        if not (isinstance(size, torch.fx.Node) and isinstance(bound, int)
                and size.target is torch.ops.aten.sym_size.int):
            continue
        source, axis = size.args
        expr = source.meta["val"].shape[axis]
        if not isinstance(expr, torch.SymInt) or not expr.node.expr.is_symbol:
            continue
        name = names.get(str(expr.node.expr), str(expr.node.expr))
        old = signature.symbols.get(name)
        if old is None:
            continue
        adjusted = bound + _COMPARISONS[cmp.target]
        if cmp.target in (operator.ge, operator.gt):
            new = SymbolSpec(name, max(old.min, adjusted), old.max)
        else:
            new = SymbolSpec(name, old.min, min(old.max, adjusted))
        if new != old:
            signature.symbols[name] = new
            notes.append(
                f"torch.export asserts {name} {cmp.target.__name__} {bound}: range of {name} "
                f"narrowed from [{old.min}, {old.max}] to [{new.min}, {new.max}]"
            )
    return notes


def _apply_symbols(module: ir.Module, names: dict[str, str], symbols: dict[str, SymbolSpec]) -> None:
    """Give `torch.symbolic_int` ops the user's symbol names and the (narrowed) ranges, and
    declare them in the order of those names: the importer follows torch's order, which
    depends on string hashing (PYTHONHASHSEED), and the IR is hashed for the compile cache."""
    i64 = ir.IntegerType.get_signless(64, module.context)
    declared: list[ir.Operation] = []

    def update(op: ir.Operation) -> ir.WalkResult:
        if op.name == "torch.symbolic_int":
            declared.append(op)
            old = ir.StringAttr(op.attributes["symbol_name"]).value
            name = names.get(old, old)
            op.attributes["symbol_name"] = ir.StringAttr.get(name, module.context)
            if name in symbols:
                op.attributes["min_val"] = ir.IntegerAttr.get(i64, symbols[name].min)
                op.attributes["max_val"] = ir.IntegerAttr.get(i64, symbols[name].max)
        return ir.WalkResult.ADVANCE

    module.operation.walk(update)
    blocks: dict[ir.Block, list[ir.Operation]] = {}
    for op in declared:
        blocks.setdefault(op.block, []).append(op)
    for ops in blocks.values():
        ordered = sorted(ops, key=lambda op: ir.StringAttr(op.attributes["symbol_name"]).value)
        if ordered[0] != ops[0]:
            ordered[0].move_before(ops[0])  # a declaration has no operands: it may move up
        for previous, op in itertools.pairwise(ordered):
            op.move_after(previous)
