// RUN: dync-opt %s --split-input-file --dync-fence-gathered-reductions | FileCheck %s

// Rows blended from two gathers along W (a linear resize), then averaged: the blend passes
// through a fence (IREE's `compute_barrier.start`, given its dynamic dims), bound as the
// blend's, and the mean reads it; the blend's other reader keeps the value before the fence.
// CHECK-LABEL: func.func @resized_then_averaged
// CHECK:         %[[BLEND:.+]] = torch.aten.add.Tensor
// CHECK:         %[[T:.+]] = torch_c.to_builtin_tensor %[[BLEND]] : !torch.vtensor<[1,4,?,?],f32> -> tensor<1x4x?x?xf32>
// CHECK:         %[[B:.+]] = iree_tensor_ext.compute_barrier.start %[[T]] : tensor<1x4x?x?xf32>{%{{.+}}, %{{.+}}} -> tensor<1x4x?x?xf32>
// CHECK-NEXT:    %[[F:.+]] = torch_c.from_builtin_tensor %[[B]] : tensor<1x4x?x?xf32> -> !torch.vtensor<[1,4,?,?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[F]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (1, 4, s0, s1)>
// CHECK-NEXT:    torch.aten.mean.dim %[[F]]
// CHECK:         return %{{.+}}, %[[BLEND]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @resized_then_averaged(%x: !torch.vtensor<[1,4,?,?],f32>, %lo: !torch.vtensor<[?],si64>, %hi: !torch.vtensor<[?],si64>, %t: !torch.vtensor<[?],f32>) -> (!torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4,?,?],f32>) {
    %h = torch.symbolic_int "h" {min_val = 4, max_val = 64} : !torch.int
    %w = torch.symbolic_int "w" {min_val = 4, max_val = 64} : !torch.int
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %false = torch.constant.bool false
    %none = torch.constant.none
    %0 = torch.aten.index_select %x, %int3, %lo : !torch.vtensor<[1,4,?,?],f32>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[1,4,?,?],f32>
    torch.bind_symbolic_shape %0, [%h, %w], affine_map<()[s0, s1] -> (1, 4, s0, s1)> : !torch.vtensor<[1,4,?,?],f32>
    %1 = torch.aten.index_select %x, %int3, %hi : !torch.vtensor<[1,4,?,?],f32>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[1,4,?,?],f32>
    torch.bind_symbolic_shape %1, [%h, %w], affine_map<()[s0, s1] -> (1, 4, s0, s1)> : !torch.vtensor<[1,4,?,?],f32>
    %2 = torch.aten.sub.Tensor %1, %0, %int1 : !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[1,4,?,?],f32>, !torch.int -> !torch.vtensor<[1,4,?,?],f32>
    torch.bind_symbolic_shape %2, [%h, %w], affine_map<()[s0, s1] -> (1, 4, s0, s1)> : !torch.vtensor<[1,4,?,?],f32>
    %3 = torch.aten.mul.Tensor %2, %t : !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor<[1,4,?,?],f32>
    torch.bind_symbolic_shape %3, [%h, %w], affine_map<()[s0, s1] -> (1, 4, s0, s1)> : !torch.vtensor<[1,4,?,?],f32>
    %4 = torch.aten.add.Tensor %0, %3, %int1 : !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[1,4,?,?],f32>, !torch.int -> !torch.vtensor<[1,4,?,?],f32>
    torch.bind_symbolic_shape %4, [%h, %w], affine_map<()[s0, s1] -> (1, 4, s0, s1)> : !torch.vtensor<[1,4,?,?],f32>
    %dims = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %5 = torch.aten.mean.dim %4, %dims, %false, %none : !torch.vtensor<[1,4,?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,4],f32>
    return %5, %4 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[1,4,?,?],f32>
  }
}

// -----

// Left alone: a reduction of one gather (an embedding bag's mean), and one of two gathers
// behind an op that is neither elementwise nor a view (a matmul computes the blend).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     compute_barrier
// CHECK:         return
module attributes {dync.backend = "llvm-cpu"} {
  func.func @left_alone(%e: !torch.vtensor<[1000,64],f32>, %idx: !torch.vtensor<[?],si64>, %jdx: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[64],f32>, !torch.vtensor<[?],f32>) {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %none = torch.constant.none
    %0 = torch.aten.index_select %e, %int0, %idx : !torch.vtensor<[1000,64],f32>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[?,64],f32>
    %d0 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %1 = torch.aten.mean.dim %0, %d0, %false, %none : !torch.vtensor<[?,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[64],f32>
    %2 = torch.aten.index_select %e, %int0, %jdx : !torch.vtensor<[1000,64],f32>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[?,64],f32>
    %3 = torch.aten.transpose.int %2, %int0, %int1 : !torch.vtensor<[?,64],f32>, !torch.int, !torch.int -> !torch.vtensor<[64,?],f32>
    %4 = torch.aten.mm %0, %3 : !torch.vtensor<[?,64],f32>, !torch.vtensor<[64,?],f32> -> !torch.vtensor<[?,?],f32>
    %d1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %5 = torch.aten.amax %4, %d1, %false : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?],f32>
    return %1, %5 : !torch.vtensor<[64],f32>, !torch.vtensor<[?],f32>
  }
}

// -----

// Left alone: a module for another backend.
// CHECK-LABEL: func.func @on_cuda
// CHECK-NOT:     compute_barrier
// CHECK:         return
module attributes {dync.backend = "cuda"} {
  func.func @on_cuda(%x: !torch.vtensor<[4,16],f32>, %lo: !torch.vtensor<[8],si64>, %hi: !torch.vtensor<[8],si64>) -> !torch.vtensor<[4],f32> {
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %none = torch.constant.none
    %0 = torch.aten.index_select %x, %int1, %lo : !torch.vtensor<[4,16],f32>, !torch.int, !torch.vtensor<[8],si64> -> !torch.vtensor<[4,8],f32>
    %1 = torch.aten.index_select %x, %int1, %hi : !torch.vtensor<[4,16],f32>, !torch.int, !torch.vtensor<[8],si64> -> !torch.vtensor<[4,8],f32>
    %2 = torch.aten.add.Tensor %0, %1, %int1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4,8],f32>, !torch.int -> !torch.vtensor<[4,8],f32>
    %d1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %3 = torch.aten.sum.dim_IntList %2, %d1, %false, %none : !torch.vtensor<[4,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4],f32>
    return %3 : !torch.vtensor<[4],f32>
  }
}
