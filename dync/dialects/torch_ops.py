"""Reading and building the torch-dialect ops passes rewrite: constants, lists, definitions."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import sympy
from iree.compiler import ir

from .symbolic import element_type, quotient, type_dims

BIND = "torch.bind_symbolic_shape"
# IREE's barrier against fusion and CSE, on builtin tensors between `torch_c` casts.
BARRIER = "util.optimization_barrier"
# IREE's marker that keeps dispatch creation from fusing across a value. Unlike a BARRIER it
# ends no execution region, so the host does not wait there for the work before it
# (`lit/upstream/iree-optimization-barrier-host-wait.mlir`); it keeps no value from CSE.
FENCE = "iree_tensor_ext.compute_barrier.start"
# torch-mlir's builtin element types: signedness is dropped from integers.
_SIGNLESS = re.compile(r"^[su]i(\d+)$")


def builtin_type(vtensor: ir.Type, dynamic: bool = False) -> ir.Type | None:
    """The builtin tensor type `torch_c.to_builtin_tensor` gives a `!torch.vtensor` (None for
    any other type, unsigned integers, which keep their signedness there, and a dynamic dim
    unless `dynamic`)."""
    dims, element = type_dims(vtensor), element_type(vtensor)
    if not str(vtensor).startswith("!torch.vtensor") or dims is None \
            or (None in dims and not dynamic) or element is None or element.startswith("ui"):
        return None
    element = _SIGNLESS.sub(r"i\1", element)
    shape = "".join(("?" if d is None else str(d)) + "x" for d in dims)
    return ir.Type.parse(f"tensor<{shape}{element}>")


def owner(value: ir.Value) -> ir.Operation | None:
    """The op that defines `value`, or None for a block argument."""
    op = value.owner
    return None if isinstance(op, ir.Block) else op.operation


def leaves_region(value: ir.Value) -> bool:
    """Whether `value` is the `torch_c.from_builtin_tensor` of a result of an `scf.if` or
    `scf.while`: a tensor leaving a branch or a loop."""
    cast = defining(value, "torch_c.from_builtin_tensor")
    source = None if cast is None else owner(cast.operands[0])
    return source is not None and source.name in ("scf.if", "scf.while")


def defining(value: ir.Value, name: str) -> ir.Operation | None:
    """The op named `name` that defines `value`, or None (a block argument, another op)."""
    op = owner(value)
    return op if op is not None and op.name == name else None


def constant_int(value: ir.Value) -> int | None:
    op = defining(value, "torch.constant.int")
    return None if op is None else ir.IntegerAttr(op.attributes["value"]).value


def constant_bool(value: ir.Value) -> bool | None:
    op = defining(value, "torch.constant.bool")
    return None if op is None else ir.BoolAttr(op.attributes["value"]).value


def constant_ints(value: ir.Value) -> list[int] | None:
    """The values of a `torch.constant.int` or of a dense integer `torch.vtensor.literal`,
    else None."""
    number = constant_int(value)
    if number is not None:
        return [number]
    literal = defining(value, "torch.vtensor.literal")
    if literal is None or not isinstance(literal.attributes["value"], ir.DenseIntElementsAttr):
        return None
    dense = ir.DenseIntElementsAttr(literal.attributes["value"])
    return [dense.get_splat_value().value] if dense.is_splat else list(dense)


def constant_int_list(value: ir.Value) -> list[int] | None:
    """The ints of a `torch.prim.ListConstruct` of `torch.constant.int`s, else None."""
    op = defining(value, "torch.prim.ListConstruct")
    if op is None:
        return None
    ints = [constant_int(v) for v in op.operands]
    return None if None in ints else ints


def constant_str(value: ir.Value) -> str | None:
    op = defining(value, "torch.constant.str")
    return None if op is None else ir.StringAttr(op.attributes["value"]).value


def constant_number(value: ir.Value) -> float | None:
    """The value of a `torch.constant.float` or `torch.constant.int`, else None."""
    op = defining(value, "torch.constant.float")
    if op is not None:
        return ir.FloatAttr(op.attributes["value"]).value
    return constant_int(value)


def create(name: str, result: ir.Type | str, ip: ir.InsertionPoint, loc: ir.Location,
           operands=(), **attrs) -> ir.Value:
    """One op with one result, at `ip`."""
    result = ir.Type.parse(result) if isinstance(result, str) else result
    load_dialect_of(name, loc.context)
    return ir.Operation.create(name, results=[result], operands=list(operands),
                               attributes=attrs, loc=loc, ip=ip).result


def load_dialect_of(name: str, context: ir.Context) -> None:
    """Load the dialect of op `name` into `context` (a lookup once it is). IREE's context
    registers its dialects lazily, and an op built by name while its dialect is not loaded
    resolves to another op of that dialect once it is: a `tensor.dim` that
    `dync-pack-sort-keys` built as the module's first op of the `tensor` dialect became a
    `tensor.empty` ("'tensor.empty' op operand #0 must be variadic of index")."""
    context.dialects[name.split(".", 1)[0]]


def int_constant(value: int, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    return create("torch.constant.int", "!torch.int", ip, loc,
                  value=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value))


def int_expression(expr: sympy.Expr | int, symbol_value: Callable[[str], ir.Value],
                   ip: ir.InsertionPoint, loc: ir.Location,
                   cache: dict[sympy.Expr, ir.Value] | None = None) -> ir.Value | None:
    """A `!torch.int` computing `expr`, a dim as `dialects.symbolic` reads it (sums and
    products of symbols and integers, floor and ceiling of a quotient by an integer), from the
    value `symbol_value` gives each of its symbols; None, with nothing built, for any other
    expression (max, min, a division by a symbol). `cache` keeps the values built for `expr`
    and its parts, for later calls at the same place to reuse."""
    expr = sympy.Integer(expr) if isinstance(expr, int) else expr
    if not is_int_expression(expr):
        return None
    return _int_ops(expr, symbol_value, ip, loc, {} if cache is None else cache)


def is_int_expression(expr: sympy.Expr) -> bool:
    """Whether `int_expression` can build `expr`."""
    if isinstance(expr, sympy.Integer | sympy.Symbol):
        return True
    if isinstance(expr, sympy.Add | sympy.Mul):
        return all(is_int_expression(a) for a in expr.args)
    if isinstance(expr, sympy.floor | sympy.ceiling):
        numerator, denominator = quotient(expr)
        return isinstance(denominator, sympy.Integer) and is_int_expression(numerator)
    return False


def _int_ops(expr: sympy.Expr, symbol_value: Callable[[str], ir.Value], ip: ir.InsertionPoint,
             loc: ir.Location, cache: dict[sympy.Expr, ir.Value]) -> ir.Value:
    if expr in cache:
        return cache[expr]

    def part(e: sympy.Expr) -> ir.Value:
        return _int_ops(e, symbol_value, ip, loc, cache)

    def binary(name: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return create(f"torch.aten.{name}.int", "!torch.int", ip, loc, operands=[a, b])

    if expr.is_Integer:
        value = int_constant(int(expr), ip, loc)
    elif expr.is_Symbol:
        value = symbol_value(expr.name)
    elif isinstance(expr, sympy.floor | sympy.ceiling):
        numerator, denominator = quotient(expr)
        if isinstance(expr, sympy.ceiling):  # ceil(n / d) = floor((n + d - 1) / d), d > 0
            numerator = sympy.expand(numerator + denominator - 1)
        value = binary("floordiv", part(numerator), part(denominator))
    else:
        name = "add" if isinstance(expr, sympy.Add) else "mul"
        value = part(expr.args[0])
        for arg in expr.args[1:]:
            value = binary(name, value, part(arg))
    cache[expr] = value
    return value


def none_set(flags: ir.Value, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    """A `!torch.bool`: whether no element of the `i1` tensor `flags` is set."""
    scalar = vtensor_type(flags.type, ())
    fine = create("torch.aten.logical_not", scalar, ip, loc, operands=[
        create("torch.aten.any", scalar, ip, loc, operands=[flags])])
    return create("torch.aten.Bool.Tensor", "!torch.bool", ip, loc, operands=[fine])


def bool_constant(value: bool, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    return create("torch.constant.bool", "!torch.bool", ip, loc, value=ir.BoolAttr.get(value))


def float_constant(value: float, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    return create("torch.constant.float", "!torch.float", ip, loc,
                  value=ir.FloatAttr.get_f64(value))


def none_constant(ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    return create("torch.constant.none", "!torch.none", ip, loc)


def int_list(values: list[int], ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    """A `torch.prim.ListConstruct` of int constants."""
    return create("torch.prim.ListConstruct", "!torch.list<int>", ip, loc,
                  operands=[int_constant(v, ip, loc) for v in values])


def vtensor_of(dims: Iterable[int | None], dtype: str) -> ir.Type:
    """`!torch.vtensor<[dims],dtype>` (a None dim: ``?``)."""
    text = ",".join("?" if d is None else str(d) for d in dims)
    return ir.Type.parse(f"!torch.vtensor<[{text}],{dtype}>")


def vtensor_type(like: ir.Type, dims: Iterable[int | None]) -> ir.Type:
    """`like` (a `!torch.vtensor`) with the dims `dims` (None: ``?``)."""
    return vtensor_of(dims, str(like).split("],", 1)[1].removesuffix(">"))


# torch's ScalarType number of each element type
SCALAR_TYPES = {"ui8": 0, "si8": 1, "si16": 2, "si32": 3, "si64": 4, "f16": 5, "f32": 6,
                "f64": 7, "i1": 11, "bf16": 15, "ui16": 27, "ui32": 28, "ui64": 29}


class TorchBuilder:
    """Torch ops inserted before one op, with its location; int and float constants made
    once."""

    def __init__(self, before: ir.Operation):
        self.ip, self.loc = ir.InsertionPoint(before), before.location
        self._ints: dict[int, ir.Value] = {}
        self._floats: dict[float, ir.Value] = {}
        self.none = none_constant(self.ip, self.loc)

    def int(self, value: int) -> ir.Value:
        if value not in self._ints:
            self._ints[value] = int_constant(value, self.ip, self.loc)
        return self._ints[value]

    def float(self, value: float) -> ir.Value:
        if value not in self._floats:
            self._floats[value] = float_constant(value, self.ip, self.loc)
        return self._floats[value]

    def bool(self, value: bool) -> ir.Value:
        return bool_constant(value, self.ip, self.loc)

    def str(self, value: str) -> ir.Value:
        """A `torch.constant.str` (a rounding mode, a padding mode)."""
        return create("torch.constant.str", "!torch.str", self.ip, self.loc,
                      value=ir.StringAttr.get(value))

    def __call__(self, name: str, result: ir.Type, *operands: ir.Value) -> ir.Value:
        return create(name, result, self.ip, self.loc, operands=operands)

    def size(self, x: ir.Value, dim: int) -> ir.Value:
        """Dim `dim` of the tensor `x` as a `!torch.int`: a constant where its type knows it,
        else `torch.aten.size.int`."""
        known = type_dims(x.type)[dim]
        if known is not None:
            return self.int(known)
        return self("torch.aten.size.int", ir.Type.parse("!torch.int"), x, self.int(dim))

    def slice(self, x: ir.Value, dim: int, start: int | ir.Value, end: int | ir.Value,
              step: int = 1, size: int | None = None) -> ir.Value:
        """`torch.aten.slice.Tensor` of `x` along `dim`: every `step`-th element from `start`
        up to `end` (ints or `!torch.int` values; torch clamps an end past the dim's size).
        `size`: the result's length along `dim` (None: dynamic)."""
        dims = list(type_dims(x.type))
        dims[dim] = size
        start, end = (self.int(v) if isinstance(v, int) else v for v in (start, end))
        return self("torch.aten.slice.Tensor", vtensor_type(x.type, dims), x, self.int(dim),
                    start, end, self.int(step))

    def strided(self, x: ir.Value, dim: int, start: int, count: int, step: int) -> ir.Value:
        """`count` elements of `x` along `dim`, every `step`-th from `start`."""
        return self.slice(x, dim, start, start + (count - 1) * step + 1, step, count)

    def ints(self, values: list[ir.Value]) -> ir.Value:
        """A `!torch.list<int>` of the `!torch.int` values `values`."""
        return self("torch.prim.ListConstruct", ir.Type.parse("!torch.list<int>"), *values)

    def tensors(self, values: list[ir.Value]) -> ir.Value:
        """A `!torch.list<vtensor>` of the tensors `values` (for `cat`)."""
        return self("torch.prim.ListConstruct", ir.Type.parse("!torch.list<vtensor>"), *values)

    def convert(self, x: ir.Value, element: str) -> ir.Value:
        """`torch.aten.to.dtype` of the tensor `x` to `element` (a key of `SCALAR_TYPES`)."""
        false = self.bool(False)
        return self("torch.aten.to.dtype", vtensor_of(type_dims(x.type), element), x,
                    self.int(SCALAR_TYPES[element]), false, false, self.none)

    def sort(self, x: ir.Value, dim: int, descending: bool) -> tuple[ir.Value, ir.Value]:
        """`torch.aten.sort` of `x`: its values and indices."""
        indices = vtensor_of(type_dims(x.type), "si64")
        op = ir.Operation.create("torch.aten.sort", results=[x.type, indices], loc=self.loc,
                                 ip=self.ip, operands=[x, self.int(dim), self.bool(descending)])
        return op.results[0], op.results[1]


def through_barrier(value: ir.Value, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    """`value` (a `!torch.vtensor`) through a `util.optimization_barrier`, between `torch_c`
    casts. A dynamic dim of the barrier's result is tied (`flow.tensor.tie_shape`) to its
    `tensor.dim` before the barrier: IREE cannot see through the barrier, and an untied dim
    failed its flow stage ("'tensor.dim' op unexpected during shape cleanup")."""
    # IREE's context registers `util` lazily, and an op built by name while it is not
    # loaded resolves to another op of the dialect later.
    value.context.dialects["util"]
    builtin = builtin_type(value.type, dynamic=True)
    to = create("torch_c.to_builtin_tensor", builtin, ip, loc, operands=[value])
    barrier = create(BARRIER, builtin, ip, loc, operands=[to])
    dims = _dynamic_dims(to, ip, loc)
    if dims:
        value.context.dialects["flow"]
        barrier = create("flow.tensor.tie_shape", builtin, ip, loc, operands=[barrier, *dims])
    return create("torch_c.from_builtin_tensor", value.type, ip, loc, operands=[barrier])


def through_fence(value: ir.Value, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    """`value` (a `!torch.vtensor`) through a `FENCE`, between `torch_c` casts: the work
    before it and the work after it are dispatches of their own, as behind `through_barrier`,
    with no wait of the host between them."""
    value.context.dialects["iree_tensor_ext"]  # registered lazily: see `through_barrier`
    builtin = builtin_type(value.type, dynamic=True)
    to = create("torch_c.to_builtin_tensor", builtin, ip, loc, operands=[value])
    fenced = create(FENCE, builtin, ip, loc, operands=[to, *_dynamic_dims(to, ip, loc)])
    return create("torch_c.from_builtin_tensor", value.type, ip, loc, operands=[fenced])


def fence_operand(op: ir.Operation, index: int) -> None:
    """Make `op` read its operand `index` (a `!torch.vtensor`) through `through_fence`, the
    fenced value bound to the operand's shape; the operand's other readers keep it as it is."""
    value = op.operands[index]
    ip = ir.InsertionPoint(op)
    fenced = through_fence(value, ip, op.location)
    bind_from(fenced, value, lambda exprs: exprs, ip)
    op.operands[index] = fenced


def _dynamic_dims(tensor: ir.Value, ip: ir.InsertionPoint, loc: ir.Location) -> list[ir.Value]:
    """The `tensor.dim` of each dynamic dim of a builtin `tensor`, in order."""
    index = ir.IndexType.get()
    return [create("tensor.dim", index, ip, loc, operands=[
        tensor, create("arith.constant", index, ip, loc, value=ir.IntegerAttr.get(index, i))])
        for i, d in enumerate(type_dims(tensor.type)) if d is None]


# torch scalar type -> (its builtin type, the `torch_c` casts to and from it)
_SCALAR_CASTS = {
    "!torch.float": ("f64", "torch_c.to_f64", "torch_c.from_f64"),
    "!torch.int": ("i64", "torch_c.to_i64", "torch_c.from_i64"),
    "!torch.bool": ("i1", "torch_c.to_i1", "torch_c.from_i1"),
}


def scalar_through_barrier(value: ir.Value, ip: ir.InsertionPoint,
                           loc: ir.Location) -> ir.Value | None:
    """`value` (a `!torch.float`, `!torch.int` or `!torch.bool`) through a
    `util.optimization_barrier` of its own, between `torch_c` casts; None for another type."""
    if str(value.type) not in _SCALAR_CASTS:
        return None
    value.context.dialects["util"]  # registered lazily: see `through_barrier`
    builtin, to, back = _SCALAR_CASTS[str(value.type)]
    raw = create(to, builtin, ip, loc, operands=[value])
    barrier = create(BARRIER, builtin, ip, loc, operands=[raw])
    return create(back, value.type, ip, loc, operands=[barrier])


def users(value: ir.Value) -> list[ir.Operation]:
    """The ops using `value`, shape bindings left out."""
    return [use.owner for use in value.uses if use.owner.name != BIND]


def bindings(value: ir.Value) -> list[ir.Operation]:
    return [use.owner for use in value.uses if use.owner.name == BIND]


def bind_from(value: ir.Value, source: ir.Value, shape: Callable[[list], list],
              ip: ir.InsertionPoint) -> None:
    """Bind the shape of `value` (a tensor a pass made from `source`) to ``shape(exprs)``,
    `exprs` being the affine expressions of `source`'s binding over its symbols (ints in the
    list become constants); nothing where `source` has no binding."""
    found = bindings(source)[:1]
    if not found:
        return
    bind = found[0]
    exprs = list(ir.AffineMapAttr(bind.attributes["shape_expressions"]).value.results)
    symbols = list(bind.operands)[1:]
    results = [ir.AffineConstantExpr.get(e) if isinstance(e, int) else e for e in shape(exprs)]
    ir.Operation.create(BIND, operands=[value, *symbols], attributes={
        "shape_expressions": ir.AffineMapAttr.get(ir.AffineMap.get(0, len(symbols), results))},
        loc=bind.location, ip=ip)


# Ops whose result is not a function of their operands: two of them computed alike differ.
_UNREPEATABLE = re.compile(r"rand|bernoulli|multinomial|normal|uniform|dropout|exponential|"
                           r"poisson|empty|geometric|cauchy|log_normal")
# How deep `computed_as` follows definitions; deeper operands are compared by identity.
_COMPUTED_DEPTH = 12


def computed_as(value: ir.Value, depth: int = _COMPUTED_DEPTH) -> tuple | ir.Value:
    """A key equal for two values computed alike (the same torch ops, attributes and types
    over the same block arguments and values), as a common-subexpression pass would merge them;
    anything else (a block argument, a call's or region op's result, a random draw, a value
    deeper than `depth`) is its own key."""
    memo: dict[tuple[ir.Value, int], tuple | ir.Value] = {}

    def key(v: ir.Value, left: int) -> tuple | ir.Value:
        if (v, left) in memo:
            return memo[v, left]
        op = owner(v)
        if op is None or left == 0 or len(op.regions) or not op.name.startswith(
                ("torch.aten.", "torch.constant.", "torch.prim.ListConstruct", "torch_c.",
                 "torch.symbolic_int", "torch.vtensor.literal")) or _UNREPEATABLE.search(op.name):
            found: tuple | ir.Value = v
        else:
            attributes = tuple(sorted((name, str(op.attributes[name])) for name in op.attributes
                                      if not name.startswith("dync.")))
            found = (op.name, ir.OpResult(v).result_number, str(v.type), attributes,
                     tuple(key(operand, left - 1) for operand in op.operands))
        memo[v, left] = found
        return found

    return key(value, depth)
