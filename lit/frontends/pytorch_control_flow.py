# RUN: %PYTHON %s | FileCheck %s
# The PyTorch frontend's output is dync IR: scf control flow, named symbols, entry shapes.

import torch
from iree.compiler import ir
from torch.export import Dim

from dync.frontends.pytorch.export import import_module
from dync.passes import lower_control_flow


class Cond(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: self.lin(x), lambda x: x * 2, (x,))


class Loop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch._higher_order_ops.while_loop(
            lambda i, h: i < 3, lambda i, h: (i + 1, self.lin(h)), (torch.zeros((), dtype=torch.int64), x)
        )


def show(model, name):
    print(f"// {name}")
    with ir.Context() as ctx:
        program = import_module(model, (torch.randn(2, 4),), ({0: Dim("n", min=1, max=16)},), ctx,
                                lower=lower_control_flow)
        print(program.module.operation.get_asm(large_elements_limit=0))


# CHECK-LABEL: // cond
# CHECK: module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}}
# CHECK: func.func private @[[TRUE:true_graph_[0-9]+]](
# CHECK: func.func private @[[FALSE:false_graph_[0-9]+]](
# CHECK: func.func @main(%arg0: !torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) -> (!torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) attributes {dync.entry}
# CHECK: torch.symbolic_int "n" {min_val = 1, max_val = 16}
# CHECK: scf.if
# CHECK:   func.call @[[TRUE]](
# CHECK: } else {
# CHECK:   func.call @[[FALSE]](
show(Cond().eval(), "cond")

# The body captures the Linear's parameters: they are passed to every call, not carried.
# CHECK-LABEL: // loop
# CHECK: func.func private @[[BODY:while_loop_body_graph_[0-9]+]](%arg0: !torch.vtensor<[],si64>, %arg1: !torch.vtensor<[?,4],f32>, %arg2: !torch.vtensor<[4],f32>, %arg3: !torch.vtensor<[4,4],f32>)
# CHECK: func.func @main
# The loop is in dync IR's do-while form: a guard, then the body in the "before" region.
# CHECK: scf.if %{{.+}} -> (tensor<i64>, tensor<?x4xf32>)
# CHECK: scf.while ({{.*}}) : (tensor<i64>, tensor<?x4xf32>) -> (tensor<i64>, tensor<?x4xf32>)
# CHECK: func.call @[[BODY]](%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
# CHECK: scf.condition
show(Loop().eval(), "loop")
