# RUN: %PYTHON %s | FileCheck %s
# nonzero (and where(mask), boolean-mask indexing) is decomposed into a sort of unique keys cut
# to the count: torch-mlir's own lowering gives wrong indices in IREE 3.13 as soon as a
# function has two of them (tests/test_pytorch_frontend.py checks the numbers).

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
# CHECK: torch.aten.sort
# CHECK: %[[COUNT:.+]] = torch.aten.item
# CHECK: torch.aten.slice.Tensor %{{.+}}, %{{.+}}, %{{.+}}, %[[COUNT]]
# CHECK-NOT: torch.aten.nonzero
# CHECK: torch.aten.sort
# CHECK-NOT: torch.aten.nonzero
