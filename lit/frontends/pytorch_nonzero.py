# RUN: %PYTHON %s | FileCheck %s
# nonzero (and where(mask), boolean-mask indexing) is decomposed into a scatter of the true
# positions to their ranks (a cumsum), cut to the count: torch-mlir's own lowering gives wrong
# indices in IREE 3.13 as soon as a function has two of them, and a sort is O(n^2) in IREE on
# the CPU (tests/test_pytorch_frontend.py checks the numbers).

import torch
from iree.compiler import ir
from torch.export import Dim

from dync.frontends.pytorch.export import import_module
from dync.passes import lower_control_flow


class TwoMasks(torch.nn.Module):
    def forward(self, x, idx):
        return x[idx == 0].sum(0) + x[torch.where(idx == 1)[0]].sum(0)


with ir.Context() as ctx:
    n = Dim("n", min=2, max=16)
    example = (torch.randn(5, 8), torch.tensor([0, 1, 0, 0, 1]))
    program = import_module(TwoMasks().eval(), example, ({0: n}, {0: n}), ctx,
                            lower=lower_control_flow)
    print(program.module.operation.get_asm(large_elements_limit=0))

# CHECK-LABEL: func.func @main
# CHECK-NOT: torch.aten.nonzero
# CHECK-NOT: torch.aten.sort
# CHECK: torch.aten.cumsum
# CHECK: %[[FIRST:.+]] = torch.aten.index_put %{{.+}}, %{{.+}}, %{{.+}}, %true
# CHECK: %[[COUNT:.+]] = torch.aten.item
# CHECK: torch.aten.slice.Tensor %[[FIRST]], %{{.+}}, %{{.+}}, %[[COUNT]]
# CHECK-NOT: torch.aten.nonzero
# CHECK-NOT: torch.aten.sort
# CHECK: torch.aten.cumsum
# CHECK-NOT: torch.aten.nonzero
# CHECK-NOT: torch.aten.sort
