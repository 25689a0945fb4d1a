// RUN: dync-opt %s --split-input-file --dync-im2col-within-filter | FileCheck %s

// The low-memory pipeline's dync-im2col: on AVX2 the convolution whose columns would outweigh
// its filter (dync-im2col makes it three strips, see dync-im2col.mlir) stays direct...
// CHECK-LABEL: func.func @strips_on_avx2
// CHECK-NOT:     torch.aten.mm
// CHECK:         torch.aten.conv2d
module attributes {dync.vector_isa = "avx2"} {
  func.func @strips_on_avx2(%arg0: !torch.vtensor<[?,64,6,4],f32>) -> !torch.vtensor<[?,8,6,4],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x3x3xf32>) : !torch.vtensor<[8,64,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,64,6,4],f32>, !torch.vtensor<[8,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,6,4],f32>
    return %0 : !torch.vtensor<[?,8,6,4],f32>
  }
}

// -----

// ...while one with fewer output pixels (6) than filters (8) still becomes one matmul: its
// columns (6 x 576 per image) weigh less than its filter.
// CHECK-LABEL: func.func @within_the_filter
// CHECK-NOT:     torch.aten.conv2d
// CHECK:         torch.aten.mm {{.*}} : !torch.vtensor<[?,576],f32>, !torch.vtensor<[576,8],f32> -> !torch.vtensor<[?,8],f32>
module attributes {dync.vector_isa = "avx2"} {
  func.func @within_the_filter(%arg0: !torch.vtensor<[?,64,4,6],f32>) -> !torch.vtensor<[?,8,2,3],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x3x3xf32>) : !torch.vtensor<[8,64,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %stride = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %stride, %ones, %ones, %int1 : !torch.vtensor<[?,64,4,6],f32>, !torch.vtensor<[8,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,2,3],f32>
    return %0 : !torch.vtensor<[?,8,2,3],f32>
  }
}
