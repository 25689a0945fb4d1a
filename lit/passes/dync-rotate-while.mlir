// RUN: dync-opt %s --split-input-file --dync-rotate-while | FileCheck %s

// convert-torch-to-scf's while form (the "before" region only forwards, the condition is
// carried as an i1) becomes a guard plus a do-while whose "before" region is the body.
// CHECK-LABEL: func.func @forwarding
// CHECK-SAME:    (%[[C:.+]]: i1, %[[N:.+]]: i64, %[[X:.+]]: tensor<4xf32>)
// CHECK:         %[[R:.+]]:2 = scf.if %[[C]] -> (i64, tensor<4xf32>) {
// CHECK:           %[[W:.+]]:2 = scf.while (%[[K:.+]] = %[[N]], %[[H:.+]] = %[[X]]) : (i64, tensor<4xf32>) -> (i64, tensor<4xf32>) {
// CHECK:             %[[NEXT:.+]] = arith.addi %[[K]]
// CHECK:             %[[GO:.+]] = arith.cmpi slt, %[[NEXT]]
// CHECK:             scf.condition(%[[GO]]) %[[NEXT]], %[[H]] : i64, tensor<4xf32>
// CHECK:           } do {
// CHECK:           ^bb0(%[[A:.+]]: i64, %[[B:.+]]: tensor<4xf32>):
// CHECK:             scf.yield %[[A]], %[[B]] : i64, tensor<4xf32>
// CHECK:           }
// CHECK:           scf.yield %[[W]]#0, %[[W]]#1 : i64, tensor<4xf32>
// CHECK:         } else {
// CHECK:           scf.yield %[[N]], %[[X]] : i64, tensor<4xf32>
// CHECK:         }
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @forwarding(%c: i1, %n: i64, %x: tensor<4xf32>) -> (i64, tensor<4xf32>) {
  %c1 = arith.constant 1 : i64
  %c10 = arith.constant 10 : i64
  %0:2 = scf.while (%go = %c, %k = %n, %h = %x) : (i1, i64, tensor<4xf32>) -> (i64, tensor<4xf32>) {
    scf.condition(%go) %k, %h : i64, tensor<4xf32>
  } do {
  ^bb0(%k: i64, %h: tensor<4xf32>):
    %next = arith.addi %k, %c1 : i64
    %more = arith.cmpi slt, %next, %c10 : i64
    scf.yield %more, %next, %h : i1, i64, tensor<4xf32>
  }
  return %0#0, %0#1 : i64, tensor<4xf32>
}

// -----

// A while loop whose "before" region computes the condition is already a do-while.
// CHECK-LABEL: func.func @computing_before
// CHECK-NOT:     scf.if
// CHECK:         scf.while
func.func @computing_before(%n: i64) -> i64 {
  %c10 = arith.constant 10 : i64
  %c1 = arith.constant 1 : i64
  %0 = scf.while (%k = %n) : (i64) -> i64 {
    %more = arith.cmpi slt, %k, %c10 : i64
    scf.condition(%more) %k : i64
  } do {
  ^bb0(%k: i64):
    %next = arith.addi %k, %c1 : i64
    scf.yield %next : i64
  }
  return %0 : i64
}

// -----

// The do-while carries the values of a static shape before those of a dynamic one (IREE
// crashed on a dynamic tensor carried before a 0-d counter); the guard's results keep the
// loop's order.
// CHECK-LABEL: func.func @dynamic_then_static
// CHECK-SAME:    (%[[C:.+]]: i1, %[[X:.+]]: tensor<?x4xf32>, %[[N:.+]]: tensor<i64>)
// CHECK:         %[[R:.+]]:2 = scf.if %[[C]] -> (tensor<?x4xf32>, tensor<i64>) {
// CHECK:           %[[W:.+]]:2 = scf.while (%[[K:.+]] = %[[N]], %[[H:.+]] = %[[X]]) : (tensor<i64>, tensor<?x4xf32>) -> (tensor<i64>, tensor<?x4xf32>) {
// CHECK:             %[[T:.+]] = math.tanh %[[H]]
// CHECK:             scf.condition(%{{.+}}) %[[K]], %[[T]] : tensor<i64>, tensor<?x4xf32>
// CHECK:           } do {
// CHECK:           scf.yield %[[W]]#1, %[[W]]#0 : tensor<?x4xf32>, tensor<i64>
// CHECK:         } else {
// CHECK:           scf.yield %[[X]], %[[N]] : tensor<?x4xf32>, tensor<i64>
// CHECK:         }
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @dynamic_then_static(%c: i1, %x: tensor<?x4xf32>, %n: tensor<i64>) -> (tensor<?x4xf32>, tensor<i64>) {
  %0:2 = scf.while (%go = %c, %h = %x, %k = %n) : (i1, tensor<?x4xf32>, tensor<i64>) -> (tensor<?x4xf32>, tensor<i64>) {
    scf.condition(%go) %h, %k : tensor<?x4xf32>, tensor<i64>
  } do {
  ^bb0(%h: tensor<?x4xf32>, %k: tensor<i64>):
    %t = math.tanh %h : tensor<?x4xf32>
    %more = arith.constant true
    scf.yield %more, %t, %k : i1, tensor<?x4xf32>, tensor<i64>
  }
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<i64>
}
