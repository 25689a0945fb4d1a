// RUN: dync-opt %s --split-input-file --dync-fuse-padding | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-fuse-padding --dync-plan-buffers | FileCheck %s --check-prefix=PLAN

// dync-plan-buffers then counts no padded copy where IREE reads the padding in place, and one
// (`dync.pad`, 3 x 10 x 10 floats) where it does not.
// PLAN:     dync.peak = {arena = "1024"
// PLAN-NOT: dync.pad =
// PLAN:     // -----
// PLAN:     // -----
// PLAN:     torch.aten.conv2d {{.+}} dync.pad = {offset = "0", size = "1200"}

// Every padded convolution reads a static input: IREE is asked to read the padding in place.
// CHECK: module attributes {dync.backend = "llvm-cpu", dync.iree_flags = ["--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops"]}
module attributes {dync.backend = "llvm-cpu"} {
  func.func @main(%arg0: !torch.vtensor<[1,3,8,8],f32>) -> !torch.vtensor<[1,4,8,8],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<4x3x3x3xf32>) : !torch.vtensor<[4,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,8,8],f32>
    return %0 : !torch.vtensor<[1,4,8,8],f32>
  }
}

// -----

// A padded convolution over a dynamic batch: llvm-cpu cannot compile the fused dispatch, so no
// flag. (Nor on another backend, nor without a padded op.)
// CHECK-LABEL: module attributes {dync.backend = "llvm-cpu"} {
// CHECK-NOT:   dync.iree_flags
module attributes {dync.backend = "llvm-cpu"} {
  func.func @main(%arg0: !torch.vtensor<[?,3,8,8],f32>) -> !torch.vtensor<[?,4,8,8],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<4x3x3x3xf32>) : !torch.vtensor<[4,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,3,8,8],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,4,8,8],f32>
    return %0 : !torch.vtensor<[?,4,8,8],f32>
  }
}

// -----

// CHECK-LABEL: module attributes {dync.backend = "cuda"} {
// CHECK-NOT:   dync.iree_flags
module attributes {dync.backend = "cuda"} {
  func.func @main(%arg0: !torch.vtensor<[1,3,8,8],f32>) -> !torch.vtensor<[1,4,8,8],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<4x3x3x3xf32>) : !torch.vtensor<[4,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,8,8],f32>
    return %0 : !torch.vtensor<[1,4,8,8],f32>
  }
}

// -----

// A dynamic entry beside a static version of it (dync-specialize): IREE is asked to fuse the
// padding, and to keep the copies in the entry points named in dync.iree_copied_padding (the
// backend rewrites their pads with a transform spec). dync-plan-buffers counts a padded copy
// in the fallback only; each version's predicted peak goes into dync.peak's versions.
// CHECK-LABEL: module attributes {dync.backend = "llvm-cpu", dync.iree_copied_padding = ["main"], dync.iree_flags = ["--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops"],
// PLAN:       // -----
// PLAN:       module attributes {dync.backend = "llvm-cpu"
// PLAN-SAME:    dync.peak = {arena = "2224*n", formula = "2224*n", function = "main", iree = "1024*n + 64*ceiling(75*n/4)", {{.+}}, versions = {main__n_1 = "1024"}}
// PLAN:       func.func @main(
// PLAN:         torch.aten.conv2d {{.+}} dync.pad = {offset = "{{.+}}", size = "1200*n"}
// PLAN:       func.func @main__n_1(
// PLAN-NOT:     dync.pad =
// PLAN:         return
module attributes {dync.backend = "llvm-cpu", dync.symbols = {n = {max = 4 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,3,8,8],f32> {dync.shape = ["n", 3, 8, 8]}) -> (!torch.vtensor<[?,4,8,8],f32> {dync.shape = ["n", 4, 8, 8]}) attributes {dync.entry} {
    %n = torch.symbolic_int "n" {min_val = 1, max_val = 4} : !torch.int
    torch.bind_symbolic_shape %arg0, [%n], affine_map<()[s0] -> (s0, 3, 8, 8)> : !torch.vtensor<[?,3,8,8],f32>
    %w = torch.vtensor.literal(dense<1.0> : tensor<4x3x3x3xf32>) : !torch.vtensor<[4,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,3,8,8],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,4,8,8],f32>
    return %0 : !torch.vtensor<[?,4,8,8],f32>
  }
  func.func @main__n_1(%arg0: !torch.vtensor<[1,3,8,8],f32> {dync.shape = [1, 3, 8, 8]}) -> (!torch.vtensor<[?,4,8,8],f32> {dync.shape = ["n", 4, 8, 8]}) attributes {dync.version = {n = 1 : i64}} {
    %0 = call @conv(%arg0) : (!torch.vtensor<[1,3,8,8],f32>) -> !torch.vtensor<[1,4,8,8],f32>
    %1 = torch.tensor_static_info_cast %0 : !torch.vtensor<[1,4,8,8],f32> to !torch.vtensor<[?,4,8,8],f32>
    return %1 : !torch.vtensor<[?,4,8,8],f32>
  }
  func.func private @conv(%arg0: !torch.vtensor<[1,3,8,8],f32>) -> !torch.vtensor<[1,4,8,8],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<4x3x3x3xf32>) : !torch.vtensor<[4,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,8,8],f32>
    return %0 : !torch.vtensor<[1,4,8,8],f32>
  }
}
