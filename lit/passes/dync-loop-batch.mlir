// RUN: dync-opt %s --split-input-file --dync-loop-batch | FileCheck %s

// A batch-parallel sub-DNN with several activation sizes runs one sample at a time: the call
// becomes a loop over the batch that slices sample i of the argument and writes the sample's
// result into row i; the sub-DNN takes and returns one sample, every batched value in it
// has dim 0 = 1 (no casts back to the batch: torch-mlir mislowers ops on a cast it folds
// dims through), its bindings of the batch read 1, and its flatten-by-view keeps reading
// the batch size (now 1).
// CHECK-LABEL: func.func @main(
// CHECK:         %[[C0:.+]] = arith.constant 0 : index
// CHECK:         %[[C1:.+]] = arith.constant 1 : index
// CHECK:         %[[X:.+]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,2,4,4],f32> -> tensor<?x2x4x4xf32>
// CHECK:         %[[N:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK:         %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK:         %[[LOOP:.+]]:2 = scf.while (%[[I:.+]] = %[[C0]], %[[ACC:.+]] = %[[INIT]])
// CHECK:           arith.cmpi slt, %{{.+}}, %[[N]] : index
// CHECK:         } do {
// CHECK:           %[[S:.+]] = tensor.extract_slice %[[X]][%{{.+}}, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<?x2x4x4xf32> to tensor<1x2x4x4xf32>
// CHECK:           %[[ST:.+]] = torch_c.from_builtin_tensor %[[S]]
// CHECK:           %[[O:.+]] = func.call @subdnn_0(%[[ST]]) : (!torch.vtensor<[1,2,4,4],f32>) -> !torch.vtensor<[1,3],f32>
// CHECK:           %[[OB:.+]] = torch_c.to_builtin_tensor %[[O]]
// CHECK:           tensor.insert_slice %[[OB]] into %{{.+}}[%{{.+}}, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<?x3xf32>
// CHECK:         torch_c.from_builtin_tensor %[[LOOP]]#1 : tensor<?x3xf32> -> !torch.vtensor<[?,3],f32>
// CHECK-LABEL: func.func private @subdnn_0(%arg0: !torch.vtensor<[1,2,4,4],f32>) -> !torch.vtensor<[1,3],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [], affine_map<() -> (1, 2, 4, 4)>
// CHECK-NOT:     torch.tensor_static_info_cast
// CHECK:         torch.aten.conv2d %arg0, {{.*}} -> !torch.vtensor<[1,2,4,4],f32>
// CHECK:         torch.aten.avg_pool2d {{.*}} -> !torch.vtensor<[1,2,2,2],f32>
// CHECK:         torch.aten.relu {{.*}} -> !torch.vtensor<[1,2,2,2],f32>
// CHECK:         torch.aten.size.int %arg0
// CHECK:         torch.aten.view {{.*}} -> !torch.vtensor<[1,8],f32>
// CHECK:         %[[R:.+]] = torch.aten.linear {{.*}} -> !torch.vtensor<[1,3],f32>
// CHECK-NOT:     torch.tensor_static_info_cast
// CHECK:         return %[[R]] : !torch.vtensor<[1,3],f32>
module attributes {dync.subdnns = [{arguments = ["[batch, 2, 4, 4]"], calls = 1 : i64, name = "subdnn_0", ops = 4 : i64, results = ["[batch, 3]"], source = "model.py:2-6"}]} {
  func.func @main(%arg0: !torch.vtensor<[?,2,4,4],f32>) -> !torch.vtensor<[?,3],f32> attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 2, 4, 4)> : !torch.vtensor<[?,2,4,4],f32>
    %1 = call @subdnn_0(%arg0) : (!torch.vtensor<[?,2,4,4],f32>) -> !torch.vtensor<[?,3],f32>
    return %1 : !torch.vtensor<[?,3],f32>
  }
  func.func private @subdnn_0(%arg0: !torch.vtensor<[?,2,4,4],f32>) -> !torch.vtensor<[?,3],f32> {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 2, 4, 4)> : !torch.vtensor<[?,2,4,4],f32>
    %w = torch.vtensor.literal(dense<1.0> : tensor<2x2x3x3xf32>) : !torch.vtensor<[2,2,3,3],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int8 = torch.constant.int 8
    %l1 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %l0 = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %c = torch.aten.conv2d %arg0, %w, %none, %l1, %l1, %l1, %int1 : !torch.vtensor<[?,2,4,4],f32>, !torch.vtensor<[2,2,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,2,4,4],f32>
    torch.bind_symbolic_shape %c, [%0], affine_map<()[s0] -> (s0, 2, 4, 4)> : !torch.vtensor<[?,2,4,4],f32>
    %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %false = torch.constant.bool false
    %p = torch.aten.avg_pool2d %c, %k, %k, %l0, %false, %false, %none : !torch.vtensor<[?,2,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?,2,2,2],f32>
    torch.bind_symbolic_shape %p, [%0], affine_map<()[s0] -> (s0, 2, 2, 2)> : !torch.vtensor<[?,2,2,2],f32>
    %r = torch.aten.relu %p : !torch.vtensor<[?,2,2,2],f32> -> !torch.vtensor<[?,2,2,2],f32>
    %n = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,2,4,4],f32>, !torch.int -> !torch.int
    %s = torch.prim.ListConstruct %n, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %v = torch.aten.view %r, %s : !torch.vtensor<[?,2,2,2],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %v, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %fw = torch.vtensor.literal(dense<0.5> : tensor<3x8xf32>) : !torch.vtensor<[3,8],f32>
    %y = torch.aten.linear %v, %fw, %none : !torch.vtensor<[?,8],f32>, !torch.vtensor<[3,8],f32>, !torch.none -> !torch.vtensor<[?,3],f32>
    torch.bind_symbolic_shape %y, [%0], affine_map<()[s0] -> (s0, 3)> : !torch.vtensor<[?,3],f32>
    return %y : !torch.vtensor<[?,3],f32>
  }
}

// -----

// Samples meet (a mean over the batch dim, and the batch size used in arithmetic): the sub-DNN
// and its call stay as they are.
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     scf.while
// CHECK:         call @subdnn_0(%arg0) : (!torch.vtensor<[?,2,4,4],f32>) -> !torch.vtensor<[1,2,4,4],f32>
// CHECK-LABEL: func.func private @subdnn_0(%arg0: !torch.vtensor<[?,2,4,4],f32>)
module attributes {dync.subdnns = [{arguments = ["[batch, 2, 4, 4]"], calls = 1 : i64, name = "subdnn_0", ops = 3 : i64, results = ["[1, 2, 4, 4]"], source = "model.py:2-4"}]} {
  func.func @main(%arg0: !torch.vtensor<[?,2,4,4],f32>) -> !torch.vtensor<[1,2,4,4],f32> attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 2, 4, 4)> : !torch.vtensor<[?,2,4,4],f32>
    %1 = call @subdnn_0(%arg0) : (!torch.vtensor<[?,2,4,4],f32>) -> !torch.vtensor<[1,2,4,4],f32>
    return %1 : !torch.vtensor<[1,2,4,4],f32>
  }
  func.func private @subdnn_0(%arg0: !torch.vtensor<[?,2,4,4],f32>) -> !torch.vtensor<[1,2,4,4],f32> {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 2, 4, 4)> : !torch.vtensor<[?,2,4,4],f32>
    %true = torch.constant.bool true
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %d = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %m = torch.aten.mean.dim %arg0, %d, %true, %none : !torch.vtensor<[?,2,4,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,2,4,4],f32>
    return %m : !torch.vtensor<[1,2,4,4],f32>
  }
}

// -----

// Batch-parallel, but every activation has the same per-sample size: IREE's per-size slots
// already cost nothing, and the sub-DNN keeps the whole batch.
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     scf.while
// CHECK:         call @subdnn_0(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
module attributes {dync.subdnns = [{arguments = ["[batch, 8]"], calls = 1 : i64, name = "subdnn_0", ops = 2 : i64, results = ["[batch, 8]"], source = "model.py:2-3"}]} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %1 = call @subdnn_0(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    return %1 : !torch.vtensor<[?,8],f32>
  }
  func.func private @subdnn_0(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %r = torch.aten.relu %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    %t = torch.aten.tanh %r : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    return %t : !torch.vtensor<[?,8],f32>
  }
}
