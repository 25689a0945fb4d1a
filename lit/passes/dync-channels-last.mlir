// RUN: dync-opt %s --split-input-file --dync-channels-last | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-channels-last --dync-channels-last | FileCheck %s

// A 2-D convolution: the module asks IREE for NHWC convolutions (once, however often the pass
// runs), and the global average pool after it becomes a mean over H and W with keepdim.
// CHECK:       module attributes {dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]
// CHECK-LABEL: func.func @conv_then_global_pool
// CHECK:         %[[C:[0-9]+]] = torch.aten.conv2d %arg0
// CHECK:         %[[H:.+]] = torch.constant.int 2
// CHECK:         %[[W:.+]] = torch.constant.int 3
// CHECK:         %[[DIMS:[0-9]+]] = torch.prim.ListConstruct %[[H]], %[[W]]
// CHECK:         %[[KEEP:.+]] = torch.constant.bool true
// CHECK:         %[[M:[0-9]+]] = torch.aten.mean.dim %[[C]], %[[DIMS]], %[[KEEP]], %{{.+}} : !torch.vtensor<[?,8,16,16],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,8,1,1],f32>
// CHECK-NOT:     adaptive_avg_pool2d
// CHECK:         return %[[M]]
module attributes {dync.symbols = {batch = {max = 8 : i64, min = 1 : i64}}} {
  func.func @conv_then_global_pool(%arg0: !torch.vtensor<[?,3,16,16],f32> {dync.shape = ["batch", 3, 16, 16]}) -> (!torch.vtensor<[?,8,1,1],f32> {dync.shape = ["batch", 8, 1, 1]}) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,3,16,16],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,16,16],f32>
    %1 = torch.aten.adaptive_avg_pool2d %0, %ones : !torch.vtensor<[?,8,16,16],f32>, !torch.list<int> -> !torch.vtensor<[?,8,1,1],f32>
    return %1 : !torch.vtensor<[?,8,1,1],f32>
  }
}

// -----

// No convolution: nothing is asked of IREE. A pool from 8x8 to 2x2 averages 4x4 windows and
// becomes avg_pool2d with that kernel and stride; one from 7x7 to 2x2 (uneven windows) stays.
// CHECK-NOT:   dync.iree_preprocessing
// CHECK-LABEL: func.func @pool_only
// CHECK-COUNT-4: torch.constant.int 4
// CHECK-COUNT-2: torch.constant.int 0
// CHECK:         torch.aten.avg_pool2d %arg0, %{{.+}}, %{{.+}}, %{{.+}}, %false, %true, %{{.+}} : {{.*}} -> !torch.vtensor<[1,4,2,2],f32>
// CHECK:         torch.aten.adaptive_avg_pool2d %arg1
// CHECK-NOT:     torch.aten.mean.dim
module attributes {dync.symbols = {}} {
  func.func @pool_only(%arg0: !torch.vtensor<[1,4,8,8],f32> {dync.shape = [1, 4, 8, 8]}, %arg1: !torch.vtensor<[1,4,7,7],f32> {dync.shape = [1, 4, 7, 7]}) -> (!torch.vtensor<[1,4,2,2],f32> {dync.shape = [1, 4, 2, 2]}, !torch.vtensor<[1,4,2,2],f32> {dync.shape = [1, 4, 2, 2]}) attributes {dync.entry} {
    %int2 = torch.constant.int 2
    %size = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.adaptive_avg_pool2d %arg0, %size : !torch.vtensor<[1,4,8,8],f32>, !torch.list<int> -> !torch.vtensor<[1,4,2,2],f32>
    %1 = torch.aten.adaptive_avg_pool2d %arg1, %size : !torch.vtensor<[1,4,7,7],f32>, !torch.list<int> -> !torch.vtensor<[1,4,2,2],f32>
    return %0, %1 : !torch.vtensor<[1,4,2,2],f32>, !torch.vtensor<[1,4,2,2],f32>
  }
}

// -----

// Preprocessing another pass already asked for is kept, in order, before this one.
// CHECK:       module attributes {dync.iree_preprocessing = ["some-earlier-pass", "iree-preprocessing-convert-conv-to-channels-last"]
// CHECK-LABEL: func.func @keeps_earlier_requests
module attributes {dync.iree_preprocessing = ["some-earlier-pass"], dync.symbols = {}} {
  func.func @keeps_earlier_requests(%arg0: !torch.vtensor<[1,3,8,8],f32> {dync.shape = [1, 3, 8, 8]}) -> (!torch.vtensor<[1,2,8,8],f32> {dync.shape = [1, 2, 8, 8]}) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<1.0> : tensor<2x3x1x1xf32>) : !torch.vtensor<[2,3,1,1],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[2,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,8,8],f32>
    return %0 : !torch.vtensor<[1,2,8,8],f32>
  }
}

// -----

// Control flow: NHWC is asked for too, and the filter of the convolution in the branch is
// stored in HWCF and permuted back to FCHW, next to the convolution, so that IREE's own FCHW -> HWCF transpose cancels
// against the permute instead of staying in the region, out of reach of its constant hoisting.
// The top-level convolution keeps its filter (IREE folds that transpose), and so does the
// depthwise one (IREE does not convert grouped convolutions). The global pool becomes a mean.
// CHECK:       module attributes {dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"]
// CHECK-LABEL: func.func @conv_in_a_branch
// CHECK:         %[[W:.+]] = torch.vtensor.literal(dense<{{\[}}{{\[}}{{\[}}[1.000000e+00]], {{\[}}[2.000000e+00]], {{\[}}[3.000000e+00]]], {{\[}}{{\[}}[4.000000e+00]], {{\[}}[5.000000e+00]], {{\[}}[6.000000e+00]]]]> : tensor<2x3x1x1xf32>)
// CHECK-NEXT:    %[[DW:.+]] = torch.vtensor.literal(dense<2.000000e+00> : tensor<3x1x1x1xf32>)
// CHECK:         torch.aten.conv2d %arg0, %[[W]]
// CHECK:         scf.if
// CHECK-NEXT:      %[[HWCF:.+]] = torch.vtensor.literal(dense<{{\[}}{{\[}}{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]]]> : tensor<1x1x3x2xf32>) : !torch.vtensor<[1,1,3,2],f32>
// CHECK-NEXT:      torch.constant.int 3
// CHECK-NEXT:      torch.constant.int 2
// CHECK-NEXT:      torch.constant.int 0
// CHECK-NEXT:      torch.constant.int 1
// CHECK-NEXT:      %[[PERM:.+]] = torch.prim.ListConstruct
// CHECK-NEXT:      %[[FCHW:.+]] = torch.aten.permute %[[HWCF]], %[[PERM]] : !torch.vtensor<[1,1,3,2],f32>, !torch.list<int> -> !torch.vtensor<[2,3,1,1],f32>
// CHECK-NEXT:      torch.aten.conv2d %arg0, %[[FCHW]]
// CHECK-NEXT:      torch.aten.conv2d %arg0, %[[DW]]
// CHECK:         torch.aten.mean.dim
module attributes {dync.symbols = {}} {
  func.func @conv_in_a_branch(%arg0: !torch.vtensor<[1,3,8,8],f32> {dync.shape = [1, 3, 8, 8]}, %arg1: i1) -> (!torch.vtensor<[1,2,1,1],f32> {dync.shape = [1, 2, 1, 1]}, !torch.vtensor<[1,3,8,8],f32> {dync.shape = [1, 3, 8, 8]}) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<[[[[1.0]], [[2.0]], [[3.0]]], [[[4.0]], [[5.0]], [[6.0]]]]> : tensor<2x3x1x1xf32>) : !torch.vtensor<[2,3,1,1],f32>
    %dw = torch.vtensor.literal(dense<2.0> : tensor<3x1x1x1xf32>) : !torch.vtensor<[3,1,1,1],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int3 = torch.constant.int 3
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %top = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[2,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,8,8],f32>
    %x = torch_c.to_builtin_tensor %top : !torch.vtensor<[1,2,8,8],f32> -> tensor<1x2x8x8xf32>
    %y = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,3,8,8],f32> -> tensor<1x3x8x8xf32>
    %0:2 = scf.if %arg1 -> (tensor<1x2x8x8xf32>, tensor<1x3x8x8xf32>) {
      %c = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[2,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,2,8,8],f32>
      %d = torch.aten.conv2d %arg0, %dw, %none, %ones, %zeros, %ones, %int3 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[3,1,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,3,8,8],f32>
      %t = torch_c.to_builtin_tensor %c : !torch.vtensor<[1,2,8,8],f32> -> tensor<1x2x8x8xf32>
      %u = torch_c.to_builtin_tensor %d : !torch.vtensor<[1,3,8,8],f32> -> tensor<1x3x8x8xf32>
      scf.yield %t, %u : tensor<1x2x8x8xf32>, tensor<1x3x8x8xf32>
    } else {
      scf.yield %x, %y : tensor<1x2x8x8xf32>, tensor<1x3x8x8xf32>
    }
    %1 = torch_c.from_builtin_tensor %0#0 : tensor<1x2x8x8xf32> -> !torch.vtensor<[1,2,8,8],f32>
    %2 = torch.aten.adaptive_avg_pool2d %1, %ones : !torch.vtensor<[1,2,8,8],f32>, !torch.list<int> -> !torch.vtensor<[1,2,1,1],f32>
    %3 = torch_c.from_builtin_tensor %0#1 : tensor<1x3x8x8xf32> -> !torch.vtensor<[1,3,8,8],f32>
    return %2, %3 : !torch.vtensor<[1,2,1,1],f32>, !torch.vtensor<[1,3,8,8],f32>
  }
}

// -----

// A filter under control flow that is not a literal (here an argument, as torch.cond's branch
// functions get their weights when dync-split-subdnns has not run): dync cannot store it in
// HWCF, IREE's filter transpose would stay in the branch, so the module stays in NCHW.
// CHECK-NOT:   dync.iree_preprocessing
// CHECK-LABEL: func.func @filter_argument
// CHECK:         torch.aten.conv2d %arg0, %arg2
module attributes {dync.symbols = {}} {
  func.func @filter_argument(%arg0: !torch.vtensor<[1,3,8,8],f32> {dync.shape = [1, 3, 8, 8]}, %arg1: i1, %arg2: !torch.vtensor<[3,3,1,1],f32> {dync.shape = [3, 3, 1, 1]}) -> (!torch.vtensor<[1,3,8,8],f32> {dync.shape = [1, 3, 8, 8]}) attributes {dync.entry} {
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,3,8,8],f32> -> tensor<1x3x8x8xf32>
    %0 = scf.if %arg1 -> (tensor<1x3x8x8xf32>) {
      %c = torch.aten.conv2d %arg0, %arg2, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[3,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,3,8,8],f32>
      %t = torch_c.to_builtin_tensor %c : !torch.vtensor<[1,3,8,8],f32> -> tensor<1x3x8x8xf32>
      scf.yield %t : tensor<1x3x8x8xf32>
    } else {
      scf.yield %x : tensor<1x3x8x8xf32>
    }
    %1 = torch_c.from_builtin_tensor %0 : tensor<1x3x8x8xf32> -> !torch.vtensor<[1,3,8,8],f32>
    return %1 : !torch.vtensor<[1,3,8,8],f32>
  }
}

// -----

// A padded max pool after a convolution over a dynamic batch pads its input itself, with
// -inf, in NHWC between permutes, and pools unpadded; over a static batch, or without
// padding, it is kept.
// CHECK-LABEL: func.func @padded_max_pool
// CHECK:         %[[C:.+]] = torch.aten.conv2d %arg0
// CHECK:         %[[NHWC:.+]] = torch.aten.permute %[[C]], {{.*}} -> !torch.vtensor<[?,16,16,8],f32>
// CHECK:         %[[PADS:.+]] = torch.prim.ListConstruct %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}} :
// CHECK:         %[[NEG:float-Inf(_[0-9]+)?]] = torch.constant.float 0xFFF0000000000000
// CHECK:         %[[PADDED:.+]] = torch.aten.constant_pad_nd %[[NHWC]], %[[PADS]], %[[NEG]] : {{.*}} -> !torch.vtensor<[?,18,18,8],f32>
// CHECK:         %[[NCHW:.+]] = torch.aten.permute %[[PADDED]], {{.*}} -> !torch.vtensor<[?,8,18,18],f32>
// CHECK:         %[[NONE:.+]] = torch.prim.ListConstruct %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}} :
// CHECK:         torch.aten.max_pool2d %[[NCHW]], %{{.+}}, %{{.+}}, %[[NONE]], %{{.+}}, %false : !torch.vtensor<[?,8,18,18],f32>
// CHECK:         torch.aten.max_pool2d %arg1, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %false : !torch.vtensor<[2,8,16,16],f32>
// CHECK-NOT:     torch.aten.constant_pad_nd
func.func @padded_max_pool(%arg0: !torch.vtensor<[?,3,16,16],f32>, %arg1: !torch.vtensor<[2,8,16,16],f32>) -> (!torch.vtensor<[?,8,8,8],f32>, !torch.vtensor<[2,8,8,8],f32>) {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x3x1x1xf32>) : !torch.vtensor<[8,3,1,1],f32>
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %threes = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,3,16,16],f32>, !torch.vtensor<[8,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,16,16],f32>
  %1 = torch.aten.max_pool2d %0, %threes, %twos, %ones, %ones, %false : !torch.vtensor<[?,8,16,16],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,8,8,8],f32>
  %2 = torch.aten.max_pool2d %arg1, %threes, %twos, %ones, %ones, %false : !torch.vtensor<[2,8,16,16],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,8,8,8],f32>
  return %1, %2 : !torch.vtensor<[?,8,8,8],f32>, !torch.vtensor<[2,8,8,8],f32>
}

// -----

// A ceil-mode max pool (kernel 2, stride 2) over a dynamic H x W: padded with -inf by
// stride - 1 at the right and bottom, in NHWC, then pooled in floor mode; a ceil-mode pool
// whose last window could start past the input (kernel 1, stride 2) is kept.
// CHECK-LABEL: func.func @ceil_mode_max_pool
// CHECK:         %[[C:.+]] = torch.aten.conv2d %arg0
// CHECK:         %[[NHWC:.+]] = torch.aten.permute %[[C]], {{.*}} -> !torch.vtensor<[1,?,?,8],f32>
// CHECK:         %[[PADS:.+]] = torch.prim.ListConstruct %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}} :
// CHECK:         %[[PADDED:.+]] = torch.aten.constant_pad_nd %[[NHWC]], %[[PADS]], %{{.+}} : {{.*}} -> !torch.vtensor<[1,?,?,8],f32>
// CHECK:         %[[NCHW:.+]] = torch.aten.permute %[[PADDED]], {{.*}} -> !torch.vtensor<[1,8,?,?],f32>
// CHECK:         %[[FLOOR:.+]] = torch.constant.bool false
// CHECK:         torch.aten.max_pool2d %[[NCHW]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[FLOOR]] :
// CHECK:         torch.aten.max_pool2d %[[C]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %true :
func.func @ceil_mode_max_pool(%arg0: !torch.vtensor<[1,3,?,?],f32>) -> (!torch.vtensor<[1,8,?,?],f32>, !torch.vtensor<[1,8,?,?],f32>) {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x3x1x1xf32>) : !torch.vtensor<[8,3,1,1],f32>
  %none = torch.constant.none
  %true = torch.constant.bool true
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,3,?,?],f32>, !torch.vtensor<[8,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,?,?],f32>
  %1 = torch.aten.max_pool2d %0, %twos, %twos, %zeros, %ones, %true : !torch.vtensor<[1,8,?,?],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,?,?],f32>
  %2 = torch.aten.max_pool2d %0, %ones, %twos, %zeros, %ones, %true : !torch.vtensor<[1,8,?,?],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,?,?],f32>
  return %1, %2 : !torch.vtensor<[1,8,?,?],f32>, !torch.vtensor<[1,8,?,?],f32>
}

// -----

// An explicit zero pad of H and W after a convolution over a dynamic batch is done in NHWC
// between permutes too; a pad of a static tensor is kept.
// CHECK-LABEL: func.func @zero_pad
// CHECK:         %[[C:.+]] = torch.aten.conv2d %arg0
// CHECK:         %[[NHWC:.+]] = torch.aten.permute %[[C]], {{.*}} -> !torch.vtensor<[?,16,16,8],f32>
// CHECK:         %[[PADS:.+]] = torch.prim.ListConstruct %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}}, %int3{{(_[0-9]+)?}}, %int4{{(_[0-9]+)?}} :
// CHECK:         %[[PADDED:.+]] = torch.aten.constant_pad_nd %[[NHWC]], %[[PADS]], %{{.+}} : {{.*}} -> !torch.vtensor<[?,23,19,8],f32>
// CHECK:         %[[NCHW:.+]] = torch.aten.permute %[[PADDED]], {{.*}} -> !torch.vtensor<[?,8,23,19],f32>
// CHECK:         torch.aten.constant_pad_nd %arg1, {{.*}} -> !torch.vtensor<[2,8,23,19],f32>
// CHECK:         return %[[NCHW]]
func.func @zero_pad(%arg0: !torch.vtensor<[?,3,16,16],f32>, %arg1: !torch.vtensor<[2,8,16,16],f32>) -> (!torch.vtensor<[?,8,23,19],f32>, !torch.vtensor<[2,8,23,19],f32>) {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x3x1x1xf32>) : !torch.vtensor<[8,3,1,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %zero = torch.constant.float 0.000000e+00
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %widths = torch.prim.ListConstruct %int1, %int2, %int3, %int4 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,3,16,16],f32>, !torch.vtensor<[8,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,16,16],f32>
  %1 = torch.aten.constant_pad_nd %0, %widths, %zero : !torch.vtensor<[?,8,16,16],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[?,8,23,19],f32>
  %2 = torch.aten.constant_pad_nd %arg1, %widths, %zero : !torch.vtensor<[2,8,16,16],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[2,8,23,19],f32>
  return %1, %2 : !torch.vtensor<[?,8,23,19],f32>, !torch.vtensor<[2,8,23,19],f32>
}
