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
a leak (torch keeps a storage it has handed to Python until then). Each argument is copied into
a buffer of IREE's too: an array imported as the buffer itself (`import_host_allocation`,
zero-copy on the CPU drivers) is memory IREE may write, and it did: an integer `sort` of an
argument sorted the caller's tensor in place (IREE 3.13 ties the in-place sort's destination to
the imported argument).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Function:
    """`function(arrays)` runs `vm_function` on C-contiguous numpy `arrays` and returns its
    results as numpy arrays the caller owns."""

    def __init__(self, context: Any, device: Any, vm_function: Any):
        import iree.runtime as rt

        self._rt = rt
        self._context = context
        self.device = device
        self._vm_function = vm_function
        self._element_types: dict[np.dtype, Any] = {}
        self._dtypes: dict[Any, np.dtype] = {}
        self._host_visible = int(rt.MemoryType.HOST_VISIBLE)
        self._mapping = int(rt.BufferUsage.MAPPING_SCOPED)

    def __repr__(self) -> str:
        return f"<dync Function {self._vm_function!r}>"

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        rt = self._rt
        arguments = rt.VmVariantList(len(arrays))
        for array in arrays:
            arguments.push_ref(self._buffer(array))
        results = rt.VmVariantList(1)
        self._context.invoke(self._vm_function, arguments, results)
        return [self._to_host(results.get_as_object(i, rt.HalBufferView))
                for i in range(len(results))]

    def _buffer(self, array: np.ndarray) -> Any:
        rt = self._rt
        element_type = self._element_type(array.dtype)
        return self.device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
            device=self.device, buffer=array, element_type=element_type)

    def _to_host(self, view: Any) -> np.ndarray:
        rt = self._rt
        buffer = view.get_buffer()
        if (buffer.memory_type() & self._host_visible == self._host_visible
                and buffer.allowed_usage() & self._mapping == self._mapping):
            element_type = view.element_type
            dtype = self._dtypes.get(element_type)
            if dtype is None:
                dtype = self._dtypes[element_type] = rt.HalElementType.map_to_dtype(element_type)
            return np.array(view.map().asarray(view.shape, dtype), copy=True)
        # Device memory (CUDA): iree.runtime's transfer to the host.
        return np.array(rt.DeviceArray(self.device, view, implicit_host_transfer=True)
                        .to_host(), copy=True)

    def _element_type(self, dtype: np.dtype) -> Any:
        element_type = self._element_types.get(dtype)
        if element_type is None:
            from iree.runtime.array_interop import map_dtype_to_element_type

            element_type = map_dtype_to_element_type(dtype)
            if element_type is None:
                raise ValueError(f"IREE has no element type for numpy dtype {dtype}")
            self._element_types[dtype] = element_type
        return element_type
