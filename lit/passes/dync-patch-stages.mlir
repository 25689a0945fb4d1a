// RUN: dync-opt %s --split-input-file --dync-patch-stages | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-patch-stages --dync-fuse-padding --dync-plan-buffers | FileCheck %s --check-prefix=PLAN

// Two stride-2 convolutions read the model's input (3 KiB, read through IREE's NHWC copy):
// the first one's 2 KiB output beside that copy is the function's peak (5632 B planned
// without this pass). The stage's 4 output rows go in 4 strips. Strip 0 reads input rows
// [0, 4) with a zero row above (conv1's padding in H), computes conv1's rows [0, 2), pads them
// with a zero row above and computes output row 0; the others read 7 input rows (overlapping
// by 3) and compute 3 rows of conv1. Each convolution keeps its padding in W only.
// CHECK-LABEL: func.func @main
// CHECK:       %[[S0:.+]] = torch.aten.slice.Tensor %arg0, %{{.+}} -> !torch.vtensor<[1,3,4,16],f32>
// CHECK:       %[[P0:.+]] = torch.aten.constant_pad_nd %[[S0]], {{.+}} -> !torch.vtensor<[1,3,5,16],f32>
// CHECK:       %[[C0:.+]] = torch.aten.conv2d %[[P0]], {{.+}} -> !torch.vtensor<[1,8,2,8],f32>
// CHECK:       %[[R0:.+]] = torch.aten.relu %[[C0]]
// CHECK:       %[[Q0:.+]] = torch.aten.constant_pad_nd %[[R0]], {{.+}} -> !torch.vtensor<[1,8,3,8],f32>
// CHECK:       torch.aten.conv2d %[[Q0]], {{.+}} -> !torch.vtensor<[1,8,1,4],f32>
// CHECK:       torch.aten.permute {{.+}} {dync.cancels} : {{.+}} -> !torch.vtensor<[1,1,4,8],f32>
// CHECK-COUNT-3: torch.aten.slice.Tensor %arg0, {{.+}} -> !torch.vtensor<[1,3,7,16],f32>
// CHECK:       %[[CAT:.+]] = torch.aten.cat %{{.+}} {dync.patches = 4 : i64} : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,4,4,8],f32>
// CHECK:       %[[OUT:.+]] = torch.aten.permute %[[CAT]], %{{.+}} {dync.cancels} : {{.+}} -> !torch.vtensor<[1,8,4,4],f32>
// CHECK:       return %[[OUT]]

// dync-plan-buffers: the pads are read in place (IREE fuses them into the convolutions), the
// strips' last convolutions write into the concatenation (no buffer of their own), the peak
// falls to 2624 B.
// PLAN:     dync.peak = {arena = "2624"
// PLAN-NOT: torch.aten.constant_pad_nd {{.+}} dync.buffer
// PLAN:     torch.aten.conv2d %{{.+}}, %1, %none, %{{.+}}, %{{.+}}, %{{.+}}, %int1 : {{.+}} -> !torch.vtensor<[1,8,1,4],f32>
// PLAN:     torch.aten.cat {{.+}} {dync.buffer = {offset = "{{[0-9]+}}", size = "512"}, dync.patches = 4 : i64}
module attributes {dync.backend = "llvm-cpu", dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]} {
  func.func @main(%arg0: !torch.vtensor<[1,3,16,16],f32>) -> !torch.vtensor<[1,8,4,4],f32> {
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<8x8x3x3xf32>) : !torch.vtensor<[8,8,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w1, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,3,16,16],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[1,8,8,8],f32> -> !torch.vtensor<[1,8,8,8],f32>
    %2 = torch.aten.conv2d %1, %w2, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,8,8,8],f32>, !torch.vtensor<[8,8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,4,4],f32>
    %3 = torch.aten.relu %2 : !torch.vtensor<[1,8,4,4],f32> -> !torch.vtensor<[1,8,4,4],f32>
    return %3 : !torch.vtensor<[1,8,4,4],f32>
  }
}

// -----

// Without dync-channels-last, the strips are concatenated along H in NCHW.
// CHECK-LABEL: func.func @main
// CHECK-NOT:   torch.aten.permute
// CHECK:       torch.aten.cat {{.+}} {dync.patches = 4 : i64} : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,8,4,4],f32>
module attributes {dync.backend = "llvm-cpu"} {
  func.func @main(%arg0: !torch.vtensor<[1,3,16,16],f32>) -> !torch.vtensor<[1,8,4,4],f32> {
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<8x8x3x3xf32>) : !torch.vtensor<[8,8,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w1, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,3,16,16],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[1,8,8,8],f32> -> !torch.vtensor<[1,8,8,8],f32>
    %2 = torch.aten.conv2d %1, %w2, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,8,8,8],f32>, !torch.vtensor<[8,8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,4,4],f32>
    %3 = torch.aten.relu %2 : !torch.vtensor<[1,8,4,4],f32> -> !torch.vtensor<[1,8,4,4],f32>
    return %3 : !torch.vtensor<[1,8,4,4],f32>
  }
}

// -----

// The stage's input is computed in the function (it stays whole while the strips read it):
// unchanged.
// CHECK-LABEL: func.func @main
// CHECK-NOT:   dync.patches
module attributes {dync.backend = "llvm-cpu", dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]} {
  func.func @main(%arg0: !torch.vtensor<[1,3,16,16],f32>) -> !torch.vtensor<[1,8,4,4],f32> {
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<8x8x3x3xf32>) : !torch.vtensor<[8,8,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %r = torch.aten.relu %arg0 : !torch.vtensor<[1,3,16,16],f32> -> !torch.vtensor<[1,3,16,16],f32>
    %0 = torch.aten.conv2d %r, %w1, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,3,16,16],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[1,8,8,8],f32> -> !torch.vtensor<[1,8,8,8],f32>
    %2 = torch.aten.conv2d %1, %w2, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,8,8,8],f32>, !torch.vtensor<[8,8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,4,4],f32>
    %3 = torch.aten.relu %2 : !torch.vtensor<[1,8,4,4],f32> -> !torch.vtensor<[1,8,4,4],f32>
    return %3 : !torch.vtensor<[1,8,4,4],f32>
  }
}

// -----

// The function's peak is elsewhere (a 64 x 64 matmul reads and writes 32 KiB): unchanged.
// CHECK-LABEL: func.func @main
// CHECK-NOT:   dync.patches
module attributes {dync.backend = "llvm-cpu", dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]} {
  func.func @main(%arg0: !torch.vtensor<[1,3,16,16],f32>, %arg1: !torch.vtensor<[64,64],f32>) -> (!torch.vtensor<[1,8,4,4],f32>, !torch.vtensor<[64,64],f32>) {
    %big = torch.aten.mm %arg1, %arg1 : !torch.vtensor<[64,64],f32>, !torch.vtensor<[64,64],f32> -> !torch.vtensor<[64,64],f32>
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<8x8x3x3xf32>) : !torch.vtensor<[8,8,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w1, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,3,16,16],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[1,8,8,8],f32> -> !torch.vtensor<[1,8,8,8],f32>
    %2 = torch.aten.conv2d %1, %w2, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,8,8,8],f32>, !torch.vtensor<[8,8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,4,4],f32>
    %3 = torch.aten.relu %2 : !torch.vtensor<[1,8,4,4],f32> -> !torch.vtensor<[1,8,4,4],f32>
    return %3, %big : !torch.vtensor<[1,8,4,4],f32>, !torch.vtensor<[64,64],f32>
  }
}

// -----

// The same stage over an argument dync-bucket padded to 16 rows (true height h, 9 to 16):
// each strip gathers its rows from the unpadded argument (row and column indices clamped
// into it, zeros past row h and above row 0), so neither the padded argument nor a slice of
// it, dynamically sized, is ever made. Strip 0 gathers rows [-1, 4), the others 7 rows; the
// pad and its barrier go.
// CHECK-LABEL: func.func @main
// CHECK-NOT:   torch.aten.constant_pad_nd %arg0
// CHECK:       %[[H:.+]] = torch.aten.size.int %arg0, %int2
// CHECK:       %[[ROWS0:.+]] = torch.vtensor.literal(dense<{{\[\[\[\[}}-1], [0], [1], [2], [3]]]]> : tensor<1x1x5x1xi64>) : !torch.vtensor<[1,1,5,1],si64>
// CHECK:       %[[LAST:.+]] = torch.aten.sub.int %[[H]], %{{.+}}
// CHECK:       %[[CLAMPED:.+]] = torch.aten.clamp %[[ROWS0]], %{{.+}}, %[[LAST]]
// CHECK:       %[[INDICES:.+]] = torch.prim.ListConstruct %{{.+}}, %{{.+}}, %[[CLAMPED]], %{{.+}} : {{.+}} -> !torch.list<vtensor>
// CHECK:       %[[G0:.+]] = torch.aten.index.Tensor_hacked_twin %arg0, %[[INDICES]] : !torch.vtensor<[1,3,?,16],f32>, !torch.list<vtensor> -> !torch.vtensor<[1,3,5,16],f32>
// CHECK:       %[[BELOW:.+]] = torch.aten.lt.Scalar %[[ROWS0]], %[[H]]
// CHECK:       torch.aten.ge.Scalar %[[ROWS0]]
// CHECK:       %[[S0:.+]] = torch.aten.where.ScalarOther %{{.+}}, %[[G0]], %{{.+}} -> !torch.vtensor<[1,3,5,16],f32>
// CHECK:       torch.aten.conv2d %[[S0]], {{.+}} -> !torch.vtensor<[1,8,2,8],f32>
// CHECK-COUNT-3: torch.aten.index.Tensor_hacked_twin %arg0, {{.+}} -> !torch.vtensor<[1,3,7,16],f32>
// CHECK:       torch.aten.cat %{{.+}} {dync.patches = 4 : i64}
// CHECK-NOT:   util.optimization_barrier
module attributes {dync.backend = "llvm-cpu", dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]} {
  func.func @main(%arg0: !torch.vtensor<[1,3,?,16],f32>, %arg1: !torch.vtensor<[],si64>) -> !torch.vtensor<[1,8,4,4],f32> {
    %0 = torch.symbolic_int "h" {min_val = 9, max_val = 16} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (1, 3, s0, 16)> : !torch.vtensor<[1,3,?,16],f32>
    %h = torch.aten.item %arg1 : !torch.vtensor<[],si64> -> !torch.int
    %int0 = torch.constant.int 0
    %int16 = torch.constant.int 16
    %tail = torch.aten.sub.int %int16, %h : !torch.int, !torch.int -> !torch.int
    %widths = torch.prim.ListConstruct %int0, %int0, %int0, %tail : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %zero = torch.constant.float 0.000000e+00
    %pad = torch.aten.constant_pad_nd %arg0, %widths, %zero : !torch.vtensor<[1,3,?,16],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[1,3,16,16],f32>
    %in = torch_c.to_builtin_tensor %pad : !torch.vtensor<[1,3,16,16],f32> -> tensor<1x3x16x16xf32>
    %barrier = util.optimization_barrier %in : tensor<1x3x16x16xf32>
    %padded = torch_c.from_builtin_tensor %barrier : tensor<1x3x16x16xf32> -> !torch.vtensor<[1,3,16,16],f32>
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<8x8x3x3xf32>) : !torch.vtensor<[8,8,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %1 = torch.aten.conv2d %padded, %w1, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,3,16,16],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    %2 = torch.aten.relu %1 : !torch.vtensor<[1,8,8,8],f32> -> !torch.vtensor<[1,8,8,8],f32>
    %3 = torch.aten.conv2d %2, %w2, %none, %twos, %ones, %ones, %int1 : !torch.vtensor<[1,8,8,8],f32>, !torch.vtensor<[8,8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,4,4],f32>
    %4 = torch.aten.relu %3 : !torch.vtensor<[1,8,4,4],f32> -> !torch.vtensor<[1,8,4,4],f32>
    return %4 : !torch.vtensor<[1,8,4,4],f32>
  }
}
