// RUN: dync-opt %s --split-input-file --dync-split-reductions | FileCheck %s

// A sum over all of a [b, 4, 64, 64] tensor (b up to 16: 262144 values at most): the inner
// step sums H and W (4096, over the root 512), keeping them, bound from the input's binding;
// the original sum reads it, its result unchanged. A mean over C, H, W (16384 values): the
// inner step takes W and H (4096 >= 128), the mean of those means the rest.
// CHECK-LABEL: func.func @whole
// CHECK:         %[[HW:.+]] = torch.prim.ListConstruct %int2{{.*}}, %int3{{.*}} : (!torch.int, !torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[P:.+]] = torch.aten.sum.dim_IntList %arg0, %[[HW]], %true{{.*}}, %none{{.*}} : !torch.vtensor<[?,4,64,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4,1,1],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[P]], [%{{.+}}], affine_map<()[s0] -> (s0, 4, 1, 1)>
// CHECK-NEXT:    %[[S:.+]] = torch.aten.sum %[[P]], %none : !torch.vtensor<[?,4,1,1],f32>, !torch.none -> !torch.vtensor<[],f32>
// CHECK:         %[[HW2:.+]] = torch.prim.ListConstruct %int2{{.*}}, %int3{{.*}} :
// CHECK-NEXT:    %[[Q:.+]] = torch.aten.mean.dim %arg0, %[[HW2]], %true{{.*}}, %none{{.*}} : {{.*}} -> !torch.vtensor<[?,4,1,1],f32>
// CHECK:         torch.aten.mean.dim %[[Q]], %{{.+}}, %false, %none : !torch.vtensor<[?,4,1,1],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
module attributes {dync.backend = "llvm-cpu"} {
  func.func @whole(%arg0: !torch.vtensor<[?,4,64,64],f32>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[?],f32>) {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 4, 64, 64)> : !torch.vtensor<[?,4,64,64],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int1 = torch.constant.int 1
    %int-1 = torch.constant.int -1
    %int2 = torch.constant.int 2
    %0 = torch.aten.sum %arg0, %none : !torch.vtensor<[?,4,64,64],f32>, !torch.none -> !torch.vtensor<[],f32>
    %dims = torch.prim.ListConstruct %int-1, %int1, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %1 = torch.aten.mean.dim %arg0, %dims, %false, %none : !torch.vtensor<[?,4,64,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %1, [%b], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
    return %0, %1 : !torch.vtensor<[],f32>, !torch.vtensor<[?],f32>
  }
}

// -----

// A sum over a dynamic point count n (up to 20000) and 8 features: the inner step takes the
// features alone (8, under the root 400) and never all of the dims.
// CHECK-LABEL: func.func @points
// CHECK:         %[[F:.+]] = torch.prim.ListConstruct %int1{{.*}} : (!torch.int) -> !torch.list<int>
// CHECK-NEXT:    %[[P:.+]] = torch.aten.sum.dim_IntList %arg0, %[[F]], %true{{.*}}, %none{{.*}} : {{.*}} -> !torch.vtensor<[?,1],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[P]], [%{{.+}}], affine_map<()[s0] -> (s0, 1)>
// CHECK-NEXT:    torch.aten.sum.dim_IntList %[[P]], %{{.+}}, %true, %none : !torch.vtensor<[?,1],f32>
module attributes {dync.backend = "llvm-cpu"} {
  func.func @points(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[1,1],f32> {
    %n = torch.symbolic_int "n" {min_val = 2, max_val = 20000} : !torch.int
    torch.bind_symbolic_shape %arg0, [%n], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %none = torch.constant.none
    %true = torch.constant.bool true
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %dims = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.sum.dim_IntList %arg0, %dims, %true, %none : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,1],f32>
    return %0 : !torch.vtensor<[1,1],f32>
  }
}

// -----

// A mean over the merged dim of `h.flatten(1)` (C x H x W, up to 4 x 128 x 128 = 65536) is a mean
// over C, H and W of `h`: the inner step takes H and W (16384, over the root 256), the mean
// the rest of them; the flatten is no longer read by it.
// CHECK-LABEL: func.func @flattened
// CHECK:         %[[HW:.+]] = torch.prim.ListConstruct %int2{{.*}}, %int3{{.*}} :
// CHECK-NEXT:    %[[P:.+]] = torch.aten.mean.dim %arg0, %[[HW]], %true{{.*}}, %none{{.*}} : !torch.vtensor<[?,4,?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4,1,1],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[P]], [%{{.+}}, %{{.+}}, %{{.+}}], affine_map<()[s0, s1, s2] -> (s0, 4, 1, 1)>
// CHECK:         %[[CHW:.+]] = torch.prim.ListConstruct %int1{{.*}}, %int2{{.*}}, %int3{{.*}} :
// CHECK-NEXT:    torch.aten.mean.dim %[[P]], %[[CHW]], %false, %none : !torch.vtensor<[?,4,1,1],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
module attributes {dync.backend = "llvm-cpu"} {
  func.func @flattened(%arg0: !torch.vtensor<[?,4,?,?],f32>) -> !torch.vtensor<[?],f32> {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
    %h = torch.symbolic_int "h" {min_val = 8, max_val = 128} : !torch.int
    %w = torch.symbolic_int "w" {min_val = 8, max_val = 128} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b, %h, %w], affine_map<()[s0, s1, s2] -> (s0, 4, s1, s2)> : !torch.vtensor<[?,4,?,?],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int1 = torch.constant.int 1
    %int3 = torch.constant.int 3
    %0 = torch.aten.flatten.using_ints %arg0, %int1, %int3 : !torch.vtensor<[?,4,?,?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?],f32>
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %1 = torch.aten.mean.dim %0, %dims, %false, %none : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %1, [%b, %h, %w], affine_map<()[s0, s1, s2] -> (s0)> : !torch.vtensor<[?],f32>
    return %1 : !torch.vtensor<[?],f32>
  }
}

// -----

// A `view` merging C, H and W (the flatten of static dims) is seen through the same way, its
// merged dim found from the two shape bindings. A view that regroups dims without merging
// adjacent ones ([b, 32, 48, 16] -> [b, 16, 1536]) is not: its sum over both of its dims is
// split over the view's own dims.
// CHECK-LABEL: func.func @viewed
// CHECK:         %[[P:.+]] = torch.aten.sum.dim_IntList %arg0, %{{.+}}, %true{{.*}}, %none{{.*}} : !torch.vtensor<[?,4,64,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4,1,1],f32>
// CHECK:         torch.aten.sum.dim_IntList %[[P]], %{{.+}}, %false, %none : !torch.vtensor<[?,4,1,1],f32>
// CHECK:         %[[V:.+]] = torch.aten.view %arg1
// CHECK:         %[[Q:.+]] = torch.aten.sum.dim_IntList %[[V]], %{{.+}}, %true{{.*}}, %none{{.*}} : !torch.vtensor<[?,16,1536],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,16,1],f32>
// CHECK:         torch.aten.sum.dim_IntList %[[Q]], %{{.+}}, %false, %none : !torch.vtensor<[?,16,1],f32>
module attributes {dync.backend = "llvm-cpu"} {
  func.func @viewed(%arg0: !torch.vtensor<[?,4,64,64],f32>, %arg1: !torch.vtensor<[?,32,48,16],f32>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 4, 64, 64)> : !torch.vtensor<[?,4,64,64],f32>
    torch.bind_symbolic_shape %arg1, [%b], affine_map<()[s0] -> (s0, 32, 48, 16)> : !torch.vtensor<[?,32,48,16],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int-1 = torch.constant.int -1
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int16 = torch.constant.int 16
    %int1536 = torch.constant.int 1536
    %int16384 = torch.constant.int 16384
    %shape = torch.prim.ListConstruct %int-1, %int16384 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.view %arg0, %shape : !torch.vtensor<[?,4,64,64],f32>, !torch.list<int> -> !torch.vtensor<[?,16384],f32>
    torch.bind_symbolic_shape %0, [%b], affine_map<()[s0] -> (s0, 16384)> : !torch.vtensor<[?,16384],f32>
    %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %1 = torch.aten.sum.dim_IntList %0, %dims, %false, %none : !torch.vtensor<[?,16384],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %1, [%b], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
    %shape2 = torch.prim.ListConstruct %int-1, %int16, %int1536 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.aten.view %arg1, %shape2 : !torch.vtensor<[?,32,48,16],f32>, !torch.list<int> -> !torch.vtensor<[?,16,1536],f32>
    torch.bind_symbolic_shape %2, [%b], affine_map<()[s0] -> (s0, 16, 1536)> : !torch.vtensor<[?,16,1536],f32>
    %both = torch.prim.ListConstruct %int1, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %3 = torch.aten.sum.dim_IntList %2, %both, %false, %none : !torch.vtensor<[?,16,1536],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    return %1, %3 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>
  }
}

// -----

// Left alone: a sum over 64 x 64 (4096 values, under LONG), a sum over one dim however long,
// a sum of integers, a sum with a dtype, and a maximum (exact in any order).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     torch.aten.sum.dim_IntList
// CHECK:         return
module attributes {dync.backend = "llvm-cpu"} {
  func.func @left_alone(%arg0: !torch.vtensor<[64,64],f32>, %arg1: !torch.vtensor<[100000],f32>, %arg2: !torch.vtensor<[256,256],si64>, %arg3: !torch.vtensor<[256,256],f32>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[],f64>, !torch.vtensor<[],f32>) {
    %none = torch.constant.none
    %int7 = torch.constant.int 7
    %0 = torch.aten.sum %arg0, %none : !torch.vtensor<[64,64],f32>, !torch.none -> !torch.vtensor<[],f32>
    %1 = torch.aten.sum %arg1, %none : !torch.vtensor<[100000],f32>, !torch.none -> !torch.vtensor<[],f32>
    %2 = torch.aten.sum %arg2, %none : !torch.vtensor<[256,256],si64>, !torch.none -> !torch.vtensor<[],si64>
    %3 = torch.aten.sum %arg3, %int7 : !torch.vtensor<[256,256],f32>, !torch.int -> !torch.vtensor<[],f64>
    %4 = torch.aten.max %arg3 : !torch.vtensor<[256,256],f32> -> !torch.vtensor<[],f32>
    return %0, %1, %2, %3, %4 : !torch.vtensor<[],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[],f64>, !torch.vtensor<[],f32>
  }
}

// -----

// Left alone: a module for another backend (IREE's GPU reductions are trees already).
// CHECK-LABEL: func.func @gpu
// CHECK-NOT:     torch.aten.sum.dim_IntList
module attributes {dync.backend = "cuda"} {
  func.func @gpu(%arg0: !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[],f32> {
    %none = torch.constant.none
    %0 = torch.aten.sum %arg0, %none : !torch.vtensor<[256,256],f32>, !torch.none -> !torch.vtensor<[],f32>
    return %0 : !torch.vtensor<[],f32>
  }
}
