// RUN: dync-opt %s --split-input-file --dync-max-pool-slices | FileCheck %s

// A ResNet stem's 3×3/2 max pool with padding 1 over a dynamic batch, 7×7 into 4×4: the input
// permuted to NHWC and padded with -inf by one on each side (8 rows reach the last window's
// end, 9 are there), per kernel offset its rows (from row i, every second, 4 of them) and
// then its columns, the running maximum of the nine, permuted back to NCHW.
// CHECK-LABEL: func.func @stem_pool
// CHECK-NOT:     torch.aten.max_pool2d
// CHECK:         %[[X:.+]] = torch.aten.permute %arg0, {{.*}} -> !torch.vtensor<[?,7,7,64],f32>
// CHECK:         %[[NEG:.+]] = torch.constant.float 0xFFF0000000000000
// CHECK:         %[[P:.+]] = torch.aten.constant_pad_nd %[[X]], {{.*}}, %[[NEG]] : {{.*}} -> !torch.vtensor<[?,9,9,64],f32>
// CHECK:         %[[R0:.+]] = torch.aten.slice.Tensor %[[P]], %int1{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int7{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,4,9,64],f32>
// CHECK:         %[[W00:.+]] = torch.aten.slice.Tensor %[[R0]], %int2{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int7{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,4,4,64],f32>
// CHECK:         %[[W01:.+]] = torch.aten.slice.Tensor %[[R0]], %int2{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}}, %int8{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,4,4,64],f32>
// CHECK:         torch.aten.maximum %[[W00]], %[[W01]] : {{.*}} -> !torch.vtensor<[?,4,4,64],f32>
// CHECK-COUNT-7: torch.aten.maximum
// CHECK:         %[[Y:.+]] = torch.aten.permute {{.*}} -> !torch.vtensor<[?,64,4,4],f32>
// CHECK:         return %[[Y]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @stem_pool(%arg0: !torch.vtensor<[?,64,7,7],f32>) -> !torch.vtensor<[?,64,4,4],f32> {
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %false = torch.constant.bool false
    %kernel = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %stride = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %pad = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.max_pool2d %arg0, %kernel, %stride, %pad, %ones, %false : !torch.vtensor<[?,64,7,7],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,64,4,4],f32>
    return %0 : !torch.vtensor<[?,64,4,4],f32>
  }
}

// -----

// Ceil mode: 2×2/2 without padding over 5×5 makes 3×3, its last windows one row and column
// past the input: -inf padding at the bottom and right only.
// CHECK-LABEL: func.func @ceil_mode
// CHECK:         %[[X:.+]] = torch.aten.permute %arg0, {{.*}} -> !torch.vtensor<[1,5,5,8],f32>
// CHECK:         %[[B:.+]] = torch.prim.ListConstruct %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}} :
// CHECK:         torch.aten.constant_pad_nd %[[X]], %[[B]], {{.*}} -> !torch.vtensor<[1,6,6,8],f32>
// CHECK-COUNT-3: torch.aten.maximum
// CHECK:         torch.aten.permute {{.*}} -> !torch.vtensor<[1,8,3,3],f32>
module attributes {dync.backend = "llvm-cpu"} {
  func.func @ceil_mode(%arg0: !torch.vtensor<[1,8,5,5],f32>) -> !torch.vtensor<[1,8,3,3],f32> {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %true = torch.constant.bool true
    %kernel = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.max_pool2d %arg0, %kernel, %kernel, %zeros, %ones, %true : !torch.vtensor<[1,8,5,5],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,3,3],f32>
    return %0 : !torch.vtensor<[1,8,3,3],f32>
  }
}

// -----

// Left alone: a dynamic H x W, a pool that returns indices, an integer input, and any pool of
// a module for another backend.
// CHECK-LABEL: func.func @kept
// CHECK:         torch.aten.max_pool2d %arg0
// CHECK:         torch.aten.max_pool2d_with_indices %arg1
// CHECK:         torch.aten.max_pool2d %arg2
// CHECK-NOT:     torch.aten.maximum
module attributes {dync.backend = "llvm-cpu"} {
  func.func @kept(%arg0: !torch.vtensor<[1,8,?,?],f32>, %arg1: !torch.vtensor<[1,8,4,4],f32>, %arg2: !torch.vtensor<[1,8,4,4],si32>) -> (!torch.vtensor<[1,8,?,?],f32>, !torch.vtensor<[1,8,2,2],si64>, !torch.vtensor<[1,8,2,2],si32>) {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %false = torch.constant.bool false
    %kernel = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.max_pool2d %arg0, %kernel, %kernel, %zeros, %ones, %false : !torch.vtensor<[1,8,?,?],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,?,?],f32>
    %1:2 = torch.aten.max_pool2d_with_indices %arg1, %kernel, %kernel, %zeros, %ones, %false : !torch.vtensor<[1,8,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,2,2],f32>, !torch.vtensor<[1,8,2,2],si64>
    %2 = torch.aten.max_pool2d %arg2, %kernel, %kernel, %zeros, %ones, %false : !torch.vtensor<[1,8,4,4],si32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,2,2],si32>
    return %0, %1#1, %2 : !torch.vtensor<[1,8,?,?],f32>, !torch.vtensor<[1,8,2,2],si64>, !torch.vtensor<[1,8,2,2],si32>
  }
}

// -----

// CHECK-LABEL: func.func @on_cuda
// CHECK:         torch.aten.max_pool2d
module attributes {dync.backend = "cuda"} {
  func.func @on_cuda(%arg0: !torch.vtensor<[1,8,4,4],f32>) -> !torch.vtensor<[1,8,2,2],f32> {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %false = torch.constant.bool false
    %kernel = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.max_pool2d %arg0, %kernel, %kernel, %zeros, %ones, %false : !torch.vtensor<[1,8,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,2,2],f32>
    return %0 : !torch.vtensor<[1,8,2,2],f32>
  }
}
