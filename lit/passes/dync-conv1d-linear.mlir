// RUN: dync-opt %s --split-input-file --dync-conv1d-linear | FileCheck %s

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

// A kernel of three with padding 2, dilation 2 and stride 2 over a dynamic length
// (L' = (L + 4 - 4 - 1) // 2 + 1): the input padded, one strided slice per kernel offset (the
// last ending the input: no size computed), concatenated over the channels, the filter as an
// F x (k·C) matrix in the same (offset, channel) order times them. Two groups: left alone.
// CHECK-LABEL: func.func @windows
// CHECK:         %[[PAD:.+]] = torch.aten.constant_pad_nd %arg0, {{.*}} -> !torch.vtensor<[2,4,?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[PAD]], [%{{.+}}], affine_map<()[s0] -> (2, 4, s0 + 4)>
// CHECK:         %[[T0:.+]] = torch.aten.slice.Tensor %[[PAD]], %int2{{.*}}, %int0{{.*}}, %int-4{{.*}}, %int2{{.*}} : {{.*}} -> !torch.vtensor<[2,4,?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[T0]], [%{{.+}}], affine_map<()[s0] -> (2, 4, (s0 - 1) floordiv 2 + 1)>
// CHECK:         torch.aten.slice.Tensor %[[PAD]], %int2{{.*}}, %int2{{.*}}, %int-2{{.*}}, %int2{{.*}}
// CHECK:         torch.aten.slice.Tensor %[[PAD]], %int2{{.*}}, %int4{{.*}}, %int9223372036854775807{{.*}}, %int2{{.*}}
// CHECK:         %[[WIN:.+]] = torch.aten.cat %{{.+}}, %int1{{.*}} : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,12,?],f32>
// CHECK:         %[[W:.+]] = torch.aten.permute %arg1, %{{.+}} : !torch.vtensor<[8,4,3],f32>, !torch.list<int> -> !torch.vtensor<[8,3,4],f32>
// CHECK:         %[[M:.+]] = torch.aten.reshape %[[W]], %{{.+}} -> !torch.vtensor<[8,12],f32>
// CHECK:         %[[OUT:.+]] = torch.aten.matmul %[[M]], %[[WIN]] : {{.*}} -> !torch.vtensor<[2,8,?],f32>
// CHECK:         %[[G:.+]] = torch.aten.conv1d %arg0, %arg2
// CHECK-NOT:     torch.aten.conv1d
// CHECK:         return %[[OUT]], %[[G]]

module attributes {dync.backend = "llvm-cpu"} {
  func.func @windows(%arg0: !torch.vtensor<[2,4,?],f32>, %w3: !torch.vtensor<[8,4,3],f32>, %wg: !torch.vtensor<[8,2,1],f32>) -> (!torch.vtensor<[2,8,?],f32>, !torch.vtensor<[2,8,?],f32>) {
    %l = torch.symbolic_int "l" {min_val = 2, max_val = 1024} : !torch.int
    torch.bind_symbolic_shape %arg0, [%l], affine_map<()[s0] -> (2, 4, s0)> : !torch.vtensor<[2,4,?],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %two = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
    %zero = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.conv1d %arg0, %w3, %none, %two, %two, %two, %int1 : !torch.vtensor<[2,4,?],f32>, !torch.vtensor<[8,4,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,?],f32>
    torch.bind_symbolic_shape %0, [%l], affine_map<()[s0] -> (2, 8, (s0 - 1) floordiv 2 + 1)> : !torch.vtensor<[2,8,?],f32>
    %1 = torch.aten.conv1d %arg0, %wg, %none, %one, %zero, %one, %int2 : !torch.vtensor<[2,4,?],f32>, !torch.vtensor<[8,2,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,?],f32>
    torch.bind_symbolic_shape %1, [%l], affine_map<()[s0] -> (2, 8, s0)> : !torch.vtensor<[2,8,?],f32>
    return %0, %1 : !torch.vtensor<[2,8,?],f32>, !torch.vtensor<[2,8,?],f32>
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

// -----

// A kernel of five with a bias, same length: the bias added as an F x 1 column.
// CHECK-LABEL: func.func @biased
// CHECK:         %[[P:.+]] = torch.aten.matmul
// CHECK:         %[[B:.+]] = torch.aten.view %arg2, %{{.+}} : !torch.vtensor<[8],f32>, !torch.list<int> -> !torch.vtensor<[8,1],f32>
// CHECK:         %[[S:.+]] = torch.aten.add.Tensor %[[P]], %[[B]], %{{.+}} : {{.*}} -> !torch.vtensor<[2,8,?],f32>
// CHECK:         return %[[S]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @biased(%arg0: !torch.vtensor<[2,4,?],f32>, %w5: !torch.vtensor<[8,4,5],f32>, %bias: !torch.vtensor<[8],f32>) -> !torch.vtensor<[2,8,?],f32> {
    %l = torch.symbolic_int "l" {min_val = 2, max_val = 1024} : !torch.int
    torch.bind_symbolic_shape %arg0, [%l], affine_map<()[s0] -> (2, 4, s0)> : !torch.vtensor<[2,4,?],f32>
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %two = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.conv1d %arg0, %w5, %bias, %one, %two, %one, %int1 : !torch.vtensor<[2,4,?],f32>, !torch.vtensor<[8,4,5],f32>, !torch.vtensor<[8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,?],f32>
    torch.bind_symbolic_shape %0, [%l], affine_map<()[s0] -> (2, 8, s0)> : !torch.vtensor<[2,8,?],f32>
    return %0 : !torch.vtensor<[2,8,?],f32>
  }
}
