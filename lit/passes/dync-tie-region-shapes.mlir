// RUN: dync-opt %s --split-input-file --dync-tie-region-shapes | FileCheck %s

// A tensor leaving an scf.if gets its dynamic dims tied (flow.tensor.tie_shape) to sizes read
// from the argument bound to the same symbol; its later uses read the tied tensor, bound like
// the tensor.
// CHECK-LABEL: func.func @main
// CHECK:         %[[B:.+]] = torch.symbolic_int "batch"
// CHECK:         torch.bind_symbolic_shape %arg0
// CHECK:         %[[AXIS:.+]] = torch.constant.int 0
// CHECK:         %[[SIZE:.+]] = torch.aten.size.int %arg0, %[[AXIS]]
// CHECK:         %[[IF:.+]] = scf.if
// CHECK:         %[[T:.+]] = torch_c.from_builtin_tensor %[[IF]]
// CHECK:         torch.bind_symbolic_shape %[[T]], [%[[B]]]
// CHECK:         %[[RAW:.+]] = torch_c.to_builtin_tensor %[[T]]
// CHECK:         %[[I64:.+]] = torch_c.to_i64 %[[SIZE]]
// CHECK:         %[[DIM:.+]] = arith.index_cast %[[I64]] : i64 to index
// CHECK:         %[[TIED:.+]] = flow.tensor.tie_shape %[[RAW]] : tensor<?x8xf32>{%[[DIM]]}
// CHECK:         %[[BACK:.+]] = torch_c.from_builtin_tensor %[[TIED]]
// CHECK:         torch.bind_symbolic_shape %[[BACK]], [%[[B]]], affine_map<()[s0] -> (s0, 8)>
// CHECK:         torch.aten.add.Tensor %[[BACK]], %arg0
module attributes {dync.symbols = {batch = {max = 64 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}, %flag: !torch.bool) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) attributes {dync.entry} {
    %b = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int1 = torch.constant.int 1
    %c = torch_c.to_i1 %flag
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %r = scf.if %c -> (tensor<?x8xf32>) {
      %t = torch.aten.tanh %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %tb = torch_c.to_builtin_tensor %t : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %tb : tensor<?x8xf32>
    } else {
      scf.yield %x : tensor<?x8xf32>
    }
    %h = torch_c.from_builtin_tensor %r : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %h, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %s = torch.aten.add.Tensor %h, %arg0, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
    return %s : !torch.vtensor<[?,8],f32>
  }
}

// -----

// Left alone: a dim no argument has (a size the branch computed from data), and a dim that
// is an expression of the arguments' symbols beyond sums, products and integer divisions.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     flow.tensor.tie_shape
// CHECK-NOT:     torch.aten.size.int
// CHECK:         return
module attributes {dync.symbols = {batch = {max = 64 : i64, min = 1 : i64}, u0 = {max = 64 : i64, min = 0 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}, %flag: !torch.bool) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["u0", 8]}) attributes {dync.entry} {
    %b = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    %u = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %c = torch_c.to_i1 %flag
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %r:2 = scf.if %c -> (tensor<?x8xf32>, tensor<?x8xf32>) {
      scf.yield %x, %x : tensor<?x8xf32>, tensor<?x8xf32>
    } else {
      scf.yield %x, %x : tensor<?x8xf32>, tensor<?x8xf32>
    }
    %h = torch_c.from_builtin_tensor %r#0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %h, [%u], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %g = torch_c.from_builtin_tensor %r#1 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %g, [%b], affine_map<()[s0] -> (s0 mod 3, 8)> : !torch.vtensor<[?,8],f32>
    return %h : !torch.vtensor<[?,8],f32>
  }
}

// -----

// A dim computed from the arguments' symbols (a stride-2 convolution's output size, a
// ceiling division, a product) is computed once at the entry from the arguments' sizes, each
// constant and size once.
// CHECK-LABEL: func.func @main
// CHECK:         %[[H:.+]] = torch.symbolic_int "height"
// CHECK:         %[[W:.+]] = torch.symbolic_int "width"
// CHECK:         %[[SH:.+]] = torch.aten.size.int %arg0, %{{.+}}
// CHECK:         %[[HM1:.+]] = torch.aten.add.int %{{.+}}, %[[SH]]
// CHECK:         %[[C2:.+]] = torch.constant.int 2
// CHECK:         %[[FD:.+]] = torch.aten.floordiv.int %[[HM1]], %[[C2]]
// CHECK:         %[[OH:.+]] = torch.aten.add.int %{{.+}}, %[[FD]]
// CHECK:         %[[SW:.+]] = torch.aten.size.int %arg0, %{{.+}}
// CHECK:         %[[UP:.+]] = torch.aten.add.int %[[C2]], %[[SW]]
// CHECK:         %[[C3:.+]] = torch.constant.int 3
// CHECK:         %[[CEIL:.+]] = torch.aten.floordiv.int %[[UP]], %[[C3]]
// CHECK:         %[[HW:.+]] = torch.aten.mul.int %[[SH]], %[[SW]]
// CHECK:         scf.if
// CHECK:         %[[T:.+]] = torch_c.from_builtin_tensor
// CHECK:         %[[RAW:.+]] = torch_c.to_builtin_tensor %[[T]]
// CHECK:         torch_c.to_i64 %[[OH]]
// CHECK:         torch_c.to_i64 %[[CEIL]]
// CHECK:         torch_c.to_i64 %[[HW]]
// CHECK:         %[[TIED:.+]] = flow.tensor.tie_shape %[[RAW]]
// CHECK:         %[[BACK:.+]] = torch_c.from_builtin_tensor %[[TIED]]
// CHECK:         return %[[BACK]]
module attributes {dync.symbols = {height = {max = 64 : i64, min = 8 : i64}, width = {max = 64 : i64, min = 8 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,?],f32> {dync.shape = ["height", "width"]}, %flag: !torch.bool) -> (!torch.vtensor<[?,?,?],f32> {dync.shape = ["(height - 1) // 2 + 1", "-(-width // 3)", "height * width"]}) attributes {dync.entry} {
    %h = torch.symbolic_int "height" {min_val = 8, max_val = 64} : !torch.int
    %w = torch.symbolic_int "width" {min_val = 8, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%h, %w], affine_map<()[s0, s1] -> (s0, s1)> : !torch.vtensor<[?,?],f32>
    %c0 = arith.constant 0 : index
    %c = torch_c.to_i1 %flag
    %r = scf.if %c -> (tensor<?x?x?xf32>) {
      %e = tensor.empty(%c0, %c0, %c0) : tensor<?x?x?xf32>
      scf.yield %e : tensor<?x?x?xf32>
    } else {
      %e = tensor.empty(%c0, %c0, %c0) : tensor<?x?x?xf32>
      scf.yield %e : tensor<?x?x?xf32>
    }
    %t = torch_c.from_builtin_tensor %r : tensor<?x?x?xf32> -> !torch.vtensor<[?,?,?],f32>
    torch.bind_symbolic_shape %t, [%h, %w], affine_map<()[s0, s1] -> ((s0 - 1) floordiv 2 + 1, s1 ceildiv 3, s0 * s1)> : !torch.vtensor<[?,?,?],f32>
    return %t : !torch.vtensor<[?,?,?],f32>
  }
}

// -----

// Ops before the arguments' symbols and bindings (the barriered constants `dync-distinct-fills`
// puts at the entry): the sizes are read after the bindings all the same (IREE ties an
// argument to its sizes at its binding; a read before it no longer sees the argument).
// CHECK-LABEL: func.func @main
// CHECK:         util.optimization_barrier
// CHECK:         %[[B:.+]] = torch.symbolic_int "batch"
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0
// CHECK-NEXT:    %[[AXIS:.+]] = torch.constant.int 0
// CHECK-NEXT:    %[[SIZE:.+]] = torch.aten.size.int %arg0, %[[AXIS]]
// CHECK:         flow.tensor.tie_shape
module attributes {dync.symbols = {batch = {max = 64 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}, %flag: !torch.bool) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) attributes {dync.entry} {
    %zero = arith.constant 0 : i64
    %kept = util.optimization_barrier %zero : i64
    %b = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %c = torch_c.to_i1 %flag
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %r = scf.if %c -> (tensor<?x8xf32>) {
      scf.yield %x : tensor<?x8xf32>
    } else {
      scf.yield %x : tensor<?x8xf32>
    }
    %h = torch_c.from_builtin_tensor %r : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %h, [%b], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %h : !torch.vtensor<[?,8],f32>
  }
}
