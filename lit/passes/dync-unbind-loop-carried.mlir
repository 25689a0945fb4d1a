// RUN: dync-opt %s --dync-unbind-loop-carried | FileCheck %s

// The step function a loop calls gets the carried output and the sequence it walks through
// (defined before the loop): the carried tensor's binding in the callee goes, the sequence's
// stays, and so do the caller's bindings. A function called outside any loop keeps all of
// its bindings.
// CHECK-LABEL: func.func @main
// CHECK:         torch.bind_symbolic_shape %arg0
// CHECK:         torch.bind_symbolic_shape %[[SEQ:.+]], [
// CHECK:         scf.while
// CHECK:           torch.bind_symbolic_shape
// CHECK:           func.call @step({{.*}}, %[[SEQ]])
// CHECK-LABEL: func.func private @prepare
// CHECK:         torch.bind_symbolic_shape %arg0
// CHECK:         torch.bind_symbolic_shape
// CHECK-LABEL: func.func private @step
// CHECK-NEXT:    torch.symbolic_int "t"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg1, [
// CHECK-NOT:     torch.bind_symbolic_shape %arg0
// CHECK:         return

// The same in an `scf.for`: its iteration arguments are what it carries.
// CHECK-LABEL: func.func @counted
// CHECK:         scf.for
// CHECK:           func.call @for_step
// CHECK-LABEL: func.func private @for_step
// CHECK-NEXT:    torch.symbolic_int "t"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg1, [
// CHECK-NOT:     torch.bind_symbolic_shape %arg0
// CHECK:         return

// A loop whose callee binds nothing from before the loop to the carried tensor's symbol
// (`while h.abs().max() > 0.25: h = h * 0.5`): its bindings stay. Unbound, IREE 3.13 crashed
// in the stream dialect's resource analysis on such a loop (SIGSEGV, fuzz seed 1009).
// CHECK-LABEL: func.func private @halve
// CHECK-NEXT:    torch.symbolic_int "t"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [
module {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %seq = call @prepare(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %seq, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %init = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %r = scf.while (%acc = %init) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
      %a = torch_c.from_builtin_tensor %acc : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %a, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %next:2 = func.call @step(%a, %seq) : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.bool)
      %go = torch_c.to_i1 %next#1
      %n = torch_c.to_builtin_tensor %next#0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.condition(%go) %n : tensor<?x8xf32>
    } do {
    ^bb0(%acc: tensor<?x8xf32>):
      scf.yield %acc : tensor<?x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %out : !torch.vtensor<[?,8],f32>
  }
  func.func private @prepare(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %0 = torch.aten.tanh %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %0, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %0 : !torch.vtensor<[?,8],f32>
  }
  func.func private @step(%arg1: !torch.vtensor<[?,8],f32>, %arg2: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.bool) {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg1, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %arg2, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int1 = torch.constant.int 1
    %0 = torch.aten.add.Tensor %arg1, %arg2, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
    %true = torch.constant.bool true
    return %0, %true : !torch.vtensor<[?,8],f32>, !torch.bool
  }
  func.func @counted(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %init = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<?x8xf32>) {
      %a = torch_c.from_builtin_tensor %acc : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %next = func.call @for_step(%a, %arg0) : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
      %n = torch_c.to_builtin_tensor %next : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %n : tensor<?x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %out : !torch.vtensor<[?,8],f32>
  }
  func.func private @for_step(%arg0: !torch.vtensor<[?,8],f32>, %arg1: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %arg1, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int1 = torch.constant.int 1
    %0 = torch.aten.add.Tensor %arg0, %arg1, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
    return %0 : !torch.vtensor<[?,8],f32>
  }
  func.func @halving(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %init = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %r = scf.while (%acc = %init) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
      %a = torch_c.from_builtin_tensor %acc : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %next:2 = func.call @halve(%a) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.bool)
      %go = torch_c.to_i1 %next#1
      %n = torch_c.to_builtin_tensor %next#0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.condition(%go) %n : tensor<?x8xf32>
    } do {
    ^bb0(%acc: tensor<?x8xf32>):
      scf.yield %acc : tensor<?x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %out : !torch.vtensor<[?,8],f32>
  }
  func.func private @halve(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.bool) {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %float = torch.constant.float 5.000000e-01
    %0 = torch.aten.mul.Scalar %arg0, %float : !torch.vtensor<[?,8],f32>, !torch.float -> !torch.vtensor<[?,8],f32>
    %true = torch.constant.bool true
    return %0, %true : !torch.vtensor<[?,8],f32>, !torch.bool
  }
}
