"""What torch-dialect ops do to memory: which results alias an operand, which may reuse an
operand's buffer, which only read shapes, which read data on the host. Shared by
`dync-plan-buffers` (liveness) and `dync-plan-execution` (ordering)."""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import element_type
from ..dialects.torch_ops import owner
from ..dialects.walk import function_argument

BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "f8E4M3FN": 1, "f8E5M2": 1,
         "si64": 8, "ui64": 8, "i64": 8, "si32": 4, "ui32": 4, "i32": 4, "si16": 2,
         "ui16": 2, "i16": 2, "si8": 1, "ui8": 1, "i8": 1, "i1": 1,
         "complex<f32>": 8, "complex<f64>": 16, "index": 8}

# Ops whose tensor results alias operand 0 (no new memory): views, no-op copies and casts.
# (Transposes are not among them: IREE moves the data, in a dispatch of their own.)
VIEWS = {f"torch.aten.{n}" for n in """view reshape _unsafe_view unsqueeze squeeze squeeze.dim
flatten.using_ints unflatten.int select.int slice.Tensor narrow expand expand_as broadcast_to
detach alias contiguous clone lift_fresh_copy view_as split.Tensor split_with_sizes chunk
unbind.int as_strided""".split()} | {
    "torch_c.to_builtin_tensor", "torch_c.from_builtin_tensor", "torch.tensor_static_info_cast",
    "torch.copy.to_vtensor", "torch.copy.to_tensor", "torch.prim.ListUnpack",
    "tensor.cast", "tensor.reshape", "tensor.expand_shape", "tensor.collapse_shape",
    "util.optimization_barrier"}
# Elementwise ops: the result may take the buffer of any operand of its size that dies there.
ELEMENTWISE = {f"torch.aten.{n}" for n in """relu sigmoid tanh gelu exp log log2 rsqrt sqrt neg
abs logical_not silu hardtanh leaky_relu clamp clamp_min clamp_max erf cos sin floor ceil round
sign reciprocal bitwise_not dropout elu hardswish hardsigmoid mish softplus isnan isinf
pow.Tensor_Scalar add.Scalar sub.Scalar mul.Scalar div.Scalar rsub.Scalar remainder.Scalar
floor_divide.Scalar eq.Scalar ne.Scalar gt.Scalar lt.Scalar ge.Scalar le.Scalar
masked_fill.Scalar add.Tensor sub.Tensor mul.Tensor div.Tensor div.Tensor_mode eq.Tensor
ne.Tensor gt.Tensor lt.Tensor ge.Tensor le.Tensor maximum minimum logical_and logical_or
logical_xor where.self where.ScalarSelf where.ScalarOther pow.Tensor_Tensor floor_divide
remainder.Tensor bitwise_and.Tensor bitwise_or.Tensor bitwise_xor.Tensor atan2
masked_fill.Tensor _to_copy to.dtype type_as fill.Scalar fill.Tensor zeros_like ones_like
full_like""".split()}
# Scatters: the result may take the buffer of operand 0 when it dies there.
SCATTERS = {f"torch.aten.{n}" for n in """index_put index_put_ _index_put_impl index_add
index_copy scatter.src scatter.value scatter_add slice_scatter select_scatter copy copy_
masked_scatter""".split()}
CONSTANT_OPS = {"torch.vtensor.literal", "torch.constant.int", "torch.constant.float",
                "torch.constant.bool", "torch.constant.str", "torch.constant.none",
                "torch.constant.device", "torch.constant.number", "arith.constant",
                "torch.constant.dtype"}
# Windowed ops and the operand holding their padding: IREE materializes a padded copy of the
# input (the producer writes into its interior when the input has no other use).
PADDED = {"torch.aten.conv2d": 4, "torch.aten.conv1d": 4, "torch.aten.conv3d": 4,
          "torch.aten.convolution": 4, "torch.aten.max_pool2d": 3, "torch.aten.avg_pool2d": 3,
          "torch.aten.max_pool2d_with_indices": 3}
# 2-D convolutions in their torch-dialect spellings (rank-4 inputs: NCHW unless relaid).
CONVOLUTIONS = ("torch.aten.conv2d", "torch.aten.convolution", "torch.aten._convolution")
REGION_OPS = {"scf.if", "scf.while", "scf.for", "scf.execute_region"}
# Ops that read only a tensor's shape, which IREE keeps apart from its buffer.
SHAPE_ONLY = {"torch.aten.size.int", "torch.aten.size", "torch.aten.dim", "torch.aten.numel",
              "tensor.dim", "torch.bind_symbolic_shape"}
TERMINATORS = {"func.return", "scf.yield", "scf.condition"}
# Ops that read tensor data on the host: IREE waits for the work before them.
HOST_READS = {"torch.aten.item", "torch.aten.Bool.Tensor", "torch.aten.Int.Tensor",
              "torch.aten.Float.Tensor", "tensor.extract", "torch_c.to_i1", "torch_c.to_i64"}
# Ops whose results depend on state outside their operands: their order is part of the
# program's meaning.
RANDOM = {f"torch.aten.{n}" for n in """rand rand_like randn randn_like randint randint_like
randperm bernoulli bernoulli.p uniform normal.Tensor_Tensor normal.float_float multinomial
exponential""".split()}


def element_bytes(t: ir.Type) -> int:
    """Bytes per element of a `!torch.vtensor` or builtin tensor type (i1 is stored as a byte)."""
    return BYTES.get(element_type(t) or "f32", 4)


def from_constants(op: ir.Operation, constant: set[ir.Value]) -> bool:
    """Whether `op` is a constant, or computes from `constant` values alone (IREE folds or
    hoists it: a weight's transpose, a literal's shape list)."""
    return op.name in CONSTANT_OPS or (not op.regions and len(op.operands) > 0 and all(
        v in constant for v in op.operands))


def viewed_argument(value: ir.Value) -> int | None:
    """The index of the function argument `value` is, or is a view of (a permute is no view:
    it changes the layout), else None."""
    while (op := owner(value)) is not None:
        if op.name not in VIEWS or not op.operands:
            return None
        value = op.operands[0]
    return function_argument(value)
