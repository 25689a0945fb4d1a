// RUN: dync-opt %s --dync-inline-subdnns | FileCheck %s

// A loop body (itself a function) calls a sub-DNN that `main` also calls before the loop:
// every call is replaced by its callee's body, the one called twice copied, and the private
// functions are gone. Each function's own `torch.symbolic_int "b"` becomes the one at the
// entry of `main`, which every binding of `b` then uses: IREE gives it one value.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[B:.+]] = torch.symbolic_int "b"
// CHECK-NOT:     torch.symbolic_int
// CHECK:         torch.bind_symbolic_shape %arg0, [%[[B]]]
// CHECK-NOT:     call
// CHECK:         torch.aten.tanh %arg0
// CHECK:         torch.bind_symbolic_shape %{{.+}}, [%[[B]]]
// CHECK:         scf.while
// CHECK:           torch.bind_symbolic_shape %{{.+}}, [%[[B]]]
// CHECK:           torch.aten.tanh
// CHECK:           torch.aten.mul.Scalar
// CHECK:           torch.bind_symbolic_shape %{{.+}}, [%[[B]]]
// CHECK:           scf.condition
// CHECK:         return
// CHECK-NOT:   func.func private

// A public function is an entry point of its own: kept, and a call of it is left alone.
// CHECK-LABEL: func.func @other
// CHECK:         call @main
module {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %h0 = call @cell(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %h0, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %init = torch_c.to_builtin_tensor %h0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %r = scf.while (%h = %init) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
      %ht = torch_c.from_builtin_tensor %h : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %ht, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %next:2 = func.call @body(%ht) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.bool)
      %go = torch_c.to_i1 %next#1
      %n = torch_c.to_builtin_tensor %next#0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.condition(%go) %n : tensor<?x8xf32>
    } do {
    ^bb0(%h: tensor<?x8xf32>):
      scf.yield %h : tensor<?x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %out : !torch.vtensor<[?,8],f32>
  }
  func.func @other(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %r = call @main(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    return %r : !torch.vtensor<[?,8],f32>
  }
  func.func private @body(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.bool) {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %c = call @cell(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    %half = torch.constant.float 5.000000e-01
    %m = torch.aten.mul.Scalar %c, %half : !torch.vtensor<[?,8],f32>, !torch.float -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %m, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %true = torch.constant.bool false
    return %m, %true : !torch.vtensor<[?,8],f32>, !torch.bool
  }
  func.func private @cell(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %t = torch.aten.tanh %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    return %t : !torch.vtensor<[?,8],f32>
  }
}
