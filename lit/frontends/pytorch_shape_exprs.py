# RUN: %PYTHON %s | FileCheck %s
# Shape expressions with floor division (conv/pool sizes) are bound as affine maps;
# upstream's importer rejects them ("FloorDiv not implemented").

import torch
from iree.compiler import ir
from torch.export import Dim

from dync.frontends.pytorch.export import import_module
from dync.passes import lower_control_flow


class ConvPool(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def forward(self, x):
        return torch.nn.functional.max_pool2d(self.conv(x), 2)


with ir.Context() as ctx:
    program = import_module(
        ConvPool().eval(), (torch.randn(1, 3, 32, 32),), ({2: Dim("h", min=8, max=64)},), ctx,
        lower=lower_control_flow)
    print(program.module.operation.get_asm(large_elements_limit=0))

# CHECK: func.func @main(%arg0: !torch.vtensor<[1,3,?,32],f32> {dync.shape = [1, 3, "h", 32]})
# CHECK-SAME: dync.shape = [1, 4, "{{.*}}//2{{.*}}", 8]
# CHECK: %[[H:.+]] = torch.symbolic_int "h" {min_val = 8, max_val = 64}
# CHECK: torch.aten.conv2d
# CHECK-NEXT: torch.bind_symbolic_shape %{{.+}}, [%[[H]]], affine_map<()[s0] -> (1, 4, (s0 - 1) floordiv 2 + 1, 16)>
# CHECK: torch.aten.max_pool2d
# CHECK-NEXT: torch.bind_symbolic_shape %{{.+}}, [%[[H]]], affine_map<()[s0] -> (1, 4, ((s0 - 1) floordiv 2 - 1) floordiv 2 + 1, 8)>
