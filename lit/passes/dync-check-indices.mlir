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

// -----

// Not checked: indices proven in range where they are made (`dync.analysis.value_ranges`).
// The coordinate `nonzero` yields, `remainder` by the size of the dim it counts, reaches a
// private function through its only call and indexes a table of that same size; the flat
// index 2 * row + column (column: `remainder` by 2) indexes the [s, 2] table viewed as 2 * s;
// `argmax` over the 7 logits gives a position in [0, 7) into a 7-row embedding.
// CHECK-LABEL: func.func private @expert
// CHECK-NOT:     torch.runtime.assert
// CHECK-NOT:     torch.aten.remainder.Scalar %{{.*}}, %int2
// CHECK:         return
// CHECK-LABEL: func.func @route
// CHECK-NOT:     torch.runtime.assert
// CHECK:         return
module {
func.func private @expert(%x: !torch.vtensor<[?,4],f32>, %w: !torch.vtensor<[?,2],f32>, %rows: !torch.vtensor<[?],si64>, %cols: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?,4],f32>) {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %u = torch.symbolic_int "u" {min_val = 0, max_val = 128} : !torch.int
  torch.bind_symbolic_shape %x, [%s], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
  torch.bind_symbolic_shape %w, [%s], affine_map<()[s0] -> (s0, 2)> : !torch.vtensor<[?,2],f32>
  torch.bind_symbolic_shape %rows, [%u], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %l0 = torch.prim.ListConstruct %rows : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index.Tensor %x, %l0 : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
  %twice = torch.aten.mul.Scalar %rows, %int2 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %flat = torch.aten.add.Tensor %twice, %cols, %int1 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %shape = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %wf = torch.aten.view %w, %shape : !torch.vtensor<[?,2],f32>, !torch.list<int> -> !torch.vtensor<[?],f32>
  torch.bind_symbolic_shape %wf, [%s], affine_map<()[s0] -> (s0 * 2)> : !torch.vtensor<[?],f32>
  %l1 = torch.prim.ListConstruct %flat : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %wf, %l1 : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
  %l2 = torch.prim.ListConstruct %rows : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %2 = torch.aten.index_put %x, %l2, %0, %true : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?,4],f32>, !torch.bool -> !torch.vtensor<[?,4],f32>
  return %0, %1, %2 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?,4],f32>
}
func.func @route(%x: !torch.vtensor<[?,4],f32>, %w: !torch.vtensor<[?,2],f32>, %keys: !torch.vtensor<[?],si64>, %logits: !torch.vtensor<[1,7],f32>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[1,3],f32>) {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %x, [%s], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
  torch.bind_symbolic_shape %w, [%s], affine_map<()[s0] -> (s0, 2)> : !torch.vtensor<[?,2],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %n = torch.aten.size.int %w, %int0 : !torch.vtensor<[?,2],f32>, !torch.int -> !torch.int
  %row = torch.aten.remainder.Scalar %keys, %n : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %col = torch.aten.remainder.Scalar %keys, %int2 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %list = torch.prim.ListConstruct %row, %col : (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> !torch.list<vtensor>
  %coords = torch.aten.stack %list, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,2],si64>
  %unbound = torch.aten.unbind.int %coords, %int1 : !torch.vtensor<[?,2],si64>, !torch.int -> !torch.list<vtensor>
  %r, %c = torch.prim.ListUnpack %unbound : !torch.list<vtensor> -> !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>
  %0:3 = func.call @expert(%x, %w, %r, %c) : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,2],f32>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?,4],f32>)
  %token = torch.aten.argmax %logits, %int1, %false : !torch.vtensor<[1,7],f32>, !torch.int, !torch.bool -> !torch.vtensor<[1],si64>
  %table = torch.vtensor.literal(dense<1.0> : tensor<7x3xf32>) : !torch.vtensor<[7,3],f32>
  %int-1 = torch.constant.int -1
  %e = torch.aten.embedding %table, %token, %int-1, %false, %false : !torch.vtensor<[7,3],f32>, !torch.vtensor<[1],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3],f32>
  return %0#0, %0#1, %0#2, %e : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?,4],f32>, !torch.vtensor<[1,3],f32>
}
}

// -----

// Still checked: a position along 8 logits into 7 rows; a private function's argument
// where one of its calls passes an index from the input; a token a decoding loop feeds back
// plus one (its range depends on itself), while the loop's argmax token needs no check.
// CHECK-LABEL: func.func private @lookup
// CHECK:         torch.runtime.assert {{.*}} outside [0, 7)
// CHECK-LABEL: func.func @unproven
// CHECK:         torch.runtime.assert {{.*}} outside [0, 7)
// CHECK-NEXT:    call @lookup
// CHECK:         scf.while
// CHECK-NOT:     torch.runtime.assert {{.*}}embedding at loop.py:1
// CHECK:         torch.runtime.assert {{.*}}embedding at loop.py:2 reads an index outside [0, 7)
// CHECK:         scf.condition
module {
func.func private @lookup(%i: !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,3],f32> {
  %table = torch.vtensor.literal(dense<1.0> : tensor<7x3xf32>) : !torch.vtensor<[7,3],f32>
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %e = torch.aten.embedding %table, %i, %int-1, %false, %false : !torch.vtensor<[7,3],f32>, !torch.vtensor<[1],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3],f32>
  return %e : !torch.vtensor<[1,3],f32>
}
func.func @unproven(%logits: !torch.vtensor<[1,8],f32>, %ids: !torch.vtensor<[1],si64>, %small: !torch.vtensor<[1,7],f32>) -> (!torch.vtensor<[1,3],f32>, !torch.vtensor<[1,3],f32>, !torch.vtensor<[1,3],f32>, !torch.vtensor<[1],si64>) {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %table = torch.vtensor.literal(dense<1.0> : tensor<7x3xf32>) : !torch.vtensor<[7,3],f32>
  %token = torch.aten.argmax %logits, %int1, %false : !torch.vtensor<[1,8],f32>, !torch.int, !torch.bool -> !torch.vtensor<[1],si64>
  %0 = torch.aten.embedding %table, %token, %int-1, %false, %false : !torch.vtensor<[7,3],f32>, !torch.vtensor<[1],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3],f32>
  %best = torch.aten.argmax %small, %int1, %false : !torch.vtensor<[1,7],f32>, !torch.int, !torch.bool -> !torch.vtensor<[1],si64>
  %1 = func.call @lookup(%best) : (!torch.vtensor<[1],si64>) -> !torch.vtensor<[1,3],f32>
  %2 = func.call @lookup(%ids) : (!torch.vtensor<[1],si64>) -> !torch.vtensor<[1,3],f32>
  %start = torch_c.to_builtin_tensor %best : !torch.vtensor<[1],si64> -> tensor<1xi64>
  %r:2 = scf.while (%a = %start, %b = %start) : (tensor<1xi64>, tensor<1xi64>) -> (tensor<1xi64>, tensor<1xi64>) {
    %ta = torch_c.from_builtin_tensor %a : tensor<1xi64> -> !torch.vtensor<[1],si64>
    %tb = torch_c.from_builtin_tensor %b : tensor<1xi64> -> !torch.vtensor<[1],si64>
    %ea = torch.aten.embedding %table, %ta, %int-1, %false, %false : !torch.vtensor<[7,3],f32>, !torch.vtensor<[1],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3],f32> loc("loop.py":1:1)
    %eb = torch.aten.embedding %table, %tb, %int-1, %false, %false : !torch.vtensor<[7,3],f32>, !torch.vtensor<[1],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3],f32> loc("loop.py":2:1)
    %sum = torch.aten.add.Tensor %ea, %eb, %int1 : !torch.vtensor<[1,3],f32>, !torch.vtensor<[1,3],f32>, !torch.int -> !torch.vtensor<[1,3],f32>
    %scores = torch.aten.slice.Tensor %small, %int1, %int1, %int1, %int1 : !torch.vtensor<[1,7],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,7],f32>
    %next = torch.aten.argmax %scores, %int1, %false : !torch.vtensor<[1,7],f32>, !torch.int, !torch.bool -> !torch.vtensor<[1],si64>
    %na = torch_c.to_builtin_tensor %next : !torch.vtensor<[1],si64> -> tensor<1xi64>
    %plus = torch.aten.add.Scalar %tb, %int1, %int1 : !torch.vtensor<[1],si64>, !torch.int, !torch.int -> !torch.vtensor<[1],si64>
    %nb = torch_c.to_builtin_tensor %plus : !torch.vtensor<[1],si64> -> tensor<1xi64>
    %cond = arith.constant true
    scf.condition(%cond) %na, %nb : tensor<1xi64>, tensor<1xi64>
  } do {
  ^bb0(%x: tensor<1xi64>, %y: tensor<1xi64>):
    scf.yield %x, %y : tensor<1xi64>, tensor<1xi64>
  }
  %out = torch_c.from_builtin_tensor %r#1 : tensor<1xi64> -> !torch.vtensor<[1],si64>
  return %0, %1, %2, %out : !torch.vtensor<[1,3],f32>, !torch.vtensor<[1,3],f32>, !torch.vtensor<[1,3],f32>, !torch.vtensor<[1],si64>
}
}

// -----

// A 0-d tensor index counted from the end, as dync's rewriting reads `t[i]` in a loop:
// `where(i < 0, i + n, i)`. From the argument: checked against [0, 6) as index_select
// reads it, named [-6, 6) as the user wrote it. From argmax over the same 6 entries: in
// [0, 6) whatever its sign test says, so not checked.
// CHECK-LABEL: func.func @from_end
// CHECK:         torch.runtime.assert {{.*}} "dync index check: index_select at {{.*}} reads an index outside [-6, 6) (dim 0 of its input)"
// CHECK-NOT:     torch.runtime.assert
// CHECK:         return
func.func @from_end(%x: !torch.vtensor<[6],f32>, %i: !torch.vtensor<[1],si64>) -> (!torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int6 = torch.constant.int 6
  %none = torch.constant.none
  %false = torch.constant.bool false
  %neg = torch.aten.lt.Scalar %i, %int0 : !torch.vtensor<[1],si64>, !torch.int -> !torch.vtensor<[1],i1>
  %up = torch.aten.add.Scalar %i, %int6, %int1 : !torch.vtensor<[1],si64>, !torch.int, !torch.int -> !torch.vtensor<[1],si64>
  %at = torch.aten.where.self %neg, %up, %i : !torch.vtensor<[1],i1>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],si64>
  %0 = torch.aten.index_select %x, %int0, %at : !torch.vtensor<[6],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],f32>
  %best = torch.aten.argmax %x, %none, %false : !torch.vtensor<[6],f32>, !torch.none, !torch.bool -> !torch.vtensor<[],si64>
  %list = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %one = torch.aten.view %best, %list : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
  %neg2 = torch.aten.lt.Scalar %one, %int0 : !torch.vtensor<[1],si64>, !torch.int -> !torch.vtensor<[1],i1>
  %up2 = torch.aten.add.Scalar %one, %int6, %int1 : !torch.vtensor<[1],si64>, !torch.int, !torch.int -> !torch.vtensor<[1],si64>
  %at2 = torch.aten.where.self %neg2, %up2, %one : !torch.vtensor<[1],i1>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],si64>
  %1 = torch.aten.index_select %x, %int0, %at2 : !torch.vtensor<[6],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],f32>
  return %0, %1 : !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>
}

// -----

// One index read from three tables, as a loop body reads `boxes[i]`, `area[i]` and `alive[i]`
// (the index computed apart for each, as dync's rewriting writes `t[i]`): the two tables of
// size u0 share one check, read once; the table of size u1 has its own.
// CHECK-LABEL: func.func @repeated
// CHECK:         torch.runtime.assert {{.*}} "dync index check: index_select at {{.*}} reads an index outside [0, size) (dim 0 of its input)"
// CHECK:         torch.aten.index_select
// CHECK-NOT:     torch.runtime.assert
// CHECK:         torch.aten.index_select
// CHECK:         torch.runtime.assert
// CHECK:         torch.aten.index_select
// CHECK-NOT:     torch.runtime.assert
// CHECK:         return
func.func @repeated(%a: !torch.vtensor<[?,2],f32>, %b: !torch.vtensor<[?],f32>, %c: !torch.vtensor<[?],f32>, %i: !torch.vtensor<[],si64>) -> (!torch.vtensor<[1,2],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) {
  %u0 = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
  %u1 = torch.symbolic_int "u1" {min_val = 0, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %a, [%u0], affine_map<()[s0] -> (s0, 2)> : !torch.vtensor<[?,2],f32>
  torch.bind_symbolic_shape %b, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
  torch.bind_symbolic_shape %c, [%u1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %l0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %i0 = torch.aten.view %i, %l0 : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
  %0 = torch.aten.index_select %a, %int0, %i0 : !torch.vtensor<[?,2],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1,2],f32>
  %int0_1 = torch.constant.int 0
  %int1_1 = torch.constant.int 1
  %l1 = torch.prim.ListConstruct %int1_1 : (!torch.int) -> !torch.list<int>
  %i1 = torch.aten.view %i, %l1 : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
  %1 = torch.aten.index_select %b, %int0_1, %i1 : !torch.vtensor<[?],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],f32>
  %2 = torch.aten.index_select %c, %int0, %i1 : !torch.vtensor<[?],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],f32>
  return %0, %1, %2 : !torch.vtensor<[1,2],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>
}

// -----

// A gather's index expanded along the gathered rows' width (`idx.unsqueeze(-1).expand(-1, -1,
// C)`) is checked before the expand, and the index made safe there is expanded as before: 192
// times fewer flags, which IREE 3.13 otherwise held on the stack at their largest dynamic size.
// CHECK-LABEL: func.func @expanded
// CHECK:         %[[LT:.*]] = torch.aten.lt.Scalar %arg1, %{{.*}} : !torch.vtensor<[2,?,1],si64>
// CHECK:         %[[GE:.*]] = torch.aten.ge.Scalar %arg1, %{{.*}} : !torch.vtensor<[2,?,1],si64>
// CHECK:         %[[BAD:.*]] = torch.aten.logical_or %[[LT]], %[[GE]] : !torch.vtensor<[2,?,1],i1>
// CHECK:         %[[SAFE:.*]] = torch.aten.where.ScalarSelf %[[BAD]], %{{.*}}, %arg1 : {{.*}} -> !torch.vtensor<[2,?,1],si64>
// CHECK:         %[[WIDE:.*]] = torch.aten.expand %[[SAFE]], %[[SIZES:.*]], %{{.*}} -> !torch.vtensor<[2,?,192],si64>
// CHECK:         torch.aten.gather %arg0, %{{.*}}, %[[WIDE]]
func.func @expanded(%x: !torch.vtensor<[2,8,192],f32>, %idx: !torch.vtensor<[2,?,1],si64>) -> !torch.vtensor<[2,?,192],f32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %int192 = torch.constant.int 192
  %false = torch.constant.bool false
  %sizes = torch.prim.ListConstruct %int-1, %int-1, %int192 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %wide = torch.aten.expand %idx, %sizes, %false : !torch.vtensor<[2,?,1],si64>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,?,192],si64>
  %0 = torch.aten.gather %x, %int1, %wide, %false : !torch.vtensor<[2,8,192],f32>, !torch.int, !torch.vtensor<[2,?,192],si64>, !torch.bool -> !torch.vtensor<[2,?,192],f32>
  return %0 : !torch.vtensor<[2,?,192],f32>
}

// -----

// A table as long as a count read from data (`n = mask.sum().item()`, `arange(n)`: its length
// the unbacked u0), indexed by rows clamped to [0, n - 1]: not checked where the index is u0
// long (no element to read where u0 is 0), nor where it is as long as a count of a mask over
// u0 elements (u1 <= u0); checked where it is t long, which it may be while the table is empty.
// CHECK-LABEL: func.func @unbacked
// CHECK-NOT:     torch.runtime.assert
// CHECK:         torch.aten.index.Tensor
// CHECK-NOT:     torch.runtime.assert
// CHECK:         torch.aten.index.Tensor
// CHECK:         torch.runtime.assert %{{.*}}, "dync index check: index.Tensor
// CHECK-NEXT:    torch.aten.index.Tensor
func.func @unbacked(%mask: !torch.vtensor<[?],i1>, %keys: !torch.vtensor<[?],si64>, %wide: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) {
  %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
  %u0 = torch.symbolic_int "u0" {min_val = 0, max_val = 9223372036854775806} : !torch.int
  %u1 = torch.symbolic_int "u1" {min_val = 0, max_val = 9223372036854775806} : !torch.int
  torch.bind_symbolic_shape %mask, [%t], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
  torch.bind_symbolic_shape %keys, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %wide, [%t], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %false = torch.constant.bool false
  %cpu = torch.constant.device "cpu"
  %total = torch.aten.sum %mask, %none : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
  %n = torch.aten.item %total : !torch.vtensor<[],si64> -> !torch.int
  %table = torch.aten.arange %n, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %table, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %last = torch.aten.sub.int %n, %int1 : !torch.int, !torch.int -> !torch.int
  %slot = torch.aten.clamp %keys, %int0, %last : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %slot, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %l0 = torch.prim.ListConstruct %slot : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index.Tensor %table, %l0 : !torch.vtensor<[?],si64>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %0, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %kept = torch.aten.ne.Scalar %keys, %int0 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
  torch.bind_symbolic_shape %kept, [%u0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
  %kept_total = torch.aten.sum %kept, %none : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
  %m = torch.aten.item %kept_total : !torch.vtensor<[],si64> -> !torch.int
  %first = torch.aten.slice.Tensor %keys, %int0, %int0, %m, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %first, [%u1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %first_slot = torch.aten.clamp %first, %int0, %last : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %first_slot, [%u1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %l1 = torch.prim.ListConstruct %first_slot : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %table, %l1 : !torch.vtensor<[?],si64>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %1, [%u1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %wide_slot = torch.aten.clamp %wide, %int0, %last : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %wide_slot, [%t], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %l2 = torch.prim.ListConstruct %wide_slot : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %2 = torch.aten.index.Tensor %table, %l2 : !torch.vtensor<[?],si64>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %2, [%t], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  return %0, %1, %2 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>
}

// -----

// Rows clamped to [0, s - min(s, 1)] (torch's form of `sym_max(s - 1, 0)` for a size of at
// least 1: the row of a closed-form `tril_indices`): in range, unchecked; clamped to
// [0, max(s, 3)], which passes the last row where s < 3: checked.
// CHECK-LABEL: func.func @min_max_of_sizes
// CHECK:         %[[ROW:.*]] = torch.aten.clamp
// CHECK-NEXT:    %[[LIST:.*]] = torch.prim.ListConstruct %[[ROW]]
// CHECK-NEXT:    torch.aten.index.Tensor %{{.*}}, %[[LIST]]
// CHECK:         torch.prim.max.int
// CHECK:         torch.aten.any
// CHECK:         torch.runtime.assert
// CHECK-SAME:      reads an index outside
// CHECK-NOT:     torch.runtime.assert
// CHECK:         return
func.func @min_max_of_sizes(%x: !torch.vtensor<[?,4],f32>, %keys: !torch.vtensor<[5],si64>) -> (!torch.vtensor<[5,4],f32>, !torch.vtensor<[5,4],f32>) {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %x, [%s], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %rows = torch.aten.size.int %x, %int0 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.int
  %one = torch.prim.min.int %rows, %int1 : !torch.int, !torch.int -> !torch.int
  %last = torch.aten.sub.int %rows, %one : !torch.int, !torch.int -> !torch.int
  %row = torch.aten.clamp %keys, %int0, %last : !torch.vtensor<[5],si64>, !torch.int, !torch.int -> !torch.vtensor<[5],si64>
  %l0 = torch.prim.ListConstruct %row : (!torch.vtensor<[5],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index.Tensor %x, %l0 : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[5,4],f32>
  %three = torch.prim.max.int %rows, %int3 : !torch.int, !torch.int -> !torch.int
  %past = torch.aten.clamp %keys, %int0, %three : !torch.vtensor<[5],si64>, !torch.int, !torch.int -> !torch.vtensor<[5],si64>
  %l1 = torch.prim.ListConstruct %past : (!torch.vtensor<[5],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index.Tensor %x, %l1 : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[5,4],f32>
  return %0, %1 : !torch.vtensor<[5,4],f32>, !torch.vtensor<[5,4],f32>
}

// -----

// `for x_t in x.unbind(0)` over a dynamic length, as dync's passes leave it: a rotated
// `scf.while` whose body, a sub-DNN, reads row `i` of `x` (counted from the end where
// negative), forwards `i + 1` and continues while `i + 1 < t`. The counter starts at 0 and
// is below `t` in every step, so the row needs no check (each had cost a read of the host per
// step). A counter that steps down (@down) may leave the rows: still checked. A loop that
// `break` may end too (@step_or_break) continues while `i + 1 < t` and no flag is set, tested by a
// sub-DNN of its own (@going) that the guard before the loop calls as well: the counter is
// followed through the call it was reached by, and needs no check either.
// CHECK-LABEL: func.func private @step_or_break
// CHECK-NOT:     index check
// CHECK:         return
// CHECK-LABEL: func.func private @step
// CHECK-NOT:     index check
// CHECK:         return
// CHECK-LABEL: func.func private @down
// CHECK:         torch.runtime.assert %{{.+}}, "dync index check: index_select
module attributes {dync.backend = "llvm-cpu"} {
  func.func @main(%x: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
    %t = torch.symbolic_int "t" {min_val = 1, max_val = 64} : !torch.int
    %none = torch.constant.none
    %int11 = torch.constant.int 11
    torch.bind_symbolic_shape %x, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %zero = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %0:2 = call @bounds(%x) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[],si64>)
    %first = torch_c.to_builtin_tensor %0#0 : !torch.vtensor<[],si64> -> tensor<i64>
    %1:2 = scf.while (%acc = %zero, %i = %first) : (tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<i64>) {
      %a = torch_c.from_builtin_tensor %acc : tensor<8xf32> -> !torch.vtensor<[8],f32>
      %c = torch_c.from_builtin_tensor %i : tensor<i64> -> !torch.vtensor<[],si64>
      %2:3 = func.call @step(%a, %c, %x, %0#1) : (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[],si64>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.bool)
      %go = torch_c.to_i1 %2#2
      %na = torch_c.to_builtin_tensor %2#0 : !torch.vtensor<[8],f32> -> tensor<8xf32>
      %ni = torch_c.to_builtin_tensor %2#1 : !torch.vtensor<[],si64> -> tensor<i64>
      scf.condition(%go) %na, %ni : tensor<8xf32>, tensor<i64>
    } do {
    ^bb0(%acc: tensor<8xf32>, %i: tensor<i64>):
      scf.yield %acc, %i : tensor<8xf32>, tensor<i64>
    }
    %3:2 = scf.while (%acc = %zero, %i = %first) : (tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<i64>) {
      %a = torch_c.from_builtin_tensor %acc : tensor<8xf32> -> !torch.vtensor<[8],f32>
      %c = torch_c.from_builtin_tensor %i : tensor<i64> -> !torch.vtensor<[],si64>
      %2:3 = func.call @down(%a, %c, %x, %0#1) : (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[],si64>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.bool)
      %go = torch_c.to_i1 %2#2
      %na = torch_c.to_builtin_tensor %2#0 : !torch.vtensor<[8],f32> -> tensor<8xf32>
      %ni = torch_c.to_builtin_tensor %2#1 : !torch.vtensor<[],si64> -> tensor<i64>
      scf.condition(%go) %na, %ni : tensor<8xf32>, tensor<i64>
    } do {
    ^bb0(%acc: tensor<8xf32>, %i: tensor<i64>):
      scf.yield %acc, %i : tensor<8xf32>, tensor<i64>
    }
    %false = torch.constant.bool false
    %int0 = torch.constant.int 0
    %no = torch.aten.scalar_tensor %int0, %int11, %none, %none, %false : !torch.int, !torch.int, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[],i1>
    %guard = call @going(%0#0, %0#1, %no) : (!torch.vtensor<[],si64>, !torch.vtensor<[],si64>, !torch.vtensor<[],i1>) -> !torch.bool
    %g = torch_c.to_i1 %guard
    %5 = scf.if %g -> (tensor<8xf32>) {
      %4:2 = scf.while (%acc = %zero, %i = %first) : (tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<i64>) {
        %a = torch_c.from_builtin_tensor %acc : tensor<8xf32> -> !torch.vtensor<[8],f32>
        %c = torch_c.from_builtin_tensor %i : tensor<i64> -> !torch.vtensor<[],si64>
        %2:3 = func.call @step_or_break(%a, %c, %x) : (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[],i1>)
        %more = func.call @going(%2#1, %0#1, %2#2) : (!torch.vtensor<[],si64>, !torch.vtensor<[],si64>, !torch.vtensor<[],i1>) -> !torch.bool
        %go = torch_c.to_i1 %more
        %na = torch_c.to_builtin_tensor %2#0 : !torch.vtensor<[8],f32> -> tensor<8xf32>
        %ni = torch_c.to_builtin_tensor %2#1 : !torch.vtensor<[],si64> -> tensor<i64>
        scf.condition(%go) %na, %ni : tensor<8xf32>, tensor<i64>
      } do {
      ^bb0(%acc: tensor<8xf32>, %i: tensor<i64>):
        scf.yield %acc, %i : tensor<8xf32>, tensor<i64>
      }
      scf.yield %4#0 : tensor<8xf32>
    } else {
      scf.yield %zero : tensor<8xf32>
    }
    %r = torch_c.from_builtin_tensor %1#0 : tensor<8xf32> -> !torch.vtensor<[8],f32>
    %s = torch_c.from_builtin_tensor %3#0 : tensor<8xf32> -> !torch.vtensor<[8],f32>
    %u = torch_c.from_builtin_tensor %5 : tensor<8xf32> -> !torch.vtensor<[8],f32>
    return %r, %s, %u : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
  }
  func.func private @going(%next: !torch.vtensor<[],si64>, %stop: !torch.vtensor<[],si64>, %broke: !torch.vtensor<[],i1>) -> !torch.bool {
    %lt = torch.aten.lt.Tensor %next, %stop : !torch.vtensor<[],si64>, !torch.vtensor<[],si64> -> !torch.vtensor<[],i1>
    %not = torch.aten.bitwise_not %broke : !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %both = torch.aten.bitwise_and.Tensor %lt, %not : !torch.vtensor<[],i1>, !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %go = torch.aten.Bool.Tensor %both : !torch.vtensor<[],i1> -> !torch.bool
    return %go : !torch.bool
  }
  func.func private @step_or_break(%acc: !torch.vtensor<[8],f32>, %i: !torch.vtensor<[],si64>, %x: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[],i1>) {
    %t = torch.symbolic_int "t" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %x, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %n = torch.aten.size.int %x, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %i1 = torch.aten.view %i, %one : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
    %neg = torch.aten.lt.Scalar %i1, %int0 : !torch.vtensor<[1],si64>, !torch.int -> !torch.vtensor<[1],i1>
    %wrapped = torch.aten.add.Scalar %i1, %n, %int1 : !torch.vtensor<[1],si64>, !torch.int, !torch.int -> !torch.vtensor<[1],si64>
    %row = torch.aten.where.self %neg, %wrapped, %i1 : !torch.vtensor<[1],i1>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],si64>
    %xs = torch.aten.index_select %x, %int0, %row : !torch.vtensor<[?,8],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1,8],f32>
    %x_t = torch.aten.squeeze.dim %xs, %int0 : !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[8],f32>
    %sum = torch.aten.add.Tensor %acc, %x_t, %int1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8],f32>
    %next = torch.aten.add.Scalar %i, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    %total = torch.aten.sum %sum, %none : !torch.vtensor<[8],f32>, !torch.none -> !torch.vtensor<[],f32>
    %broke = torch.aten.gt.Scalar %total, %int1 : !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[],i1>
    return %sum, %next, %broke : !torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[],i1>
  }
  func.func private @bounds(%x: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[],si64>) {
    %t = torch.symbolic_int "t" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %x, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %int4 = torch.constant.int 4
    %none = torch.constant.none
    %false = torch.constant.bool false
    %n = torch.aten.size.int %x, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %stop = torch.aten.scalar_tensor %n, %int4, %none, %none, %false : !torch.int, !torch.int, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[],si64>
    %start = torch.aten.scalar_tensor %int0, %int4, %none, %none, %false : !torch.int, !torch.int, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[],si64>
    return %start, %stop : !torch.vtensor<[],si64>, !torch.vtensor<[],si64>
  }
  func.func private @step(%acc: !torch.vtensor<[8],f32>, %i: !torch.vtensor<[],si64>, %x: !torch.vtensor<[?,8],f32>, %stop: !torch.vtensor<[],si64>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.bool) {
    %t = torch.symbolic_int "t" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %x, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %n = torch.aten.size.int %x, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %i1 = torch.aten.view %i, %one : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
    %neg = torch.aten.lt.Scalar %i1, %int0 : !torch.vtensor<[1],si64>, !torch.int -> !torch.vtensor<[1],i1>
    %wrapped = torch.aten.add.Scalar %i1, %n, %int1 : !torch.vtensor<[1],si64>, !torch.int, !torch.int -> !torch.vtensor<[1],si64>
    %row = torch.aten.where.self %neg, %wrapped, %i1 : !torch.vtensor<[1],i1>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],si64>
    %xs = torch.aten.index_select %x, %int0, %row : !torch.vtensor<[?,8],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1,8],f32>
    %x_t = torch.aten.squeeze.dim %xs, %int0 : !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[8],f32>
    %sum = torch.aten.add.Tensor %acc, %x_t, %int1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8],f32>
    %next = torch.aten.add.Scalar %i, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    %lt = torch.aten.lt.Tensor %next, %stop : !torch.vtensor<[],si64>, !torch.vtensor<[],si64> -> !torch.vtensor<[],i1>
    %go = torch.aten.Bool.Tensor %lt : !torch.vtensor<[],i1> -> !torch.bool
    return %sum, %next, %go : !torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.bool
  }
  func.func private @down(%acc: !torch.vtensor<[8],f32>, %i: !torch.vtensor<[],si64>, %x: !torch.vtensor<[?,8],f32>, %stop: !torch.vtensor<[],si64>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.bool) {
    %t = torch.symbolic_int "t" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %x, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int-1 = torch.constant.int -1
    %n = torch.aten.size.int %x, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %one = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %i1 = torch.aten.view %i, %one : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
    %neg = torch.aten.lt.Scalar %i1, %int0 : !torch.vtensor<[1],si64>, !torch.int -> !torch.vtensor<[1],i1>
    %wrapped = torch.aten.add.Scalar %i1, %n, %int1 : !torch.vtensor<[1],si64>, !torch.int, !torch.int -> !torch.vtensor<[1],si64>
    %row = torch.aten.where.self %neg, %wrapped, %i1 : !torch.vtensor<[1],i1>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64> -> !torch.vtensor<[1],si64>
    %xs = torch.aten.index_select %x, %int0, %row : !torch.vtensor<[?,8],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1,8],f32>
    %x_t = torch.aten.squeeze.dim %xs, %int0 : !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[8],f32>
    %sum = torch.aten.add.Tensor %acc, %x_t, %int1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[8],f32>
    %next = torch.aten.add.Scalar %i, %int-1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    %lt = torch.aten.lt.Tensor %next, %stop : !torch.vtensor<[],si64>, !torch.vtensor<[],si64> -> !torch.vtensor<[],i1>
    %go = torch.aten.Bool.Tensor %lt : !torch.vtensor<[],i1> -> !torch.bool
    return %sum, %next, %go : !torch.vtensor<[8],f32>, !torch.vtensor<[],si64>, !torch.bool
  }
}
