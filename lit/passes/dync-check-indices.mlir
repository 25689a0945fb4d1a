// RUN: dync-opt %s --split-input-file --dync-check-indices | FileCheck %s

// Embedding with a static table: [0, 10), the source line from the location.
// CHECK-LABEL: func.func @embedding
// CHECK-DAG:     %[[TEN:.*]] = torch.constant.int 10
// CHECK-DAG:     %[[ZERO:.*]] = torch.constant.int 0
// CHECK:         %[[LT:.*]] = torch.aten.lt.Scalar %arg0, %[[ZERO]]
// CHECK:         %[[GE:.*]] = torch.aten.ge.Scalar %arg0, %[[TEN]]
// CHECK:         %[[BAD:.*]] = torch.aten.logical_or %[[LT]], %[[GE]]
// CHECK:         %[[ANY:.*]] = torch.aten.any %[[BAD]]
// CHECK:         %[[OK:.*]] = torch.aten.logical_not %[[ANY]]
// CHECK:         %[[B:.*]] = torch.aten.Bool.Tensor %[[OK]]
// CHECK:         torch.runtime.assert %[[B]], "dync index check: embedding at model.py:12 reads an index outside [0, 10) (dim 0 of its input)"
// CHECK-NEXT:    torch.aten.embedding
func.func @embedding(%ids: !torch.vtensor<[1,?],si64>) -> !torch.vtensor<[1,?,4],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<10x4xf32>) : !torch.vtensor<[10,4],f32>
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten.embedding %w, %ids, %int-1, %false, %false : !torch.vtensor<[10,4],f32>, !torch.vtensor<[1,?],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,?,4],f32> loc(callsite("torch/nn/functional.py":2500:11 at "model.py":12:16))
  return %0 : !torch.vtensor<[1,?,4],f32>
}

// -----

// index_select on a dynamic dim: the bound is the dim's size at run time.
// CHECK-LABEL: func.func @index_select
// CHECK:         %[[N:.*]] = torch.aten.size.int %arg0
// CHECK:         torch.aten.ge.Scalar %arg1, %[[N]]
// CHECK:         torch.runtime.assert {{.*}} "dync index check: index_select at {{.*}} reads an index outside [0, size) (dim 0 of its input)"
// CHECK-NEXT:    torch.aten.index_select
func.func @index_select(%x: !torch.vtensor<[?,4],f32>, %i: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?,4],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[?,4],f32>
  return %0 : !torch.vtensor<[?,4],f32>
}

// -----

// index_put wraps negatives: [-5, 5), and its indices are made non-negative.
// CHECK-LABEL: func.func @index_put
// CHECK:         %[[FIVE:.*]] = torch.constant.int 5
// CHECK:         %[[LOW:.*]] = torch.aten.neg.int %[[FIVE]]
// CHECK:         torch.aten.lt.Scalar %arg1, %[[LOW]]
// CHECK:         torch.runtime.assert {{.*}} outside [-5, 5)
// CHECK:         %[[WRAPPED:.*]] = torch.aten.remainder.Scalar %arg1, %[[FIVE]]
// CHECK:         %[[LIST:.*]] = torch.prim.ListConstruct %[[WRAPPED]]
// CHECK:         torch.aten.index_put %arg0, %[[LIST]]
func.func @index_put(%x: !torch.vtensor<[5,4],f32>, %i: !torch.vtensor<[?],si64>, %v: !torch.vtensor<[],f32>) -> !torch.vtensor<[5,4],f32> {
  %none = torch.constant.none
  %list = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %0 = torch.aten.index_put %x, %list, %v, %false : !torch.vtensor<[5,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[5,4],f32>
  return %0 : !torch.vtensor<[5,4],f32>
}

// -----

// Not checked: a constant index in range, a boolean mask.
// CHECK-LABEL: func.func @unchecked
// CHECK-NOT:     torch.runtime.assert
// CHECK:         return
func.func @unchecked(%x: !torch.vtensor<[5,4],f32>, %mask: !torch.vtensor<[5],i1>) -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[?,4],f32>) {
  %int0 = torch.constant.int 0
  %c = torch.vtensor.literal(dense<[4, -5]> : tensor<2xsi64>) : !torch.vtensor<[2],si64>
  %none = torch.constant.none
  %l1 = torch.prim.ListConstruct %c : (!torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index.Tensor %x, %l1 : !torch.vtensor<[5,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[2,4],f32>
  %l2 = torch.prim.ListConstruct %mask : (!torch.vtensor<[5],i1>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %l2 : !torch.vtensor<[5,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
  return %0, %1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[?,4],f32>
}

// -----

// select.int with a run-time int: checked on the host, no tensor read back.
// CHECK-LABEL: func.func @select
// CHECK:         %[[GE:.*]] = torch.aten.ge.int %arg1
// CHECK:         %[[LT:.*]] = torch.aten.lt.int %arg1
// CHECK:         %[[OK:.*]] = torch.aten.__and__.bool %[[GE]], %[[LT]]
// CHECK:         torch.runtime.assert %[[OK]], "dync index check: select.int at {{.*}} outside [-5, 5)
// CHECK-NEXT:    torch.aten.select.int
func.func @select(%x: !torch.vtensor<[5,4],f32>, %n: !torch.int) -> !torch.vtensor<[4],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.aten.select.int %x, %int0, %n : !torch.vtensor<[5,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
