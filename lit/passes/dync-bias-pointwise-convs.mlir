// RUN: dync-opt %s --split-input-file --dync-bias-pointwise-convs | FileCheck %s

// A 1×1 convolution without a bias (conv2d, and convolution not transposed) gets F zeros
// behind a barrier; the 3×3 one, the one with a bias and the transposed one are left alone.
// CHECK-LABEL: func.func @pointwise
// CHECK:         %[[Z:.+]] = torch.vtensor.literal(dense<0.000000e+00> : tensor<8xf32>) : !torch.vtensor<[8],f32>
// CHECK:         %[[ZB:.+]] = torch_c.to_builtin_tensor %[[Z]]
// CHECK:         %[[ZK:.+]] = util.optimization_barrier %[[ZB]] : tensor<8xf32>
// CHECK:         %[[BIAS:.+]] = torch_c.from_builtin_tensor %[[ZK]]
// CHECK:         torch.aten.conv2d %arg0, %arg1, %[[BIAS]],
// CHECK:         torch.aten.conv2d %arg0, %arg2, %none,
// CHECK:         torch.aten.conv2d %arg0, %arg1, %arg3,
// CHECK:         %[[Z2:.+]] = torch.vtensor.literal(dense<0.000000e+00> : tensor<8xf32>)
// CHECK:         torch.aten.convolution %arg0, %arg1, %{{.+}}, {{.*}}, %false,
// CHECK:         torch.aten.convolution %arg4, %arg5, %none, {{.*}}, %true,
module attributes {dync.backend = "llvm-cpu"} {
  func.func @pointwise(%arg0: !torch.vtensor<[?,4,6,6],f32>, %arg1: !torch.vtensor<[8,4,1,1],f32>, %arg2: !torch.vtensor<[8,4,3,3],f32>, %arg3: !torch.vtensor<[8],f32>, %arg4: !torch.vtensor<[?,4,6,6],f32>, %arg5: !torch.vtensor<[4,8,1,1],f32>) -> (!torch.vtensor<[?,8,6,6],f32>, !torch.vtensor<[?,8,4,4],f32>, !torch.vtensor<[?,8,6,6],f32>, !torch.vtensor<[?,8,6,6],f32>, !torch.vtensor<[?,8,6,6],f32>) {
    %none = torch.constant.none
    %false = torch.constant.bool false
    %true = torch.constant.bool true
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %arg1, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,4,6,6],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,6,6],f32>
    %1 = torch.aten.conv2d %arg0, %arg2, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,4,6,6],f32>, !torch.vtensor<[8,4,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,4,4],f32>
    %2 = torch.aten.conv2d %arg0, %arg1, %arg3, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,4,6,6],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.vtensor<[8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,6,6],f32>
    %3 = torch.aten.convolution %arg0, %arg1, %none, %ones, %zeros, %ones, %false, %zeros, %int1 : !torch.vtensor<[?,4,6,6],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,6,6],f32>
    %4 = torch.aten.convolution %arg4, %arg5, %none, %ones, %zeros, %ones, %true, %zeros, %int1 : !torch.vtensor<[?,4,6,6],f32>, !torch.vtensor<[4,8,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,6,6],f32>
    return %0, %1, %2, %3, %4 : !torch.vtensor<[?,8,6,6],f32>, !torch.vtensor<[?,8,4,4],f32>, !torch.vtensor<[?,8,6,6],f32>, !torch.vtensor<[?,8,6,6],f32>, !torch.vtensor<[?,8,6,6],f32>
  }
}

// -----

// Other backends are left alone: the slow form was measured on the host CPU.
// CHECK-LABEL: func.func @on_cuda
// CHECK-NOT:     torch.vtensor.literal
// CHECK:         torch.aten.conv2d %arg0, %arg1, %none,
module attributes {dync.backend = "cuda"} {
  func.func @on_cuda(%arg0: !torch.vtensor<[1,4,6,6],f32>, %arg1: !torch.vtensor<[8,4,1,1],f32>) -> !torch.vtensor<[1,8,6,6],f32> {
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %arg1, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,4,6,6],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,6,6],f32>
    return %0 : !torch.vtensor<[1,8,6,6],f32>
  }
}
