// RUN: dync-opt %s --split-input-file --dync-check-indices | FileCheck %s

// Embedding with a static table: [0, 10), the source line from the location. The table is
// never empty, so the check is read where the host reads anyway (here the return) and the
// embedding meanwhile takes 0 for a bad index.
// CHECK-LABEL: func.func @embedding
// CHECK-DAG:     %[[TEN:.*]] = torch.constant.int 10
// CHECK-DAG:     %[[ZERO:.*]] = torch.constant.int 0
// CHECK:         %[[LT:.*]] = torch.aten.lt.Scalar %arg0, %[[ZERO]]
// CHECK:         %[[GE:.*]] = torch.aten.ge.Scalar %arg0, %[[TEN]]
// CHECK:         %[[BAD:.*]] = torch.aten.logical_or %[[LT]], %[[GE]]
// CHECK:         %[[ANY:.*]] = torch.aten.any %[[BAD]]
// CHECK:         %[[SAFE:.*]] = torch.aten.where.ScalarSelf %[[BAD]], %{{.*}}, %arg0
// CHECK:         %[[E:.*]] = torch.aten.embedding %{{.*}}, %[[SAFE]]
// CHECK:         %[[OK:.*]] = torch.aten.logical_not %[[ANY]]
// CHECK:         %[[B:.*]] = torch.aten.Bool.Tensor %[[OK]]
// CHECK:         torch.runtime.assert %[[B]], "dync index check: embedding at model.py:12 reads an index outside [0, 10) (dim 0 of its input)"
// CHECK-NEXT:    return %[[E]]
func.func @embedding(%ids: !torch.vtensor<[1,?],si64>) -> !torch.vtensor<[1,?,4],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<10x4xf32>) : !torch.vtensor<[10,4],f32>
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten.embedding %w, %ids, %int-1, %false, %false : !torch.vtensor<[10,4],f32>, !torch.vtensor<[1,?],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,?,4],f32> loc(callsite("torch/nn/functional.py":2500:11 at "model.py":12:16))
  return %0 : !torch.vtensor<[1,?,4],f32>
}

// -----

// index_select on a dynamic dim: the bound is the dim's size at run time; the dim may be 0
// (nothing declares its range), so the check is read before the op.
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

// index_put wraps negatives: [-5, 5), and its indices (0 for a bad one) are made
// non-negative.
// CHECK-LABEL: func.func @index_put
// CHECK:         %[[FIVE:.*]] = torch.constant.int 5
// CHECK:         %[[LOW:.*]] = torch.aten.neg.int %[[FIVE]]
// CHECK:         torch.aten.lt.Scalar %arg1, %[[LOW]]
// CHECK:         %[[SAFE:.*]] = torch.aten.where.ScalarSelf
// CHECK:         %[[WRAPPED:.*]] = torch.aten.remainder.Scalar %[[SAFE]], %[[FIVE]]
// CHECK:         %[[LIST:.*]] = torch.prim.ListConstruct %[[WRAPPED]]
// CHECK:         torch.aten.index_put %arg0, %[[LIST]]
// CHECK:         torch.runtime.assert {{.*}} outside [-5, 5)
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

// -----

// Two gathers from tables that are never empty (one static, one whose dynamic dim's
// declared range starts at 2) are read together before the branch: the position of the first
// bad one (2 when none is), one int read by the host, and an assert per check in program
// order. A table whose range starts at 0 is checked before its op (a read by the host: the
// checks of later ops are read after it).
// CHECK-LABEL: func.func @together
// CHECK:         %[[N:.*]] = torch.aten.size.int %arg2
// CHECK:         torch.aten.Bool.Tensor
// CHECK:         torch.runtime.assert {{.*}} outside [0, size)
// CHECK-NEXT:    torch.aten.index_select %arg2
// CHECK:         torch.aten.index_select %arg0
// CHECK:         torch.aten.index_select %arg1
// CHECK:         %[[STACK:.*]] = torch.aten.stack {{.*}} -> !torch.vtensor<[2],i1>
// CHECK:         %[[POS:.*]] = torch.aten.arange
// CHECK:         %[[MARKED:.*]] = torch.aten.where.ScalarOther %[[STACK]], %[[POS]]
// CHECK:         %[[FIRST:.*]] = torch.aten.amin %[[MARKED]]
// CHECK:         %[[I:.*]] = torch.aten.Int.Tensor %[[FIRST]]
// CHECK:         torch.aten.ne.int %[[I]], %{{.*}}
// CHECK-NEXT:    torch.runtime.assert {{.*}} outside [0, 6)
// CHECK:         torch.aten.ne.int %[[I]], %{{.*}}
// CHECK-NEXT:    torch.runtime.assert {{.*}} outside [0, size)
// CHECK-NEXT:    scf.if
module {
func.func @together(%x: !torch.vtensor<[6,4],f32>, %y: !torch.vtensor<[?,4],f32>, %z: !torch.vtensor<[?,4],f32>, %i: !torch.vtensor<[3],si64>, %c: i1) -> !torch.vtensor<[3,4],f32> {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %t = torch.symbolic_int "t" {min_val = 0, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %y, [%s], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
  torch.bind_symbolic_shape %z, [%t], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
  %int0 = torch.constant.int 0
  %2 = torch.aten.index_select %z, %int0, %i : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[3],si64> -> !torch.vtensor<[3,4],f32>
  %0 = torch.aten.index_select %x, %int0, %i : !torch.vtensor<[6,4],f32>, !torch.int, !torch.vtensor<[3],si64> -> !torch.vtensor<[3,4],f32>
  %1 = torch.aten.index_select %y, %int0, %i : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[3],si64> -> !torch.vtensor<[3,4],f32>
  %3 = scf.if %c -> (!torch.vtensor<[3,4],f32>) {
    scf.yield %0 : !torch.vtensor<[3,4],f32>
  } else {
    scf.yield %1 : !torch.vtensor<[3,4],f32>
  }
  return %3 : !torch.vtensor<[3,4],f32>
}
}
