# RUN: %PYTHON %s | FileCheck %s
# `x[mask] = f(y[mask], ...)` with the gathers by the same mask is `where(mask, f(y, ...), x)`:
# no nonzero, no scatter (frontends/pytorch/masked_updates.py). A write into a view then read
# back through the view reads what was written, and the base is left to what else reads it
# (frontends/pytorch/view_writes.py): here only the sort's first two columns are read.

import torch
from iree.compiler import ir
from torch.export import Dim

from dync.frontends.pytorch.export import import_module
from dync.passes import lower_control_flow


class MaskedUpdate(torch.nn.Module):
    def forward(self, distance, dist):
        distance = distance.clone()
        mask = dist < distance
        distance[mask] = dist[mask] * 0.5 + distance[mask]
        return distance


class WriteIntoSortedHead(torch.nn.Module):
    def forward(self, x):
        head = x.sort(dim=-1)[0][:, :2]
        first = head[:, :1].expand(-1, 2)
        mask = head > 0
        head[mask] = first[mask]
        return head


with ir.Context() as ctx:
    n = Dim("n", min=2, max=4096)
    for model, example in ((MaskedUpdate(), (torch.rand(2, 8), torch.rand(2, 8))),
                           (WriteIntoSortedHead(), (torch.randn(2, 8),))):
        program = import_module(model.eval(), example, tuple({1: n} for _ in example), ctx,
                                lower=lower_control_flow)
        print(program.module.operation.get_asm(large_elements_limit=0))

# CHECK-LABEL: func.func @main
# CHECK-NOT: torch.aten.nonzero
# CHECK-NOT: torch.aten.index_put
# CHECK-NOT: torch.aten.cumsum
# CHECK: %[[MASK:.+]] = torch.aten.lt.Tensor %arg1, %arg0
# CHECK: %[[HALF:.+]] = torch.aten.mul.Scalar %arg1
# CHECK: %[[SUM:.+]] = torch.aten.add.Tensor %[[HALF]], %arg0
# CHECK: %[[NEW:.+]] = torch.aten.where.self %[[MASK]], %[[SUM]], %arg0
# CHECK-NOT: torch.aten.index_put
# CHECK: %[[OUT:.+]] = torch.aten.copy %{{.+}}, %[[NEW]]
# CHECK: return %[[OUT]]

# CHECK-LABEL: func.func @main
# CHECK-NOT: torch.aten.nonzero
# CHECK: %[[SORTED:.+]], %{{.+}} = torch.aten.sort
# CHECK: %[[HEAD:.+]] = torch.aten.slice.Tensor %[[SORTED]], %int1, %int0, %int2
# CHECK-NOT: torch.aten.slice_scatter
# CHECK-NOT: %[[SORTED]]
# CHECK: %[[NEW:.+]] = torch.aten.where.self %{{.+}}, %{{.+}}, %[[HEAD]]
# CHECK-NOT: torch.aten.slice_scatter
# CHECK-NOT: %[[SORTED]]
# CHECK: %[[OUT:.+]] = torch.aten.copy %[[HEAD]], %[[NEW]]
# CHECK: return %[[OUT]]
