// An IREE 3.13 miscompile dync works around (dync/iree_mends.py), pinned so that an upgrade that
// fixes it shows up here. The module is what dync imports for DGCNN's edge features,
//     r = x.view(B, N, 1, C).expand(B, N, K, C); return torch.cat((a - r, r), dim=3)
// over a batch `b` and a point count `n` that are dynamic, reduced to K = 2, C = 1. Each half
// of the cat is a copy into a slice, a dispatch whose workload is the destination's dims and
// the source's, the same two values: [b, n, b, n]. iree-stream-fold-uniform-operands drops the
// repeats but numbers every dropped workload ordinal 0, the survivor's number only by chance:
// the source's `n` reads `b`, the workgroup count covers one tile of 64 points, and the copy
// of `a - r` leaves points 64 and 65 unwritten (zeros). dync passes each repeat through a
// `util.optimization_barrier` of its own after the flow phase; IREE then folds nothing, and
// every point is written.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=1x66x2x1xf32=1 --input=1x66x1xf32=0.25 | FileCheck %s
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=flow -o %t.flow.mlir
// RUN: %PYTHON -m dync.iree_mends flow < %t.flow.mlir | FileCheck %s --check-prefix=FLOW
// RUN: %PYTHON -m dync.iree_mends flow < %t.flow.mlir | iree-compile - --compile-from=flow --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.mended.vmfb
// RUN: iree-run-module --module=%t.mended.vmfb --device=local-sync --function=main --input=1x66x2x1xf32=1 --input=1x66x1xf32=0.25 | FileCheck %s --check-prefix=MENDED
// CHECK: result[0]: hal.buffer_view
// CHECK: [0.75 0.25][0.75 0.25]]{{\[\[}}0 0.25][0 0.25]]{{\[\[}}0 0.25][0 0.25]]]
// FLOW: %[[B:.+]] = util.optimization_barrier %[[DIM0:.+]] : index
// FLOW: %[[N:.+]] = util.optimization_barrier %[[DIM1:.+]] : index
// FLOW: flow.dispatch @{{.+}}[%[[DIM0]], %[[DIM1]], %[[B]], %[[N]]]
// MENDED: result[0]: hal.buffer_view
// MENDED-NOT: [0 0.25]
// MENDED: [0.75 0.25][0.75 0.25]]]
module {
  func.func @main(%arg0: !torch.vtensor<[?,?,2,1],f32>, %arg1: !torch.vtensor<[?,?,1],f32>) -> !torch.vtensor<[?,?,2,2],f32> {
    %false = torch.constant.bool false
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %int1 = torch.constant.int 1
    %int0 = torch.constant.int 0
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
    %n = torch.symbolic_int "n" {min_val = 16, max_val = 4096} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b, %n], affine_map<()[s0, s1] -> (s0, s1, 2, 1)> : !torch.vtensor<[?,?,2,1],f32>
    torch.bind_symbolic_shape %arg1, [%b, %n], affine_map<()[s0, s1] -> (s0, s1, 1)> : !torch.vtensor<[?,?,1],f32>
    %0 = torch.aten.size.int %arg1, %int0 : !torch.vtensor<[?,?,1],f32>, !torch.int -> !torch.int
    %1 = torch.aten.size.int %arg1, %int1 : !torch.vtensor<[?,?,1],f32>, !torch.int -> !torch.int
    %2 = torch.prim.ListConstruct %0, %1, %int1, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %3 = torch.aten.view %arg1, %2 : !torch.vtensor<[?,?,1],f32>, !torch.list<int> -> !torch.vtensor<[?,?,1,1],f32>
    %4 = torch.prim.ListConstruct %0, %1, %int2, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %5 = torch.aten.expand %3, %4, %false : !torch.vtensor<[?,?,1,1],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,?,2,1],f32>
    torch.bind_symbolic_shape %5, [%b, %n], affine_map<()[s0, s1] -> (s0, s1, 2, 1)> : !torch.vtensor<[?,?,2,1],f32>
    %6 = torch.aten.sub.Tensor %arg0, %5, %int1 : !torch.vtensor<[?,?,2,1],f32>, !torch.vtensor<[?,?,2,1],f32>, !torch.int -> !torch.vtensor<[?,?,2,1],f32>
    torch.bind_symbolic_shape %6, [%b, %n], affine_map<()[s0, s1] -> (s0, s1, 2, 1)> : !torch.vtensor<[?,?,2,1],f32>
    %7 = torch.prim.ListConstruct %6, %5 : (!torch.vtensor<[?,?,2,1],f32>, !torch.vtensor<[?,?,2,1],f32>) -> !torch.list<vtensor>
    %8 = torch.aten.cat %7, %int3 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,?,2,2],f32>
    torch.bind_symbolic_shape %8, [%b, %n], affine_map<()[s0, s1] -> (s0, s1, 2, 2)> : !torch.vtensor<[?,?,2,2],f32>
    return %8 : !torch.vtensor<[?,?,2,2],f32>
  }
}
