// RUN: dync-opt %s --split-input-file --dync-fuse | FileCheck %s

// Attention over a dynamic sequence: q·kᵀ / 4, softmax, ·v becomes one SDPA. q, k and v have
// the same batch dims, q and k the same head dim (16) and k and v the same sequence dim (`s`,
// RDP's binding): all proved. 1/4 is SDPA's default scale 1/sqrt(16), so no scale is given.
// The transpose of k, the scores and the probabilities are gone, and so are their bindings.
// CHECK-LABEL: func.func @attention
// CHECK:         %[[DROP:.+]] = torch.constant.float 0.000000e+00
// CHECK:         %[[A:[0-9a-z_]+]] = torch.aten.scaled_dot_product_attention %arg0, %arg1, %arg2, %[[NONE:[0-9a-z_]+]], %[[DROP]], %[[FALSE:[0-9a-z_]+]], %[[NONE]], %[[FALSE]] : {{.*}} -> !torch.vtensor<[2,?,16],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[A]], [%{{.+}}], affine_map<()[s0] -> (2, s0, 16)>
// CHECK-NOT:     torch.aten.transpose.int
// CHECK-NOT:     torch.aten.softmax.int
// CHECK-NOT:     torch.aten.matmul
// CHECK:         return %[[A]]
module attributes {dync.symbols = {s = {max = 64 : i64, min = 2 : i64}}} {
  func.func @attention(%arg0: !torch.vtensor<[2,?,16],f32>, %arg1: !torch.vtensor<[2,?,16],f32>, %arg2: !torch.vtensor<[2,?,16],f32>) -> !torch.vtensor<[2,?,16],f32> attributes {dync.entry} {
    %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    torch.bind_symbolic_shape %arg1, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    torch.bind_symbolic_shape %arg2, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    %int-1 = torch.constant.int -1
    %int-2 = torch.constant.int -2
    %0 = torch.aten.transpose.int %arg1, %int-1, %int-2 : !torch.vtensor<[2,?,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,16,?],f32>
    torch.bind_symbolic_shape %0, [%s], affine_map<()[s0] -> (2, 16, s0)> : !torch.vtensor<[2,16,?],f32>
    %1 = torch.aten.matmul %arg0, %0 : !torch.vtensor<[2,?,16],f32>, !torch.vtensor<[2,16,?],f32> -> !torch.vtensor<[2,?,?],f32>
    torch.bind_symbolic_shape %1, [%s], affine_map<()[s0] -> (2, s0, s0)> : !torch.vtensor<[2,?,?],f32>
    %float4 = torch.constant.float 4.000000e+00
    %2 = torch.aten.div.Scalar %1, %float4 : !torch.vtensor<[2,?,?],f32>, !torch.float -> !torch.vtensor<[2,?,?],f32>
    torch.bind_symbolic_shape %2, [%s], affine_map<()[s0] -> (2, s0, s0)> : !torch.vtensor<[2,?,?],f32>
    %none = torch.constant.none
    %3 = torch.aten.softmax.int %2, %int-1, %none : !torch.vtensor<[2,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[2,?,?],f32>
    torch.bind_symbolic_shape %3, [%s], affine_map<()[s0] -> (2, s0, s0)> : !torch.vtensor<[2,?,?],f32>
    %4 = torch.aten.matmul %3, %arg2 : !torch.vtensor<[2,?,?],f32>, !torch.vtensor<[2,?,16],f32> -> !torch.vtensor<[2,?,16],f32>
    torch.bind_symbolic_shape %4, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    return %4 : !torch.vtensor<[2,?,16],f32>
  }
}

// -----

// The same chain compiled for CUDA stays as it is: IREE 3.13's CUDA attention kernel returns NaN
// (measured on an H100), the unfused chain is exact.
// CHECK-LABEL: func.func @attention_on_cuda
// CHECK-NOT:     torch.aten.scaled_dot_product_attention
// CHECK:         torch.aten.softmax.int
// CHECK:         torch.aten.matmul
module attributes {dync.backend = "cuda", dync.symbols = {s = {max = 64 : i64, min = 2 : i64}}} {
  func.func @attention_on_cuda(%arg0: !torch.vtensor<[2,?,16],f32>, %arg1: !torch.vtensor<[2,?,16],f32>, %arg2: !torch.vtensor<[2,?,16],f32>) -> !torch.vtensor<[2,?,16],f32> attributes {dync.entry} {
    %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    torch.bind_symbolic_shape %arg1, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    torch.bind_symbolic_shape %arg2, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    %int-1 = torch.constant.int -1
    %int-2 = torch.constant.int -2
    %0 = torch.aten.transpose.int %arg1, %int-1, %int-2 : !torch.vtensor<[2,?,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,16,?],f32>
    torch.bind_symbolic_shape %0, [%s], affine_map<()[s0] -> (2, 16, s0)> : !torch.vtensor<[2,16,?],f32>
    %1 = torch.aten.matmul %arg0, %0 : !torch.vtensor<[2,?,16],f32>, !torch.vtensor<[2,16,?],f32> -> !torch.vtensor<[2,?,?],f32>
    torch.bind_symbolic_shape %1, [%s], affine_map<()[s0] -> (2, s0, s0)> : !torch.vtensor<[2,?,?],f32>
    %float4 = torch.constant.float 4.000000e+00
    %2 = torch.aten.div.Scalar %1, %float4 : !torch.vtensor<[2,?,?],f32>, !torch.float -> !torch.vtensor<[2,?,?],f32>
    torch.bind_symbolic_shape %2, [%s], affine_map<()[s0] -> (2, s0, s0)> : !torch.vtensor<[2,?,?],f32>
    %none = torch.constant.none
    %3 = torch.aten.softmax.int %2, %int-1, %none : !torch.vtensor<[2,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[2,?,?],f32>
    torch.bind_symbolic_shape %3, [%s], affine_map<()[s0] -> (2, s0, s0)> : !torch.vtensor<[2,?,?],f32>
    %4 = torch.aten.matmul %3, %arg2 : !torch.vtensor<[2,?,?],f32>, !torch.vtensor<[2,?,16],f32> -> !torch.vtensor<[2,?,16],f32>
    torch.bind_symbolic_shape %4, [%s], affine_map<()[s0] -> (2, s0, 16)> : !torch.vtensor<[2,?,16],f32>
    return %4 : !torch.vtensor<[2,?,16],f32>
  }
}

// -----

// Cross-attention with another scale: queries over `t`, keys and values over `s`. The scale
// 0.5 is not 1/sqrt(8), so SDPA gets it.
// CHECK-LABEL: func.func @cross_attention_with_scale
// CHECK:         torch.aten.scaled_dot_product_attention %arg0, %arg1, %arg2, %{{.+}}, %{{.+}}, %{{.+}}, %float5.000000e-01{{[_0-9]*}}, %{{.+}} : {{.*}} -> !torch.vtensor<[1,?,8],f32>
// CHECK-NOT:     torch.aten.softmax.int
module attributes {dync.symbols = {s = {max = 64 : i64, min = 2 : i64}, t = {max = 64 : i64, min = 2 : i64}}} {
  func.func @cross_attention_with_scale(%arg0: !torch.vtensor<[1,?,8],f32>, %arg1: !torch.vtensor<[1,?,8],f32>, %arg2: !torch.vtensor<[1,?,8],f32>) -> !torch.vtensor<[1,?,8],f32> attributes {dync.entry} {
    %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%t], affine_map<()[s0] -> (1, s0, 8)> : !torch.vtensor<[1,?,8],f32>
    torch.bind_symbolic_shape %arg1, [%s], affine_map<()[s0] -> (1, s0, 8)> : !torch.vtensor<[1,?,8],f32>
    torch.bind_symbolic_shape %arg2, [%s], affine_map<()[s0] -> (1, s0, 8)> : !torch.vtensor<[1,?,8],f32>
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %0 = torch.aten.transpose.int %arg1, %int1, %int2 : !torch.vtensor<[1,?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,8,?],f32>
    %1 = torch.aten.matmul %arg0, %0 : !torch.vtensor<[1,?,8],f32>, !torch.vtensor<[1,8,?],f32> -> !torch.vtensor<[1,?,?],f32>
    %half = torch.constant.float 5.000000e-01
    %2 = torch.aten.mul.Scalar %1, %half : !torch.vtensor<[1,?,?],f32>, !torch.float -> !torch.vtensor<[1,?,?],f32>
    %int-1 = torch.constant.int -1
    %none = torch.constant.none
    %3 = torch.aten.softmax.int %2, %int-1, %none : !torch.vtensor<[1,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,?,?],f32>
    %4 = torch.aten.matmul %3, %arg2 : !torch.vtensor<[1,?,?],f32>, !torch.vtensor<[1,?,8],f32> -> !torch.vtensor<[1,?,8],f32>
    return %4 : !torch.vtensor<[1,?,8],f32>
  }
}

// -----

// Not fused: the values run over `u`, the keys over `s`; nothing proves them equal (SDPA
// would assume it). Nor when the probabilities are also returned.
// CHECK-LABEL: func.func @unproved_sequence
// CHECK-NOT:     scaled_dot_product_attention
// CHECK:         torch.aten.softmax.int
// CHECK-LABEL: func.func @probabilities_escape
// CHECK-NOT:     scaled_dot_product_attention
// CHECK:         torch.aten.softmax.int
module attributes {dync.symbols = {s = {max = 64 : i64, min = 2 : i64}, u = {max = 64 : i64, min = 2 : i64}}} {
  func.func @unproved_sequence(%arg0: !torch.vtensor<[1,?,8],f32>, %arg1: !torch.vtensor<[1,?,8],f32>, %arg2: !torch.vtensor<[1,?,8],f32>) -> !torch.vtensor<[1,?,8],f32> attributes {dync.entry} {
    %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
    %u = torch.symbolic_int "u" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (1, s0, 8)> : !torch.vtensor<[1,?,8],f32>
    torch.bind_symbolic_shape %arg1, [%s], affine_map<()[s0] -> (1, s0, 8)> : !torch.vtensor<[1,?,8],f32>
    torch.bind_symbolic_shape %arg2, [%u], affine_map<()[s0] -> (1, s0, 8)> : !torch.vtensor<[1,?,8],f32>
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %0 = torch.aten.transpose.int %arg1, %int1, %int2 : !torch.vtensor<[1,?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,8,?],f32>
    %1 = torch.aten.matmul %arg0, %0 : !torch.vtensor<[1,?,8],f32>, !torch.vtensor<[1,8,?],f32> -> !torch.vtensor<[1,?,?],f32>
    %int-1 = torch.constant.int -1
    %none = torch.constant.none
    %2 = torch.aten.softmax.int %1, %int-1, %none : !torch.vtensor<[1,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,?,?],f32>
    %3 = torch.aten.matmul %2, %arg2 : !torch.vtensor<[1,?,?],f32>, !torch.vtensor<[1,?,8],f32> -> !torch.vtensor<[1,?,8],f32>
    return %3 : !torch.vtensor<[1,?,8],f32>
  }
  func.func @probabilities_escape(%arg0: !torch.vtensor<[1,4,8],f32>, %arg1: !torch.vtensor<[1,4,8],f32>, %arg2: !torch.vtensor<[1,4,8],f32>) -> (!torch.vtensor<[1,4,8],f32>, !torch.vtensor<[1,4,4],f32>) {
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %0 = torch.aten.transpose.int %arg1, %int1, %int2 : !torch.vtensor<[1,4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,8,4],f32>
    %1 = torch.aten.matmul %arg0, %0 : !torch.vtensor<[1,4,8],f32>, !torch.vtensor<[1,8,4],f32> -> !torch.vtensor<[1,4,4],f32>
    %int-1 = torch.constant.int -1
    %none = torch.constant.none
    %2 = torch.aten.softmax.int %1, %int-1, %none : !torch.vtensor<[1,4,4],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,4,4],f32>
    %3 = torch.aten.matmul %2, %arg2 : !torch.vtensor<[1,4,4],f32>, !torch.vtensor<[1,4,8],f32> -> !torch.vtensor<[1,4,8],f32>
    return %3, %2 : !torch.vtensor<[1,4,8],f32>, !torch.vtensor<[1,4,4],f32>
  }
}

// -----

// Weight layouts: a batched linear inside an scf.if branch, and one in a function called only
// from a loop body, become a matmul with the transposed literal (computed at compile time) plus
// the bias. The linear at the top level stays (IREE folds that transpose itself), and so does
// the 2-D one in the branch (IREE fuses its transpose into the matmul).
// CHECK-LABEL: func.func private @cell
// CHECK:         %[[WT:.+]] = torch.vtensor.literal(dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
// CHECK:         %[[M:.+]] = torch.aten.matmul %arg0, %[[WT]] : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[2,2],f32> -> !torch.vtensor<[1,1,2],f32>
// CHECK:         torch.aten.add.Tensor %[[M]], %{{.+}}, %{{.+}} : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[2],f32>, !torch.int -> !torch.vtensor<[1,1,2],f32>
// CHECK-NOT:     torch.aten.linear
// CHECK-LABEL: func.func @main
// CHECK:         torch.aten.linear %arg0
// CHECK:         scf.if
// CHECK:           %[[WT2:.+]] = torch.vtensor.literal(dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>) : !torch.vtensor<[3,2],f32>
// CHECK:           %[[M2:.+]] = torch.aten.matmul %arg0, %[[WT2]] : !torch.vtensor<[1,1,3],f32>, !torch.vtensor<[3,2],f32> -> !torch.vtensor<[1,1,2],f32>
// CHECK-NOT:       torch.aten.add.Tensor
// CHECK:           torch.aten.linear %arg3
// CHECK:         scf.while
// CHECK:           func.call @cell
module attributes {dync.symbols = {}} {
  func.func private @cell(%arg0: !torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,1,2],f32> {
    %w = torch.vtensor.literal(dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
    %b = torch.vtensor.literal(dense<[0.5, -0.5]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
    %0 = torch.aten.linear %arg0, %w, %b : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2],f32> -> !torch.vtensor<[1,1,2],f32>
    return %0 : !torch.vtensor<[1,1,2],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[1,1,3],f32>, %arg1: i1, %arg2: index, %arg3: !torch.vtensor<[1,3],f32>) -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,2],f32>) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
    %none = torch.constant.none
    %top = torch.aten.linear %arg0, %w, %none : !torch.vtensor<[1,1,3],f32>, !torch.vtensor<[2,3],f32>, !torch.none -> !torch.vtensor<[1,1,2],f32>
    %0:2 = scf.if %arg1 -> (!torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,2],f32>) {
      %w2 = torch.vtensor.literal(dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
      %none2 = torch.constant.none
      %1 = torch.aten.linear %arg0, %w2, %none2 : !torch.vtensor<[1,1,3],f32>, !torch.vtensor<[2,3],f32>, !torch.none -> !torch.vtensor<[1,1,2],f32>
      %2 = torch.aten.linear %arg3, %w2, %none2 : !torch.vtensor<[1,3],f32>, !torch.vtensor<[2,3],f32>, !torch.none -> !torch.vtensor<[1,2],f32>
      scf.yield %1, %2 : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,2],f32>
    } else {
      %3 = torch.aten.linear %arg3, %w, %none : !torch.vtensor<[1,3],f32>, !torch.vtensor<[2,3],f32>, !torch.none -> !torch.vtensor<[1,2],f32>
      scf.yield %top, %3 : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,2],f32>
    }
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %4:2 = scf.while (%i = %c0, %h = %0#0) : (index, !torch.vtensor<[1,1,2],f32>) -> (index, !torch.vtensor<[1,1,2],f32>) {
      %more = arith.cmpi slt, %i, %arg2 : index
      scf.condition(%more) %i, %h : index, !torch.vtensor<[1,1,2],f32>
    } do {
    ^bb0(%j: index, %g: !torch.vtensor<[1,1,2],f32>):
      %next = func.call @cell(%g) : (!torch.vtensor<[1,1,2],f32>) -> !torch.vtensor<[1,1,2],f32>
      %k = arith.addi %j, %c1 : index
      scf.yield %k, %next : index, !torch.vtensor<[1,1,2],f32>
    }
    return %4#1, %0#1 : !torch.vtensor<[1,1,2],f32>, !torch.vtensor<[1,2],f32>
  }
}
