// RUN: dync-opt %s --split-input-file --dync-check-ir | FileCheck %s
// RUN: not dync-opt %s.bad --split-input-file --dync-check-ir 2>&1 | FileCheck %s.bad --check-prefix=ERR

// Well-formed dync IR passes through unchanged, scf control flow included.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    dync.shape = ["batch", 8]
// CHECK:         scf.if
module attributes {dync.symbols = {batch = {max = 64 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}, %arg1: i1 {dync.shape = []}) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %1 = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %2 = scf.if %arg1 -> (tensor<?x8xf32>) {
      scf.yield %1 : tensor<?x8xf32>
    } else {
      scf.yield %1 : tensor<?x8xf32>
    }
    %3 = torch_c.from_builtin_tensor %2 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %3 : !torch.vtensor<[?,8],f32>
  }
}
