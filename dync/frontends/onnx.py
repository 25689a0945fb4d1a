"""ONNX model (file or ModelProto) -> dync IR, in process, with the MLIR bundled in IREE.

Steps:

1. load; inputs that set a node's axes are fixed at their example value (`onnx_fixed_inputs`);
   sequence and optional inputs become tensor inputs as the example inputs fix them
   (`onnx_structure`); `onnx.checker.check_model`, upgrade the default-domain opset to 17
   when it is older (IREE's recommendation), ONNX shape inference with data propagation (as
   `iree-import-onnx` does);
2. values known at compile time (shape arithmetic on static shapes) are computed, Ifs whose
   condition is known become the branch they take, and the known values a subgraph reads are
   copied into it for its shape inference (`onnx_constants`); sequences known at compile
   time are replaced by their tensors (`onnx_sequences`); nodes IREE would lower to other
   values than the spec are rewritten or refused (`onnx_rewrites`), nodes it does not lower
   rewritten into ones it does (`onnx_lowerings`), Loop scan outputs become accumulators and
   Scan states get one type (`onnx_loops`); the ranks shape inference left out are
   completed, and a tensor of unknown rank is refused (`onnx_ranks`);
3. `iree.compiler.extras.onnx_importer` turns the graph into `torch.operator "onnx.*"` ops
   in a function `@main`, in the caller's (IREE session's) context;
4. the ONNX ops are lowered to torch aten/prim ops by the same pipeline IREE runs for ONNX
   input (`torch-onnx-to-torch-backend-pipeline` with IREE's backend-legal ops); `If`/`Loop`
   become `torch.prim.If`/`torch.prim.Loop` (the scatter of each Scan output row gets the
   end torch-mlir leaves out). The op types left unlowered whose schema defines a function
   are expanded into their bodies (shapes inferred and known values computed again, so the
   rewrites see a body's nodes typed as the model's own) and steps 2-4 retried
   (`onnx_functions`); another op with no lowering is reported by its ONNX op type and node
   name;
5. every dynamic dim of a graph input (a `dim_param` or an unnamed dim) becomes a shape
   symbol, declared with `torch.symbolic_int` and bound to the argument with
   `torch.bind_symbolic_shape`, as IREE's FX importer does for `torch.export`;
6. `finish_import` lowers the control flow to scf (`dync-exact-loops`,
   `convert-torch-to-scf`, `dync-rotate-while`: see those passes for the upstream bugs
   they work around), writes the signature into the module and verifies the dync IR.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import replace
from pathlib import Path

import onnx
from iree.compiler import ir
from iree.compiler.extras import onnx_importer
from iree.compiler.passmanager import PassManager

from ..dialects import torch_ops
from ..dialects.walk import ops_named
from ..errors import CompilationError, DyncError, UnsupportedConstructError
from .common import ImportedProgram, Lowering, finish_import
from .onnx_constants import fold_constants
from .onnx_fixed_inputs import fix_structural_inputs
from .onnx_functions import expand_all, has_function, op_key
from .onnx_graphs import all_nodes, copied, graph_arguments
from .onnx_inputs import DynamicShapes, _bind_input_symbols, _input_symbols, _sanitize, _signature
from .onnx_loops import relax_growing
from .onnx_narrow_types import carry_narrow_types
from .onnx_ranks import complete_ranks, rankless
from .onnx_rewrites import rewrite_for_iree
from .onnx_sequences import eliminate_sequences, output_tree
from .onnx_structure import flatten_structured_inputs, structure_of
from .onnx_torch_lowerings import lower_for_importer

# Opset every model is brought up to before import (IREE's ONNX guide recommends >= 17:
# torch-mlir's ONNX lowerings are written and tested against recent opsets).
TARGET_OPSET = 17
ENTRY = "main"

# Ops IREE keeps whole through torch decomposition (iree-org/iree,
# compiler/plugins/input/Torch/InputConversion/Passes.h `BackendLegalOps`). IREE's own
# `--iree-input-type=onnx` path passes this list to the pipeline below.
IREE_BACKEND_LEGAL_OPS = (
    "aten.flatten.using_ints",
    "aten.unflatten.int",
    "aten.adaptive_avg_pool1d",
    "aten.adaptive_avg_pool2d",
    "aten.adaptive_max_pool1d",
    "aten.fft_rfft",
    "aten.convolution_backward",
    "aten.scaled_dot_product_attention",
)
# Stage 1: ONNX ops -> torch ops, alone, so that ops it cannot lower can be named.
ONNX_TO_TORCH = "builtin.module(func.func(convert-torch-onnx-to-torch))"
# Stage 2: what IREE runs for ONNX input (torch-mlir's createTorchOnnxToTorchBackendPipeline:
# the conversion again (a no-op now), decomposition, shape refinement and scalarization of
# shape computations, refined public return types).
ONNX_TO_TORCH_BACKEND = (
    "builtin.module(torch-onnx-to-torch-backend-pipeline{backend-legal-ops="
    + ",".join(IREE_BACKEND_LEGAL_OPS)
    + "})"
)

_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def import_onnx(
    model: str | os.PathLike | onnx.ModelProto,
    context: ir.Context,
    *,
    lower: Lowering,
    dynamic_shapes: DynamicShapes | None = None,
    args: tuple | None = None,
) -> ImportedProgram:
    """Import an ONNX model into `context` as dync IR (entry function `main`).

    `dynamic_shapes` names and bounds dynamic input dims: input name -> axis ->
    ``(symbol, min, max)`` or just ``symbol``. Dims it does not mention keep their
    `dim_param` as the symbol name (or ``<input>_d<axis>`` when unnamed) and the range
    ``[1, 2**31 - 1]``. `args`, the example inputs, fix the length of sequence inputs and the
    presence of optional ones (`onnx_structure`).
    """
    proto, fixed, notes = fix_structural_inputs(_load(model), args)
    proto = _structured(proto, args, notes)
    proto = _prepare(proto, model if not isinstance(model, onnx.ModelProto) else None, notes)
    narrow = _with_narrow_types_carried(proto, notes)
    proto = _with_constants_folded(proto, notes)
    proto, sequence_outputs = _without_sequences(proto, notes)
    inputs = graph_arguments(proto.graph)  # the rewrites below keep them
    symbols, input_dims = _input_symbols(inputs, dynamic_shapes or {})
    _require_dialects(context)
    proto, module = _imported(proto, context, notes)

    with context, ir.Location.unknown():
        entry = _entry_function(module)
        _strip_onnx_meta(entry)
        _bind_input_symbols(entry, input_dims, symbols)
        result_types = list(
            ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value).results
        )

    signature = _signature(proto.graph, inputs, input_dims, symbols, result_types, fixed)
    if narrow:
        signature.inputs = [replace(s, dtype=narrow.get(s.name, s.dtype)) for s in signature.inputs]
        signature.outputs = [replace(s, dtype=narrow.get(out.name, s.dtype))
                             for s, out in zip(signature.outputs, proto.graph.output, strict=True)]
    if sequence_outputs and any(n is not None for n in sequence_outputs):
        signature.output_tree = output_tree(sequence_outputs)
    program = finish_import(module, signature, "onnx", lower)
    program.notes.extend(notes)
    return program


# --------------------------------------------------------------------------- loading


def _load(model: str | os.PathLike | onnx.ModelProto) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    if not isinstance(model, str | os.PathLike):
        raise DyncError(
            f"import_onnx expects an ONNX file path or an onnx.ModelProto, got {type(model).__name__}"
        )
    path = Path(model)
    if not path.is_file():
        raise DyncError(f"ONNX model file not found: {path}")
    try:
        return onnx.load(str(path))
    except Exception as e:  # protobuf DecodeError, OSError, external-data errors
        raise DyncError(f"cannot read ONNX model {path}: {type(e).__name__}: {e}") from e


def _prepare(
    proto: onnx.ModelProto, path: str | os.PathLike | None, notes: list[str]
) -> onnx.ModelProto:
    """Check the model, bring its opset up to TARGET_OPSET and run ONNX shape inference."""
    original = proto
    where = f" {path}" if path is not None else ""
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as e:
        raise DyncError(f"invalid ONNX model{where}: {e}") from e
    except ValueError as e:
        # Over protobuf's 2 GB: only the file-based checker and shape inference work.
        if path is None:
            raise DyncError(
                f"ONNX model too large to check in memory ({e}); pass its file path"
            ) from e
        return _infer_shapes_from_file(Path(path))

    opset = _default_opset(proto)
    if opset is None:
        # Only ops of other domains (ai.onnx.ml, training): IREE's importer converts nothing
        # without the default domain's opset ("function is missing onnx opset version"); with
        # it, their nodes are left unconverted and named (`_raise_unconverted`).
        proto = copied(proto) if proto is original else proto
        proto.opset_import.add(domain="", version=TARGET_OPSET)
    elif opset < TARGET_OPSET:
        try:
            proto = onnx.version_converter.convert_version(proto, TARGET_OPSET)
        except Exception as e:  # ConvertError, RuntimeError from the C++ adapters
            raise UnsupportedConstructError(
                f"ONNX opset {opset}",
                f"upgrading the model to opset {TARGET_OPSET} failed: {e}",
            ) from e
        notes.append(f"upgraded the ONNX opset from {opset} to {TARGET_OPSET}")
    proto = _name_unnamed_input_dims(proto, copy=proto is original)
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except ValueError as e:
        # Over 2 GB once upgraded: infer from the file (the original opset is kept).
        if path is None:
            raise DyncError(f"ONNX shape inference failed: {e}") from e
        return _infer_shapes_from_file(Path(path))
    except Exception as e:  # onnx.shape_inference.InferenceError
        raise DyncError(f"ONNX shape inference failed{where}: {e}") from e
    return inferred


def _with_narrow_types_carried(proto: onnx.ModelProto, notes: list[str]) -> dict[str, str]:
    """Carry sub-byte integers and 8- and 4-bit floats in bytes (`onnx_narrow_types`), in
    place; {input or output name: its narrow dtype}."""
    narrow = carry_narrow_types(proto)
    if narrow is None:
        return {}
    notes.append("carried the model's narrow integers and floats in bytes (dync/frontends/"
                 "onnx_narrow_types.py)")
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except ValueError:  # over 2 GB: the rewrite's few new values stay untyped
        return narrow
    except Exception as e:  # onnx.shape_inference.InferenceError
        raise DyncError(f"ONNX shape inference failed after carrying narrow types: {e}") from e
    proto.CopyFrom(inferred)
    return narrow


def _require_ranks(proto: onnx.ModelProto) -> None:
    """Complete the ranks shape inference left out; refuse a tensor whose rank stays unknown
    (IREE's importer would read it as a scalar, and some lowerings then crash the compiler)."""
    complete_ranks(proto.graph)
    for node, value in rankless(proto.graph):
        raise UnsupportedConstructError(
            f"ONNX {_op_label(node)}",
            f"ONNX shape inference found no rank for {value!r}, output of {_op_label(node)} "
            f"node {node.name!r} (its shape depends on values known only at run time); "
            "IREE's ONNX importer needs the rank of every tensor",
            f"node {node.name!r}")


def _structured(proto: onnx.ModelProto, args: tuple | None, notes: list[str]) -> onnx.ModelProto:
    """`proto` with its sequence and optional inputs as tensor inputs (a copy, when any)."""
    structure = structure_of(graph_arguments(proto.graph), args)
    if not structure:
        return proto
    proto = copied(proto)
    notes.extend(flatten_structured_inputs(proto.graph, structure))
    return proto


def _with_constants_folded(proto: onnx.ModelProto, notes: list[str]) -> onnx.ModelProto:
    """`proto` (changed in place) with the values known at compile time computed and the Ifs
    whose condition is known replaced by their branch (`onnx_constants`), shapes inferred
    again: a round may make more shapes static, or inline Ifs and nodes to fold."""
    folded: list[str] = []
    inlined: list[str] = []
    for _ in range(_FOLD_ROUNDS):
        ops, ifs, subgraphs = fold_constants(proto)
        if not ops and not ifs and not subgraphs:
            break
        folded.extend(ops)
        inlined.extend(ifs)
        try:
            proto = onnx.shape_inference.infer_shapes(proto, data_prop=True)
        except Exception as e:  # an InferenceError in an inlined branch
            raise DyncError(f"ONNX shape inference failed after folding constants: {e}") from e
    if inlined:
        notes.append(f"ONNX If {', '.join(inlined)}: condition known at compile time, replaced "
                     "by the branch taken")
    if folded:
        notes.append(f"computed {len(folded)} ONNX nodes known at compile time "
                     f"({', '.join(sorted(set(folded)))})")
    return proto


# Rounds of folding: each may make static the shapes, or known the conditions, of the next.
_FOLD_ROUNDS = 4


def _without_sequences(proto: onnx.ModelProto, notes: list[str]
                       ) -> tuple[onnx.ModelProto, list[int | None] | None]:
    """`proto` with the sequences known at compile time replaced by their tensors
    (`onnx_sequences`), shapes inferred again; and the length of each sequence output."""
    changed, groups = eliminate_sequences(proto.graph)
    if not changed:
        return proto, None
    notes.extend(changed)
    try:
        return onnx.shape_inference.infer_shapes(proto, data_prop=True), groups
    except Exception as e:  # an InferenceError in the nodes that replaced the sequence ops
        raise DyncError(f"ONNX shape inference failed after evaluating sequences: {e}") from e


def _imported(proto: onnx.ModelProto, context: ir.Context, notes: list[str]
              ) -> tuple[onnx.ModelProto, ir.Module]:
    """The graph rewritten for IREE's importer, imported into `context` and lowered to torch
    ops. The ops the importer leaves unlowered whose schema defines a function are expanded
    into their bodies and the import retried (a body's ops may need the same in turn)."""
    opset = _default_opset(proto) or TARGET_OPSET
    expandable = {key for key in {op_key(n) for n in all_nodes(proto.graph)}
                  if has_function(*key, opset)}
    original = copied(proto) if expandable else proto
    expand: frozenset[tuple[str, str]] = frozenset()
    while True:
        attempt_notes: list[str] = []
        source = _with_functions_expanded(original, expand, opset, attempt_notes) if expand \
            else proto
        rewritten = _rewrite_for_iree(source, attempt_notes)
        if expand:  # the bodies compute axes and shapes from the inputs' shapes
            rewritten = _with_constants_folded(rewritten, attempt_notes)
        nodes = _name_nodes(rewritten.graph)
        _require_ranks(rewritten)
        with context, ir.Location.unknown():
            module = _import_graph(rewritten, context)
            leftovers = _converted(module, nodes)
            unlowered = {op_key(node) for _, loc in leftovers
                         if (node := _node_for(loc, nodes)) is not None}
            more = {key for key in unlowered - expand if has_function(*key, opset)}
            if leftovers and more and unlowered <= expand | more:
                expand |= more
                continue
            if leftovers:
                _raise_unconverted(leftovers, nodes, _opsets(rewritten))
            _lower_to_backend(module, nodes)
        notes.extend(attempt_notes)
        if expand:
            notes.append("expanded ONNX " + ", ".join(sorted(t for _, t in expand)) + " into "
                         "their function bodies from the ONNX schema (IREE's importer has no "
                         "lowering for them)")
        return rewritten, module


def _with_functions_expanded(proto: onnx.ModelProto, expand: frozenset[tuple[str, str]],
                             opset: int, notes: list[str]) -> onnx.ModelProto:
    """A copy of `proto` with the op types in `expand` replaced by their function bodies, its
    shapes inferred and what is known at compile time folded: the rewrites then see a body's
    values typed (a Scan's outputs in one), as they see the model's own."""
    expanded = copied(proto)
    expand_all(expanded.graph, opset, expand)
    try:
        expanded = onnx.shape_inference.infer_shapes(expanded, data_prop=True)
    except Exception as e:  # an InferenceError in a body
        raise DyncError(f"ONNX shape inference failed after expanding functions: {e}") from e
    return _with_constants_folded(expanded, notes)


def _rewrite_for_iree(proto: onnx.ModelProto, notes: list[str]) -> onnx.ModelProto:
    """Rewrite or refuse the nodes IREE would lower to other values or not at all
    (`onnx_rewrites` and the rules it gathers), and infer the shapes the rewrites added."""
    complete_ranks(proto.graph)  # the rewrites read shapes, Loop bodies' often left out
    rewritten = rewrite_for_iree(proto.graph, _default_opset(proto) or TARGET_OPSET)
    if not rewritten:
        return proto
    notes.append("rewrote ONNX " + ", ".join(rewritten) + " into ops IREE lowers to the "
                 "spec's values (dync/frontends/onnx_rewrites.py and the rules it gathers)")
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except Exception as e:  # over 2 GB, or an InferenceError in the rewritten nodes
        raise DyncError(f"ONNX shape inference failed after rewriting {rewritten}: {e}") from e
    relax_growing(inferred.graph)
    return inferred


def _name_unnamed_input_dims(proto: onnx.ModelProto, *, copy: bool) -> onnx.ModelProto:
    """Give each unnamed dynamic dim of a graph input a dim_param (`<input>_d<axis>`).

    Shape inference then carries the name to the outputs that have the same dim, which it
    cannot do for an unnamed dim. The caller's proto is copied rather than changed.
    """
    graph = proto.graph
    inputs = graph_arguments(graph)
    unnamed = [
        (i, axis)
        for i, inp in enumerate(inputs)
        if inp.type.WhichOneof("value") == "tensor_type"
        for axis, d in enumerate(inp.type.tensor_type.shape.dim)
        if not d.HasField("dim_value") and not d.dim_param
    ]
    if not unnamed:
        return proto
    if copy:
        proto = copied(proto)
        graph = proto.graph
        inputs = graph_arguments(graph)
    taken = {
        d.dim_param
        for v in list(graph.input) + list(graph.output) + list(graph.value_info)
        for d in v.type.tensor_type.shape.dim
        if d.dim_param
    }
    for i, axis in unnamed:
        base = _sanitize(f"{inputs[i].name}_d{axis}")
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        inputs[i].type.tensor_type.shape.dim[axis].dim_param = name
    return proto


def _infer_shapes_from_file(path: Path) -> onnx.ModelProto:
    try:
        onnx.checker.check_model(str(path))
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            inferred = Path(tmp) / "inferred.onnx"
            onnx.shape_inference.infer_shapes_path(str(path), str(inferred), data_prop=True)
            proto = onnx.load(str(inferred), load_external_data=False)
        onnx.load_external_data_for_model(proto, str(path.parent))
        return proto
    except Exception as e:
        raise DyncError(f"cannot check or shape-infer ONNX model {path}: {e}") from e


def _default_opset(proto: onnx.ModelProto) -> int | None:
    for opset in proto.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return None


def _name_nodes(graph: onnx.GraphProto) -> dict[str, onnx.NodeProto]:
    """Give unnamed nodes (in subgraphs too) a name; return all nodes by name.

    The importer puts each node's name in its ops' locations, which is how an op that
    fails to lower is traced back to its node.
    """
    nodes: dict[str, onnx.NodeProto] = {}
    counter = 0
    for node in all_nodes(graph):
        if not node.name:
            node.name = f"{node.op_type}_{counter}"
            counter += 1
        nodes.setdefault(node.name, node)
    return nodes


# --------------------------------------------------------------------------- import + lowering


def _require_dialects(context: ir.Context) -> None:
    # An IREE session registers every dialect but loads them lazily: the importer builds
    # ops by name, which needs them loaded.
    for dialect in ("builtin", "func", "torch"):
        try:
            context.dialects[dialect]
        except IndexError as e:
            raise DyncError(
                f"the MLIR context has no {dialect!r} dialect (use an IREE compiler session)"
            ) from e


def _import_graph(proto: onnx.ModelProto, context: ir.Context) -> ir.Module:
    proto.graph.name = ENTRY  # the importer names the function after the graph
    try:
        info = onnx_importer.ModelInfo(proto)
        module = info.create_module(context=context)
        importer = onnx_importer.NodeImporter.define_function(info.main_graph, module.operation)
        importer.import_all()
    except onnx_importer.OnnxImportError as e:
        raise UnsupportedConstructError("ONNX graph", f"the ONNX importer failed: {e}") from e
    except ir.MLIRError as e:
        raise CompilationError("ONNX import failed", [str(d) for d in e.error_diagnostics]) from e
    return module


def _converted(module: ir.Module, nodes: dict[str, onnx.NodeProto]) -> list[tuple[str, str]]:
    """Convert the module's ONNX ops to torch ops; returns the ops left unconverted (op name,
    location)."""
    lower_for_importer(module)
    try:
        PassManager.parse(ONNX_TO_TORCH).run(module.operation)
    except ir.MLIRError as e:
        _raise_for_node(e, nodes, "convert-torch-onnx-to-torch failed")
    _lower_bitcasts(module)
    return _unconverted_ops(module)


def _lower_bitcasts(module: ir.Module) -> None:
    """ONNX `BitCast` between element types of one width, which torch-mlir does not lower:
    the bits reinterpreted by `tensor.bitcast` between `torch_c` casts. Other widths (bool to
    a byte, where the shape would change) and 0-d tensors stay unconverted and are reported
    naming the node."""
    for dialect in ("torch_c", "tensor"):  # loaded lazily: an op built by name needs it
        module.context.dialects[dialect]
    for op in ops_named(module.operation, "torch.operator"):
        if ir.StringAttr(op.attributes["name"]).value != "onnx.BitCast" or len(op.operands) != 1:
            continue
        source, result = op.operands[0], op.results[0]
        (before, bits), (after, to_bits) = (_builtin_tensor(v.type) for v in (source, result))
        if before is None or after is None or bits != to_bits or bits == 1 or "x" not in before:
            continue  # IREE 3.13 does not bufferize a bitcast of a 0-d tensor
        ip, loc = ir.InsertionPoint(op), op.location
        raw = torch_ops.create("torch_c.to_builtin_tensor", before, ip, loc, [source])
        cast = torch_ops.create("tensor.bitcast", after, ip, loc, [raw])
        value = torch_ops.create("torch_c.from_builtin_tensor", result.type, ip, loc, [cast])
        result.replace_all_uses_with(value)
        op.erase()


_VTENSOR = re.compile(r"!torch\.vtensor<\[([^\]]*)\],(s|u)?([a-z]*)(\d+)>")


def _builtin_tensor(vtensor: ir.Type) -> tuple[str | None, int]:
    """The builtin tensor type of a `!torch.vtensor` as text, integers signless (as IREE
    computes them), and its element's width; (None, 0) for another type."""
    match = _VTENSOR.fullmatch(str(vtensor))
    if match is None:
        return None, 0
    dims, _, kind, bits = match.groups()
    shape = "".join(d.replace("-1", "?") + "x" for d in dims.split(",") if d)
    return f"tensor<{shape}{kind}{bits}>", int(bits)


def _lower_to_backend(module: ir.Module, nodes: dict[str, onnx.NodeProto]) -> None:
    _mend_scan_output_scatters(module)
    try:
        PassManager.parse(ONNX_TO_TORCH_BACKEND).run(module.operation)
    except ir.MLIRError as e:
        _raise_for_node(e, nodes, "lowering ONNX to torch backend form failed")


def _mend_scan_output_scatters(module: ir.Module) -> None:
    """Give the `slice_scatter` torch-mlir's Scan lowering writes each scan output with its
    end: it emits `slice_scatter(acc, item, dim, i, i)`, an empty slice for a one-row item,
    which IREE happens to lower by the item's size; once a one-trip Scan is unrolled, the
    scatter folds to a no-op and the scan output stays zero. The end becomes
    `i + item.size(dim)`."""
    for op in ops_named(module.operation, "torch.aten.slice_scatter"):
        _, item, dim, start, end, _ = op.operands
        if start != end:
            continue
        ip, loc = ir.InsertionPoint(op), op.location
        size = torch_ops.create("torch.aten.size.int", "!torch.int", ip, loc, [item, dim])
        op.operands[4] = torch_ops.create("torch.aten.add.int", "!torch.int", ip, loc,
                                          [start, size])


def _unconverted_ops(module: ir.Module) -> list[tuple[str, str]]:
    """(op name, location) of every torch.operator left after the ONNX conversion."""
    return [
        (ir.StringAttr(op.attributes["name"]).value, str(op.location))
        for op in ops_named(module.operation, "torch.operator")
    ]


def _node_for(location: str, nodes: dict[str, onnx.NodeProto]) -> onnx.NodeProto | None:
    for name in _QUOTED.findall(location):  # loc("node"), fused[...], ...
        if name in nodes:
            return nodes[name]
    return None


def _op_label(node: onnx.NodeProto) -> str:
    domain = node.domain if node.domain not in ("", "ai.onnx") else ""
    return f"{domain}.{node.op_type}" if domain else node.op_type


def _opsets(proto: onnx.ModelProto) -> dict[str, int]:
    """The model's opset version of each domain it imports (the default domain as "")."""
    return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in proto.opset_import}


def _raise_unconverted(
    leftovers: list[tuple[str, str]], nodes: dict[str, onnx.NodeProto], opsets: dict[str, int]
) -> None:
    described = []
    for op_name, loc in leftovers:
        node = _node_for(loc, nodes)
        described.append(
            (_op_label(node), node.name, node.domain) if node
            else (op_name.removeprefix("onnx."), loc, "")
        )
    op_type, node_name, domain = described[0]
    others = sorted({f"{t} (node {n!r})" for t, n, _ in described[1:]})
    domain = "" if domain == "ai.onnx" else domain
    reason = (
        f"ONNX {op_type} node {node_name!r} has no lowering to torch ops in IREE's "
        f"ONNX importer (torch-mlir convert-torch-onnx-to-torch) at "
        f"{domain + ' ' if domain else ''}opset {opsets.get(domain)}"
    )
    if others:
        reason += "; also unsupported: " + ", ".join(others)
    raise UnsupportedConstructError(f"ONNX {op_type}", reason, f"node {node_name!r}")


def _raise_for_node(e: ir.MLIRError, nodes: dict[str, onnx.NodeProto], what: str) -> None:
    diagnostics = [str(d) for d in e.error_diagnostics] or [e.message]
    for d in e.error_diagnostics:
        node = _node_for(str(d.location), nodes)
        if node is not None:
            raise UnsupportedConstructError(
                f"ONNX {_op_label(node)}",
                f"{what} on ONNX {_op_label(node)} node {node.name!r}: {d.message}",
                f"node {node.name!r}",
            ) from e
    raise CompilationError(f"ONNX import: {what}", diagnostics) from e


def _entry_function(module: ir.Module) -> ir.Operation:
    for op in module.body.operations:
        if (
            op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == ENTRY
        ):
            return op.operation
    raise CompilationError(f"ONNX import produced no @{ENTRY} function")


def _strip_onnx_meta(func: ir.Operation) -> None:
    # Without these IREE's input-type detection would treat the (now torch) module as ONNX.
    names = [getattr(a, "name", a) for a in func.attributes]  # str or NamedAttribute
    for name in names:
        if name.startswith("torch.onnx_meta."):
            del func.attributes[name]


# --------------------------------------------------------------------------- signature


