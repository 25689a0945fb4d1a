// RUN: dync-opt %s --split-input-file --dync-fence-reductions | FileCheck %s

// A max over the points of a dynamic batch, read by a classifier, in a module with data
// tiling: the max passes through a fence (IREE's `compute_barrier.start`, given the max's
// dynamic batch), and the classifier reads the fence's result.
// CHECK-LABEL: func.func @pooled_head
// CHECK:         %[[MAX:.+]] = torch.aten.amax %arg0
// CHECK-NEXT:    %[[T:.+]] = torch_c.to_builtin_tensor %[[MAX]] : !torch.vtensor<[?,256],f32> -> tensor<?x256xf32>
// CHECK-NEXT:    %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D:.+]] = tensor.dim %[[T]], %[[C0]] : tensor<?x256xf32>
// CHECK-NEXT:    %[[B:.+]] = iree_tensor_ext.compute_barrier.start %[[T]] : tensor<?x256xf32>{%[[D]]} -> tensor<?x256xf32>
// CHECK-NEXT:    %[[F:.+]] = torch_c.from_builtin_tensor %[[B]] : tensor<?x256xf32> -> !torch.vtensor<[?,256],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[F]], [%{{.+}}], affine_map<()[s0, s1] -> (s0, 256)>
// CHECK:         %[[R:.+]] = torch.aten.relu %[[F]]
// CHECK:         torch.aten.linear %[[R]]
module attributes {dync.backend = "llvm-cpu", dync.iree_flags = ["--iree-opt-data-tiling"]} {
  func.func @pooled_head(%arg0: !torch.vtensor<[?,?,256],f32>, %w: !torch.vtensor<[10,256],f32>) -> !torch.vtensor<[?,10],f32> {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 8} : !torch.int
    %n = torch.symbolic_int "n" {min_val = 2, max_val = 2048} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b, %n], affine_map<()[s0, s1] -> (s0, s1, 256)> : !torch.vtensor<[?,?,256],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int1 = torch.constant.int 1
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.amax %arg0, %dims, %false : !torch.vtensor<[?,?,256],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,256],f32>
    torch.bind_symbolic_shape %0, [%b, %n], affine_map<()[s0, s1] -> (s0, 256)> : !torch.vtensor<[?,256],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[?,256],f32> -> !torch.vtensor<[?,256],f32>
    %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[?,256],f32>, !torch.vtensor<[10,256],f32>, !torch.none -> !torch.vtensor<[?,10],f32>
    return %2 : !torch.vtensor<[?,10],f32>
  }
}

// -----

// Left alone: a reduction over the dynamic dim 0, one of a static batch, one no matmul
// reads; and a module without data tiling (next case).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     compute_barrier
// CHECK:         return
module attributes {dync.backend = "llvm-cpu", dync.iree_flags = ["--iree-opt-data-tiling"]} {
  func.func @left_alone(%arg0: !torch.vtensor<[?,256],f32>, %arg1: !torch.vtensor<[2,64,256],f32>, %w: !torch.vtensor<[10,256],f32>) -> (!torch.vtensor<[1,10],f32>, !torch.vtensor<[2,10],f32>, !torch.vtensor<[?],f32>) {
    %none = torch.constant.none
    %true = torch.constant.bool true
    %false = torch.constant.bool false
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %d0 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %d1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.sum.dim_IntList %arg0, %d0, %true, %none : !torch.vtensor<[?,256],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,256],f32>
    %1 = torch.aten.linear %0, %w, %none : !torch.vtensor<[1,256],f32>, !torch.vtensor<[10,256],f32>, !torch.none -> !torch.vtensor<[1,10],f32>
    %2 = torch.aten.mean.dim %arg1, %d1, %false, %none : !torch.vtensor<[2,64,256],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,256],f32>
    %3 = torch.aten.linear %2, %w, %none : !torch.vtensor<[2,256],f32>, !torch.vtensor<[10,256],f32>, !torch.none -> !torch.vtensor<[2,10],f32>
    %4 = torch.aten.amax %arg0, %d1, %false : !torch.vtensor<[?,256],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?],f32>
    return %1, %3, %4 : !torch.vtensor<[1,10],f32>, !torch.vtensor<[2,10],f32>, !torch.vtensor<[?],f32>
  }
}

// -----

// CHECK-LABEL: func.func @untiled
// CHECK-NOT:     compute_barrier
module attributes {dync.backend = "llvm-cpu"} {
  func.func @untiled(%arg0: !torch.vtensor<[?,?,256],f32>, %w: !torch.vtensor<[10,256],f32>) -> !torch.vtensor<[?,10],f32> {
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %values, %indices = torch.aten.max.dim %arg0, %int1, %false : !torch.vtensor<[?,?,256],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?,256],f32>, !torch.vtensor<[?,256],si64>
    %0 = torch.aten.linear %values, %w, %none : !torch.vtensor<[?,256],f32>, !torch.vtensor<[10,256],f32>, !torch.none -> !torch.vtensor<[?,10],f32>
    return %0 : !torch.vtensor<[?,10],f32>
  }
}
