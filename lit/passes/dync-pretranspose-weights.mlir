// RUN: dync-opt %s --dync-pretranspose-weights | FileCheck %s

// A batched linear inside an scf.if branch, and one in a function called only
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
