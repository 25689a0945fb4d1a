# RUN: %PYTHON %s | FileCheck %s
# A size scaled by a constant factor (F.interpolate's output size, `trunc(sym_float(h) * 1.5)`
# in the exported graph) is imported as integer arithmetic, `(h * 3) // 2`, and bound as an
# affine map; the FX importer takes no `sym_float`.

import torch
from iree.compiler import ir
from torch.export import Dim

from dync.frontends.pytorch.export import import_module
from dync.passes import lower_control_flow


class Resize(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=(1.5, 0.5), mode="bilinear")


with ir.Context() as ctx:
    program = import_module(
        Resize().eval(), (torch.randn(1, 3, 8, 12),),
        ({2: Dim("h", min=4, max=64), 3: Dim("w", min=4, max=64)},), ctx,
        lower=lower_control_flow)
    print(program.module.operation.get_asm(large_elements_limit=0))

# CHECK: func.func @main(
# CHECK-SAME: dync.shape = [1, 3, "((3*h)//2)", "(w//2)"]
# CHECK-NOT: sym_float
# CHECK: %[[TRIPLE:.+]] = torch.aten.mul.int %{{.+}}, %int3
# CHECK-NEXT: torch.aten.floordiv.int %[[TRIPLE]], %int2
# CHECK-NOT: sym_float
# CHECK: torch.bind_symbolic_shape %{{.+}}, [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (1, 3, (s1 * 3) floordiv 2, s0 floordiv 2)>
