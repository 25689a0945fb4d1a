// RUN: dync-opt %s --split-input-file --dync-exact-loops | FileCheck %s

// A bounded loop with a data-dependent condition (ONNX Loop) gets its own trip counter:
// it starts at 0, the loop is entered only if 0 < n, and it goes on while cond && k+1 < n.
// CHECK-LABEL: func.func @bounded
// CHECK-SAME:    (%[[N:.+]]: !torch.int, %[[C:.+]]: !torch.bool, %[[X:.+]]: !torch.vtensor<[4],f32>)
// CHECK-DAG:     %[[ZERO:.+]] = torch.constant.int 0
// CHECK-DAG:     %[[ONE:.+]] = torch.constant.int 1
// CHECK:         %[[ANY:.+]] = torch.aten.lt.int %[[ZERO]], %[[N]]
// CHECK:         %[[START:.+]] = torch.aten.__and__.bool %[[C]], %[[ANY]]
// CHECK:         %[[LOOP:.+]]:2 = torch.prim.Loop %[[N]], %[[START]], init(%[[ZERO]], %[[X]])
// CHECK:         ^bb0(%{{.+}}: !torch.int, %[[K:.+]]: !torch.int, %[[H:.+]]: !torch.vtensor<[4],f32>):
// CHECK:           %[[T:.+]] = torch.aten.tanh %[[H]]
// CHECK:           %[[B:.+]] = torch.aten.Bool.Tensor %[[T]]
// CHECK:           %[[NEXT:.+]] = torch.aten.add.int %[[K]], %[[ONE]]
// CHECK:           %[[MORE:.+]] = torch.aten.lt.int %[[NEXT]], %[[N]]
// CHECK:           %[[GO:.+]] = torch.aten.__and__.bool %[[B]], %[[MORE]]
// CHECK:           torch.prim.Loop.condition %[[GO]], iter(%[[NEXT]], %[[T]] : !torch.int, !torch.vtensor<[4],f32>)
// CHECK:         return %[[LOOP]]#1
func.func @bounded(%n: !torch.int, %c: !torch.bool, %x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.prim.Loop %n, %c, init(%x) {
  ^bb0(%i: !torch.int, %h: !torch.vtensor<[4],f32>):
    %1 = torch.aten.tanh %h : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    %2 = torch.aten.Bool.Tensor %1 : !torch.vtensor<[4],f32> -> !torch.bool
    torch.prim.Loop.condition %2, iter(%1 : !torch.vtensor<[4],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// The iteration number of a bounded loop becomes the counter (it used to dangle).
// CHECK-LABEL: func.func @uses_iv
// CHECK:         torch.prim.Loop
// CHECK:         ^bb0(%{{.+}}: !torch.int, %[[K:.+]]: !torch.int, %{{.+}}: !torch.vtensor<[],si64>):
// CHECK:           torch.prim.NumToTensor.Scalar %[[K]]
func.func @uses_iv(%n: !torch.int, %c: !torch.bool, %x: !torch.vtensor<[],si64>) -> !torch.vtensor<[],si64> {
  %0 = torch.prim.Loop %n, %c, init(%x) {
  ^bb0(%i: !torch.int, %h: !torch.vtensor<[],si64>):
    %1 = torch.prim.NumToTensor.Scalar %i : !torch.int -> !torch.vtensor<[],si64>
    %2 = torch.aten.Bool.Tensor %1 : !torch.vtensor<[],si64> -> !torch.bool
    torch.prim.Loop.condition %2, iter(%1 : !torch.vtensor<[],si64>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[],si64>) -> !torch.vtensor<[],si64>
  return %0 : !torch.vtensor<[],si64>
}

// -----

// A for-loop (constant-true conditions) is already exact: untouched.
// CHECK-LABEL: func.func @for_loop
// CHECK-NOT:     torch.aten.lt.int
// CHECK:         torch.prim.Loop %arg0, %true, init(%arg1)
func.func @for_loop(%n: !torch.int, %x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %true = torch.constant.bool true
  %0 = torch.prim.Loop %n, %true, init(%x) {
  ^bb0(%i: !torch.int, %h: !torch.vtensor<[4],f32>):
    %1 = torch.aten.tanh %h : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    torch.prim.Loop.condition %true, iter(%1 : !torch.vtensor<[4],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// torch.while_loop's form (unbounded, iteration number unused) needs no counter.
// CHECK-LABEL: func.func @while_loop
// CHECK-NOT:     torch.aten.add.int
// CHECK:         torch.prim.Loop %{{.+}}, %arg0, init(%arg1) {
func.func @while_loop(%c: !torch.bool, %x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %max = torch.constant.int 9223372036854775807
  %0 = torch.prim.Loop %max, %c, init(%x) {
  ^bb0(%i: !torch.int, %h: !torch.vtensor<[4],f32>):
    %1 = torch.aten.tanh %h : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    %2 = torch.aten.Bool.Tensor %1 : !torch.vtensor<[4],f32> -> !torch.bool
    torch.prim.Loop.condition %2, iter(%1 : !torch.vtensor<[4],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// A for-like loop that carries a tensor with a dynamic dim gets the counter too, so that it
// becomes an scf.while: IREE returns an scf.for's growing carried tensor at its first shape.
// CHECK-LABEL: func.func @growing_for_loop
// CHECK:         %[[ANY:.+]] = torch.aten.lt.int
// CHECK:         %[[START:.+]] = torch.aten.__and__.bool %{{.+}}, %[[ANY]]
// CHECK:         torch.prim.Loop %{{.+}}, %[[START]], init(
func.func @growing_for_loop(%n: !torch.int, %x: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %true = torch.constant.bool true
  %int0 = torch.constant.int 0
  %0 = torch.prim.Loop %n, %true, init(%x) {
  ^bb0(%i: !torch.int, %h: !torch.vtensor<[?,4],f32>):
    %1 = torch.prim.ListConstruct %h, %h : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) -> !torch.list<vtensor>
    %2 = torch.aten.cat %1, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,4],f32>
    torch.prim.Loop.condition %true, iter(%2 : !torch.vtensor<[?,4],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
  return %0 : !torch.vtensor<[?,4],f32>
}

// -----

// A dynamic carried tensor that keeps its shape leaves the for-like loop alone.
// CHECK-LABEL: func.func @dynamic_for_loop
// CHECK-NOT:     torch.aten.__and__.bool
// CHECK:         torch.prim.Loop %{{.+}}, %true, init(
func.func @dynamic_for_loop(%n: !torch.int, %x: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %true = torch.constant.bool true
  %0 = torch.prim.Loop %n, %true, init(%x) {
  ^bb0(%i: !torch.int, %h: !torch.vtensor<[?,4],f32>):
    %1 = torch.aten.tanh %h : !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32>
    torch.prim.Loop.condition %true, iter(%1 : !torch.vtensor<[?,4],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
  return %0 : !torch.vtensor<[?,4],f32>
}
