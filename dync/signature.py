"""The calling convention of a compiled module: input/output tensor specs and shape symbols.

A dim is either an int (static) or a string: the name of a symbol (``"batch"``) or an
expression over symbols (``"2*batch"``). Symbols carry the range declared by the user
(``torch.export.Dim(min=, max=)``) or by the ONNX model. The signature is what the runtime
checks arguments against and what the manifest stores.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import sympy

from .errors import InputError, ModuleFormatError, OutsideCompiledRange
from .output_tree import OutputTree
from .shape_expr import parse_cached, parse_shape_expr

Dim = int | str

# numpy dtype names used in manifests <-> torch dtypes.
_TORCH_DTYPES = {
    "float32": "float32",
    "float64": "float64",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "bool",
}


_UNSIGNED = frozenset({"uint8", "uint16", "uint32", "uint64"})
# ONNX's narrow types (numpy arrays of ml_dtypes' types, one value per byte) -> the byte dtype
# the module takes and returns them in: an integer's value, a float's code.
_NARROW = {"int4": "int8", "int2": "int8", "uint4": "uint8", "uint2": "uint8",
           "float8_e4m3fn": "uint8", "float8_e4m3fnuz": "uint8", "float8_e5m2": "uint8",
           "float8_e5m2fnuz": "uint8", "float4_e2m1fn": "uint8"}
_TORCH_DTYPES.update({name: name for name in _NARROW})


def _carried(array: Any, dtype: str) -> Any:
    """An argument of the signature's `dtype` as the module takes it."""
    if dtype not in _NARROW:
        return array
    return array.view(np.uint8) if dtype.startswith("float") else array.astype(_NARROW[dtype])


def _as_declared(array: Any, dtype: str) -> Any:
    """A numpy result of the module as the signature's `dtype`."""
    if dtype in _NARROW:
        import ml_dtypes  # only modules with narrow outputs need it (onnx brings it)

        byte = _with_signedness(array, _NARROW[dtype] in _UNSIGNED)
        narrow = getattr(ml_dtypes, dtype)
        return byte.view(narrow) if dtype.startswith("float") else byte.astype(narrow)
    if dtype.startswith(("int", "uint")):
        return _with_signedness(array, dtype in _UNSIGNED)
    return array


def _with_signedness(array: Any, unsigned: bool) -> Any:
    """An integer numpy array viewed as its unsigned (or signed) twin, the same bytes
    (anything else unchanged)."""
    dtype = getattr(array, "dtype", None)
    if dtype is None or dtype.kind != ("i" if unsigned else "u"):
        return array
    return array.view(dtype.str.replace("i", "u") if unsigned else dtype.str.replace("u", "i"))


def dtype_name(dtype: Any) -> str:
    """Canonical dtype name ("float32", "int64", "bool", ...) of a torch or numpy dtype."""
    if type(dtype).__module__ == "torch":  # a torch.dtype; torch itself need not be imported
        name = str(dtype).removeprefix("torch.")
    else:
        name = np.dtype(dtype).name
    if name not in _TORCH_DTYPES:
        raise InputError(f"dtype {name} is not supported by dync")
    return name


@dataclass(frozen=True)
class SymbolSpec:
    name: str
    min: int
    max: int
    # The range the user declared, where the module holds only for [min, max] inside it
    # (torch.export's trace assumes something of the size: `assumes`, its guards as text).
    declared: tuple[int, int] | None = None
    assumes: str = ""

    def to_json(self) -> dict:
        data: dict[str, Any] = {"name": self.name, "min": self.min, "max": self.max}
        if self.declared is not None:
            data["declared"] = list(self.declared)
            data["assumes"] = self.assumes
        return data

    def outside(self, spec_name: str, axis: int, got: int) -> InputError:
        """The error for size `got` of this symbol outside [min, max]."""
        where = f"input {spec_name!r} dim {axis} ({self.name}) = {got}"
        if self.declared is not None and self.declared[0] <= got <= self.declared[1]:
            return OutsideCompiledRange(
                f"{where} is in its declared range [{self.declared[0]}, {self.declared[1]}], "
                f"but the module holds only for {self.name} in [{self.min}, {self.max}]: "
                f"torch.export's trace assumes {self.assumes or 'more of it'} "
                "(mode='auto' runs such calls in eager PyTorch)")
        low, high = self.declared or (self.min, self.max)
        return InputError(f"{where} is outside its declared range [{low}, {high}]")


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str
    shape: tuple[Dim, ...]
    # The one value an input may take: the module was compiled for its example's value
    # (an ONNX input that sets a node's axes, `onnx_fixed_inputs`).
    value: int | tuple[int, ...] | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    def shape_str(self) -> str:
        return "[" + ", ".join(str(d) for d in self.shape) + "]"


@dataclass
class Signature:
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    symbols: dict[str, SymbolSpec] = field(default_factory=dict)
    # How flat outputs are nested: a torch pytree spec string, or None for a flat list.
    output_tree: str | None = None
    # (output, input): that output is the new value of that (flat) input, which the forward
    # writes in place (`x.mul_(2)`); the runtime writes it into the caller's argument after
    # the call, and the output tree nests the other outputs.
    input_writes: tuple[tuple[int, int], ...] = ()
    # (dtype, shape) of each argument -> symbol values, for arguments already accepted.
    _accepted: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @functools.cached_property
    def _tree(self) -> OutputTree | None:
        return None if self.output_tree is None else OutputTree(self.output_tree)

    @functools.cached_property
    def retyped_outputs(self) -> bool:
        """Whether an output is an integer (IREE may return it as its twin of the other
        signedness) or of a narrow type (returned in bytes): `declared_dtypes`."""
        return any(spec.dtype.startswith(("int", "uint")) or spec.dtype in _NARROW
                   for spec in self.outputs)

    @functools.cached_property
    def bytes_outputs(self) -> bool:
        """Whether an output is unsigned or of a narrow type, which `declared_dtypes` retypes
        through numpy (a signed one is at most viewed as signed)."""
        return any(spec.dtype in _UNSIGNED or spec.dtype in _NARROW for spec in self.outputs)

    def declared_dtypes(self, arrays: list) -> list:
        """A call's numpy results in the dtypes the signature declares: IREE computes unsigned
        integers signless and returns them as their signed twins (the same bytes), which are
        viewed as unsigned here; a signed result IREE returns in an unsigned input's buffer
        (an ONNX BitCast from it) is viewed as signed; a narrow type's bytes are turned into
        it."""
        if len(arrays) != len(self.outputs):
            return arrays
        return [_as_declared(a, spec.dtype) for a, spec in zip(arrays, self.outputs, strict=True)]

    @functools.cached_property
    def narrow_inputs(self) -> bool:
        """Whether an input is of a narrow type (`carried_inputs`)."""
        return any(spec.dtype in _NARROW for spec in self.inputs)

    def carried_inputs(self, arrays: list) -> list:
        """A call's checked arguments with each narrow one in bytes, as the module takes it:
        an integer's value, a float's code."""
        return [_carried(a, spec.dtype) for a, spec in zip(arrays, self.inputs, strict=True)]

    @property
    def output_nester(self) -> Callable[[list], Any] | None:
        """What a call's flat outputs become (None: they stay a flat list): nested as
        `output_tree` says; where the forward writes inputs in place, a pair of those results
        without the outputs `input_writes` names, and the new values of the inputs in its
        order."""
        tree = self._tree
        nest = None if tree is None else tree.nester
        if not self.input_writes:
            return nest
        written = [k for k, _ in self.input_writes]
        skipped = set(written)

        def split(outputs: list) -> tuple[Any, list]:
            kept = [o for k, o in enumerate(outputs) if k not in skipped]
            return kept if nest is None else nest(kept), [outputs[k] for k in written]

        return split

    @functools.cached_property
    def fixed_inputs(self) -> tuple[tuple[int, TensorSpec], ...]:
        """(index, spec) of each input fixed at compile time (`TensorSpec.value`)."""
        return tuple((i, spec) for i, spec in enumerate(self.inputs) if spec.value is not None)

    def check_values(self, arrays: Sequence[Any]) -> None:
        """Refuse a call whose input fixed at compile time (`TensorSpec.value`) has another
        value: the module computes with the fixed one."""
        for i, spec in self.fixed_inputs:
            if i < len(arrays) and not np.array_equal(np.asarray(arrays[i]), spec.value):
                got = np.asarray(arrays[i]).tolist()
                want = list(spec.value) if isinstance(spec.value, tuple) else spec.value
                raise InputError(
                    f"input {spec.name!r} = {got!r:.200}: this module was compiled for the value "
                    f"{want} of its example (it sets a node's axes, steps, pads or scales, which "
                    "IREE needs at compile time); compile again with an example of this value")

    def to_json(self) -> dict:
        return {
            "inputs": [_spec_json(t) for t in self.inputs],
            "outputs": [_spec_json(t) for t in self.outputs],
            "symbols": {k: v.to_json() for k, v in self.symbols.items()},
            "output_tree": self.output_tree,
            **({"input_writes": [list(w) for w in self.input_writes]} if self.input_writes else {}),
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "the manifest") -> Signature:
        """The signature `to_json` wrote, checked field by field: anything else (a missing
        field, a dtype dync does not know, a shape expression outside `dync.shape_expr`'s
        grammar) is a `ModuleFormatError` naming `where`."""
        _expect(isinstance(data, dict), where, "the signature is not an object")
        for key, kind in (("inputs", list), ("outputs", list), ("symbols", dict)):
            _expect(isinstance(data.get(key), kind), where,
                    f"the signature's {key!r} is not a {kind.__name__}")
        symbols = {}
        for name, spec in data["symbols"].items():
            _expect(isinstance(spec, dict) and spec.get("name") == name and _IDENTIFIER.fullmatch(name)
                    and _is_int(spec.get("min")) and _is_int(spec.get("max"))
                    and 0 <= spec["min"] <= spec["max"], where, f"malformed symbol {name!r}")
            symbols[name] = SymbolSpec(name, spec["min"], spec["max"], *_declared(spec, where))
        tree = data.get("output_tree")
        _expect(tree is None or isinstance(tree, str), where, "the output tree is not text")
        inputs = [_tensor_spec(t, where) for t in data["inputs"]]
        outputs = [_tensor_spec(t, where) for t in data["outputs"]]
        signature = cls(inputs=inputs, outputs=outputs, symbols=symbols, output_tree=tree,
                        input_writes=_input_writes(data.get("input_writes", []), inputs, outputs,
                                                   where))
        if tree is not None:
            signature.__dict__["_tree"] = OutputTree(tree, where)
        return signature

    def check_inputs(self, arrays: Sequence[Any]) -> dict[str, int]:
        """Check arguments (shape/dtype carriers) against the signature; return symbol values.

        Raises InputError naming the argument, the dim and the declared range. Accepted
        (dtype, shape) combinations are remembered, so a shape seen before costs one lookup.
        """
        key = tuple((a.dtype, tuple(a.shape)) for a in arrays)
        if key in self._accepted:
            return dict(self._accepted[key])
        bound = self._check_inputs(arrays)
        if len(self._accepted) < 4096:
            self._accepted[key] = dict(bound)
        return bound

    def _check_inputs(self, arrays: Sequence[Any]) -> dict[str, int]:
        if len(arrays) != len(self.inputs):
            raise InputError(
                f"expected {len(self.inputs)} input(s) "
                f"({', '.join(t.name for t in self.inputs)}), got {len(arrays)}"
            )
        bound: dict[str, int] = {}
        deferred: list[tuple[TensorSpec, int, str, int]] = []
        for spec, arr in zip(self.inputs, arrays, strict=True):
            shape = tuple(int(d) for d in arr.shape)
            got_dtype = dtype_name(arr.dtype)
            if got_dtype != spec.dtype:
                raise InputError(f"input {spec.name!r}: expected dtype {spec.dtype}, got {got_dtype}")
            if len(shape) != spec.rank:
                raise InputError(
                    f"input {spec.name!r}: expected rank {spec.rank} {spec.shape_str()}, "
                    f"got rank {len(shape)} {list(shape)}"
                )
            for axis, (want, got) in enumerate(zip(spec.shape, shape, strict=True)):
                if isinstance(want, int):
                    if want != got:
                        raise InputError(
                            f"input {spec.name!r} dim {axis}: expected {want}, got {got}"
                        )
                elif want in self.symbols:
                    sym = self.symbols[want]
                    if not sym.min <= got <= sym.max:
                        raise sym.outside(spec.name, axis, got)
                    if bound.setdefault(want, got) != got:
                        raise InputError(
                            f"input {spec.name!r} dim {axis} ({want}) = {got}, but {want} = "
                            f"{bound[want]} from an earlier input"
                        )
                else:
                    deferred.append((spec, axis, want, got))
        for spec, axis, expr, got in sorted(deferred, key=lambda d: evaluate(d[2], bound) is None):
            value = evaluate(expr, bound)
            if value is None:  # a derived dim (32*h) whose symbol no input gives directly
                value = self._solve(spec, axis, expr, got, bound)
            if value != got:
                raise InputError(
                    f"input {spec.name!r} dim {axis}: expected {expr} = {value}, got {got}"
                )
        return bound

    def _solve(self, spec: TensorSpec, axis: int, expr: str, got: int, bound: dict[str, int]) -> int:
        """Bind the one unknown symbol of `expr` (linear in it, as derived dims are) from
        `got`: it must be a whole number in its declared range."""
        parsed = parse_cached(expr)
        unknown = [s for s in parsed.free_symbols if str(s) not in bound]
        if len(unknown) != 1 or str(unknown[0]) not in self.symbols:
            return got  # nothing to check it against
        sym, var = self.symbols[str(unknown[0])], unknown[0]
        if len(parsed.free_symbols) == 1:
            scale, offset = _linear_in(expr, str(var))
        else:
            scale, offset = _linear(parsed.subs({sympy.Symbol(k): v for k, v in bound.items()}), var)
        value = None if not scale or (got - offset) % scale else (got - offset) // scale
        if value is None or not sym.min <= value <= sym.max:
            raise InputError(
                f"input {spec.name!r} dim {axis} = {got} is not {expr} for any {sym.name} in its "
                f"declared range [{sym.min}, {sym.max}]"
            )
        bound[sym.name] = value
        return got


def _linear(expr: sympy.Expr, var: sympy.Symbol) -> tuple[int | None, int]:
    """(a, b) with expr == a*var + b, or (None, 0) when expr is not linear in var."""
    poly = sympy.Poly(expr, var) if expr.is_polynomial(var) else None
    if poly is None or poly.degree() != 1 or not all(c.is_Integer for c in poly.all_coeffs()):
        return None, 0
    a, b = poly.all_coeffs()
    return int(a), int(b)


@functools.lru_cache(maxsize=256)
def _linear_in(expr: str, var: str) -> tuple[int | None, int]:
    return _linear(parse_cached(expr), sympy.Symbol(var))


def evaluate(expr: str, values: dict[str, int]) -> int | None:
    """The value of the dim `expr` for these symbol values, None if one it needs is missing."""
    result = parse_cached(expr).subs({sympy.Symbol(k): v for k, v in values.items()})
    return int(result) if result.is_number else None


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
# The longest assumption text a symbol keeps (the guards torch.export kept, cut there).
MAX_ASSUMES = 2000


def _input_writes(data: Any, inputs: list[TensorSpec], outputs: list[TensorSpec],
                  where: str) -> tuple[tuple[int, int], ...]:
    """`input_writes` as `to_json` wrote them: distinct outputs and inputs, each pair of one
    dtype and rank."""
    _expect(isinstance(data, list), where, "the signature's 'input_writes' is not a list")
    writes = []
    for pair in data:
        _expect(isinstance(pair, list) and len(pair) == 2 and all(_is_int(v) for v in pair)
                and 0 <= pair[0] < len(outputs) and 0 <= pair[1] < len(inputs), where,
                f"malformed input write {pair!r:.100}")
        out, arg = outputs[pair[0]], inputs[pair[1]]
        _expect(out.dtype == arg.dtype and out.rank == arg.rank, where,
                f"input write {pair!r}: output and input differ in dtype or rank")
        writes.append((pair[0], pair[1]))
    _expect(len({k for k, _ in writes}) == len({i for _, i in writes}) == len(writes), where,
            "an output or an input written twice in 'input_writes'")
    return tuple(writes)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _expect(condition: Any, where: str, problem: str) -> None:
    if not condition:
        raise ModuleFormatError(f"{where}: {problem}")


def _declared(spec: dict, where: str) -> tuple[tuple[int, int] | None, str]:
    declared, assumes = spec.get("declared"), spec.get("assumes", "")
    if declared is None:
        return None, ""
    _expect(isinstance(declared, list) and len(declared) == 2 and all(map(_is_int, declared))
            and declared[0] <= spec["min"] and spec["max"] <= declared[1]
            and isinstance(assumes, str) and len(assumes) <= MAX_ASSUMES, where,
            f"malformed declared range of symbol {spec['name']!r}")
    return (declared[0], declared[1]), assumes


def _spec_json(spec: TensorSpec) -> dict:
    data = asdict(spec)
    if spec.value is None:
        del data["value"]
    elif isinstance(spec.value, tuple):
        data["value"] = list(spec.value)
    return data


def _fixed_value(data: dict, where: str) -> float | tuple[float, ...] | None:
    value = data.get("value")
    if value is None:
        return None
    shape = list(data["shape"])
    dtype = str(data.get("dtype", ""))
    floats = dtype.startswith(("float", "bfloat"))

    def number(v: Any) -> bool:  # ints; finite floats for a float input (scales), bools for bool
        if dtype == "bool":
            return isinstance(v, bool)
        return _is_int(v) or (floats and isinstance(v, float) and math.isfinite(v))

    ok = (number(value) and shape == []) or (
        isinstance(value, list) and all(number(v) for v in value) and shape == [len(value)])
    _expect(ok, where, f"{data['name']!r} has a fixed value {value!r:.60} that is not "
            "numbers of its dtype and shape")
    return value if number(value) else tuple(value)


def _tensor_spec(data: Any, where: str) -> TensorSpec:
    _expect(isinstance(data, dict) and isinstance(data.get("name"), str)
            and isinstance(data.get("shape"), list | tuple), where,
            f"malformed tensor spec {data!r:.200}")
    _expect(data.get("dtype") in _TORCH_DTYPES, where,
            f"{data['name']!r} has dtype {data.get('dtype')!r:.40}, which dync does not know")
    for dim in data["shape"]:
        if isinstance(dim, str):
            parse_shape_expr(dim, where=where)
        else:
            _expect(_is_int(dim) and dim >= 0, where, f"{data['name']!r} has dim {dim!r:.40}")
    return TensorSpec(data["name"], data["dtype"], tuple(data["shape"]),
                      _fixed_value(data, where))
