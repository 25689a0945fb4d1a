"""dync's IR conventions on top of upstream dialects, with builders and a verifier.

dync IR is a `builtin.module` whose functions hold torch value-semantic ops
(`!torch.vtensor`), `scf.if`/`scf.while` control flow (lowered from `torch.prim.If/Loop`)
and shape facts:

* ``dync.symbols`` (module attribute): every shape symbol and its range,
  ``{batch = {max = 64 : i64, min = 1 : i64}}``;
* ``dync.entry`` (unit attribute) marks the entry function ``main``;
* ``dync.shape`` (argument/result attribute of the entry function): the dims of that
  value, ints for static dims and strings for symbols or expressions, ``["batch", 8]``;
* inside functions, upstream ``torch.symbolic_int`` / ``torch.bind_symbolic_shape`` carry
  each value's dims as affine expressions over the same symbols (IREE consumes these).

Everything is an ordinary MLIR attribute, so dync IR round-trips through MLIR text. Every
``dync.*`` attribute, with its writers and readers, is declared in `dialects.attributes`.
"""

from __future__ import annotations

import re

from iree.compiler import ir

from ..errors import ModuleFormatError
from ..shape_expr import parse_cached
from ..signature import Dim, Signature, SymbolSpec
from .attributes import (  # noqa: F401 - re-exported: dync_ir.<NAME>_ATTR
    BACKEND_ATTR,
    COPIED_PADDING_ATTR,
    ENTRY_ATTR,
    FLAGS_ATTR,
    PREPROCESSING_ATTR,
    SHAPE_ATTR,
    SUBDNNS_ATTR,
    SYMBOLS_ATTR,
    TILING_WORK_ATTR,
    VECTOR_ISA_ATTR,
)

_SYMBOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def symbols_attr(symbols: dict[str, SymbolSpec]) -> ir.DictAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.DictAttr.get(
        {
            name: ir.DictAttr.get(
                {"min": ir.IntegerAttr.get(i64, s.min), "max": ir.IntegerAttr.get(i64, s.max)}
            )
            for name, s in symbols.items()
        }
    )


def _op(module: ir.Module | ir.Operation) -> ir.Operation:
    return module.operation


def _body(module: ir.Module | ir.Operation) -> ir.Block:
    return _op(module).regions[0].blocks[0]


def to_python(attr: ir.Attribute):
    """A dictionary/array/integer/string attribute as plain Python data (a pass's record)."""
    attr = attr.maybe_downcast()
    if isinstance(attr, ir.DictAttr):
        return {named.name: to_python(named.attr) for named in attr}
    if isinstance(attr, ir.ArrayAttr):
        return [to_python(a) for a in attr]
    if isinstance(attr, ir.IntegerAttr):
        return attr.value
    return ir.StringAttr(attr).value


def read_subdnns(module: ir.Module | ir.Operation) -> list[dict]:
    """The `dync.subdnns` records dync-split-subdnns left on `module` ([] if it did not run)."""
    attrs = _op(module).attributes
    return to_python(attrs[SUBDNNS_ATTR]) if SUBDNNS_ATTR in attrs else []


def _read_strings(module: ir.Module | ir.Operation, attribute: str) -> list[str]:
    op = _op(module)
    if attribute not in op.attributes:
        return []
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes[attribute])]


def _add_strings(module: ir.Module | ir.Operation, attribute: str, items: list[str]) -> None:
    """Append `items` to the string array `attribute` of `module` (in order, once)."""
    present = _read_strings(module, attribute)
    present += [i for i in items if i not in present]
    if present:
        _op(module).attributes[attribute] = ir.ArrayAttr.get([ir.StringAttr.get(i) for i in present])


def read_preprocessing(module: ir.Module | ir.Operation) -> list[str]:
    """The IREE preprocessing passes requested on `module` (``dync.iree_preprocessing``)."""
    return _read_strings(module, PREPROCESSING_ATTR)


def request_preprocessing(module: ir.Module | ir.Operation, passes: list[str]) -> None:
    """Add IREE preprocessing passes to `module`'s ``dync.iree_preprocessing`` (in order, once)."""
    _add_strings(module, PREPROCESSING_ATTR, passes)


def read_flags(module: ir.Module | ir.Operation) -> list[str]:
    """The IREE compiler flags requested on `module` (``dync.iree_flags``)."""
    return _read_strings(module, FLAGS_ATTR)


# IREE's data tiling, which `dync-data-tiling` requests for a module of wide matmuls; other
# passes read the request (`data_tiled`) where IREE handles their rewrite badly beside it.
DATA_TILING = "--iree-opt-data-tiling"
# The same data tiling started in IREE's global optimization instead of its dispatch creation
# (which DATA_TILING picks): what a pass asks for where dispatch creation's path miscompiles
# its rewrite (`dync-decompose-softmax`).
GLOBAL_DATA_TILING = "--iree-global-opt-data-tiling"
# IREE preprocessing that makes a module's branches blocks of one region, where IREE hoists the
# packing of a weight a branch reads (`dync-data-tiling`, `dync-narrow-rows`).
SCF_TO_CF = "convert-scf-to-cf"


def request_flags(module: ir.Module | ir.Operation, flags: list[str]) -> None:
    """Add IREE compiler flags to `module`'s ``dync.iree_flags`` (in order, once)."""
    _add_strings(module, FLAGS_ATTR, flags)


_MOST_WORK = 2**62  # a work past i64 (a dim declared up to 2**63) is recorded as this


def record_tiling_work(module: ir.Module | ir.Operation, wide: int, narrow: int,
                       dynamic_rows: bool) -> None:
    """Record on `module` the work of its contractions data tiling speeds up and slows down
    (``dync.tiling_work``)."""
    i64 = ir.IntegerType.get_signless(64)
    _op(module).attributes[TILING_WORK_ATTR] = ir.DictAttr.get({
        "wide": ir.IntegerAttr.get(i64, min(wide, _MOST_WORK)),
        "narrow": ir.IntegerAttr.get(i64, min(narrow, _MOST_WORK)),
        "dynamic_rows": ir.IntegerAttr.get(i64, int(dynamic_rows))})


def read_tiling_work(module: ir.Module | ir.Operation) -> dict | None:
    """`module`'s ``dync.tiling_work`` record; None where dync-data-tiling left none."""
    attrs = _op(module).attributes
    return to_python(attrs[TILING_WORK_ATTR]) if TILING_WORK_ATTR in attrs else None


def linked_flags(modules: list[ir.Module | ir.Operation]) -> list[str]:
    """The IREE flags of one module linked from `modules`: a flag changes how every entry point
    compiles, so only those every module asks for. Data tiling is weighed instead, as
    `dync-data-tiling` weighs one module: asked for where every module recorded its work
    (`record_tiling_work`) and the wide work of all of them is at least their narrow work, so
    that a classifier's 10-wide head, a norm's or a CNN stem's module (no work) does not hold
    it back from the layers beside it. Either path of it counts; the global one is taken where
    any module asks for it (dispatch creation's path miscompiles its rewrite,
    `GLOBAL_DATA_TILING`) or has a product with dynamic rows: a BERT's layers ask for that
    one, its off-ramps (one row) for the other."""
    requests = [set(read_flags(m)) for m in modules]
    tilings = {DATA_TILING, GLOBAL_DATA_TILING}
    kept = [flag for flag in sorted(set().union(*requests) - tilings)
            if all(flag in r for r in requests)]
    works = [read_tiling_work(m) for m in modules]
    if _wide_together(works):
        global_path = any(GLOBAL_DATA_TILING in r for r in requests) \
            or any(w["dynamic_rows"] for w in works)
        kept = sorted([*kept, GLOBAL_DATA_TILING if global_path else DATA_TILING])
    return kept


def _wide_together(works: list[dict | None]) -> bool:
    """Whether modules with these tiling work records (`record_tiling_work`; None where
    dync-data-tiling did not run) do most of their contractions' work in wide ones."""
    if any(w is None for w in works):
        return False
    wide = sum(w["wide"] for w in works)
    return wide > 0 and wide >= sum(w["narrow"] for w in works)


def data_tiled(module: ir.Module | ir.Operation) -> bool:
    """Whether `module` asks IREE for data tiling (on either of its paths)."""
    return any(f in (DATA_TILING, GLOBAL_DATA_TILING) for f in read_flags(module))


def replace_flag(module: ir.Module | ir.Operation, old: str, new: str) -> None:
    """Put `new` in place of `old` in `module`'s ``dync.iree_flags`` (if requested)."""
    flags = read_flags(module)
    if old in flags:
        flags = [f for f in flags if f != new]
        flags[flags.index(old)] = new
        _op(module).attributes[FLAGS_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(f)
                                                                for f in flags])


def read_copied_padding(module: ir.Module | ir.Operation) -> list[str]:
    """The entry points whose padding stays copied under pad fusion
    (``dync.iree_copied_padding``)."""
    return _read_strings(module, COPIED_PADDING_ATTR)


def request_copied_padding(module: ir.Module | ir.Operation, entries: list[str]) -> None:
    _add_strings(module, COPIED_PADDING_ATTR, entries)


def module_flags(module: ir.Module | ir.Operation) -> tuple[str, ...]:
    """The IREE flags `module` asks for: the one running the preprocessing passes requested
    on it, if any, and the flags requested."""
    passes = read_preprocessing(module)
    pipeline = (f"--iree-preprocessing-pass-pipeline=builtin.module(util.func({','.join(passes)}))",) \
        if passes else ()
    return pipeline + tuple(read_flags(module))


def set_backend(module: ir.Module | ir.Operation, backend: str,
                vector_isa: str | None = None) -> None:
    """Record the backend `module` is compiled for (``dync.backend``) and, for a CPU, the
    widest vector extension its code may use (``dync.vector_isa``: "avx512", "avx2", ...),
    for passes whose rewrites pay off, or are correct in IREE, on some targets only."""
    with _op(module).context:
        _op(module).attributes[BACKEND_ATTR] = ir.StringAttr.get(backend)
        if vector_isa is not None:
            _op(module).attributes[VECTOR_ISA_ATTR] = ir.StringAttr.get(vector_isa)


def read_backend(module: ir.Module | ir.Operation) -> str:
    """The backend recorded by `set_backend`; "llvm-cpu" when none was (dync-opt on a file)."""
    op = _op(module)
    return ir.StringAttr(op.attributes[BACKEND_ATTR]).value if BACKEND_ATTR in op.attributes \
        else "llvm-cpu"


def read_vector_isa(module: ir.Module | ir.Operation) -> str | None:
    """The vector extension recorded by `set_backend`; None when none was."""
    op = _op(module)
    return ir.StringAttr(op.attributes[VECTOR_ISA_ATTR]).value \
        if VECTOR_ISA_ATTR in op.attributes else None


def read_symbols(module: ir.Module | ir.Operation) -> dict[str, SymbolSpec]:
    op = _op(module)
    if SYMBOLS_ATTR not in op.attributes:
        return {}
    result = {}
    for named in ir.DictAttr(op.attributes[SYMBOLS_ATTR]):
        spec = ir.DictAttr(named.attr)
        result[named.name] = SymbolSpec(
            named.name, ir.IntegerAttr(spec["min"]).value, ir.IntegerAttr(spec["max"]).value
        )
    return result


def shape_attr(dims: tuple[Dim, ...]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.IntegerAttr.get(i64, d) if isinstance(d, int) else ir.StringAttr.get(d) for d in dims]
    )


def read_shape(attr: ir.Attribute) -> tuple[Dim, ...]:
    dims: list[Dim] = []
    for a in ir.ArrayAttr(attr):
        if not isinstance(a, ir.IntegerAttr | ir.StringAttr):
            raise ValueError(f"{SHAPE_ATTR} entries must be integers or strings, got {a}")
        dims.append(a.value)
    return tuple(dims)


def entry_function(module: ir.Module | ir.Operation) -> ir.Operation | None:
    for op in _body(module).operations:
        if op.operation.name == "func.func" and ENTRY_ATTR in op.operation.attributes:
            return op.operation
    return None


def set_entry_signature(module: ir.Module, signature: Signature, entry: str = "main") -> None:
    """Write the signature's symbols and per-value shapes into the module (builder)."""
    with module.context:
        module.operation.attributes[SYMBOLS_ATTR] = symbols_attr(signature.symbols)
        for op in module.body.operations:
            if op.operation.name != "func.func" or ir.StringAttr(op.sym_name).value != entry:
                continue
            op.operation.attributes[ENTRY_ATTR] = ir.UnitAttr.get()
            for attr_name, specs in (("arg_attrs", signature.inputs), ("res_attrs", signature.outputs)):
                op.operation.attributes[attr_name] = ir.ArrayAttr.get(
                    [ir.DictAttr.get({SHAPE_ATTR: shape_attr(t.shape)}) for t in specs]
                )
            return
    raise ValueError(f"no function @{entry} in module")


def check_ir(module: ir.Module | ir.Operation) -> list[str]:
    """Check the dync conventions; returns a list of problems (empty when the IR is valid)."""
    problems: list[str] = []
    if not _op(module).verify():
        problems.append("module fails MLIR verification")
    symbols = read_symbols(module)
    for name, spec in symbols.items():
        if not _SYMBOL_NAME.match(name):
            problems.append(f"symbol {name!r}: not an identifier")
        if spec.min < 0 or spec.min > spec.max:
            problems.append(f"symbol {name!r}: empty or negative range [{spec.min}, {spec.max}]")
    entry = entry_function(module)
    if entry is None:
        problems.append(f"no function carries {ENTRY_ATTR}")
        return problems
    ftype = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)
    for attr_name, types in (("arg_attrs", ftype.inputs), ("res_attrs", ftype.results)):
        if attr_name not in entry.attributes:
            problems.append(f"entry function has no {attr_name} with {SHAPE_ATTR}")
            continue
        for i, (attrs, ty) in enumerate(zip(ir.ArrayAttr(entry.attributes[attr_name]), types, strict=True)):
            attrs = ir.DictAttr(attrs)
            if SHAPE_ATTR not in attrs:
                problems.append(f"{attr_name}[{i}] has no {SHAPE_ATTR}")
                continue
            dims = read_shape(attrs[SHAPE_ATTR])
            problems.extend(_check_dims(f"{attr_name}[{i}]", dims, ty, symbols))
    # torch.symbolic_int ranges must agree with the module's symbol table.
    def check_symbolic_int(op: ir.Operation) -> ir.WalkResult:
        if op.name == "torch.symbolic_int":
            name = ir.StringAttr(op.attributes["symbol_name"]).value
            lo = ir.IntegerAttr(op.attributes["min_val"]).value
            hi = ir.IntegerAttr(op.attributes["max_val"]).value
            if name in symbols and (symbols[name].min, symbols[name].max) != (lo, hi):
                problems.append(
                    f"torch.symbolic_int {name!r} range [{lo}, {hi}] disagrees with "
                    f"{SYMBOLS_ATTR} [{symbols[name].min}, {symbols[name].max}]"
                )
        return ir.WalkResult.ADVANCE

    _op(module).walk(check_symbolic_int)
    return problems


def static_dims(ty: ir.Type) -> list[int | None] | None:
    """Dims of a `!torch.vtensor` or ranked tensor type (None for `?`); None for other types."""
    text = str(ty)
    m = re.match(r"!torch\.vtensor<\[([^\]]*)\]", text)
    if m:
        return [None if d == "?" else int(d) for d in m.group(1).split(",") if d]
    if isinstance(ty, ir.RankedTensorType):
        t = ty
        return [None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank)]
    return None


def _check_dims(where: str, dims: tuple[Dim, ...], ty: ir.Type, symbols: dict) -> list[str]:
    static = static_dims(ty)
    if static is None:
        return []
    if len(static) != len(dims):
        return [f"{where}: {SHAPE_ATTR} has rank {len(dims)} but the type is {ty}"]
    problems = []
    for axis, (d, s) in enumerate(zip(dims, static, strict=True)):
        if isinstance(d, int) and s is not None and d != s:
            problems.append(f"{where} dim {axis}: {SHAPE_ATTR} says {d}, type says {s}")
        if isinstance(d, str):
            try:
                unknown = {str(s) for s in parse_cached(d).free_symbols} - set(symbols)
            except ModuleFormatError as e:
                problems.append(f"{where} dim {axis}: {e}")
                continue
            if unknown:
                problems.append(f"{where} dim {axis}: undeclared symbol(s) {sorted(unknown)}")
    return problems
