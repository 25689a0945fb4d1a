"""`Function`: one function of a loaded IREE module, called with numpy arrays.

iree.runtime's own wrapper (`FunctionInvoker`, what `getattr(bound_module, name)` returns) is
built anew on every attribute access and packs arguments and unpacks results through a generic
path driven by reflection metadata, which torch-input modules do not carry. For the small
sub-DNNs a host-mode model calls many times (tree_lstm's node_forward: a few 32-wide matmuls)
that wrapper cost as much as the computation. dync's entry functions take and return flat lists
of tensors, so this does only that: one buffer per argument, `VmContext.invoke`, and each
result buffer brought to the host.

Each result is copied into memory the caller owns (on the CPU from its buffer's mapping): a
mapped array would keep IREE's buffer, a nanobind object, alive for as long as the caller
keeps the result, and nanobind reports every such object still alive at interpreter exit as
a leak (torch keeps a storage it has handed to Python until then).

Each argument is copied into a buffer of IREE's, unless the module reads its arguments only
(`imports_arguments`: on the CPU drivers, for a module whose ``stream``-phase IR
`iree_mends.argument_writes` found writing none and returning none). An array imported as the
buffer itself (`import_host_allocation`) is memory IREE may write, and it did: an integer `sort`
of an argument sorted the caller's tensor in place, and ``y = x.clone(); y[:, 0] = 5`` wrote
the slice into `x` (IREE 3.13 ties an in-place op's destination to the imported argument). Where
it writes none, the copy is all a large argument costs outside IREE (on a 2-core Xeon a 3 MiB
argument: 338 us copied, 0.6 imported; a call of softmax over it 1106 -> 820 us), so arrays
of `_IMPORT_FROM` bytes or more are imported, when 64-byte aligned (IREE's CPU code may load
bindings with aligned vector loads) and writable (the import asks for a writable buffer).
Torch tensors of a shape already run are imported whatever their size, through DLPack
(`Function.tensor_runner`), which costs less than the copy of the smallest: 0.4 us against
1.2 for `Tensor.numpy` and the copy (a 32-wide linear's call 7.9 -> 6.8 us).

On the CPU drivers a result is read through DLPack (`HalDevice.create_dlpack_capsule`, numpy's
`from_dlpack`) and copied: a third of the time of `MappedMemory.asarray`, which is most of a
small call's cost outside IREE (`python -m benchmarks calls`).

`tensors(arrays)` returns torch tensors instead, and on the CPU drivers without a copy: each
is the result's own buffer, handed to torch through its DLPack capsule (which holds the HAL
buffer, no Python object of IREE's, so nothing is reported at exit; the buffer goes back to
IREE's allocator when torch frees the tensor, and the device whose memory it is lives as long
as the process: `module._config`). That is safe because every result of a call is
a buffer of that call's own (IREE 3.13 exports a constant or a value a loop or a branch
returns as a fresh copy: checked by `tests/test_runtime_results.py`), except that two results
may share one where IREE folded them into one value: a result overlapping an earlier one is
copied. Copying and wrapping each result cost 1.4 us of a small call's ~10 outside IREE.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DyncError

# Arrays of at least this many bytes are imported rather than copied, where the module allows:
# below it a copy costs what an import does (0.5-0.7 us).
_IMPORT_FROM = 16384
_ALIGNMENT = 64


class Function:
    """`function(arrays)` runs `vm_function` on C-contiguous numpy `arrays` and returns its
    results as numpy arrays the caller owns."""

    def __init__(self, context: Any, device: Any, vm_function: Any,
                 imports_arguments: bool = False):
        import iree.runtime as rt

        self._rt = rt
        self._context = context
        self.device = device
        self._vm_function = vm_function
        self._element_types: dict[np.dtype, Any] = {}
        self._dtypes: dict[Any, np.dtype] = {}
        copy = device.allocator.allocate_buffer_copy
        self._allocate = _importing(copy, device.allocator.import_host_allocation,
                                    rt.HalBufferView) if imports_arguments else copy
        self._imports, self._copy = imports_arguments, copy
        self._memory_type = int(rt.MemoryType.DEVICE_LOCAL)
        self._usage = int(rt.BufferUsage.DEFAULT)
        self._capsule = device.create_dlpack_capsule
        self._list, self._view_type = rt.VmVariantList, rt.HalBufferView
        # How results come to the host (`_reader`): None until the first result says.
        self._read: Callable[[Function, Any], np.ndarray] | None = None

    def __repr__(self) -> str:
        return f"<dync Function {self._vm_function!r}>"

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        results = self._invoke(arrays)
        copies = self._through_dlpack(results, lambda capsule: np.from_dlpack(
            _Capsule(capsule)).copy())
        return copies if copies is not None else self._read_each(results, lambda a: a)

    def tensors(self, arrays: list[np.ndarray]) -> list[Any]:
        """`self(arrays)`, its results as torch tensors (torch must be imported): on the CPU
        drivers each result's own memory (see the module's docstring)."""
        torch = sys.modules["torch"]
        results = self._invoke(arrays)
        # torch.from_dlpack less its checks of what it is given (0.13 us a result).
        tensors = self._through_dlpack(results, getattr(torch._C, "_from_dlpack",
                                                        torch.from_dlpack))
        if tensors is None:
            return self._read_each(results, torch_from_array)
        return tensors if len(tensors) < 2 else _unshared(tensors)

    def tensor_runner(self, arrays: list[np.ndarray], lock: Any, count: tuple[dict, Any],
                      nest: Callable[[list], Any] | None, to_array: Callable[[Any], np.ndarray],
                      error: Callable[[Exception], Exception]
                      ) -> Callable[[tuple], Any] | None:
        """`run(tensors)`: this function on CPU torch tensors of the dtypes of `arrays` (each
        made an array by `to_array` where it is copied), one call into the VM context at a
        time (`lock`), counted in `count[0][count[1]]`, IREE's errors raised as `error` makes
        them, the results (torch tensors) nested by `nest`; everything a call would look up
        looked up now. None unless results are read through DLPack (decided by an earlier
        call). What the runtime calls for tensors of a shape it has run before
        (`CompiledModule._direct_runner`).

        Where the module reads its arguments only, each tensor goes to IREE as itself, through
        DLPack (`_dlpack_importer`): 0.4 us an argument, where making it an array and copying
        that into a buffer of IREE's took 1.2 (`python -m benchmarks calls`: a 32-wide
        linear's call 7.9 -> 6.8 us, an LSTM cell's of three arguments 17.7 -> 15.3)."""
        if self._read is not _through_dlpack:
            return None
        torch = sys.modules["torch"]
        wrap = getattr(torch._C, "_from_dlpack", torch.from_dlpack)
        element_types = [self._element_type(a.dtype) for a in arrays]
        new_list, copy, memory_type, usage, device = (
            self._list, self._copy, self._memory_type, self._usage, self.device)

        def copied(tensor: Any, element_type: Any) -> Any:
            # Copied, never imported: the array may be a copy of the tensor's, which nothing
            # keeps alive through the call.
            return copy(memory_type, usage, device, to_array(tensor), element_type)

        buffer_of = [(self._imports and self._dlpack_importer(torch, a.dtype, t, copied) or copied,
                      t) for a, t in zip(arrays, element_types, strict=True)]
        invoke, vm_function, view_type, capsule = (
            self._context.invoke, self._vm_function, self._view_type, self._capsule)
        counter, counted = count
        arity = len(element_types)
        first, first_type = buffer_of[0] if arity == 1 else (None, None)

        def run(tensors: tuple) -> Any:
            arguments = new_list(arity)
            push = arguments.push_ref
            results = new_list(1)
            try:  # (IREE's errors making an argument's buffer too, as the usual runner's)
                # (No comprehension or zip for one argument: Python 3.11 makes a function of each.)
                if arity == 1:
                    push(first(tensors[0], first_type))
                else:
                    for tensor, (buffer, element_type) in zip(tensors, buffer_of, strict=True):
                        push(buffer(tensor, element_type))
                with lock:
                    counter[counted] += 1
                    invoke(vm_function, arguments, results)
            except DyncError:  # a tensor `to_array` refuses (an `InputError`)
                raise
            except (RuntimeError, IndexError, ValueError) as e:  # iree.runtime's errors
                raise error(e) from e
            get = results.get_as_object
            try:
                if results.size == 1:
                    outputs = [wrap(capsule(get(0, view_type), _DL_CPU, 0))]
                else:
                    outputs = []
                    for i in range(results.size):
                        outputs.append(wrap(capsule(get(i, view_type), _DL_CPU, 0)))
                    outputs = _unshared(outputs)
            except (RuntimeError, TypeError, ValueError, BufferError):
                outputs = self._read_each(results, torch_from_array)
                outputs = outputs if len(outputs) < 2 else _unshared(outputs)
            return outputs if nest is None else nest(outputs)

        return run

    def _dlpack_importer(self, torch: Any, dtype: np.dtype, element_type: Any,
                         copied: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any] | None:
        """`argument(tensor, element_type)`: a CPU tensor of `dtype` as a buffer view of its own
        memory (DLPack), else as `copied` makes it; None where DLPack would hand IREE another
        element type than `element_type` (decided on an empty tensor now) or the dtype is
        complex. Copied: a tensor that is not contiguous, one not on the CPU (iree.runtime's
        `from_dlpack_capsule` takes any device's pointer for host memory), one with its
        negative bit (`_neg_view`: DLPack hands over the memory unnegated), and one IREE
        refuses (not 64-byte aligned)."""
        if dtype.kind == "c":  # conjugate views: the same as the negative bit
            return None
        import_capsule, to_capsule = self.device.from_dlpack_capsule, torch._C._to_dlpack
        failures = (RuntimeError, TypeError, ValueError, IndexError, BufferError)
        try:
            probe = import_capsule(to_capsule(torch.from_numpy(np.empty(0, dtype))))
        except failures:
            return None
        if int(probe.element_type) != int(element_type):
            return None

        def argument(tensor: Any, element_type: Any) -> Any:
            try:
                if tensor.is_contiguous() and tensor.is_cpu and not tensor.is_neg():
                    return import_capsule(to_capsule(tensor))
            except failures:  # (a sparse tensor has no `is_contiguous`)
                pass
            return copied(tensor, element_type)

        return argument

    def _through_dlpack(self, results: Any, wrap: Callable[[Any], Any]) -> list[Any] | None:
        """Each of `results` (a `VmVariantList`) as `wrap` makes it of its DLPack capsule, where
        results are read so (the CPU drivers; decided by the first call's); else None."""
        if self._read is not _through_dlpack:
            return None
        get, view_type, capsule = results.get_as_object, self._view_type, self._capsule
        try:
            return [wrap(capsule(get(i, view_type), _DL_CPU, 0)) for i in range(len(results))]
        except (RuntimeError, TypeError, ValueError, BufferError):
            return None  # an element type DLPack has no code for: read each as `_read_each`

    def _read_each(self, results: Any, wrap: Callable[[np.ndarray], Any]) -> list[Any]:
        """Each of `results` brought to the host by `_reader`'s way, wrapped by `wrap`."""
        get, view_type, count = results.get_as_object, self._view_type, len(results)
        read = self._read or self._reader(get(0, view_type)) if count else None
        return [wrap(read(self, get(i, view_type))) for i in range(count)]

    def _invoke(self, arrays: list[np.ndarray]) -> Any:
        """The function's results on `arrays`, in a `VmVariantList`."""
        # Every name is looked up once: a small sub-DNN's whole call is a few microseconds.
        arguments = self._list(len(arrays))
        push, allocate, memory_type, usage, device, element_types = (
            arguments.push_ref, self._allocate, self._memory_type, self._usage, self.device,
            self._element_types)
        for array in arrays:
            element_type = element_types.get(array.dtype)
            if element_type is None:
                element_type = self._element_type(array.dtype)
            push(allocate(memory_type, usage, device, array, element_type))
        results = self._list(1)
        self._context.invoke(self._vm_function, arguments, results)
        return results

    def _buffer(self, array: np.ndarray) -> Any:
        return self._allocate(self._memory_type, self._usage, self.device, array,
                              self._element_type(array.dtype))

    def _reader(self, view: Any) -> Callable[[Function, Any], np.ndarray]:
        """How results are brought to the host, decided by the first result's buffer: where
        they live in host memory DLPack describes (the CPU drivers), through DLPack, else by
        iree.runtime's transfer."""
        buffer = view.get_buffer()
        host_visible = int(self._rt.MemoryType.HOST_VISIBLE)
        mapping = int(self._rt.BufferUsage.MAPPING_SCOPED)
        self._read = (_through_dlpack if buffer.memory_type() & host_visible == host_visible
                      and buffer.allowed_usage() & mapping == mapping else _transferred)
        return self._read

    def _mapped(self, view: Any) -> np.ndarray:
        element_type = view.element_type
        dtype = self._dtypes.get(element_type)
        if dtype is None:
            dtype = self._dtypes[element_type] = self._rt.HalElementType.map_to_dtype(element_type)
        return np.array(view.map().asarray(view.shape, dtype), copy=True)

    def _element_type(self, dtype: np.dtype) -> Any:
        element_type = self._element_types.get(dtype)
        if element_type is None:
            from iree.runtime.array_interop import map_dtype_to_element_type

            element_type = map_dtype_to_element_type(dtype)
            if element_type is None:
                raise ValueError(f"IREE has no element type for numpy dtype {dtype}")
            self._element_types[dtype] = element_type
        return element_type


_DL_CPU = 1  # DLPack's kDLCPU


def _importing(copy: Callable, import_host: Callable, view_type: Any) -> Callable:
    """`allocate_buffer_copy` (`copy`), but a large aligned writable array is imported as the
    buffer itself (see the module's docstring)."""

    def allocate(memory_type: int, usage: int, device: Any, array: np.ndarray,
                 element_type: Any) -> Any:
        if array.nbytes >= _IMPORT_FROM and array.flags.c_contiguous \
                and array.flags.writeable and array.ctypes.data % _ALIGNMENT == 0:
            return view_type(import_host(array, memory_type, usage), array.shape, element_type)
        return copy(memory_type, usage, device, array, element_type)

    return allocate


def torch_from_array(array: np.ndarray) -> Any:
    """`torch.from_numpy(array)`, also for ml_dtypes' bfloat16 and float8 types (numpy's
    kind "V"), which it refuses: their bits, as torch's type of that name (torch must be
    imported)."""
    torch = sys.modules["torch"]
    if array.dtype.kind != "V":
        return torch.from_numpy(array)
    dtype = getattr(torch, array.dtype.name, None)
    if not isinstance(dtype, torch.dtype) or dtype.itemsize != array.itemsize:
        raise TypeError(f"no torch type for a result of type {array.dtype.name}")
    return torch.from_numpy(array.view(np.dtype(f"u{array.itemsize}"))).view(dtype)


def array_from_torch(tensor: Any) -> np.ndarray:
    """`tensor.numpy()`, also for torch's bfloat16 and float8 types, which it refuses: their
    bits, as ml_dtypes' type of that name (the inverse of `torch_from_array`)."""
    try:
        return tensor.numpy()
    except TypeError:
        import ml_dtypes  # only narrow float results get here (onnx brings it)

        narrow = getattr(ml_dtypes, str(tensor.dtype).removeprefix("torch."), None)
        if narrow is None or np.dtype(narrow).itemsize != tensor.dtype.itemsize:
            raise
        unsigned = getattr(sys.modules["torch"], f"uint{8 * tensor.dtype.itemsize}")
        return tensor.view(unsigned).numpy().view(narrow)


def _through_dlpack(function: Function, view: Any) -> np.ndarray:
    try:
        return np.from_dlpack(_Capsule(function._capsule(view, _DL_CPU, 0))).copy()
    except (RuntimeError, TypeError, ValueError, BufferError):
        return function._mapped(view)  # an element type DLPack has no code for


def _transferred(function: Function, view: Any) -> np.ndarray:
    """Device memory (CUDA): iree.runtime's transfer to the host."""
    return np.array(function._rt.DeviceArray(function.device, view,
                                             implicit_host_transfer=True).to_host(), copy=True)


def _unshared(tensors: list[Any]) -> list[Any]:
    """`tensors` with each one whose memory overlaps an earlier one's replaced by a copy."""
    # Results almost never overlap: prove it cheaply (a pair in 0.25 us, three in 0.5, against
    # 0.9 and 1.3 for the sorted walk below, and its copies only for calls that do overlap).
    if len(tensors) == 2:
        a, b = tensors
        start_a, start_b = a.data_ptr(), b.data_ptr()
        if start_a + a.nbytes <= start_b or start_b + b.nbytes <= start_a:
            return tensors
    elif len(tensors) == 3:
        a, b, c = tensors
        start_a, start_b, start_c = a.data_ptr(), b.data_ptr(), c.data_ptr()
        end_a, end_b, end_c = start_a + a.nbytes, start_b + b.nbytes, start_c + c.nbytes
        if ((end_a <= start_b or end_b <= start_a) and (end_a <= start_c or end_c <= start_a)
                and (end_b <= start_c or end_c <= start_b)):
            return tensors
    end = 0
    for start, size in sorted([(t.data_ptr(), t.nbytes) for t in tensors]):
        if start < end and size:
            return _copies_of_overlapping(tensors)
        end = max(end, start + size)
    return tensors


def _copies_of_overlapping(tensors: list[Any]) -> list[Any]:
    spans: list[tuple[int, int]] = []
    for i, t in enumerate(tensors):
        size = t.nbytes
        if not size:
            continue
        start = t.data_ptr()
        end = start + size
        if any(start < e and s < end for s, e in spans):
            tensors[i] = t.clone()
        else:
            spans.append((start, end))
    return tensors


class _Capsule:
    """A DLPack capsule as numpy's `from_dlpack` takes it: an object with `__dlpack__`."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any):
        self.capsule = capsule

    def __dlpack__(self, stream: Any = None, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_DL_CPU, 0)
