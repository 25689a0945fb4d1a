// RUN: dync-opt %s --split-input-file --dync-narrow-rows | FileCheck %s

// A batch of 1 to 8 rows through a 512 x 256 weight, in a module IREE data-tiles: one row as
// a cast, up to 4 and the rest up to 8 padded with zero rows and sliced back; the branches
// reach IREE as blocks of one region (the weight's packing hoisted).
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"], dync.iree_preprocessing = ["convert-scf-to-cf"]}
// CHECK-LABEL: func.func @batch_of_eight
// CHECK: %[[B:.*]] = torch.aten.size.int %arg0
// CHECK: torch.aten.eq.int %[[B]], %int1
// CHECK: scf.if
// CHECK: torch.tensor_static_info_cast %arg0 : !torch.vtensor<[?,256],f32> to !torch.vtensor<[1,256],f32>
// CHECK: torch.aten.linear {{.*}} -> !torch.vtensor<[1,512],f32>
// CHECK: } else {
// CHECK: torch.aten.le.int %[[B]], %int4
// CHECK: scf.if
// CHECK: %[[PAD4:.*]] = torch.aten.sub.int %int4{{.*}}, %[[B]]
// CHECK: torch.prim.ListConstruct %{{.*}}, %{{.*}}, %{{.*}}, %[[PAD4]]
// CHECK: torch.aten.constant_pad_nd %arg0
// CHECK: to !torch.vtensor<[4,256],f32>
// CHECK: torch.aten.linear {{.*}} -> !torch.vtensor<[4,512],f32>
// CHECK: torch.aten.slice.Tensor {{.*}}, %[[B]], {{.*}} -> !torch.vtensor<[?,512],f32>
// CHECK: } else {
// CHECK-NOT: torch.aten.le.int
// CHECK: to !torch.vtensor<[8,256],f32>
// CHECK: torch.aten.linear {{.*}} -> !torch.vtensor<[8,512],f32>
// CHECK: torch.aten.slice.Tensor
// CHECK: torch.bind_symbolic_shape %[[R:.*]], [%0], affine_map<()[s0] -> (s0, 512)>
// CHECK-NEXT: return %[[R]]
module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"]} {
  func.func @batch_of_eight(%x: !torch.vtensor<[?,256],f32>) -> !torch.vtensor<[?,512],f32> {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %x, [%b], affine_map<()[s0] -> (s0, 256)> : !torch.vtensor<[?,256],f32>
    %w = torch.vtensor.literal(dense<5.000000e-01> : tensor<512x256xf32>) : !torch.vtensor<[512,256],f32>
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none -> !torch.vtensor<[?,512],f32>
    torch.bind_symbolic_shape %0, [%b], affine_map<()[s0] -> (s0, 512)> : !torch.vtensor<[?,512],f32>
    return %0 : !torch.vtensor<[?,512],f32>
  }
}

// -----

// 2 to 4 rows of an `mm`: one version, padded to 4, no branch and no preprocessing.
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"]} {
// CHECK-LABEL: func.func @two_to_four
// CHECK-NOT: scf.if
// CHECK: torch.aten.constant_pad_nd %arg0
// CHECK: torch.aten.mm {{.*}} -> !torch.vtensor<[4,512],f32>
// CHECK: torch.aten.slice.Tensor
module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"]} {
  func.func @two_to_four(%x: !torch.vtensor<[?,256],f32>) -> !torch.vtensor<[?,512],f32> {
    %b = torch.symbolic_int "b" {min_val = 2, max_val = 4} : !torch.int
    torch.bind_symbolic_shape %x, [%b], affine_map<()[s0] -> (s0, 256)> : !torch.vtensor<[?,256],f32>
    %w = torch.vtensor.literal(dense<5.000000e-01> : tensor<256x512xf32>) : !torch.vtensor<[256,512],f32>
    %0 = torch.aten.mm %x, %w : !torch.vtensor<[?,256],f32>, !torch.vtensor<[256,512],f32> -> !torch.vtensor<[?,512],f32>
    return %0 : !torch.vtensor<[?,512],f32>
  }
}

// -----

// Left as they are: rows up to 64 (a wider version would stay behind the branches, which cost
// more than they win there), a weight under 2^17 elements, a weight that is an argument, and
// two dynamic row dims.
// CHECK-LABEL: func.func @left
// CHECK-NOT: scf.if
// CHECK-NOT: constant_pad_nd
module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"]} {
  func.func @left(%x: !torch.vtensor<[?,256],f32>, %y: !torch.vtensor<[?,256],f32>, %v: !torch.vtensor<[512,256],f32>, %z: !torch.vtensor<[?,?,256],f32>) -> (!torch.vtensor<[?,512],f32>, !torch.vtensor<[?,128],f32>, !torch.vtensor<[?,512],f32>, !torch.vtensor<[?,?,512],f32>) {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    %c = torch.symbolic_int "c" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %x, [%b], affine_map<()[s0] -> (s0, 256)> : !torch.vtensor<[?,256],f32>
    torch.bind_symbolic_shape %y, [%c], affine_map<()[s0] -> (s0, 256)> : !torch.vtensor<[?,256],f32>
    torch.bind_symbolic_shape %z, [%c], affine_map<()[s0] -> (s0, s0, 256)> : !torch.vtensor<[?,?,256],f32>
    %w = torch.vtensor.literal(dense<5.000000e-01> : tensor<512x256xf32>) : !torch.vtensor<[512,256],f32>
    %u = torch.vtensor.literal(dense<5.000000e-01> : tensor<128x256xf32>) : !torch.vtensor<[128,256],f32>
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none -> !torch.vtensor<[?,512],f32>
    %1 = torch.aten.linear %y, %u, %none : !torch.vtensor<[?,256],f32>, !torch.vtensor<[128,256],f32>, !torch.none -> !torch.vtensor<[?,128],f32>
    %2 = torch.aten.linear %y, %v, %none : !torch.vtensor<[?,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none -> !torch.vtensor<[?,512],f32>
    %3 = torch.aten.linear %z, %w, %none : !torch.vtensor<[?,?,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none -> !torch.vtensor<[?,?,512],f32>
    return %0, %1, %2, %3 : !torch.vtensor<[?,512],f32>, !torch.vtensor<[?,128],f32>, !torch.vtensor<[?,512],f32>, !torch.vtensor<[?,?,512],f32>
  }
}

// -----

// No data tiling asked for: nothing changes.
// CHECK-LABEL: func.func @untiled
// CHECK-NOT: scf.if
// CHECK-NOT: constant_pad_nd
module {
  func.func @untiled(%x: !torch.vtensor<[?,256],f32>) -> !torch.vtensor<[?,512],f32> {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %x, [%b], affine_map<()[s0] -> (s0, 256)> : !torch.vtensor<[?,256],f32>
    %w = torch.vtensor.literal(dense<5.000000e-01> : tensor<512x256xf32>) : !torch.vtensor<[512,256],f32>
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,256],f32>, !torch.vtensor<[512,256],f32>, !torch.none -> !torch.vtensor<[?,512],f32>
    return %0 : !torch.vtensor<[?,512],f32>
  }
}
