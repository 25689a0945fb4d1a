"""ONNX model (file or ModelProto) -> dync IR, in process, with the MLIR bundled in IREE.

Steps:

1. load, `onnx.checker.check_model`, upgrade the default-domain opset to 17 when it is
   older (IREE's recommendation), ONNX shape inference with data propagation (as
   `iree-import-onnx` does);
2. `iree.compiler.extras.onnx_importer` turns the graph into `torch.operator "onnx.*"` ops
   in a function `@main`, in the caller's (IREE session's) context;
3. the ONNX ops are lowered to torch aten/prim ops by the same pipeline IREE runs for ONNX
   input (`torch-onnx-to-torch-backend-pipeline` with IREE's backend-legal ops); `If`/`Loop`
   become `torch.prim.If`/`torch.prim.Loop`. An op with no lowering is reported by its
   ONNX op type and node name;
4. every dynamic dim of a graph input (a `dim_param` or an unnamed dim) becomes a shape
   symbol, declared with `torch.symbolic_int` and bound to the argument with
   `torch.bind_symbolic_shape`, as IREE's FX importer does for `torch.export`;
5. `finish_import` lowers the control flow to scf (`dync-exact-loops`,
   `convert-torch-to-scf`, `dync-rotate-while`: see those passes for the upstream bugs
   they work around), writes the signature into the module and verifies the dync IR.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import onnx
from iree.compiler import ir
from iree.compiler.extras import onnx_importer
from iree.compiler.passmanager import PassManager

from ..dialects.dync import static_dims
from ..dialects.walk import ops_named
from ..errors import CompilationError, DyncError, UnsupportedConstructError
from ..signature import Dim, Signature, SymbolSpec, TensorSpec
from .common import ImportedProgram, finish_import

# Opset every model is brought up to before import (IREE's ONNX guide recommends >= 17:
# torch-mlir's ONNX lowerings are written and tested against recent opsets).
TARGET_OPSET = 17
# Default range of an input's dynamic dim, and the range of a dim only an output has.
DEFAULT_MIN = 1
DEFAULT_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
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

# ONNX element type -> dync dtype name (the numpy name).
_ELEM_TYPES = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.BFLOAT16: "bfloat16",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.BOOL: "bool",
}
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')

DimOverride = tuple[str, int, int] | str
DynamicShapes = dict[str, dict[int, DimOverride]]


def import_onnx(
    model: str | os.PathLike | onnx.ModelProto,
    context: ir.Context,
    *,
    dynamic_shapes: DynamicShapes | None = None,
) -> ImportedProgram:
    """Import an ONNX model into `context` as dync IR (entry function `main`).

    `dynamic_shapes` names and bounds dynamic input dims: input name -> axis ->
    ``(symbol, min, max)`` or just ``symbol``. Dims it does not mention keep their
    `dim_param` as the symbol name (or ``<input>_d<axis>`` when unnamed) and the range
    ``[1, 2**31 - 1]``.
    """
    notes: list[str] = []
    proto = _prepare(_load(model), model if not isinstance(model, onnx.ModelProto) else None, notes)
    nodes = _name_nodes(proto.graph)
    inputs = _graph_inputs(proto.graph)
    symbols, input_dims = _input_symbols(inputs, dynamic_shapes or {})

    _require_dialects(context)
    with context, ir.Location.unknown():
        module = _import_graph(proto, context)
        _lower(module, nodes, _default_opset(proto))
        entry = _entry_function(module)
        _strip_onnx_meta(entry)
        _bind_input_symbols(entry, input_dims, symbols)
        result_types = list(
            ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value).results
        )

    signature = _signature(proto.graph, inputs, input_dims, symbols, result_types)
    program = finish_import(module, signature, "onnx")
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
    if opset is not None and opset < TARGET_OPSET:
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
        return onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except ValueError as e:
        # Over 2 GB once upgraded: infer from the file (the original opset is kept).
        if path is None:
            raise DyncError(f"ONNX shape inference failed: {e}") from e
        return _infer_shapes_from_file(Path(path))
    except Exception as e:  # onnx.shape_inference.InferenceError
        raise DyncError(f"ONNX shape inference failed{where}: {e}") from e


def _name_unnamed_input_dims(proto: onnx.ModelProto, *, copy: bool) -> onnx.ModelProto:
    """Give each unnamed dynamic dim of a graph input a dim_param (`<input>_d<axis>`).

    Shape inference then carries the name to the outputs that have the same dim, which it
    cannot do for an unnamed dim. The caller's proto is copied rather than changed.
    """
    graph = proto.graph
    inputs = _graph_inputs(graph)
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
        proto = _copy(proto)
        graph = proto.graph
        inputs = _graph_inputs(graph)
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


def _copy(proto: onnx.ModelProto) -> onnx.ModelProto:
    duplicate = onnx.ModelProto()
    duplicate.CopyFrom(proto)
    return duplicate


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

    def visit(g: onnx.GraphProto) -> None:
        nonlocal counter
        for node in g.node:
            if not node.name:
                node.name = f"{node.op_type}_{counter}"
                counter += 1
            nodes.setdefault(node.name, node)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    visit(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for sub in attr.graphs:
                        visit(sub)

    visit(graph)
    return nodes


# --------------------------------------------------------------------------- shape symbols


def _graph_inputs(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs that become arguments: initializers (old-style weights) excluded."""
    initialized = {t.name for t in graph.initializer}
    return [i for i in graph.input if i.name not in initialized]


def _sanitize(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return name if _IDENTIFIER.match(name) else f"_{name}"


@dataclass
class _Symbol:
    name: str
    min: int = DEFAULT_MIN
    max: int = DEFAULT_MAX
    explicit_range: bool = False


def _input_symbols(
    inputs: list[onnx.ValueInfoProto], dynamic_shapes: DynamicShapes
) -> tuple[dict[str, _Symbol], dict[str, tuple[Dim, ...]]]:
    """Symbols of the inputs' dynamic dims (name -> symbol) and each input's dims."""
    by_name = {i.name: i for i in inputs}
    if not isinstance(dynamic_shapes, dict):
        raise DyncError(
            "dynamic_shapes for an ONNX model must be a dict: input name -> {axis: dim}"
        )
    for name in dynamic_shapes:
        if name not in by_name:
            raise DyncError(
                f"dynamic_shapes names input {name!r}, but the model's inputs are "
                f"{', '.join(repr(n) for n in by_name) or '(none)'}"
            )

    # Dims with the same dim_param are one symbol (a group); an unnamed dynamic dim (only
    # seen if _name_unnamed_input_dims did not run) is a group of its own.
    group_of: dict[tuple[str, int], str] = {}
    groups: dict[str, str] = {}  # group key -> default symbol name
    used_defaults: set[str] = set()
    shapes: dict[str, list[int | str]] = {}
    for inp in inputs:
        tt = _tensor_type(inp, "input")
        _dtype(inp, "input")  # reject unsupported element types before any work
        dims: list[int | str] = []
        for axis, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
                continue
            key = (
                f"param:{d.dim_param}"
                if d.HasField("dim_param") and d.dim_param
                else f"dim:{inp.name}:{axis}"
            )
            if key not in groups:
                base = (
                    _sanitize(d.dim_param)
                    if key.startswith("param:")
                    else _sanitize(f"{inp.name}_d{axis}")
                )
                default, n = base, 1
                while default in used_defaults:
                    n += 1
                    default = f"{base}_{n}"
                used_defaults.add(default)
                groups[key] = default
            group_of[(inp.name, axis)] = key
            dims.append(key)
        shapes[inp.name] = dims

    # Apply the overrides: a group takes the name (and range) the user gave any of its dims.
    # group key -> (symbol name, range or None, where the user said so)
    chosen: dict[str, tuple[str, tuple[int, int] | None, str]] = {}
    for inp_name, axes in dynamic_shapes.items():
        if axes is None:
            continue
        if not isinstance(axes, dict):
            raise DyncError(f"dynamic_shapes[{inp_name!r}] must be a dict: axis -> dim")
        rank = len(shapes[inp_name])
        for axis, spec in axes.items():
            where = f"dynamic_shapes[{inp_name!r}][{axis!r}]"
            if not isinstance(axis, int) or not -rank <= axis < rank:
                raise DyncError(f"{where}: input {inp_name!r} has rank {rank}; no axis {axis!r}")
            axis %= rank
            if (inp_name, axis) not in group_of:
                raise DyncError(
                    f"{where}: dim {axis} of input {inp_name!r} is static "
                    f"({shapes[inp_name][axis]}) in the model and cannot be made dynamic"
                )
            sym_name, sym_range = _parse_override(where, spec)
            key = group_of[(inp_name, axis)]
            if key in chosen:
                prev_name, prev_range, prev_where = chosen[key]
                if prev_name != sym_name or (sym_range and prev_range and sym_range != prev_range):
                    raise DyncError(
                        f"{where} = {spec!r} conflicts with {prev_where}: both dims are "
                        f"{_describe_group(key)} in the model"
                    )
                sym_range = sym_range or prev_range
            chosen[key] = (sym_name, sym_range, where)

    symbols: dict[str, _Symbol] = {}
    key_to_symbol: dict[str, str] = {}
    for key, default in groups.items():
        name, sym_range, where = chosen.get(key, (default, None, None))
        sym = symbols.setdefault(name, _Symbol(name))
        if sym_range is not None:
            if sym.explicit_range and (sym.min, sym.max) != sym_range:
                raise DyncError(
                    f"{where}: symbol {name!r} is given two ranges, [{sym.min}, {sym.max}] "
                    f"and [{sym_range[0]}, {sym_range[1]}]"
                )
            sym.min, sym.max = sym_range
            sym.explicit_range = True
        key_to_symbol[key] = name
    input_dims = {
        name: tuple(key_to_symbol[d] if isinstance(d, str) else d for d in dims)
        for name, dims in shapes.items()
    }
    return symbols, input_dims


def _describe_group(key: str) -> str:
    return (
        f"dim_param {key.removeprefix('param:')!r}" if key.startswith("param:") else "the same dim"
    )


def _parse_override(where: str, spec: object) -> tuple[str, tuple[int, int] | None]:
    if isinstance(spec, str):
        name, sym_range = spec, None
    elif (
        isinstance(spec, tuple | list)
        and len(spec) == 3
        and isinstance(spec[0], str)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in spec[1:])
    ):
        name, sym_range = spec[0], (int(spec[1]), int(spec[2]))
    else:
        raise DyncError(f"{where} must be a symbol name or (name, min, max), got {spec!r}")
    if not _IDENTIFIER.match(name):
        raise DyncError(f"{where}: symbol name {name!r} is not an identifier")
    if sym_range is not None and not 0 <= sym_range[0] <= sym_range[1] <= INT64_MAX:
        raise DyncError(f"{where}: empty or negative range [{sym_range[0]}, {sym_range[1]}]")
    return name, sym_range


def _tensor_type(value: onnx.ValueInfoProto, what: str) -> onnx.TypeProto.Tensor:
    kind = value.type.WhichOneof("value")
    if kind != "tensor_type":
        raise UnsupportedConstructError(
            f"ONNX {kind or 'untyped'} {what}",
            f"{what} {value.name!r} is a {kind or 'value of unknown type'}; dync supports tensors only",
        )
    tt = value.type.tensor_type
    if not tt.HasField("shape"):
        raise UnsupportedConstructError(
            f"ONNX {what} of unknown rank",
            f"{what} {value.name!r} has no shape; give it a rank (dims may be dim_params)",
        )
    return tt


def _dtype(value: onnx.ValueInfoProto, what: str) -> str:
    elem = value.type.tensor_type.elem_type
    if elem not in _ELEM_TYPES:
        type_name = (
            onnx.TensorProto.DataType.Name(elem)
            if elem in onnx.TensorProto.DataType.values()
            else str(elem)
        )
        raise UnsupportedConstructError(
            f"ONNX {type_name} tensor", f"{what} {value.name!r} has element type {type_name}"
        )
    return _ELEM_TYPES[elem]


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


def _lower(module: ir.Module, nodes: dict[str, onnx.NodeProto], opset: int | None) -> None:
    try:
        PassManager.parse(ONNX_TO_TORCH).run(module.operation)
    except ir.MLIRError as e:
        _raise_for_node(e, nodes, "convert-torch-onnx-to-torch failed")
    leftovers = _unconverted_ops(module)
    if leftovers:
        _raise_unconverted(leftovers, nodes, opset)
    try:
        PassManager.parse(ONNX_TO_TORCH_BACKEND).run(module.operation)
    except ir.MLIRError as e:
        _raise_for_node(e, nodes, "lowering ONNX to torch backend form failed")


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


def _raise_unconverted(
    leftovers: list[tuple[str, str]], nodes: dict[str, onnx.NodeProto], opset: int | None
) -> None:
    described = []
    for op_name, loc in leftovers:
        node = _node_for(loc, nodes)
        described.append(
            (_op_label(node), node.name) if node else (op_name.removeprefix("onnx."), loc)
        )
    op_type, node_name = described[0]
    others = sorted({f"{t} (node {n!r})" for t, n in described[1:]})
    reason = (
        f"ONNX {op_type} node {node_name!r} has no lowering to torch ops in IREE's "
        f"ONNX importer (torch-mlir convert-torch-onnx-to-torch) at opset {opset}"
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


def _bind_input_symbols(
    func: ir.Operation, input_dims: dict[str, tuple[Dim, ...]], symbols: dict[str, _Symbol]
) -> None:
    """Declare the symbols (torch.symbolic_int) and bind them to the dynamic arguments."""
    block = func.regions[0].blocks[0]
    i64 = ir.IntegerType.get_signless(64)
    int_type = ir.Type.parse("!torch.int")
    ip = ir.InsertionPoint(block.operations[0])
    values: dict[str, ir.Value] = {}
    for name, sym in symbols.items():
        values[name] = ir.Operation.create(
            "torch.symbolic_int",
            results=[int_type],
            attributes={
                "symbol_name": ir.StringAttr.get(name),
                "min_val": ir.IntegerAttr.get(i64, sym.min),
                "max_val": ir.IntegerAttr.get(i64, sym.max),
            },
            ip=ip,
        ).result
    for arg, dims in zip(block.arguments, input_dims.values(), strict=True):
        used = list(dict.fromkeys(d for d in dims if isinstance(d, str)))
        if not used:
            continue
        position = {name: i for i, name in enumerate(used)}
        exprs = [
            ir.AffineSymbolExpr.get(position[d])
            if isinstance(d, str)
            else ir.AffineConstantExpr.get(d)
            for d in dims
        ]
        affine_map = ir.AffineMap.get(0, len(used), exprs)
        ir.Operation.create(
            "torch.bind_symbolic_shape",
            operands=[arg] + [values[name] for name in used],
            attributes={"shape_expressions": ir.AffineMapAttr.get(affine_map)},
            ip=ip,
        )


# --------------------------------------------------------------------------- signature


def _signature(
    graph: onnx.GraphProto,
    inputs: list[onnx.ValueInfoProto],
    input_dims: dict[str, tuple[Dim, ...]],
    symbols: dict[str, _Symbol],
    result_types: list[ir.Type],
) -> Signature:
    input_specs = [TensorSpec(i.name, _dtype(i, "input"), input_dims[i.name]) for i in inputs]
    # dim_param -> symbol, for the params the inputs have.
    param_symbol: dict[str, str] = {}
    for inp in inputs:
        for d, dim in zip(inp.type.tensor_type.shape.dim, input_dims[inp.name], strict=True):
            if d.HasField("dim_param") and d.dim_param and isinstance(dim, str):
                param_symbol.setdefault(d.dim_param, dim)

    spec_symbols = {n: SymbolSpec(n, s.min, s.max) for n, s in symbols.items()}
    output_specs = []
    for i, (out, ty) in enumerate(zip(graph.output, result_types, strict=True)):
        kind = out.type.WhichOneof("value")
        if kind != "tensor_type":
            raise UnsupportedConstructError(
                f"ONNX {kind or 'untyped'} output",
                f"output {out.name!r} is a {kind or 'value of unknown type'}; dync supports tensors only",
            )
        lowered = static_dims(ty)
        onnx_dims = (
            list(out.type.tensor_type.shape.dim) if out.type.tensor_type.HasField("shape") else None
        )
        if onnx_dims is None and lowered is None:
            raise UnsupportedConstructError(
                "ONNX output of unknown rank", f"the rank of output {out.name!r} is unknown"
            )
        rank = len(onnx_dims) if onnx_dims is not None else len(lowered)
        dims: list[Dim] = []
        for axis in range(rank):
            d = onnx_dims[axis] if onnx_dims is not None else None
            static = lowered[axis] if lowered is not None and axis < len(lowered) else None
            if d is not None and d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif static is not None:
                dims.append(static)
            elif d is not None and d.HasField("dim_param") and d.dim_param in param_symbol:
                dims.append(param_symbol[d.dim_param])
            else:
                # A dim only the output has (data-dependent, or not inferable by ONNX).
                if d is not None and d.HasField("dim_param") and d.dim_param:
                    name = param_symbol.setdefault(
                        d.dim_param, _fresh(f"out{i}_d{axis}", spec_symbols)
                    )
                else:
                    name = _fresh(f"out{i}_d{axis}", spec_symbols)
                spec_symbols.setdefault(name, SymbolSpec(name, 0, INT64_MAX))
                dims.append(name)
        output_specs.append(TensorSpec(out.name, _dtype(out, "output"), tuple(dims)))
    return Signature(input_specs, output_specs, spec_symbols, output_tree=None)


def _fresh(base: str, taken: dict[str, SymbolSpec]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name
