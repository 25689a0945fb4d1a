// RUN: dync-opt %s --split-input-file --dync-decompose-softmax | FileCheck %s

// Attention scores over a dynamic sequence: max, shifted exponentials, their sum, and the
// exponentials times the sum's reciprocal, reduced over the last dim with the dim kept; the
// new tensors bound from the input's binding (the reduced dim 1), the result keeps the op's.
// CHECK-LABEL: func.func @scores
// CHECK:         %[[DIMS:.+]] = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
// CHECK:         %[[M:.+]] = torch.aten.amax %arg0, %[[DIMS]], %true : {{.*}} -> !torch.vtensor<[12,?,1],f32>
// CHECK:         %[[D:.+]] = torch.aten.sub.Tensor %arg0, %[[M]], %int1 : {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK:         %[[E:.+]] = torch.aten.exp %[[D]] : {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK:         %[[S:.+]] = torch.aten.sum.dim_IntList %[[E]], %[[DIMS]], %true, %none{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[12,?,1],f32>
// CHECK:         %[[R:.+]] = torch.aten.reciprocal %[[S]] : {{.*}} -> !torch.vtensor<[12,?,1],f32>
// CHECK:         %[[Y:.+]] = torch.aten.mul.Tensor %[[E]], %[[R]] : {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK-DAG:     torch.bind_symbolic_shape %[[M]], [%{{.+}}], affine_map<()[s0] -> (12, s0, 1)>
// CHECK-DAG:     torch.bind_symbolic_shape %[[E]], [%{{.+}}], affine_map<()[s0] -> (12, s0, s0)>
// CHECK-DAG:     torch.bind_symbolic_shape %[[Y]], [%{{.+}}], affine_map<()[s0] -> (12, s0, s0)>
// CHECK-NOT:     torch.aten.softmax.int
// CHECK:         return %[[Y]]
func.func @scores(%arg0: !torch.vtensor<[12,?,?],f32>) -> !torch.vtensor<[12,?,?],f32> {
  %s = torch.symbolic_int "s" {min_val = 1, max_val = 512} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (12, s0, s0)> : !torch.vtensor<[12,?,?],f32>
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int-1, %none : !torch.vtensor<[12,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[12,?,?],f32>
  torch.bind_symbolic_shape %0, [%s], affine_map<()[s0] -> (12, s0, s0)> : !torch.vtensor<[12,?,?],f32>
  return %0 : !torch.vtensor<[12,?,?],f32>
}

// -----

// `_softmax` over the first dim of a static tensor: the same form, reduced over dim 0.
// CHECK-LABEL: func.func @first_dim
// CHECK:         %[[DIMS:.+]] = torch.prim.ListConstruct %int0{{[_0-9]*}} :
// CHECK:         torch.aten.amax %arg0, %[[DIMS]], %true : {{.*}} -> !torch.vtensor<[1,10],f32>
// CHECK:         torch.aten.mul.Tensor {{.*}} -> !torch.vtensor<[4,10],f32>
// CHECK-NOT:     torch.aten._softmax
func.func @first_dim(%arg0: !torch.vtensor<[4,10],f32>) -> !torch.vtensor<[4,10],f32> {
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %0 = torch.aten._softmax %arg0, %int0, %false : !torch.vtensor<[4,10],f32>, !torch.int, !torch.bool -> !torch.vtensor<[4,10],f32>
  return %0 : !torch.vtensor<[4,10],f32>
}

// -----

// Left alone: an f16 softmax, one asked to return another dtype, a `_softmax` of half to
// float, a log-softmax (`dync-softmax-row-blocks` handles those it takes).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     torch.aten.amax
// CHECK:         torch.aten.softmax.int %arg0
// CHECK:         torch.aten.softmax.int %arg1
// CHECK:         torch.aten._softmax %arg0
// CHECK:         torch.aten.log_softmax.int %arg1
func.func @kept(%arg0: !torch.vtensor<[4,10],f16>, %arg1: !torch.vtensor<[4,10],f32>) -> (!torch.vtensor<[4,10],f16>, !torch.vtensor<[4,10],f64>, !torch.vtensor<[4,10],f32>, !torch.vtensor<[4,10],f32>) {
  %int1 = torch.constant.int 1
  %int7 = torch.constant.int 7
  %none = torch.constant.none
  %true = torch.constant.bool true
  %0 = torch.aten.softmax.int %arg0, %int1, %none : !torch.vtensor<[4,10],f16>, !torch.int, !torch.none -> !torch.vtensor<[4,10],f16>
  %1 = torch.aten.softmax.int %arg1, %int1, %int7 : !torch.vtensor<[4,10],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,10],f64>
  %2 = torch.aten._softmax %arg0, %int1, %true : !torch.vtensor<[4,10],f16>, !torch.int, !torch.bool -> !torch.vtensor<[4,10],f32>
  %3 = torch.aten.log_softmax.int %arg1, %int1, %none : !torch.vtensor<[4,10],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,10],f32>
  return %0, %1, %2, %3 : !torch.vtensor<[4,10],f16>, !torch.vtensor<[4,10],f64>, !torch.vtensor<[4,10],f32>, !torch.vtensor<[4,10],f32>
}

// -----

// A module IREE data-tiles (`dync-data-tiling` asked for it), with attention: its softmax is
// decomposed, and as its probabilities reach a matmul (through a view), the data tiling asked
// for starts in global optimization, where IREE 3.13 computes the product after it right
// (lit/upstream/iree-data-tiling-softmax-rows-unwritten.mlir).
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling", "--other"]}
// CHECK-LABEL: func.func @attention
// CHECK:         torch.aten.amax %arg0
// CHECK-NOT:     torch.aten.softmax.int
module attributes {dync.iree_flags = ["--iree-opt-data-tiling", "--other"]} {
  func.func @attention(%arg0: !torch.vtensor<[12,?,?],f32>, %arg1: !torch.vtensor<[12,?,64],f32>) -> !torch.vtensor<[12,?,64],f32> {
    %int-1 = torch.constant.int -1
    %none = torch.constant.none
    %0 = torch.aten.softmax.int %arg0, %int-1, %none : !torch.vtensor<[12,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[12,?,?],f32>
    %1 = torch.aten.clone %0, %none : !torch.vtensor<[12,?,?],f32>, !torch.none -> !torch.vtensor<[12,?,?],f32>
    %2 = torch.aten.bmm %1, %arg1 : !torch.vtensor<[12,?,?],f32>, !torch.vtensor<[12,?,64],f32> -> !torch.vtensor<[12,?,64],f32>
    return %2 : !torch.vtensor<[12,?,64],f32>
  }
}

// -----

// A data-tiled module whose softmax reaches no matmul (a classifier's exit test): decomposed,
// and the data tiling stays dispatch creation's, the faster one on convolutions.
// CHECK: module attributes {dync.iree_flags = ["--iree-opt-data-tiling"]}
// CHECK-LABEL: func.func @exit_test
// CHECK:         torch.aten.amax %arg0
module attributes {dync.iree_flags = ["--iree-opt-data-tiling"]} {
  func.func @exit_test(%arg0: !torch.vtensor<[?,1000],f32>) -> !torch.vtensor<[?],f32> {
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %none = torch.constant.none
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.softmax.int %arg0, %int1, %none : !torch.vtensor<[?,1000],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,1000],f32>
    %1 = torch.aten.amax %0, %dims, %false : !torch.vtensor<[?,1000],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?],f32>
    return %1 : !torch.vtensor<[?],f32>
  }
}

// -----

// A data-tiled module without a softmax to decompose keeps dispatch creation's data tiling.
// CHECK: module attributes {dync.iree_flags = ["--iree-opt-data-tiling"]}
// CHECK-LABEL: func.func @no_softmax
// CHECK:         torch.aten.log_softmax.int %arg0
module attributes {dync.iree_flags = ["--iree-opt-data-tiling"]} {
  func.func @no_softmax(%arg0: !torch.vtensor<[12,?,?],f32>) -> !torch.vtensor<[12,?,?],f32> {
    %int-1 = torch.constant.int -1
    %none = torch.constant.none
    %0 = torch.aten.log_softmax.int %arg0, %int-1, %none : !torch.vtensor<[12,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[12,?,?],f32>
    return %0 : !torch.vtensor<[12,?,?],f32>
  }
}
