// RUN: dync-opt %s --split-input-file --dync-nan-extremes | FileCheck %s

// A float maximum and minimum (b broadcast over a's rows): each NaN where its first operand
// is, else the op (which is NaN where its second one is).
// CHECK-LABEL: func.func @extremes
// CHECK:         %[[MAX:.+]] = torch.aten.maximum %arg0, %arg1 : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[NAN:.+]] = torch.aten.isnan %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],i1>
// CHECK:         %[[A:.+]] = torch.aten.where.self %[[NAN]], %arg0, %[[MAX]] : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[MIN:.+]] = torch.aten.minimum %[[A]], %arg1
// CHECK:         torch.aten.isnan %[[A]]
// CHECK:         %[[B:.+]] = torch.aten.where.self {{.*}}, %[[A]], %[[MIN]]
// CHECK:         return %[[B]]
func.func @extremes(%arg0: !torch.vtensor<[?,8],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8],f32> {
  %0 = torch.aten.maximum %arg0, %arg1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[?,8],f32>
  %1 = torch.aten.minimum %0, %arg1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[?,8],f32>
  return %1 : !torch.vtensor<[?,8],f32>
}

// -----

// Integers have no NaN: left alone.
// CHECK-LABEL: func.func @integers
// CHECK-NOT:     torch.aten.isnan
func.func @integers(%arg0: !torch.vtensor<[4],si64>, %arg1: !torch.vtensor<[4],si64>) -> !torch.vtensor<[4],si64> {
  %0 = torch.aten.maximum %arg0, %arg1 : !torch.vtensor<[4],si64>, !torch.vtensor<[4],si64> -> !torch.vtensor<[4],si64>
  return %0 : !torch.vtensor<[4],si64>
}

// -----

// A clamp (and relu6): NaN where its input is, else the clamp.
// CHECK-LABEL: func.func @clamps
// CHECK:         %[[C:.+]] = torch.aten.clamp %arg0, %{{.+}}, %{{.+}} :
// CHECK:         %[[NAN:.+]] = torch.aten.isnan %arg0
// CHECK:         torch.aten.where.self %[[NAN]], %arg0, %[[C]]
// CHECK:         %[[R:.+]] = torch.aten.relu6 %arg0
// CHECK:         torch.aten.where.self {{.*}}, %arg0, %[[R]]
func.func @clamps(%arg0: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %lo = torch.constant.float -1.0
  %hi = torch.constant.float 1.0
  %0 = torch.aten.clamp %arg0, %lo, %hi : !torch.vtensor<[4],f32>, !torch.float, !torch.float -> !torch.vtensor<[4],f32>
  %1 = torch.aten.relu6 %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}
