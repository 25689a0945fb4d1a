// RUN: dync-opt %s --split-input-file --dync-canonicalize | FileCheck %s
// RUN: not dync-opt %s.bad --split-input-file --dync-canonicalize 2>&1 | FileCheck %s.bad

// Duplicate symbols in one function collapse into the first; bindings follow it.
// CHECK-LABEL: func.func @main
// CHECK:         %[[S:.+]] = torch.symbolic_int "batch" {min_val = 1, max_val = 64}
// CHECK-NOT:     torch.symbolic_int
// CHECK:         torch.bind_symbolic_shape %arg0, [%[[S]]]
// CHECK:         torch.bind_symbolic_shape %{{.+}}, [%[[S]]]
module attributes {dync.symbols = {batch = {max = 64 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    %1 = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%1], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %2 = torch.aten.relu %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %2, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %2 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// A binding whose dims are all constants says nothing the type does not; it goes.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     torch.bind_symbolic_shape
// CHECK:         return
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[2,8],f32> {dync.shape = [2, 8]}) -> (!torch.vtensor<[2,8],f32> {dync.shape = [2, 8]}) attributes {dync.entry} {
    %0 = torch.aten.relu %arg0 : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
    torch.bind_symbolic_shape %0, [], affine_map<() -> (2, 8)> : !torch.vtensor<[2,8],f32>
    return %0 : !torch.vtensor<[2,8],f32>
  }
}

// -----

// Unused symbols disappear from private functions but stay in the entry function.
// CHECK-LABEL: func.func private @branch
// CHECK-NOT:     torch.symbolic_int
// CHECK-LABEL: func.func @main
// CHECK:         torch.symbolic_int "batch"
module attributes {dync.symbols = {batch = {max = 64 : i64, min = 1 : i64}}} {
  func.func private @branch(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    return %arg0 : !torch.vtensor<[?,8],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    %1 = call @branch(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    return %1 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// A symbol first declared in a region (a branch function inlined into scf.if) moves to the top
// of the entry block, so that a duplicate in the other region can use it.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[U:.+]] = torch.symbolic_int "u0" {min_val = 0, max_val = 8}
// CHECK-NOT:     torch.symbolic_int "u0"
// CHECK:         scf.if
// CHECK:           torch.bind_symbolic_shape %{{.+}}, [%[[U]]]
// CHECK:         } else {
// CHECK:           torch.bind_symbolic_shape %{{.+}}, [%[[U]]]
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[8],i1> {dync.shape = [8]}, %arg1: i1) -> (!torch.vtensor<[?,1],si64> {dync.shape = ["u0", 1]}) attributes {dync.entry} {
    %0 = scf.if %arg1 -> (!torch.vtensor<[?,1],si64>) {
      %1 = torch.symbolic_int "u0" {min_val = 0, max_val = 8} : !torch.int
      %2 = torch.aten.nonzero %arg0 : !torch.vtensor<[8],i1> -> !torch.vtensor<[?,1],si64>
      torch.bind_symbolic_shape %2, [%1], affine_map<()[s0] -> (s0, 1)> : !torch.vtensor<[?,1],si64>
      scf.yield %2 : !torch.vtensor<[?,1],si64>
    } else {
      %1 = torch.symbolic_int "u0" {min_val = 0, max_val = 8} : !torch.int
      %2 = torch.aten.nonzero %arg0 : !torch.vtensor<[8],i1> -> !torch.vtensor<[?,1],si64>
      torch.bind_symbolic_shape %2, [%1], affine_map<()[s0] -> (s0, 1)> : !torch.vtensor<[?,1],si64>
      scf.yield %2 : !torch.vtensor<[?,1],si64>
    }
    return %0 : !torch.vtensor<[?,1],si64>
  }
}

// -----

// Two bindings of one value, the symbols in another order, say the same: one stays, right
// after the value's definition (IREE 3.13 rejects the pair as "conflicting symbolic shape
// bindings for the same value"; see lit/upstream/iree-permuted-shape-bindings.mlir).
// CHECK-LABEL: func.func @main
// CHECK:         %[[B:.+]] = torch.symbolic_int "batch"
// CHECK-NEXT:    %[[H:.+]] = torch.symbolic_int "height"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[B]], %[[H]]], affine_map<()[s0, s1] -> (s0, 4, s1)>
// CHECK-NEXT:    torch.aten.relu %arg0
// CHECK-NOT:     torch.bind_symbolic_shape %arg0
// CHECK:         return
module attributes {dync.symbols = {batch = {max = 16 : i64, min = 1 : i64}, height = {max = 64 : i64, min = 8 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,4,?],f32> {dync.shape = ["batch", 4, "height"]}) -> (!torch.vtensor<[?,4,?],f32> {dync.shape = ["batch", 4, "height"]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 16} : !torch.int
    %1 = torch.symbolic_int "height" {min_val = 8, max_val = 64} : !torch.int
    %2 = torch.aten.relu %arg0 : !torch.vtensor<[?,4,?],f32> -> !torch.vtensor<[?,4,?],f32>
    torch.bind_symbolic_shape %arg0, [%0, %1], affine_map<()[s0, s1] -> (s0, 4, s1)> : !torch.vtensor<[?,4,?],f32>
    torch.bind_symbolic_shape %arg0, [%1, %0], affine_map<()[s0, s1] -> (s1, 4, s0)> : !torch.vtensor<[?,4,?],f32>
    return %2 : !torch.vtensor<[?,4,?],f32>
  }
}

// -----

// A binding placed after a use of its value moves up to the definition: IREE replaces the
// uses after a binding by the bound value, and the use before it would read a value defined
// later ("operand #0 does not dominate this use"). Symbols declared late move to the top.
// CHECK-LABEL: func.func private @subdnn
// CHECK-NEXT:    %[[S:.+]] = torch.symbolic_int "tokens"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[S]]]
// CHECK:         %[[Z:.+]] = torch.aten.zeros_like %arg0
// CHECK-NEXT:    torch.bind_symbolic_shape %[[Z]], [%[[S]]]
// CHECK-NEXT:    return %[[Z]]
module attributes {dync.symbols = {tokens = {max = 64 : i64, min = 2 : i64}}} {
  func.func private @subdnn(%arg0: !torch.vtensor<[?,32],f32>) -> !torch.vtensor<[?,32],f32> {
    %none = torch.constant.none
    %false = torch.constant.bool false
    %0 = torch.symbolic_int "tokens" {min_val = 2, max_val = 64} : !torch.int
    %1 = torch.aten.zeros_like %arg0, %none, %none, %none, %false, %none : !torch.vtensor<[?,32],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,32],f32>
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 32)> : !torch.vtensor<[?,32],f32>
    torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (s0, 32)> : !torch.vtensor<[?,32],f32>
    torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (s0, 32)> : !torch.vtensor<[?,32],f32>
    return %1 : !torch.vtensor<[?,32],f32>
  }
}
