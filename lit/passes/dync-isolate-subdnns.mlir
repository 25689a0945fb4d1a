// RUN: dync-opt %s --split-input-file --dync-isolate-subdnns | FileCheck %s

// A value computed in the module and passed to two sub-DNNs reaches each one's uses through a
// barrier IREE cannot look through (integer tensors lose their signedness in the builtin
// type). Left alone: a model input (%arg0 of @main), a 0-d tensor, a scalar, a dynamic shape,
// and every function that is not a sub-DNN.
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
// CHECK-LABEL: func.func private @subdnn_0(
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
// CHECK-LABEL: func.func private @subdnn_1(%arg0: !torch.vtensor<[2,4],f32>, %arg1: !torch.vtensor<[1],si64>, %arg2: !torch.vtensor<[],f32>, %arg3: !torch.int, %arg4: !torch.vtensor<[2,4],f32>, %arg5: !torch.vtensor<[?,4],f32>)
// CHECK-NEXT:    %[[N:.+]] = torch.symbolic_int "n"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg5, [%[[N]]], affine_map<()[s0] -> (s0, 4)>
// CHECK-NEXT:    %[[T0:.+]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[2,4],f32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[B0:.+]] = util.optimization_barrier %[[T0]] : tensor<2x4xf32>
// CHECK-NEXT:    %[[X:.+]] = torch_c.from_builtin_tensor %[[B0]] : tensor<2x4xf32> -> !torch.vtensor<[2,4],f32>
// CHECK-NEXT:    %[[T1:.+]] = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[1],si64> -> tensor<1xi64>
// CHECK-NEXT:    %[[B1:.+]] = util.optimization_barrier %[[T1]] : tensor<1xi64>
// CHECK-NEXT:    %[[K:.+]] = torch_c.from_builtin_tensor %[[B1]] : tensor<1xi64> -> !torch.vtensor<[1],si64>
// CHECK-NOT:     util.optimization_barrier
// CHECK:         torch.aten.mul.Tensor %[[X]], %[[K]]
// CHECK:         torch.aten.add.Tensor {{.+}}, %arg2, %arg3
// CHECK:         torch.aten.sub.Tensor {{.+}}, %arg4, %arg3
// CHECK:         torch.aten.add.Tensor %arg5, %arg5
module attributes {dync.subdnns = [{arguments = ["[2, 4]"], calls = 1 : i64, name = "subdnn_0", ops = 1 : i64, results = ["[2, 4]", "[1]", "[]"], source = "model.py:2-2"}, {arguments = ["[2, 4]", "[1]", "[]", "!torch.int", "[2, 4]", "[n, 4]"], calls = 2 : i64, name = "subdnn_1", ops = 4 : i64, results = ["[2, 4]"], source = "model.py:3-4"}]} {
  func.func @main(%arg0: !torch.vtensor<[2,4],f32>, %arg1: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[2,4],f32> {
    %0:3 = call @subdnn_0(%arg0) : (!torch.vtensor<[2,4],f32>) -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[1],si64>, !torch.vtensor<[],f32>)
    %int1 = torch.constant.int 1
    %1 = call @subdnn_1(%0#0, %0#1, %0#2, %int1, %arg0, %arg1) : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[1],si64>, !torch.vtensor<[],f32>, !torch.int, !torch.vtensor<[2,4],f32>, !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[2,4],f32>
    %2 = call @subdnn_1(%0#0, %0#1, %0#2, %int1, %1, %arg1) : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[1],si64>, !torch.vtensor<[],f32>, !torch.int, !torch.vtensor<[2,4],f32>, !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[2,4],f32>
    return %2 : !torch.vtensor<[2,4],f32>
  }
  func.func private @subdnn_0(%arg0: !torch.vtensor<[2,4],f32>) -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[1],si64>, !torch.vtensor<[],f32>) {
    %0 = torch.aten.neg %arg0 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
    %1 = torch.vtensor.literal(dense<3> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
    %2 = torch.vtensor.literal(dense<1.0> : tensor<f32>) : !torch.vtensor<[],f32>
    return %0, %1, %2 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[1],si64>, !torch.vtensor<[],f32>
  }
  func.func private @subdnn_1(%arg0: !torch.vtensor<[2,4],f32>, %arg1: !torch.vtensor<[1],si64>, %arg2: !torch.vtensor<[],f32>, %arg3: !torch.int, %arg4: !torch.vtensor<[2,4],f32>, %arg5: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[2,4],f32> {
    %n = torch.symbolic_int "n" {min_val = 1, max_val = 16} : !torch.int
    torch.bind_symbolic_shape %arg5, [%n], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %0 = torch.aten.mul.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[1],si64> -> !torch.vtensor<[2,4],f32>
    %1 = torch.aten.add.Tensor %0, %arg2, %arg3 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[2,4],f32>
    %2 = torch.aten.sub.Tensor %1, %arg4, %arg3 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],f32>, !torch.int -> !torch.vtensor<[2,4],f32>
    %3 = torch.aten.add.Tensor %arg5, %arg5, %arg3 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
    return %2 : !torch.vtensor<[2,4],f32>
  }
}

// -----

// Where IREE computes convolutions in NHWC, an activation crosses the barrier in NHWC, and an
// scf.if yields it in NHWC from both branches, permuted back after it.
// CHECK-LABEL: func.func @main(
// CHECK:         %[[IF:.+]] = scf.if %{{.+}} -> (tensor<1x3x3x2xf32>) {
// CHECK:           %[[P:.+]] = torch.aten.permute %{{.+}}, %{{.+}} : !torch.vtensor<[1,2,3,3],f32>, !torch.list<int> -> !torch.vtensor<[1,3,3,2],f32>
// CHECK-NEXT:      %[[Y:.+]] = torch_c.to_builtin_tensor %[[P]] : !torch.vtensor<[1,3,3,2],f32> -> tensor<1x3x3x2xf32>
// CHECK-NEXT:      scf.yield %[[Y]] : tensor<1x3x3x2xf32>
// CHECK:         } else {
// CHECK:           torch.aten.permute {{.+}} -> !torch.vtensor<[1,3,3,2],f32>
// CHECK:           scf.yield %{{.+}} : tensor<1x3x3x2xf32>
// CHECK:         }
// CHECK-NEXT:    %[[R:.+]] = torch_c.from_builtin_tensor %[[IF]] : tensor<1x3x3x2xf32> -> !torch.vtensor<[1,3,3,2],f32>
// CHECK:         %[[BACK:.+]] = torch.aten.permute %[[R]], %{{.+}} -> !torch.vtensor<[1,2,3,3],f32>
// CHECK-NEXT:    %[[NCHW:.+]] = torch_c.to_builtin_tensor %[[BACK]] : !torch.vtensor<[1,2,3,3],f32> -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    torch_c.from_builtin_tensor %[[NCHW]] : tensor<1x2x3x3xf32> -> !torch.vtensor<[1,2,3,3],f32>
// CHECK-LABEL: func.func private @subdnn_1(
// CHECK:         %[[IN:.+]] = torch.aten.permute %arg0, %{{.+}} -> !torch.vtensor<[1,3,3,2],f32>
// CHECK-NEXT:    %[[T:.+]] = torch_c.to_builtin_tensor %[[IN]] : !torch.vtensor<[1,3,3,2],f32> -> tensor<1x3x3x2xf32>
// CHECK-NEXT:    %[[B:.+]] = util.optimization_barrier %[[T]] : tensor<1x3x3x2xf32>
// CHECK-NEXT:    %[[F:.+]] = torch_c.from_builtin_tensor %[[B]] : tensor<1x3x3x2xf32> -> !torch.vtensor<[1,3,3,2],f32>
// CHECK:         %[[X:.+]] = torch.aten.permute %[[F]], %{{.+}} -> !torch.vtensor<[1,2,3,3],f32>
// CHECK-NEXT:    torch.aten.neg %[[X]]
module attributes {dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"], dync.subdnns = [{arguments = ["[1, 2, 3, 3]"], calls = 1 : i64, name = "subdnn_0", ops = 1 : i64, results = ["[1, 2, 3, 3]", "!torch.bool"], source = "model.py:2-2"}, {arguments = ["[1, 2, 3, 3]"], calls = 1 : i64, name = "subdnn_1", ops = 1 : i64, results = ["[1, 2, 3, 3]"], source = "model.py:3-3"}]} {
  func.func @main(%arg0: !torch.vtensor<[1,2,3,3],f32>) -> !torch.vtensor<[1,2,3,3],f32> {
    %0:2 = call @subdnn_0(%arg0) : (!torch.vtensor<[1,2,3,3],f32>) -> (!torch.vtensor<[1,2,3,3],f32>, !torch.bool)
    %1 = torch_c.to_i1 %0#1
    %2 = scf.if %1 -> (tensor<1x2x3x3xf32>) {
      %4 = func.call @subdnn_1(%0#0) : (!torch.vtensor<[1,2,3,3],f32>) -> !torch.vtensor<[1,2,3,3],f32>
      %5 = torch_c.to_builtin_tensor %4 : !torch.vtensor<[1,2,3,3],f32> -> tensor<1x2x3x3xf32>
      scf.yield %5 : tensor<1x2x3x3xf32>
    } else {
      %4 = torch_c.to_builtin_tensor %0#0 : !torch.vtensor<[1,2,3,3],f32> -> tensor<1x2x3x3xf32>
      scf.yield %4 : tensor<1x2x3x3xf32>
    }
    %3 = torch_c.from_builtin_tensor %2 : tensor<1x2x3x3xf32> -> !torch.vtensor<[1,2,3,3],f32>
    return %3 : !torch.vtensor<[1,2,3,3],f32>
  }
  func.func private @subdnn_0(%arg0: !torch.vtensor<[1,2,3,3],f32>) -> (!torch.vtensor<[1,2,3,3],f32>, !torch.bool) {
    %0 = torch.aten.neg %arg0 : !torch.vtensor<[1,2,3,3],f32> -> !torch.vtensor<[1,2,3,3],f32>
    %true = torch.constant.bool true
    return %0, %true : !torch.vtensor<[1,2,3,3],f32>, !torch.bool
  }
  func.func private @subdnn_1(%arg0: !torch.vtensor<[1,2,3,3],f32>) -> !torch.vtensor<[1,2,3,3],f32> {
    %0 = torch.aten.neg %arg0 : !torch.vtensor<[1,2,3,3],f32> -> !torch.vtensor<[1,2,3,3],f32>
    return %0 : !torch.vtensor<[1,2,3,3],f32>
  }
}

// -----

// A module that was not split (no `dync.subdnns`) is left as it is.
// CHECK-LABEL: module {
// CHECK-NOT:     util.optimization_barrier
module {
  func.func @main(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
    %0 = call @f(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
    %1 = call @f(%0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
    %2 = call @f(%0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
    return %2 : !torch.vtensor<[4],f32>
  }
  func.func private @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
    %0 = torch.aten.neg %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %0 : !torch.vtensor<[4],f32>
  }
}

// -----

// The destination of an in-place update (slice_scatter) gets no barrier: IREE updates it in
// the passed buffer, unordered with a barrier'd read of that buffer elsewhere (ONNX
// NonMaxSuppression read a flag after the next sub-DNN had set it). The other argument does.
// CHECK-LABEL: func.func private @subdnn_1(%arg0: !torch.vtensor<[6],si64>, %arg1: !torch.vtensor<[6],si64>)
// CHECK-NEXT:    %[[T:.+]] = torch_c.to_builtin_tensor %arg1
// CHECK-NEXT:    util.optimization_barrier %[[T]]
// CHECK-NOT:     util.optimization_barrier
// CHECK:         torch.aten.slice_scatter %arg0,
module attributes {dync.subdnns = [{arguments = ["[6]"], calls = 1 : i64, name = "subdnn_0", ops = 1 : i64, results = ["[6]"], source = "model.py:2-2"}, {arguments = ["[6]", "[6]"], calls = 1 : i64, name = "subdnn_1", ops = 2 : i64, results = ["[6]"], source = "model.py:3-4"}]} {
  func.func @main(%arg0: !torch.vtensor<[6],si64>) -> (!torch.vtensor<[6],si64>, !torch.vtensor<[6],si64>) {
    %0 = call @subdnn_0(%arg0) : (!torch.vtensor<[6],si64>) -> !torch.vtensor<[6],si64>
    %1 = call @subdnn_1(%0, %0) : (!torch.vtensor<[6],si64>, !torch.vtensor<[6],si64>) -> !torch.vtensor<[6],si64>
    return %0, %1 : !torch.vtensor<[6],si64>, !torch.vtensor<[6],si64>
  }
  func.func private @subdnn_0(%arg0: !torch.vtensor<[6],si64>) -> !torch.vtensor<[6],si64> {
    %0 = torch.aten.neg %arg0 : !torch.vtensor<[6],si64> -> !torch.vtensor<[6],si64>
    return %0 : !torch.vtensor<[6],si64>
  }
  func.func private @subdnn_1(%arg0: !torch.vtensor<[6],si64>, %arg1: !torch.vtensor<[6],si64>) -> !torch.vtensor<[6],si64> {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %0 = torch.aten.slice.Tensor %arg1, %int0, %int0, %int1, %int1 : !torch.vtensor<[6],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1],si64>
    %1 = torch.aten.slice_scatter %arg0, %0, %int0, %int0, %int1, %int1 : !torch.vtensor<[6],si64>, !torch.vtensor<[1],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[6],si64>
    return %1 : !torch.vtensor<[6],si64>
  }
}
