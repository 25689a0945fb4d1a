"""The data of tensor literals (`torch.vtensor.literal`), read and written as numpy arrays.

The fx importer stores weights as ``dense_resource`` blobs. MLIR's Python bindings can make such
an attribute from a buffer but not read one back; the C API can, element by element
(``mlirDense<T>ResourceElementsAttrGetValue``), and `iree.compiler` exports it from the same
library the bindings use, so it is called through ctypes on the attribute's C pointer. That
costs about 1 µs an element (0.7 s for a 768 x 768 weight), so the blobs whose data dync holds
anyway (the tensors the PyTorch frontend imported, the literals passes make) are remembered
with their arrays (`hold_resource_data`) and read from those, checked against the blob at a
few elements.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import hashlib
import os
import weakref
from collections.abc import Callable

import numpy as np
from iree.compiler import ir

from .torch_ops import create, defining, vtensor_of

# element type text -> (numpy dtype, the C API's getter suffix)
_ELEMENTS = {
    "f32": (np.float32, "Float", ctypes.c_float),
    "f64": (np.float64, "Double", ctypes.c_double),
    "i64": (np.int64, "Int64", ctypes.c_int64),
    "i32": (np.int32, "Int32", ctypes.c_int32),
}
LITERAL = "torch.vtensor.literal"
# Reading a blob dync does not hold costs one C call per element: larger literals are left
# alone.
MAX_ELEMENTS = 1 << 20
# Elements of a held array compared with its blob before it stands for the blob.
_SPOT_CHECKS = 16
# MLIR context -> attribute -> the source of that `dense_resource` attribute's data (both by C
# pointer: an ir.Attribute kept here would keep its context alive).
_HELD: dict[int, dict[int, Callable[[], np.ndarray | None]]] = {}


@functools.cache
def _library() -> ctypes.CDLL:
    from iree.compiler import _mlir_libs

    here = os.path.dirname(_mlir_libs.__file__)
    return ctypes.CDLL(sorted(glob.glob(os.path.join(here, "libIREECompiler.so*")))[0])


def _c_pointer(obj: ir.Attribute | ir.Context) -> int:
    capsule = obj._CAPIPtr
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


def hold_resource_data(attr: ir.Attribute, data: Callable[[], np.ndarray | None]) -> None:
    """Remember `data` as the source of the ``dense_resource`` attribute `attr`'s data, for
    `literal_array` to read instead of the blob, until its context goes (`ir.Context()`) or,
    for a context that cannot be watched (an IREE session's), `forget_resource_data` of it.
    `data()` returns the array, or None where it no longer holds the blob's data."""
    context = attr.context
    key = _c_pointer(context)
    if key not in _HELD:
        _HELD[key] = {}
        with contextlib.suppress(TypeError):  # not weakly referable: its owner forgets it
            weakref.finalize(context, _HELD.pop, key, None)
    _HELD[key][_c_pointer(attr)] = data


def forget_resource_data(context: ir.Context) -> None:
    """Drop what `hold_resource_data` remembered in `context`: call it before the context goes
    (a later context may reuse its addresses)."""
    _HELD.pop(_c_pointer(context), None)


def _resource_array(attr: ir.Attribute, shape: list[int], element: str) -> np.ndarray | None:
    if element not in _ELEMENTS or int(np.prod(shape)) > MAX_ELEMENTS:
        return None
    dtype, suffix, ctype = _ELEMENTS[element]
    getter = getattr(_library(), f"mlirDense{suffix}ResourceElementsAttrGetValue")
    getter.restype, getter.argtypes = ctype, [ctypes.c_void_p, ctypes.c_ssize_t]
    pointer, count = _c_pointer(attr), int(np.prod(shape))
    held = _held_array(attr, pointer, dtype, count, getter)
    if held is not None:
        return held.reshape(shape)
    return np.fromiter((getter(pointer, i) for i in range(count)), dtype, count).reshape(shape)


def _held_array(attr: ir.Attribute, pointer: int, dtype, count: int, getter) -> np.ndarray | None:
    """A copy of the array held for `attr` (`hold_resource_data`) where there is one with the
    blob's element type and size that agrees with the blob at `_SPOT_CHECKS` elements; else
    None."""
    source = _HELD.get(_c_pointer(attr.context), {}).get(pointer)
    held = None if source is None else source()
    if held is None or held.dtype != dtype or held.size != count:
        return None
    flat = held.reshape(-1)
    spots = np.unique(np.linspace(0, count - 1, _SPOT_CHECKS).astype(np.int64))
    blob = np.array([getter(pointer, int(i)) for i in spots], dtype)
    if not np.array_equal(flat[spots], blob, equal_nan=np.issubdtype(dtype, np.floating)):
        return None
    return flat.copy()


def _is_dense(attr: ir.Attribute) -> bool:
    try:
        ir.DenseElementsAttr(attr)
    except ValueError:
        return False
    return True


def literal_array(op: ir.Operation) -> np.ndarray | None:
    """The value of a `torch.vtensor.literal` as a numpy array, or None when it cannot be read
    (an element type or size this module does not handle)."""
    attr = op.attributes["value"]
    tensor = ir.RankedTensorType(attr.type)
    shape, element = list(tensor.shape), str(tensor.element_type)
    if not _is_dense(attr):
        return _resource_array(attr, shape, element)
    if element not in _ELEMENTS:
        return None
    dense = ir.DenseElementsAttr(attr)
    if dense.is_splat:
        return np.full(shape, dense.get_splat_value().value, _ELEMENTS[element][0])
    return np.array(dense, copy=True).reshape(shape)


def make_literal(array: np.ndarray, like: ir.Operation, ip: ir.InsertionPoint) -> ir.Value:
    """A new `torch.vtensor.literal` holding `array` at `ip`, with the element type and the kind
    (``dense_resource`` blob or inline ``dense``) of the literal `like`."""
    like_attr = like.attributes["value"]
    element = ir.RankedTensorType(like_attr.type).element_type
    tensor = ir.RankedTensorType.get(list(array.shape), element)
    array = np.asarray(array, order="C")
    if _is_dense(like_attr):
        attr = ir.DenseElementsAttr.get(array, type=element)
    else:
        # Named by content, so that compiling the same model again gives the same IR (the
        # compile cache hashes it) and equal literals share a name.
        name = f"dync_{hashlib.sha256(array.tobytes()).hexdigest()[:16]}_{array.dtype}"
        attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(array), name, tensor)
        hold_resource_data(attr, lambda: array)
    vtensor = ir.Type.parse(f"!torch.vtensor<[{','.join(map(str, array.shape))}],{element}>")
    return ir.Operation.create(LITERAL, results=[vtensor],
                               attributes={"value": attr}, loc=like.location, ip=ip).result


_INLINE_ELEMENTS = {np.dtype(np.int64): "si64", np.dtype(np.bool_): "i1"}


def inline_literal(values: np.ndarray, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    """A `torch.vtensor.literal` of `values` (64-bit integers or booleans) as an inline
    ``dense``: the index tensors and masks of the gathers passes build."""
    values = np.ascontiguousarray(values)
    return create(LITERAL, vtensor_of(values.shape, _INLINE_ELEMENTS[values.dtype]), ip, loc,
                  value=ir.DenseElementsAttr.get(values))


def readable(value: ir.Value) -> bool:
    """Whether `value` is a `torch.vtensor.literal` whose data `literal_array` can read."""
    literal = defining(value, LITERAL)
    if literal is None:
        return False
    tensor = ir.RankedTensorType(literal.attributes["value"].type)
    return str(tensor.element_type) in _ELEMENTS and int(np.prod(tensor.shape)) <= MAX_ELEMENTS


def transformed_literal(weight: ir.Value, transform, made: dict,
                        before: ir.Operation | None = None) -> ir.Value | None:
    """A literal holding ``transform(data of weight)``, placed before `weight`'s literal (or
    before the op `before`, then one per block), made once (`made` remembers them); None if
    `weight` is not a literal this module can read."""
    key = (weight, None if before is None else before.block)
    if key in made:
        return made[key]
    literal = defining(weight, LITERAL)
    array = None if literal is None else literal_array(literal)
    if array is None:
        return None
    made[key] = make_literal(transform(array), literal,
                             ir.InsertionPoint(literal if before is None else before))
    return made[key]


def erase_if_unused(weight: ir.Value) -> None:
    """Erase the literal defining `weight` once nothing uses it."""
    if not list(weight.uses):
        weight.owner.operation.erase()
