"""The one table of what dync knows about each op: its traits (what kind of op it is, as MLIR's
op traits and tinygrad's `GroupOp` say it), the shape rule `dync-rdp` gives it when the rule is
a generic one, and where a convolution's or pool's window parameters are among its operands
(`Window`: RDP's window rules, padding fusion, bucketing, NHWC and stage patching read it).

Every pass asks this table, through the sets derived at the bottom (`op_kinds.VIEWS`,
`op_kinds.ELEMENTWISE`, ... and `SAME_SHAPE`/`BROADCASTING` for RDP). Teaching dync an op is
one `_add` line here (plus a rule in `passes/rdp/rules/` when its shape is its own).

Traits answer different questions, so an op may carry several and two related sets differ on
purpose: `softmax.int` keeps its operand's shape (RDP: `SAME`) but is a normalization, not
elementwise (it reads a whole row before it writes, so its result cannot take its operand's
buffer); `index_put` keeps its operand's shape and is a scatter; `_to_copy` is elementwise for
memory while RDP gives it a rule of its own (`rdp.rules._identity`).
"""

from __future__ import annotations

from dataclasses import dataclass

# -- traits ------------------------------------------------------------------------------------
# The result aliases operand 0 (no new memory): views, no-op copies and casts. (Transposes are not
# views: IREE moves the data, in a dispatch of their own.)
VIEW = "view"
# Element i of the result reads element i of each operand (broadcast): the result may take the
# buffer of an operand of its size that dies there.
ELEMENTWISE = "elementwise"
# Writes into a copy of operand 0: the result may take operand 0's buffer when it dies there.
SCATTER = "scatter"
# Reads a whole row or channel before it writes (softmax, the norms) or accumulates along an axis.
NORMALIZATION = "normalization"
SCAN = "scan"
# Makes a tensor of its operand's shape without reading its data.
FACTORY = "factory"
# A constant or a literal.
CONSTANT = "constant"
# Has regions (control flow).
REGION = "region"
# Reads only a tensor's shape, which IREE keeps apart from its buffer.
SHAPE_QUERY = "shape query"
# Ends a block.
TERMINATOR = "terminator"
# Reads tensor data on the host: IREE waits for the work before it.
HOST_READ = "host read"
# Depends on state outside its operands: its order is part of the program's meaning.
RANDOM = "random"
# A convolution (its window's operands: `Window`).
CONVOLUTION = "convolution"
# A max or average pool over a window (`Window`); adaptive pools are not.
POOL = "pool"
# Normalizes each channel by statistics it is given (at inference, a per-channel affine map).
BATCH_NORM = "batch norm"
# Reduces its operand 0 along the axes its operand 1 lists (softmax reads along one).
REDUCTION = "reduction"
# A view whose result's shape is the list its operand 1 holds.
RESHAPE = "reshape"
# A softmax over one dim (its operand 1), or a log-softmax.
SOFTMAX = "softmax"
LOG_SOFTMAX = "log softmax"
# A matrix product: IREE lowers it to a contraction, whose operands its data tiling packs.
MATMUL = "matmul"
# Reads its operand 0 at positions an index tensor holds.
GATHER = "gather"

# Computes with its integer operands as signed numbers in IREE's lowering (torch-mlir 2025,
# IREE 3.13), so it is wrong on unsigned integers of 128 and above: measured with uint8
# operands against eager (div 200 // 3, abs, sort and sum came out signed; max, min, clamp,
# relu, comparisons, shifts, argmax, cumsum and casts are right). dync refuses these on
# unsigned tensors (`frontends.common`) rather than return different numbers.
SIGNED_ONLY = "signed only"

# RDP's generic shape rules: the result has operand 0's shape, or the broadcast shape of the
# tensor operands.
SAME, BROADCAST = "same", "broadcast"


@dataclass(frozen=True)
class Window:
    """Where a convolution or pool holds its window's parameters among its operands (None: it
    has no such operand) and how many spatial dims it slides over (None: its input's rank
    says, as for the generic `convolution`). The kernel is operand 1 (a pool's sizes, a
    convolution's weight)."""
    stride: int
    padding: int
    dilation: int | None = None
    ceil_mode: int | None = None
    transposed: int | None = None
    groups: int | None = None
    spatial: int | None = None


@dataclass(frozen=True)
class OpFacts:
    traits: frozenset[str]
    shape: str | None = None        # SAME, BROADCAST, or None (a rule of its own, or none)
    window: Window | None = None    # a convolution's or pool's operands


OPS: dict[str, OpFacts] = {}


def _add(names: str, *traits: str, shape: str | None = None, window: Window | None = None,
         dialect: str = "torch.aten.") -> None:
    """Add `traits` (and the other facts given) to each op of `names` (`dialect` prefixed)."""
    for short in names.split():
        name = dialect + short
        old = OPS.get(name, OpFacts(frozenset()))
        OPS[name] = OpFacts(old.traits | frozenset(traits), shape or old.shape,
                            window or old.window)


# -- elementwise ---------------------------------------------------------------------------------
_add("""relu sigmoid tanh gelu exp log log2 rsqrt sqrt neg abs logical_not silu hardtanh leaky_relu
clamp clamp_min clamp_max erf cos sin floor ceil round sign reciprocal bitwise_not dropout
zeros_like ones_like full_like fill.Scalar elu hardswish hardsigmoid mish softplus isnan isinf
pow.Tensor_Scalar add.Scalar sub.Scalar mul.Scalar div.Scalar rsub.Scalar remainder.Scalar
floor_divide.Scalar eq.Scalar ne.Scalar gt.Scalar lt.Scalar ge.Scalar le.Scalar
masked_fill.Scalar""", ELEMENTWISE, shape=SAME)
_add("""add.Tensor sub.Tensor mul.Tensor div.Tensor div.Tensor_mode eq.Tensor ne.Tensor gt.Tensor
lt.Tensor ge.Tensor le.Tensor maximum minimum logical_and logical_or logical_xor where.self
where.ScalarSelf where.ScalarOther pow.Tensor_Tensor floor_divide remainder.Tensor
bitwise_and.Tensor bitwise_or.Tensor bitwise_xor.Tensor atan2 masked_fill.Tensor""",
     ELEMENTWISE, shape=BROADCAST)
_add("_to_copy fill.Tensor to.dtype type_as", ELEMENTWISE)

# -- same shape, not elementwise -----------------------------------------------------------------
_add("""softmax.int log_softmax.int _softmax _log_softmax layer_norm batch_norm group_norm""",
     NORMALIZATION, shape=SAME)
_add("softmax.int _softmax", SOFTMAX)
_add("log_softmax.int _log_softmax", LOG_SOFTMAX)
_add("batch_norm _native_batch_norm_legit_no_training", BATCH_NORM)
_add("softmax.int log_softmax.int _softmax _log_softmax mean.dim sum.dim_IntList amax amin",
     REDUCTION)
_add("cumsum", SCAN, shape=SAME)
_add("empty_like", FACTORY, shape=SAME)
_add("rand_like randn_like bernoulli", RANDOM, shape=SAME)

# -- products ------------------------------------------------------------------------------------
_add("mm matmul bmm linear addmm baddbmm einsum", MATMUL)

# -- gathers -------------------------------------------------------------------------------------
_add("index_select gather index.Tensor _unsafe_index.Tensor", GATHER)

# -- scatters ------------------------------------------------------------------------------------
_add("index_put scatter.src scatter.value scatter_add index_add copy", SCATTER, shape=SAME)
_add("""index_put_ index_put.hacked_twin _index_put_impl index_copy slice_scatter select_scatter
diagonal_scatter as_strided_scatter scatter.reduce scatter.value_reduce scatter_reduce.two copy_
masked_scatter""", SCATTER)

# -- views ---------------------------------------------------------------------------------------
_add("""view reshape _unsafe_view unsqueeze squeeze squeeze.dim flatten.using_ints unflatten.int
select.int slice.Tensor narrow expand expand_as broadcast_to detach alias contiguous clone
lift_fresh_copy view_as split.Tensor split_with_sizes chunk unbind.int as_strided""", VIEW)
_add("view reshape _unsafe_view", RESHAPE)
_add("to_builtin_tensor from_builtin_tensor", VIEW, dialect="torch_c.")
_add("tensor_static_info_cast copy.to_vtensor copy.to_tensor prim.ListUnpack", VIEW,
     dialect="torch.")
_add("cast reshape expand_shape collapse_shape", VIEW, dialect="tensor.")
_add("optimization_barrier", VIEW, dialect="util.")
_add("compute_barrier.start", VIEW, dialect="iree_tensor_ext.")

# -- windowed ops and convolutions ---------------------------------------------------------------
for _n in (1, 2, 3):
    _add(f"conv{_n}d", CONVOLUTION, window=Window(3, 4, dilation=5, groups=6, spatial=_n))
    _add(f"max_pool{_n}d", POOL, window=Window(2, 3, dilation=4, ceil_mode=5, spatial=_n))
    _add(f"avg_pool{_n}d", POOL, window=Window(2, 3, ceil_mode=4, spatial=_n))
_add("convolution _convolution", CONVOLUTION, window=Window(3, 4, dilation=5, transposed=6,
                                                            groups=8))
_add("max_pool2d_with_indices", POOL, window=Window(2, 3, dilation=4, ceil_mode=5, spatial=2))

_add("""div.Tensor div.Tensor_mode div.Scalar div.Scalar_mode floor_divide floor_divide.Scalar
remainder.Tensor remainder.Scalar fmod.Tensor fmod.Scalar abs sign sort topk sum sum.dim_IntList
mean mean.dim prod prod.dim_int""", SIGNED_ONLY)

# -- random --------------------------------------------------------------------------------------
_add("""rand randn randint randint_like randperm bernoulli.p uniform normal.Tensor_Tensor
normal.float_float multinomial exponential""", RANDOM)

# -- host reads, shape queries -------------------------------------------------------------------
_add("item Bool.Tensor Int.Tensor Float.Tensor", HOST_READ)
_add("to_i1 to_i64", HOST_READ, dialect="torch_c.")
_add("extract", HOST_READ, dialect="tensor.")
_add("size.int size dim numel", SHAPE_QUERY)
_add("dim", SHAPE_QUERY, dialect="tensor.")
_add("bind_symbolic_shape", SHAPE_QUERY, dialect="torch.")

# -- structure -----------------------------------------------------------------------------------
_add("literal", CONSTANT, dialect="torch.vtensor.")
_add("int float bool str none device number dtype", CONSTANT, dialect="torch.constant.")
_add("constant", CONSTANT, dialect="arith.")
_add("if while for execute_region", REGION, dialect="scf.")
_add("yield condition", TERMINATOR, dialect="scf.")
_add("return", TERMINATOR, dialect="func.")


def with_trait(trait: str) -> frozenset[str]:
    """The ops that carry `trait`."""
    return frozenset(name for name, facts in OPS.items() if trait in facts.traits)


def with_shape(rule: str) -> frozenset[str]:
    """The ops whose result shape follows RDP's generic `rule` (SAME or BROADCAST)."""
    return frozenset(name for name, facts in OPS.items() if facts.shape == rule)


def window(name: str) -> Window | None:
    """The window operands of convolution or pool `name`; None for any other op."""
    facts = OPS.get(name)
    return facts.window if facts else None


SAME_SHAPE = with_shape(SAME)
BROADCASTING = with_shape(BROADCAST)
PADDING_OPERAND = {name: f.window.padding for name, f in OPS.items() if f.window}
# The convolutions that may be 2-D (a rank-4 input, NCHW unless relaid; the generic spellings).
CONVOLUTIONS_2D = frozenset(name for name in with_trait(CONVOLUTION)
                            if OPS[name].window.spatial in (2, None))
