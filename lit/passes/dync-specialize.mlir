// RUN: dync-opt %s --split-input-file --dync-specialize | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-specialize --dync-rdp | FileCheck %s --check-prefix=RDP
// RUN: not dync-opt %s.bad --split-input-file --dync-specialize 2>&1 | FileCheck %s.bad

// One version per requested assignment: static arguments cast back to the dynamic type once,
// bindings over the specialized symbol turned into constants; the entry stays as it was.
// CHECK-NOT:   dync.specialize
// CHECK-LABEL: func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]})
// CHECK:         torch.bind_symbolic_shape %arg0, [%{{.+}}], affine_map<()[s0] -> (s0, 8)>
// CHECK-LABEL: func.func @main__batch_2(%arg0: !torch.vtensor<[2,8],f32> {dync.shape = [2, 8]})
// CHECK-SAME:    attributes {dync.version = {batch = 2 : i64}}
// CHECK:         %[[X:[0-9]+]] = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[2,8],f32> to !torch.vtensor<[?,8],f32>
// CHECK-NOT:     torch.symbolic_int "batch"
// CHECK:         torch.bind_symbolic_shape %[[X]], [], affine_map<() -> (2, 8)>
// CHECK:         torch.aten.relu %[[X]]
// CHECK-LABEL: func.func @main__batch_5
// CHECK-SAME:    attributes {dync.version = {batch = 5 : i64}}

// RDP then proves the version's dims static, in the types of the ops and of what they read.
// RDP-LABEL: func.func @main__batch_2
// RDP:         torch.aten.relu %{{.+}} : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
module attributes {dync.specialize = [{batch = 2 : i64}, {batch = 5 : i64}], dync.symbols = {batch = {max = 8 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["batch", 8]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %1 = torch.aten.relu %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %1 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// Two symbols, one specialized: derived dims (32*h) become constants, the other stays a
// symbol in the bindings; RDP refines the types to match.
// CHECK-LABEL: func.func @main__h_4(%arg0: !torch.vtensor<[1,3,128,?],f32> {dync.shape = [1, 3, 128, "32*w"]})
// CHECK:         %[[W:[0-9]+]] = torch.symbolic_int "w"
// CHECK:         torch.bind_symbolic_shape %{{.+}}, [%[[W]]], affine_map<()[s0] -> (1, 3, 128, s0 * 32)>
// RDP-LABEL:   func.func @main__h_4
// RDP:           torch.aten.sigmoid %{{.+}} -> !torch.vtensor<[1,3,128,?],f32>
module attributes {dync.specialize = [{h = 4 : i64}], dync.symbols = {h = {max = 10 : i64, min = 2 : i64}, w = {max = 10 : i64, min = 2 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[1,3,?,?],f32> {dync.shape = [1, 3, "32*h", "32*w"]}) -> (!torch.vtensor<[1,3,?,?],f32> {dync.shape = [1, 3, "32*h", "32*w"]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "h" {min_val = 2, max_val = 10} : !torch.int
    %1 = torch.symbolic_int "w" {min_val = 2, max_val = 10} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0, %1], affine_map<()[s0, s1] -> (1, 3, s0 * 32, s1 * 32)> : !torch.vtensor<[1,3,?,?],f32>
    %2 = torch.aten.sigmoid %arg0 : !torch.vtensor<[1,3,?,?],f32> -> !torch.vtensor<[1,3,?,?],f32>
    return %2 : !torch.vtensor<[1,3,?,?],f32>
  }
}

// -----

// The functions the entry calls are copied for the version (RDP joins a callee's call sites:
// one shared with the dynamic entry would stay dynamic).
// CHECK-LABEL: func.func @main(
// CHECK:         call @body(
// CHECK-LABEL: func.func private @body(
// CHECK-LABEL: func.func @main__n_3(
// CHECK:         call @body__n_3(
// CHECK-LABEL: func.func private @body__n_3(
// CHECK-NOT:     torch.symbolic_int "n"
// CHECK:         torch.bind_symbolic_shape %arg0, [], affine_map<() -> (3, 4)>
// RDP then gives the version's copy a static signature (its one call site passes [3, 4]).
// RDP-LABEL:   func.func @main__n_3(
// RDP-NEXT:      %[[R:[0-9]+]] = call @body__n_3(%arg0) : (!torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],f32>
// RDP-NEXT:      %[[C:[0-9]+]] = torch.tensor_static_info_cast %[[R]] : !torch.vtensor<[3,4],f32> to !torch.vtensor<[?,4],f32>
// RDP-NEXT:      return %[[C]]
// RDP-LABEL:   func.func private @body__n_3(%arg0: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],f32> {
// RDP-NEXT:      %[[T:[0-9]+]] = torch.aten.tanh %arg0 : !torch.vtensor<[3,4],f32> -> !torch.vtensor<[3,4],f32>
// RDP-NEXT:      return %[[T]]
module attributes {dync.specialize = [{n = 3 : i64}], dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) -> (!torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) attributes {dync.entry} {
    %0 = call @body(%arg0) : (!torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
    return %0 : !torch.vtensor<[?,4],f32>
  }
  func.func private @body(%arg0: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> {
    %0 = torch.symbolic_int "n" {min_val = 1, max_val = 16} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %1 = torch.aten.tanh %arg0 : !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32>
    return %1 : !torch.vtensor<[?,4],f32>
  }
}
