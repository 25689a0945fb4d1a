// RUN: dync-opt %s --split-input-file --dync-bucket | FileCheck %s
// RUN: not dync-opt %s.bad --split-input-file --dync-bucket 2>&1 | FileCheck %s.bad

// A bucket h <= 4: the argument as the entry's plus the true h as a 0-d argument, bound
// first (torch-mlir reads an argument after its binding), zero-padded to 32*4 rows at the top
// through a barrier (IREE would fold the pad into the convolution's own and fail on its type).
// The stride-2 convolution keeps the padding (its input's tail is zeros), the relu too (its
// tail is garbage from then on), both with static result types; the stride-1 convolution
// would read row 16*h of the tail, so its input is cropped to 16*h rows and bound to its dims
// again. The size of the argument's axis is its own. The entry stays as it was.
// CHECK-NOT:   dync.bucket = [
// CHECK-LABEL: func.func @main(%arg0: !torch.vtensor<[1,3,?,32],f32>
// CHECK-LABEL: func.func @main__bucket__h_4(%arg0: !torch.vtensor<[1,3,?,32],f32> {dync.shape = [1, 3, "32*h", 32]}, %arg1: !torch.vtensor<[],si64> {dync.shape = []})
// CHECK-SAME:    attributes {dync.bucket = {h = 4 : i64}, dync.sizes = ["h"]}
// CHECK:         %[[SYM:[0-9]+]] = torch.symbolic_int "h"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[SYM]]]
// CHECK:         %[[H:[0-9]+]] = torch.aten.item %arg1
// CHECK:         %[[TAIL:[0-9]+]] = torch.aten.add.int %int128, %{{[0-9]+}}
// CHECK:         %[[WIDTHS:[0-9]+]] = torch.prim.ListConstruct %{{.+}}, %{{.+}}, %{{.+}}, %[[TAIL]]
// CHECK:         %[[PAD:[0-9]+]] = torch.aten.constant_pad_nd %arg0, %[[WIDTHS]], {{.+}} -> !torch.vtensor<[1,3,128,32],f32>
// CHECK:         %[[IN:[0-9]+]] = torch_c.to_builtin_tensor %[[PAD]]
// CHECK-NEXT:    %[[BARRIER:[0-9]+]] = util.optimization_barrier %[[IN]] : tensor<1x3x128x32xf32>
// CHECK-NEXT:    %[[PADDED:[0-9]+]] = torch_c.from_builtin_tensor %[[BARRIER]]
// CHECK:         %[[HALF:[0-9]+]] = torch.aten.mul.int %{{.+}}, %[[H]]
// CHECK:         %[[ROWS:[0-9]+]] = torch.aten.size.int %arg0,
// CHECK-NOT:     torch.bind_symbolic_shape %arg0
// CHECK:         %[[C1:[0-9]+]] = torch.aten.conv2d %[[PADDED]], {{.+}} -> !torch.vtensor<[1,4,64,16],f32>
// CHECK-NOT:     torch.bind_symbolic_shape %[[C1]]
// CHECK:         %[[R:[0-9]+]] = torch.aten.relu %[[C1]] : !torch.vtensor<[1,4,64,16],f32> -> !torch.vtensor<[1,4,64,16],f32>
// CHECK:         %[[CROP:[0-9]+]] = torch.aten.slice.Tensor %[[R]], %{{.+}}, %{{.+}}, %[[HALF]], %{{.+}} -> !torch.vtensor<[1,4,?,16],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[CROP]], [%[[SYM]]], affine_map<()[s0] -> (1, 4, s0 * 16, 16)>
// CHECK:         %[[C2:[0-9]+]] = torch.aten.conv2d %[[CROP]],
// CHECK:         return %[[C2]], %[[ROWS]]
module attributes {dync.bucket = [{h = 4 : i64}], dync.symbols = {h = {max = 10 : i64, min = 2 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[1,3,?,32],f32> {dync.shape = [1, 3, "32*h", 32]}) -> (!torch.vtensor<[1,4,?,16],f32> {dync.shape = [1, 4, "16*h", 16]}, !torch.int) attributes {dync.entry} {
    %0 = torch.symbolic_int "h" {min_val = 2, max_val = 10} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (1, 3, s0 * 32, 32)> : !torch.vtensor<[1,3,?,32],f32>
    %int2 = torch.constant.int 2
    %h = torch.aten.size.int %arg0, %int2 : !torch.vtensor<[1,3,?,32],f32>, !torch.int -> !torch.int
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<4x3x3x3xf32>) : !torch.vtensor<[4,3,3,3],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<4x4x3x3xf32>) : !torch.vtensor<[4,4,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %s2 = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %s1 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %1 = torch.aten.conv2d %arg0, %w1, %none, %s2, %s1, %s1, %int1 : !torch.vtensor<[1,3,?,32],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,?,16],f32>
    torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (1, 4, s0 * 16, 16)> : !torch.vtensor<[1,4,?,16],f32>
    %2 = torch.aten.relu %1 : !torch.vtensor<[1,4,?,16],f32> -> !torch.vtensor<[1,4,?,16],f32>
    torch.bind_symbolic_shape %2, [%0], affine_map<()[s0] -> (1, 4, s0 * 16, 16)> : !torch.vtensor<[1,4,?,16],f32>
    %3 = torch.aten.conv2d %2, %w2, %none, %s1, %s1, %s1, %int1 : !torch.vtensor<[1,4,?,16],f32>, !torch.vtensor<[4,4,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,?,16],f32>
    torch.bind_symbolic_shape %3, [%0], affine_map<()[s0] -> (1, 4, s0 * 16, 16)> : !torch.vtensor<[1,4,?,16],f32>
    return %3, %h : !torch.vtensor<[1,4,?,16],f32>, !torch.int
  }
}

// -----

// A dynamic batch padded to its bucket, two buckets: an elementwise op with a per-channel
// operand and a 2x2 max-pool (it reads only rows of its own image) keep the padding; the
// mean over the padded axis and the return get the crop.
// CHECK-LABEL: func.func @main__bucket__b_2(%arg0: !torch.vtensor<[?,4,8,8],f32> {dync.shape = ["b", 4, 8, 8]}, %arg1: !torch.vtensor<[],si64>
// CHECK:         %[[B:[0-9]+]] = torch.aten.item %arg1
// CHECK:         %[[PAD:[0-9]+]] = torch.aten.constant_pad_nd %arg0, {{.+}} -> !torch.vtensor<[2,4,8,8],f32>
// CHECK:         %[[PADDED:[0-9]+]] = torch_c.from_builtin_tensor
// CHECK:         %[[M:[0-9]+]] = torch.aten.mul.Tensor %[[PADDED]],
// CHECK:         %[[P:[0-9]+]] = torch.aten.max_pool2d %[[M]], {{.+}} -> !torch.vtensor<[2,4,4,4],f32>
// CHECK:         %[[CROP:[0-9]+]] = torch.aten.slice.Tensor %[[P]], %{{.+}}, %{{.+}}, %[[B]], %{{.+}}
// CHECK:         torch.aten.mean.dim %[[CROP]]
// CHECK:         return %[[CROP]],
// CHECK-LABEL: func.func @main__bucket__b_8(%arg0: !torch.vtensor<[?,4,8,8],f32>
module attributes {dync.bucket = [{b = 2 : i64}, {b = 8 : i64}], dync.symbols = {b = {max = 8 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,4,8,8],f32> {dync.shape = ["b", 4, 8, 8]}) -> (!torch.vtensor<[?,4,4,4],f32> {dync.shape = ["b", 4, 4, 4]}, !torch.vtensor<[4,4,4],f32> {dync.shape = [4, 4, 4]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 4, 8, 8)> : !torch.vtensor<[?,4,8,8],f32>
    %scale = torch.vtensor.literal(dense<2.0> : tensor<1x4x1x1xf32>) : !torch.vtensor<[1,4,1,1],f32>
    %1 = torch.aten.mul.Tensor %arg0, %scale : !torch.vtensor<[?,4,8,8],f32>, !torch.vtensor<[1,4,1,1],f32> -> !torch.vtensor<[?,4,8,8],f32>
    torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (s0, 4, 8, 8)> : !torch.vtensor<[?,4,8,8],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %false = torch.constant.bool false
    %none = torch.constant.none
    %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.aten.max_pool2d %1, %k, %k, %p, %d, %false : !torch.vtensor<[?,4,8,8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,4,4,4],f32>
    torch.bind_symbolic_shape %2, [%0], affine_map<()[s0] -> (s0, 4, 4, 4)> : !torch.vtensor<[?,4,4,4],f32>
    %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %3 = torch.aten.mean.dim %2, %dims, %false, %none : !torch.vtensor<[?,4,4,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[4,4,4],f32>
    return %2, %3 : !torch.vtensor<[?,4,4,4],f32>, !torch.vtensor<[4,4,4],f32>
  }
}
