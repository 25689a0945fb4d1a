// RUN: dync-opt %s --split-input-file --dync-spatial-reductions | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-spatial-reductions | FileCheck %s --check-prefix=BIND

// A global average pool (a mean over H and W with keepdim, as dync-channels-last writes it)
// of a convolution's ReLU over a dynamic batch: permuted to NHWC, rows of W x C reduced over
// W, samples of H x C reduced over H, divided by H x W, viewed as N x C x 1 x 1. The new
// tensors' shapes are bound from the input's (N x H rows for the first reduction).
// CHECK-LABEL: func.func @global_pool
// CHECK:         %[[R:.+]] = torch.aten.relu %{{.+}} : !torch.vtensor<[?,8,16,12],f32> -> !torch.vtensor<[?,8,16,12],f32>
// CHECK:         %[[P:.+]] = torch.aten.permute %[[R]], %{{.+}} : !torch.vtensor<[?,8,16,12],f32>, !torch.list<int> -> !torch.vtensor<[?,16,12,8],f32>
// CHECK:         %[[ROWS:.+]] = torch.aten.reshape %[[P]], %{{.+}} : {{.*}} -> !torch.vtensor<[?,12,8],f32>
// CHECK:         %[[SW:.+]] = torch.aten.sum.dim_IntList %[[ROWS]], %{{.+}}, %false, %none{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[S:.+]] = torch.aten.reshape %[[SW]], %{{.+}} : {{.*}} -> !torch.vtensor<[?,16,8],f32>
// CHECK:         %[[SH:.+]] = torch.aten.sum.dim_IntList %[[S]], %{{.+}}, %false{{[_0-9]*}}, %none{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[HW:.+]] = torch.constant.float 1.920000e+02
// CHECK:         %[[M:.+]] = torch.aten.div.Scalar %[[SH]], %[[HW]] : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[Y:.+]] = torch.aten.reshape %[[M]], %{{.+}} : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8,1,1],f32>
// CHECK-NOT:     torch.aten.mean.dim
// CHECK:         return %[[Y]]
// BIND-LABEL:  func.func @global_pool
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 16, 12, 8)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0 * 16, 12, 8)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0 * 16, 8)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 16, 8)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 8)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 8, 1, 1)>
module attributes {dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]} {
  func.func @global_pool(%arg0: !torch.vtensor<[?,3,16,12],f32>) -> !torch.vtensor<[?,8,1,1],f32> {
    %s = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (s0, 3, 16, 12)> : !torch.vtensor<[?,3,16,12],f32>
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %true = torch.constant.bool true
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %hw = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,3,16,12],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,16,12],f32>
    torch.bind_symbolic_shape %0, [%s], affine_map<()[s0] -> (s0, 8, 16, 12)> : !torch.vtensor<[?,8,16,12],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[?,8,16,12],f32> -> !torch.vtensor<[?,8,16,12],f32>
    torch.bind_symbolic_shape %1, [%s], affine_map<()[s0] -> (s0, 8, 16, 12)> : !torch.vtensor<[?,8,16,12],f32>
    %2 = torch.aten.mean.dim %1, %hw, %true, %none : !torch.vtensor<[?,8,16,12],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,8,1,1],f32>
    torch.bind_symbolic_shape %2, [%s], affine_map<()[s0] -> (s0, 8, 1, 1)> : !torch.vtensor<[?,8,1,1],f32>
    return %2 : !torch.vtensor<[?,8,1,1],f32>
  }
}

// -----

// A sum over dims [-1, -2] without keepdim, of a sum of an NHWC -> NCHW permute (dync-im2col's
// form of a convolution) and an argument, and a max over H and W: two steps each, the sum
// without a division, the max as two `amax`es; neither reshaped back to rank 4. The result
// keeps the op's binding, once.
// CHECK-LABEL: func.func @sum_and_max
// CHECK:         torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[?,4],f32>
// CHECK:         %[[SUM:.+]] = torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[?,4],f32>
// CHECK-NOT:     torch.aten.div.Scalar
// CHECK:         torch.aten.amax %{{.+}}, %{{.+}}, %false{{[_0-9]*}} : !torch.vtensor<[?,5,4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,4],f32>
// CHECK:         %[[MAX:.+]] = torch.aten.amax %{{.+}} : !torch.vtensor<[?,6,4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,4],f32>
// CHECK:         return %[[SUM]], %[[MAX]]
// BIND-LABEL:  func.func @sum_and_max
// BIND:          torch.aten.sum.dim_IntList
// BIND-NEXT:     torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0 * 6, 4)>
// BIND:          %[[SUM:.+]] = torch.aten.sum.dim_IntList %{{.+}} -> !torch.vtensor<[?,4],f32>
// BIND-NEXT:     torch.bind_symbolic_shape %[[SUM]], [%{{.+}}], affine_map<()[s0] -> (s0, 4)>
// BIND-NOT:      torch.bind_symbolic_shape %[[SUM]]
// BIND:          return
module attributes {dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]} {
  func.func @sum_and_max(%arg0: !torch.vtensor<[?,6,5,4],f32>, %arg1: !torch.vtensor<[?,4,6,5],f32>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) {
    %s = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (s0, 6, 5, 4)> : !torch.vtensor<[?,6,5,4],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %int-1 = torch.constant.int -1
    %int-2 = torch.constant.int -2
    %false = torch.constant.bool false
    %none = torch.constant.none
    %perm = torch.prim.ListConstruct %int0, %int3, %int1, %int2 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.permute %arg0, %perm : !torch.vtensor<[?,6,5,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4,6,5],f32>
    torch.bind_symbolic_shape %0, [%s], affine_map<()[s0] -> (s0, 4, 6, 5)> : !torch.vtensor<[?,4,6,5],f32>
    %1 = torch.aten.add.Tensor %arg1, %0, %int1 : !torch.vtensor<[?,4,6,5],f32>, !torch.vtensor<[?,4,6,5],f32>, !torch.int -> !torch.vtensor<[?,4,6,5],f32>
    torch.bind_symbolic_shape %1, [%s], affine_map<()[s0] -> (s0, 4, 6, 5)> : !torch.vtensor<[?,4,6,5],f32>
    %last = torch.prim.ListConstruct %int-1, %int-2 : (!torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.aten.sum.dim_IntList %1, %last, %false, %none : !torch.vtensor<[?,4,6,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %2, [%s], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %hw = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %3 = torch.aten.amax %0, %hw, %false : !torch.vtensor<[?,4,6,5],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,4],f32>
    return %2, %3 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>
  }
}

// -----

// Left alone: a mean of an argument (not known to lie in NHWC), and of NHWC -> NCHW permutes
// one over a static batch, one over H alone, one with a dtype, a sum of integers.
// CHECK-LABEL: func.func @left_alone
// CHECK:         torch.aten.mean.dim %arg0
// CHECK-COUNT-3: torch.aten.mean.dim %{{[0-9]+}}
// CHECK:         torch.aten.sum.dim_IntList
// CHECK-NOT:     torch.aten.reshape
module attributes {dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]} {
  func.func @left_alone(%arg0: !torch.vtensor<[?,4,6,5],f32>, %arg1: !torch.vtensor<[?,6,5,4],f32>, %arg2: !torch.vtensor<[2,6,5,4],f32>, %arg3: !torch.vtensor<[?,6,5,4],si64>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[2,4],f32>, !torch.vtensor<[?,4,5],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],si64>) {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %int6 = torch.constant.int 6
    %false = torch.constant.bool false
    %none = torch.constant.none
    %perm = torch.prim.ListConstruct %int0, %int3, %int1, %int2 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %hw = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %h = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
    %p = torch.aten.permute %arg1, %perm : !torch.vtensor<[?,6,5,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4,6,5],f32>
    %ps = torch.aten.permute %arg2, %perm : !torch.vtensor<[2,6,5,4],f32>, !torch.list<int> -> !torch.vtensor<[2,4,6,5],f32>
    %pi = torch.aten.permute %arg3, %perm : !torch.vtensor<[?,6,5,4],si64>, !torch.list<int> -> !torch.vtensor<[?,4,6,5],si64>
    %0 = torch.aten.mean.dim %arg0, %hw, %false, %none : !torch.vtensor<[?,4,6,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
    %1 = torch.aten.mean.dim %ps, %hw, %false, %none : !torch.vtensor<[2,4,6,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[2,4],f32>
    %2 = torch.aten.mean.dim %p, %h, %false, %none : !torch.vtensor<[?,4,6,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4,5],f32>
    %3 = torch.aten.mean.dim %p, %hw, %false, %int6 : !torch.vtensor<[?,4,6,5],f32>, !torch.list<int>, !torch.bool, !torch.int -> !torch.vtensor<[?,4],f32>
    %4 = torch.aten.sum.dim_IntList %pi, %hw, %false, %none : !torch.vtensor<[?,4,6,5],si64>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4],si64>
    return %0, %1, %2, %3, %4 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[2,4],f32>, !torch.vtensor<[?,4,5],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],si64>
  }
}

// -----

// A module IREE computes in NCHW (dync-channels-last asked nothing): the mean of an NHWC ->
// NCHW permute stays.
// CHECK-LABEL: func.func @nchw_module
// CHECK:         torch.aten.mean.dim
// CHECK-NOT:     torch.aten.reshape
module {
  func.func @nchw_module(%arg0: !torch.vtensor<[?,6,5,4],f32>) -> !torch.vtensor<[?,4],f32> {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %false = torch.constant.bool false
    %none = torch.constant.none
    %perm = torch.prim.ListConstruct %int0, %int3, %int1, %int2 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %hw = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %p = torch.aten.permute %arg0, %perm : !torch.vtensor<[?,6,5,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4,6,5],f32>
    %0 = torch.aten.mean.dim %p, %hw, %false, %none : !torch.vtensor<[?,4,6,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
    return %0 : !torch.vtensor<[?,4],f32>
  }
}
