"""`dync-running-extremes`: `cummax`/`cummin` as two scans, one dispatch each.

Reads: `torch.aten.cummax`/`torch.aten.cummin` (a `torch.operator` to the importer: the
torch dialect has no such op and torch-mlir lowers neither) over a constant dim, in every
function.
Writes: the values as a `tm_tensor.scan` along the dim whose combiner is the max (the min),
NaN-propagating for floats; the indices as a second scan, the running max of each position
where the input equals its running value (or is NaN), which is the latest position holding
the extreme so far: a tie keeps the later index and a NaN, once met, stays with the latest
NaN's, as eager's do. uint8 and bool tensors are scanned in int16 and int8 and converted
back. The ops are those of a function built as text for the op's types and moved in place of
the op.

Why: dync's decomposition before this pass was a scan by doubling steps, each a gather of
the step before: one dispatch per step, as many steps as the log2 of the dim's declared
upper bound (6 for a dim of at most 64, 31 for an unbounded one), however short the dim at
run time. The scans are two dispatches, linear in the dim (and a third, elementwise).
No paper section: a kernel choice at the boundary to IREE. A pipeline without this pass
leaves the op to IREE, which refuses it.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import TorchBuilder, constant_int
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

_OPS = {"torch.aten.cummax": True, "torch.aten.cummin": False}

# -inf and +inf of each float type, as MLIR reads a float's bits.
_FLOAT_INF = {"f16": ("0xFC00", "0x7C00"), "bf16": ("0xFF80", "0x7F80"),
              "f32": ("0xFF800000", "0x7F800000"),
              "f64": ("0xFFF0000000000000", "0x7FF0000000000000")}


# Types scanned in a wider signed one and converted back: torch_c keeps unsigned types
# unsigned, which arith does not take; IREE stores i1 in bytes and retypes a scan's operands
# but not its combiner ("'arith.ori' op requires the same type for all operands and results").
_CARRIERS = {"ui8": "si16", "i1": "si8"}


def _combiner(torch_element: str) -> tuple[str, tuple[str, str], tuple[str, str], bool] | None:
    """For an element type: its builtin name, the (max, min) combiners, the identities of max
    and min, and whether NaNs are to be met; None for a type the pass does not take."""
    if torch_element in _FLOAT_INF:
        return torch_element, ("arith.maximumf", "arith.minimumf"), _FLOAT_INF[torch_element], True
    if torch_element.startswith("si"):
        bits = int(torch_element[2:])
        return (f"i{bits}", ("arith.maxsi", "arith.minsi"),
                (str(-(2 ** (bits - 1))), str(2 ** (bits - 1) - 1)), False)
    return None


class RunningExtremes(Pass):
    name = "dync-running-extremes"
    summary = "cummax/cummin as two tm_tensor scans (one dispatch each), not doubling steps"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            for op in list(nested_ops(func)):
                if op.name == "torch.operator" and (name := _operator(op)) in _OPS:
                    _lower(op, largest=_OPS[name])


def _operator(op: ir.Operation) -> str:
    """The name a `torch.operator` calls (`torch.aten.cummax`)."""
    return ir.StringAttr(op.attributes["name"]).value


def _lower(op: ir.Operation, largest: bool) -> None:
    x, dim = op.operands[0], constant_int(op.operands[1]) if len(op.operands) > 1 else None
    dims, element = type_dims(x.type), element_type(x.type) or ""
    carrier = _CARRIERS.get(element)
    combiner = _combiner(carrier or element)
    if dim is None or dims is None or combiner is None or len(op.results) != 2:
        return
    dim = dim % len(dims) if dims else 0
    b = TorchBuilder(op) if carrier else None
    if b is not None:
        x = b.convert(x, carrier)
    values_type = x.type if carrier else op.results[0].type
    text = f"#here = {op.location}\n" + _function(
        str(x.type), [str(values_type), str(op.results[1].type)], dims, dim, combiner, largest)
    template = ir.Module.parse(text, context=op.context)
    body = template.body.operations[0].regions[0].blocks[0]
    body.arguments[0].replace_all_uses_with(x)
    operations = list(body.operations)
    with op.location:
        for moved in operations[:-1]:
            moved.move_before(op)
    values, indices = operations[-1].operands
    if b is not None:  # back from the carrier: the extremes are values of the narrow type
        values = b.convert(values, element)
    op.results[0].replace_all_uses_with(values)
    op.results[1].replace_all_uses_with(indices)
    operations[-1].erase()
    op.erase()


def _function(x_type: str, result_types: list[str], dims: tuple, dim: int, combiner,
              largest: bool) -> str:
    values_type, indices_type = result_types
    head = (f"func.func @running(%arg0: {x_type}) -> ({values_type}, {indices_type}) {{\n")
    if not dims:  # a 0-d tensor is its own running extreme, at index 0
        return head + _located([
            "  %i = torch.vtensor.literal(dense<0> : tensor<si64>) : !torch.vtensor<[],si64>",
            f"  return %arg0, %i : {values_type}, {indices_type}"]) + "\n}"
    element, ops, identities, floating = combiner
    extreme, identity = ops[0 if largest else 1], identities[0 if largest else 1]
    shape = "".join(("?" if d is None else str(d)) + "x" for d in dims)
    rest = "".join(("?" if d is None else str(d)) + "x" for k, d in enumerate(dims) if k != dim)
    x_t, i_t = f"tensor<{shape}{element}>", f"tensor<{shape}i64>"
    acc_t, acc_i_t = f"tensor<{rest}{element}>", f"tensor<{rest}i64>"
    lines = [f"  %x = torch_c.to_builtin_tensor %arg0 : {x_type} -> {x_t}"]
    sizes = []
    for k, d in enumerate(dims):
        if d is None:
            lines += [f"  %c{k} = arith.constant {k} : index",
                      f"  %d{k} = tensor.dim %x, %c{k} : {x_t}"]
            sizes.append(f"%d{k}")
    every = ", ".join(sizes)
    others = ", ".join(f"%d{k}" for k, d in enumerate(dims) if d is None and k != dim)
    parallel = ", ".join(f"d{k}" for k in range(len(dims)))
    identity_map = f"affine_map<({parallel}) -> ({parallel})>"
    iterators = ", ".join(['"parallel"'] * len(dims))
    same = (["%same = arith.cmpf oeq, %a, %v : " + element,
             "%nan = arith.cmpf uno, %a, %a : " + element,
             "%at = arith.ori %same, %nan : i1"] if floating
            else ["%at = arith.cmpi eq, %a, %v : " + element])
    lines += [
        f"  %identity = arith.constant {identity} : {element}",
        f"  %values_init = tensor.empty({every}) : {x_t}",
        f"  %acc_empty = tensor.empty({others}) : {acc_t}",
        f"  %acc = linalg.fill ins(%identity : {element}) outs(%acc_empty : {acc_t}) -> {acc_t}",
        f"  %values:2 = tm_tensor.scan dimension({dim}) inclusive(true) ins(%x : {x_t}) "
        f"outs(%values_init, %acc : {x_t}, {acc_t}) {{",
        f"  ^bb0(%l: {element}, %r: {element}):",
        f"    %m = {extreme} %l, %r : {element}",
        f"    tm_tensor.yield %m : {element}",
        f"  }} -> {x_t}, {acc_t}",
        f"  %held_init = tensor.empty({every}) : {i_t}",
        "  %held = linalg.generic {indexing_maps = "
        f"[{identity_map}, {identity_map}, {identity_map}], iterator_types = "
        f"[{iterators}]}} ins(%x, %values#0 : {x_t}, {x_t}) "
        f"outs(%held_init : {i_t}) {{",
        f"  ^bb0(%a: {element}, %v: {element}, %o: i64):",
        f"    %j = linalg.index {dim} : index",
        "    %position = arith.index_cast %j : index to i64",
        *("    " + line for line in same),
        "    %none = arith.constant -1 : i64",
        "    %p = arith.select %at, %position, %none : i64",
        "    linalg.yield %p : i64",
        f"  }} -> {i_t}",
        "  %first = arith.constant -1 : i64",
        f"  %latest_empty = tensor.empty({others}) : {acc_i_t}",
        f"  %latest = linalg.fill ins(%first : i64) outs(%latest_empty : {acc_i_t}) -> {acc_i_t}",
        f"  %indices_init = tensor.empty({every}) : {i_t}",
        f"  %indices:2 = tm_tensor.scan dimension({dim}) inclusive(true) ins(%held : {i_t}) "
        f"outs(%indices_init, %latest : {i_t}, {acc_i_t}) {{",
        "  ^bb0(%l: i64, %r: i64):",
        "    %m = arith.maxsi %l, %r : i64",
        "    tm_tensor.yield %m : i64",
        f"  }} -> {i_t}, {acc_i_t}",
        f"  %values_out = torch_c.from_builtin_tensor %values#0 : {x_t} -> {values_type}",
        f"  %indices_out = torch_c.from_builtin_tensor %indices#0 : {i_t} -> {indices_type}",
        f"  return %values_out, %indices_out : {values_type}, {indices_type}",
    ]
    return head + _located(lines) + "\n}"


def _located(lines: list[str]) -> str:
    """`lines` with the op's location (`#here`) on every op: after a one-line op, and after
    the types that end an op with a region."""
    def op_ends(line: str) -> bool:
        text = line.strip()
        return not text.endswith("{") and not text.startswith("^") and (
            text.startswith(("%", "}", "return", "tm_tensor.yield", "linalg.yield")))

    return "\n".join(line + " loc(#here)" if op_ends(line) else line for line in lines)
