// RUN: dync-opt %s --split-input-file --dync-pointwise-conv1d | FileCheck %s

// A 1-D convolution with a kernel of one over a dynamic batch and length, with a bias: a
// linear layer over the transposed input (N x L x C), its result transposed back, each new
// tensor's shape bound from the convolution's input and result.
// CHECK-LABEL: func.func @pointwise
// CHECK:         %[[ROWS:.+]] = torch.aten.transpose.int %arg0, %int1{{.*}}, %int2{{.*}} : !torch.vtensor<[?,3,?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?,3],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[ROWS]], [%[[B:.+]], %[[L:.+]]], affine_map<()[s0, s1] -> (s0, s1, 3)>
// CHECK:         %[[W:.+]] = torch.aten.view %{{.+}}, %{{.+}} : !torch.vtensor<[8,3,1],f32>, !torch.list<int> -> !torch.vtensor<[8,3],f32>
// CHECK:         %[[LIN:.+]] = torch.aten.linear %[[ROWS]], %[[W]], %arg1 : !torch.vtensor<[?,?,3],f32>, !torch.vtensor<[8,3],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[?,?,8],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[LIN]], [%[[B]], %[[L]]], affine_map<()[s0, s1] -> (s0, s1, 8)>
// CHECK:         %[[OUT:.+]] = torch.aten.transpose.int %[[LIN]], %{{.+}}, %{{.+}} : !torch.vtensor<[?,?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,8,?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[OUT]], [%[[B]], %[[L]]], affine_map<()[s0, s1] -> (s0, 8, s1)>
// CHECK-NOT:     torch.aten.conv1d
// CHECK:         torch.aten.relu %[[OUT]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @pointwise(%arg0: !torch.vtensor<[?,3,?],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8,?],f32> {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 8} : !torch.int
    %l = torch.symbolic_int "l" {min_val = 2, max_val = 1024} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b, %l], affine_map<()[s0, s1] -> (s0, 3, s1)> : !torch.vtensor<[?,3,?],f32>
    %w = torch.vtensor.literal(dense<0.5> : tensor<8x3x1xf32>) : !torch.vtensor<[8,3,1],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %zero = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.conv1d %arg0, %w, %arg1, %one, %zero, %one, %int1 : !torch.vtensor<[?,3,?],f32>, !torch.vtensor<[8,3,1],f32>, !torch.vtensor<[8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,?],f32>
    torch.bind_symbolic_shape %0, [%b, %l], affine_map<()[s0, s1] -> (s0, 8, s1)> : !torch.vtensor<[?,8,?],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[?,8,?],f32> -> !torch.vtensor<[?,8,?],f32>
    return %1 : !torch.vtensor<[?,8,?],f32>
  }
}

// -----

// Left alone: a kernel of three, a stride of two, and two groups; and any convolution on
// another backend (next case).
// CHECK-LABEL: func.func @not_pointwise
// CHECK-COUNT-3: torch.aten.conv1d
// CHECK-NOT:     torch.aten.linear
module attributes {dync.backend = "llvm-cpu"} {
  func.func @not_pointwise(%arg0: !torch.vtensor<[2,4,16],f32>, %w3: !torch.vtensor<[8,4,3],f32>, %w1: !torch.vtensor<[8,4,1],f32>, %wg: !torch.vtensor<[8,2,1],f32>) -> (!torch.vtensor<[2,8,14],f32>, !torch.vtensor<[2,8,8],f32>, !torch.vtensor<[2,8,16],f32>) {
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %two = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
    %zero = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.conv1d %arg0, %w3, %none, %one, %zero, %one, %int1 : !torch.vtensor<[2,4,16],f32>, !torch.vtensor<[8,4,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,14],f32>
    %1 = torch.aten.conv1d %arg0, %w1, %none, %two, %zero, %one, %int1 : !torch.vtensor<[2,4,16],f32>, !torch.vtensor<[8,4,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,8],f32>
    %2 = torch.aten.conv1d %arg0, %wg, %none, %one, %zero, %one, %int2 : !torch.vtensor<[2,4,16],f32>, !torch.vtensor<[8,2,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,16],f32>
    return %0, %1, %2 : !torch.vtensor<[2,8,14],f32>, !torch.vtensor<[2,8,8],f32>, !torch.vtensor<[2,8,16],f32>
  }
}

// -----

// CHECK-LABEL: func.func @gpu
// CHECK:         torch.aten.conv1d
module attributes {dync.backend = "cuda"} {
  func.func @gpu(%arg0: !torch.vtensor<[2,4,16],f32>, %w1: !torch.vtensor<[8,4,1],f32>) -> !torch.vtensor<[2,8,16],f32> {
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %zero = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.conv1d %arg0, %w1, %none, %one, %zero, %one, %int1 : !torch.vtensor<[2,4,16],f32>, !torch.vtensor<[8,4,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,16],f32>
    return %0 : !torch.vtensor<[2,8,16],f32>
  }
}
