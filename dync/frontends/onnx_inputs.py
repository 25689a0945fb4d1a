"""An ONNX model's inputs as dync sees them: each dynamic dim a named symbol with a range (its
`dim_param`, or a name and range from `dynamic_shapes`), their bindings in the imported entry
function, and the model's `Signature`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import onnx
from iree.compiler import ir

from ..dialects.dync_ir import static_dims
from ..errors import DyncError, UnsupportedConstructError
from ..signature import Dim, Signature, SymbolSpec, TensorSpec

# Default range of an input's dynamic dim, and the range of a dim only an output has.
DEFAULT_MIN = 1


DEFAULT_MAX = 2**31 - 1


INT64_MAX = 2**63 - 1


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
    onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.UINT32: "uint32",
    onnx.TensorProto.UINT64: "uint64",
    onnx.TensorProto.BOOL: "bool",
}


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


DimOverride = tuple[str, int, int] | str


DynamicShapes = dict[str, dict[int, DimOverride]]


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


def _fixed_value(value: np.ndarray | None) -> float | tuple[float, ...] | None:
    """A fixed input's value as the signature keeps it: Python ints, or floats (scales)."""
    if value is None:
        return None
    return value.item() if value.ndim == 0 else tuple(value.tolist())


def _signature(
    graph: onnx.GraphProto,
    inputs: list[onnx.ValueInfoProto],
    input_dims: dict[str, tuple[Dim, ...]],
    symbols: dict[str, _Symbol],
    result_types: list[ir.Type],
    fixed: dict[str, np.ndarray] | None = None,
) -> Signature:
    """The module's signature; `fixed` holds the inputs fixed at their example's value."""
    fixed = fixed or {}
    input_specs = [TensorSpec(i.name, _dtype(i, "input"), input_dims[i.name],
                              value=_fixed_value(fixed.get(i.name)))
                   for i in inputs]
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
