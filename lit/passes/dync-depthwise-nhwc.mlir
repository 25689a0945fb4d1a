// RUN: dync-opt %s --split-input-file --dync-depthwise-nhwc | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-depthwise-nhwc | FileCheck %s --check-prefix=BIND

// A depthwise convolution (groups = channels = 4) with a 1x3 window, stride [2, 1], padding
// [0, 1] and a bias, over a dynamic batch: the input permuted to NHWC and padded there, the
// filter stored kh x kw x C, linalg's NHWC depthwise convolution into a zero-filled tensor
// sized from the input's batch, back to NCHW, the bias added per channel. The new torch
// tensors' shapes are bound from the input's and the result's.
// CHECK-LABEL: func.func @depthwise
// CHECK:         %[[P:.+]] = torch.aten.permute %arg0, %{{.+}} : !torch.vtensor<[?,4,9,8],f32>, !torch.list<int> -> !torch.vtensor<[?,9,8,4],f32>
// CHECK:         %[[PAD:.+]] = torch.aten.constant_pad_nd %[[P]], %{{.+}}, %{{.+}} : {{.*}} -> !torch.vtensor<[?,9,10,4],f32>
// CHECK:         %[[W:.+]] = torch.vtensor.literal(dense<{{\[\[\[}}1.000000e+00, 4.000000e+00, 7.000000e+00, 1.000000e+01], [2.000000e+00, {{.*}} : tensor<1x3x4xf32>)
// CHECK:         %[[XB:.+]] = torch_c.to_builtin_tensor %[[PAD]] : !torch.vtensor<[?,9,10,4],f32> -> tensor<?x9x10x4xf32>
// CHECK:         %[[WB:.+]] = torch_c.to_builtin_tensor %[[W]]
// CHECK:         %[[N:.+]] = tensor.dim %[[XB]], %{{.+}} : tensor<?x9x10x4xf32>
// CHECK:         %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?x5x8x4xf32>
// CHECK:         %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<?x5x8x4xf32>)
// CHECK:         %[[Y:.+]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[XB]], %[[WB]] : tensor<?x9x10x4xf32>, tensor<1x3x4xf32>) outs(%[[Z]] : tensor<?x5x8x4xf32>)
// CHECK:         %[[YT:.+]] = torch_c.from_builtin_tensor %[[Y]] : tensor<?x5x8x4xf32> -> !torch.vtensor<[?,5,8,4],f32>
// CHECK:         %[[BACK:.+]] = torch.aten.permute %[[YT]], %{{.+}} -> !torch.vtensor<[?,4,5,8],f32>
// CHECK:         %[[B:.+]] = torch.aten.view %{{.+}}, %{{.+}} : !torch.vtensor<[4],f32>, !torch.list<int> -> !torch.vtensor<[4,1,1],f32>
// CHECK:         %[[SUM:.+]] = torch.aten.add.Tensor %[[BACK]], %[[B]], %{{.+}} -> !torch.vtensor<[?,4,5,8],f32>
// CHECK-NOT:     torch.aten.conv2d
// CHECK:         return %[[SUM]]
// BIND-LABEL:  func.func @depthwise
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 9, 8, 4)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 9, 10, 4)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 5, 8, 4)>
// BIND-DAG:      torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (s0, 4, 5, 8)>
func.func @depthwise(%arg0: !torch.vtensor<[?,4,9,8],f32>) -> !torch.vtensor<[?,4,5,8],f32> {
  %s = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (s0, 4, 9, 8)> : !torch.vtensor<[?,4,9,8],f32>
  %w = torch.vtensor.literal(dense<[[[[1.0, 2.0, 3.0]]], [[[4.0, 5.0, 6.0]]], [[[7.0, 8.0, 9.0]]], [[[10.0, 11.0, 12.0]]]]> : tensor<4x1x1x3xf32>) : !torch.vtensor<[4,1,1,3],f32>
  %bias = torch.vtensor.literal(dense<[0.5, 1.5, 2.5, 3.5]> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %stride = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %padding = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %dilation = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %bias, %stride, %padding, %dilation, %int4 : !torch.vtensor<[?,4,9,8],f32>, !torch.vtensor<[4,1,1,3],f32>, !torch.vtensor<[4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,4,5,8],f32>
  torch.bind_symbolic_shape %0, [%s], affine_map<()[s0] -> (s0, 4, 5, 8)> : !torch.vtensor<[?,4,5,8],f32>
  return %0 : !torch.vtensor<[?,4,5,8],f32>
}

// -----

// A channel multiplier of 2 (4 filters over 2 channels), no bias, no padding, a dilation of
// 2, over a dynamic H x W: the filter kh x kw x C x M, linalg's HWCM convolution, its C x M
// channels collapsed into C*M; the output's H and W computed from the input's.
// CHECK-LABEL: func.func @multiplier
// CHECK-NOT:     torch.aten.constant_pad_nd
// CHECK:         torch.vtensor.literal({{.*}} : tensor<3x3x2x2xf32>)
// CHECK:         %[[H:.+]] = tensor.dim %{{.+}}, %c1 : tensor<1x?x?x2xf32>
// CHECK:         %[[HS:.+]] = arith.subi %[[H]], %c5
// CHECK:         %[[HD:.+]] = arith.divui %[[HS]], %c1
// CHECK:         %[[HO:.+]] = arith.addi %[[HD]], %c1
// CHECK:         tensor.dim %{{.+}}, %c2 : tensor<1x?x?x2xf32>
// CHECK:         tensor.empty(%[[HO]], %{{.+}}) : tensor<1x?x?x2x2xf32>
// CHECK:         %[[Y:.+]] = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK:         %[[C:.+]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x?x?x2x2xf32> into tensor<1x?x?x4xf32>
// CHECK:         torch_c.from_builtin_tensor %[[C]] : tensor<1x?x?x4xf32> -> !torch.vtensor<[1,?,?,4],f32>
// CHECK-NOT:     torch.aten.add.Tensor
func.func @multiplier(%arg0: !torch.vtensor<[1,2,?,?],f32>) -> !torch.vtensor<[1,4,?,?],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<4x1x3x3xf32>) : !torch.vtensor<[4,1,3,3],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %twos, %int2 : !torch.vtensor<[1,2,?,?],f32>, !torch.vtensor<[4,1,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,?,?],f32>
  return %0 : !torch.vtensor<[1,4,?,?],f32>
}

// -----

// Left alone: a convolution of one group, a grouped one that is not depthwise (2 groups
// over 4 channels), and a depthwise one whose filter is an argument.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: torch.aten.conv2d
// CHECK-NOT:     linalg.depthwise
func.func @left_alone(%arg0: !torch.vtensor<[1,4,8,8],f32>, %arg1: !torch.vtensor<[4,1,3,3],f32>) -> (!torch.vtensor<[1,4,6,6],f32>, !torch.vtensor<[1,4,6,6],f32>, !torch.vtensor<[1,4,6,6],f32>) {
  %w1 = torch.vtensor.literal(dense<0.5> : tensor<4x4x3x3xf32>) : !torch.vtensor<[4,4,3,3],f32>
  %w2 = torch.vtensor.literal(dense<0.5> : tensor<4x2x3x3xf32>) : !torch.vtensor<[4,2,3,3],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w1, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,4,8,8],f32>, !torch.vtensor<[4,4,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,6,6],f32>
  %1 = torch.aten.conv2d %arg0, %w2, %none, %ones, %zeros, %ones, %int2 : !torch.vtensor<[1,4,8,8],f32>, !torch.vtensor<[4,2,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,6,6],f32>
  %2 = torch.aten.conv2d %arg0, %arg1, %none, %ones, %zeros, %ones, %int4 : !torch.vtensor<[1,4,8,8],f32>, !torch.vtensor<[4,1,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,6,6],f32>
  return %0, %1, %2 : !torch.vtensor<[1,4,6,6],f32>, !torch.vtensor<[1,4,6,6],f32>, !torch.vtensor<[1,4,6,6],f32>
}

// -----

// A 3x3 depthwise convolution of an odd output width (7) on AVX2: its tile sizes are set,
// seven columns (the width's largest divisor up to 7) times 8 channels (AVX2's f32 lanes) a
// vector, where IREE took two columns and left one over in each row. At an even width (8)
// IREE's own choice stands.
// CHECK-DAG:   #[[CONFIG:.+]] = #iree_cpu.lowering_config<distribution = [64, 7, 7, 16, 0, 0], vector_common_parallel = [1, 1, 7, 8, 0, 0], vector_reduction = [0, 0, 0, 0, 1, 3]>
// CHECK-DAG:   #[[PIPELINE:.+]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<ConvTileAndDecomposeExpert>>
// CHECK-DAG:   #[[TILES:.+]] = #iree_codegen.compilation_info<lowering_config = #[[CONFIG]], translation_info = #[[PIPELINE]]>
// CHECK-LABEL: func.func @odd_width
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwc {compilation_info = #[[TILES]], {{.*}} -> tensor<?x7x7x16xf32>
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwc {dilations = {{.*}} -> tensor<?x8x8x16xf32>
module attributes {dync.vector_isa = "avx2"} {
  func.func @odd_width(%x: !torch.vtensor<[?,16,7,7],f32>, %y: !torch.vtensor<[?,16,8,8],f32>) -> (!torch.vtensor<[?,16,7,7],f32>, !torch.vtensor<[?,16,8,8],f32>) {
    %w = torch.vtensor.literal(dense<0.5> : tensor<16x1x3x3xf32>) : !torch.vtensor<[16,1,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int16 = torch.constant.int 16
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %x, %w, %none, %ones, %ones, %ones, %int16 : !torch.vtensor<[?,16,7,7],f32>, !torch.vtensor<[16,1,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,16,7,7],f32>
    %1 = torch.aten.conv2d %y, %w, %none, %ones, %ones, %ones, %int16 : !torch.vtensor<[?,16,8,8],f32>, !torch.vtensor<[16,1,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,16,8,8],f32>
    return %0, %1 : !torch.vtensor<[?,16,7,7],f32>, !torch.vtensor<[?,16,8,8],f32>
  }
}

// -----

// The same odd width where the module names no vector extension (or one dync has not
// measured, NEON): no tile sizes.
// CHECK-LABEL: func.func @odd_width_no_isa
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-NOT:     compilation_info
module {
  func.func @odd_width_no_isa(%x: !torch.vtensor<[?,16,7,7],f32>) -> !torch.vtensor<[?,16,7,7],f32> {
    %w = torch.vtensor.literal(dense<0.5> : tensor<16x1x3x3xf32>) : !torch.vtensor<[16,1,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int16 = torch.constant.int 16
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %x, %w, %none, %ones, %ones, %ones, %int16 : !torch.vtensor<[?,16,7,7],f32>, !torch.vtensor<[16,1,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,16,7,7],f32>
    return %0 : !torch.vtensor<[?,16,7,7],f32>
  }
}
