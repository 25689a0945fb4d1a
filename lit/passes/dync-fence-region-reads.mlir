// RUN: dync-opt %s --split-input-file --dync-fence-region-reads | FileCheck %s

// A list's length and a flag leaving an scf.if each go through a barrier of their own right
// after the cast: the host reads them (`item`, to slice the list; `Bool.Tensor`), here or in
// a function they are passed to. A tensor with dims leaving it is left alone.
// CHECK-LABEL: func.func @main
// CHECK:         %[[IF:.+]]:3 = scf.if
// CHECK:         %[[N:.+]] = torch_c.from_builtin_tensor %[[IF]]#0
// CHECK:         %[[RAW:.+]] = torch_c.to_builtin_tensor %[[N]]
// CHECK:         %[[FENCED:.+]] = util.optimization_barrier %[[RAW]] : tensor<i64>
// CHECK:         %[[LEN:.+]] = torch_c.from_builtin_tensor %[[FENCED]]
// CHECK:         %[[B:.+]] = torch_c.from_builtin_tensor %[[IF]]#1
// CHECK:         %[[RAWB:.+]] = torch_c.to_builtin_tensor %[[B]]
// CHECK:         %[[FENCEDB:.+]] = util.optimization_barrier %[[RAWB]] : tensor<i1>
// CHECK:         %[[FLAG:.+]] = torch_c.from_builtin_tensor %[[FENCEDB]]
// CHECK:         %[[ROWS:.+]] = torch_c.from_builtin_tensor %[[IF]]#2
// CHECK-NOT:     util.optimization_barrier
// CHECK:         torch.aten.item %[[LEN]]
// CHECK:         torch.aten.Bool.Tensor %[[FLAG]]
// CHECK:         call @read(%[[LEN]], %[[ROWS]])
// CHECK:         return
module {
  func.func @main(%arg0: !torch.vtensor<[4,8],f32>, %flag: !torch.bool) -> !torch.vtensor<[?,8],f32> {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %c = torch_c.to_i1 %flag
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[4,8],f32> -> tensor<4x8xf32>
    %r:3 = scf.if %c -> (tensor<i64>, tensor<i1>, tensor<4x8xf32>) {
      %one = arith.constant dense<1> : tensor<i64>
      %t = arith.constant dense<true> : tensor<i1>
      scf.yield %one, %t, %x : tensor<i64>, tensor<i1>, tensor<4x8xf32>
    } else {
      %two = arith.constant dense<2> : tensor<i64>
      %f = arith.constant dense<false> : tensor<i1>
      scf.yield %two, %f, %x : tensor<i64>, tensor<i1>, tensor<4x8xf32>
    }
    %n = torch_c.from_builtin_tensor %r#0 : tensor<i64> -> !torch.vtensor<[],si64>
    %b = torch_c.from_builtin_tensor %r#1 : tensor<i1> -> !torch.vtensor<[],i1>
    %rows = torch_c.from_builtin_tensor %r#2 : tensor<4x8xf32> -> !torch.vtensor<[4,8],f32>
    %len = torch.aten.item %n : !torch.vtensor<[],si64> -> !torch.int
    %go = torch.aten.Bool.Tensor %b : !torch.vtensor<[],i1> -> !torch.bool
    %s = call @read(%n, %rows) : (!torch.vtensor<[],si64>, !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[?,8],f32>
    return %s : !torch.vtensor<[?,8],f32>
  }
  func.func private @read(%n: !torch.vtensor<[],si64>, %rows: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %len = torch.aten.item %n : !torch.vtensor<[],si64> -> !torch.int
    %s = torch.aten.slice.Tensor %rows, %int0, %int0, %len, %int1 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
    return %s : !torch.vtensor<[?,8],f32>
  }
}

// -----

// Left alone: a host read of a tensor computed outside any region.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     util.optimization_barrier
// CHECK:         torch.aten.item %arg0
module {
  func.func @main(%arg0: !torch.vtensor<[],si64>) -> !torch.int {
    %len = torch.aten.item %arg0 : !torch.vtensor<[],si64> -> !torch.int
    return %len : !torch.int
  }
}
