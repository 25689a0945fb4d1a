"""`dync-channels-last`: run 2-D convolutions in NHWC on the CPU.

Reads: convolutions (`torch.aten.conv2d`, `torch.aten.convolution`, with a rank-4 input) and global average pools
(`torch.aten.adaptive_avg_pool2d` whose result is N x C x 1 x 1) in every function.

Writes:
* each global average pool becomes `torch.aten.mean.dim` over the two spatial dims with
  ``keepdim`` (the same arithmetic). torch-mlir lowers the pool to a padded window
  gather that IREE 3.13's transpose propagation cannot cross when the batch dim is dynamic
  ("'tensor.empty' op incorrect number of dynamic sizes"); a plain reduction it can;
* when the module has a 2-D convolution and no control flow (a static network, or a
  branch-free sub-DNN compiled on its own in host mode), the module attribute
  ``dync.iree_preprocessing`` lists IREE's ``iree-preprocessing-convert-conv-to-channels-last``;
  the backend passes it as ``--iree-preprocessing-pass-pipeline``. IREE then computes every
  convolution in NHWC and propagates the transposes away between consecutive convolutions.

Why: IREE's CPU code for NCHW convolutions is poor, worst with dynamic dims. SoD² (§5,
layout transformation) and TVM's NCHWc make the same choice. Measured on this host (IREE
3.13, local-sync): the YOLO backbone over a dynamic H x W 16.1 -> 4.6 ms (a static build
3.7 ms); the static-control ResNet with a dynamic batch 2.4x faster, with a static batch
7.5 -> 4.7 ms. With control flow it is the opposite: the transposes cannot cross `scf`
region boundaries, every convolution in a branch pays for its own, and the CIFAR networks
with gated blocks ran 3-9x slower. Hence the control-flow condition. The pass changes no
numerics beyond summation order.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.dync import request_preprocessing
from ..dialects.symbolic import type_dims
from ..dialects.walk import nested_ops
from .pipeline import Pass

CHANNELS_LAST = "iree-preprocessing-convert-conv-to-channels-last"
CONTROL_FLOW = ("scf.if", "scf.while", "scf.for", "torch.prim.If", "torch.prim.Loop")
CONVOLUTIONS = ("torch.aten.conv2d", "torch.aten.convolution", "torch.aten._convolution")


def _rank(value: ir.Value) -> int | None:
    dims = type_dims(value.type)
    return None if dims is None else len(dims)


def _is_global_pool(op: ir.Operation) -> bool:
    """A pool over a rank-4 input whose result is N x C x 1 x 1."""
    out = type_dims(op.results[0].type)
    return _rank(op.operands[0]) == 4 and out is not None and tuple(out[2:]) == (1, 1)


def _constant(name: str, result: str, ip: ir.InsertionPoint, loc: ir.Location, **attrs):
    return ir.Operation.create(name, results=[ir.Type.parse(result)], attributes=attrs,
                               loc=loc, ip=ip).result


def _pool_to_mean(pool: ir.Operation) -> None:
    ip, loc = ir.InsertionPoint(pool), pool.location
    i64 = ir.IntegerType.get_signless(64)
    dims = [_constant("torch.constant.int", "!torch.int", ip, loc, value=ir.IntegerAttr.get(i64, d))
            for d in (2, 3)]
    dim_list = ir.Operation.create("torch.prim.ListConstruct",
                                   results=[ir.Type.parse("!torch.list<int>")], operands=dims,
                                   loc=loc, ip=ip).result
    keep = _constant("torch.constant.bool", "!torch.bool", ip, loc,
                     value=ir.BoolAttr.get(True))
    none = _constant("torch.constant.none", "!torch.none", ip, loc)
    mean = ir.Operation.create("torch.aten.mean.dim", results=[pool.results[0].type],
                               operands=[pool.operands[0], dim_list, keep, none], loc=loc, ip=ip)
    pool.results[0].replace_all_uses_with(mean.result)
    pool.erase()


class ChannelsLast(Pass):
    name = "dync-channels-last"
    summary = "2-D convolutions in NHWC (IREE preprocessing); global average pools as means"

    def run(self, module: ir.Operation) -> None:
        convolutions = control_flow = 0
        for op in list(nested_ops(module)):
            if op.name == "torch.aten.adaptive_avg_pool2d" and _is_global_pool(op):
                _pool_to_mean(op)
            elif op.name in CONVOLUTIONS and _rank(op.operands[0]) == 4:
                convolutions += 1
            elif op.name in CONTROL_FLOW:
                control_flow += 1
        if convolutions and not control_flow:
            request_preprocessing(module, [CHANNELS_LAST])
