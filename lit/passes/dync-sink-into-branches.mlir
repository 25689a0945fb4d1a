// RUN: dync-opt %s --split-input-file --dync-sink-into-branches | FileCheck %s

// The condition reads %gate; the stem %y (and its binding) is read only inside the branches:
// each branch computes it, after the condition is read. The constant stays in front.
// CHECK-LABEL: func.func @stem_and_gate
// CHECK:         torch.constant.int 1
// CHECK-NEXT:    torch.constant.none
// CHECK-NEXT:    %[[G:.+]] = torch.aten.sum %arg0
// CHECK-NEXT:    %[[B:.+]] = torch.aten.Bool.Tensor %[[G]]
// CHECK-NEXT:    %[[C:.+]] = torch_c.to_i1 %[[B]]
// CHECK-NEXT:    scf.if %[[C]]
// CHECK-NEXT:      %[[Y1:.+]] = torch.aten.mul.Tensor %arg1, %arg1
// CHECK-NEXT:      torch.bind_symbolic_shape %[[Y1]]
// CHECK-NEXT:      %[[R1:.+]] = torch.aten.relu %[[Y1]]
// CHECK-NEXT:      torch_c.to_builtin_tensor %[[R1]]
// CHECK:         } else {
// CHECK-NEXT:      %[[Y2:.+]] = torch.aten.mul.Tensor %arg1, %arg1
// CHECK-NEXT:      torch.bind_symbolic_shape %[[Y2]]
// CHECK-NEXT:      torch_c.to_builtin_tensor %[[Y2]]
// CHECK-NOT:     torch.aten.mul.Tensor
// CHECK:         return
module {
  func.func @stem_and_gate(%g: !torch.vtensor<[4],f32>, %x: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %s = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
    torch.bind_symbolic_shape %x, [%s], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %y = torch.aten.mul.Tensor %x, %x : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %y, [%s], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %gate = torch.aten.sum %g, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
    %b = torch.aten.Bool.Tensor %gate : !torch.vtensor<[],f32> -> !torch.bool
    %c = torch_c.to_i1 %b
    %r = scf.if %c -> (tensor<?x8xf32>) {
      %t = torch.aten.relu %y : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %tb = torch_c.to_builtin_tensor %t : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %tb : tensor<?x8xf32>
    } else {
      %yb = torch_c.to_builtin_tensor %y : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %yb : tensor<?x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %out : !torch.vtensor<[?,8],f32>
  }
}

// -----

// Read only by the "then" branch: the "else" branch does not compute it.
// CHECK-LABEL: func.func @one_branch
// CHECK:         scf.if
// CHECK-NEXT:      torch.aten.tanh %arg1
// CHECK:         } else {
// CHECK-NOT:       torch.aten.tanh
// CHECK:         return
module {
  func.func @one_branch(%c: i1, %x: !torch.vtensor<[2,8],f32>) -> !torch.vtensor<[2,8],f32> {
    %y = torch.aten.tanh %x : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
    %r = scf.if %c -> (tensor<2x8xf32>) {
      %yb = torch_c.to_builtin_tensor %y : !torch.vtensor<[2,8],f32> -> tensor<2x8xf32>
      scf.yield %yb : tensor<2x8xf32>
    } else {
      %xb = torch_c.to_builtin_tensor %x : !torch.vtensor<[2,8],f32> -> tensor<2x8xf32>
      scf.yield %xb : tensor<2x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r : tensor<2x8xf32> -> !torch.vtensor<[2,8],f32>
    return %out : !torch.vtensor<[2,8],f32>
  }
}

// -----

// Read after the branch as well: it stays where it is.
// CHECK-LABEL: func.func @read_after
// CHECK:         %[[Y:.+]] = torch.aten.tanh %arg1
// CHECK-NEXT:    scf.if
// CHECK-NOT:       torch.aten.tanh
// CHECK:         torch.aten.add.Tensor %{{.+}}, %[[Y]]
module {
  func.func @read_after(%c: i1, %x: !torch.vtensor<[2,8],f32>) -> !torch.vtensor<[2,8],f32> {
    %int1 = torch.constant.int 1
    %y = torch.aten.tanh %x : !torch.vtensor<[2,8],f32> -> !torch.vtensor<[2,8],f32>
    %r = scf.if %c -> (tensor<2x8xf32>) {
      %yb = torch_c.to_builtin_tensor %y : !torch.vtensor<[2,8],f32> -> tensor<2x8xf32>
      scf.yield %yb : tensor<2x8xf32>
    } else {
      %xb = torch_c.to_builtin_tensor %x : !torch.vtensor<[2,8],f32> -> tensor<2x8xf32>
      scf.yield %xb : tensor<2x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r : tensor<2x8xf32> -> !torch.vtensor<[2,8],f32>
    %sum = torch.aten.add.Tensor %out, %y, %int1 : !torch.vtensor<[2,8],f32>, !torch.vtensor<[2,8],f32>, !torch.int -> !torch.vtensor<[2,8],f32>
    return %sum : !torch.vtensor<[2,8],f32>
  }
}
