// RUN: dync-opt %s --split-input-file --dync-plan-execution | FileCheck %s

// Two independent branches, each a big temporary reduced to a scalar. Program order keeps both
// temporaries alive at once (8 KiB); finishing one branch before starting the other keeps one
// (4 KiB). The constants the ops read stay in front. IREE is asked to run the dispatches in
// this order, one after the other (its "debug" partitioning), not as one concurrent wave.
// CHECK-LABEL: module attributes {dync.execution = {exact = 1 : i64, reordered = 1 : i64, segments = 1 : i64}, stream.partitioning = #stream.partitioning_config<favor-debug>}
// CHECK-LABEL: func.func @branches
// CHECK:         torch.constant.int 1
// CHECK-NEXT:    torch.constant.none
// CHECK-NEXT:    %[[A:.+]] = torch.aten.mul.Tensor %arg0, %arg0
// CHECK-NEXT:    %[[RA:.+]] = torch.aten.sum %[[A]]
// CHECK-NEXT:    %[[B:.+]] = torch.aten.add.Tensor %arg0, %arg0
// CHECK-NEXT:    %[[RB:.+]] = torch.aten.sum %[[B]]
// CHECK-NEXT:    torch.aten.add.Tensor %[[RA]], %[[RB]]
module {
  func.func @branches(%x: !torch.vtensor<[1,1024],f32>) -> !torch.vtensor<[],f32> {
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %a = torch.aten.mul.Tensor %x, %x : !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32> -> !torch.vtensor<[1,1024],f32>
    %b = torch.aten.add.Tensor %x, %x, %int1 : !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32>, !torch.int -> !torch.vtensor<[1,1024],f32>
    %ra = torch.aten.sum %a, %none : !torch.vtensor<[1,1024],f32>, !torch.none -> !torch.vtensor<[],f32>
    %rb = torch.aten.sum %b, %none : !torch.vtensor<[1,1024],f32>, !torch.none -> !torch.vtensor<[],f32>
    %r = torch.aten.add.Tensor %ra, %rb, %int1 : !torch.vtensor<[],f32>, !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[],f32>
    return %r : !torch.vtensor<[],f32>
  }
}

// -----

// The same over a dynamic dim s in [2, 128]: the temporaries are s x 64, the new order is lower
// at every s, so it is taken. Each op keeps its shape binding right after it.
// CHECK-LABEL: func.func @symbolic
// CHECK:         torch.bind_symbolic_shape %arg0
// CHECK:         %[[A:.+]] = torch.aten.exp %arg0
// CHECK-NEXT:    torch.bind_symbolic_shape %[[A]]
// CHECK-NEXT:    %[[RA:.+]] = torch.aten.sum.dim_IntList %[[A]]
// CHECK-NEXT:    %[[B:.+]] = torch.aten.tanh %arg0
// CHECK-NEXT:    torch.bind_symbolic_shape %[[B]]
// CHECK-NEXT:    %[[RB:.+]] = torch.aten.sum.dim_IntList %[[B]]
// CHECK-NEXT:    torch.aten.add.Tensor %[[RA]], %[[RB]]
module attributes {dync.symbols = {s = {max = 128 : i64, min = 2 : i64}}} {
  func.func @symbolic(%x: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[64],f32> {
    %s = torch.symbolic_int "s" {min_val = 2, max_val = 128} : !torch.int
    torch.bind_symbolic_shape %x, [%s], affine_map<()[s0] -> (s0, 64)> : !torch.vtensor<[?,64],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %none = torch.constant.none
    %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %a = torch.aten.exp %x : !torch.vtensor<[?,64],f32> -> !torch.vtensor<[?,64],f32>
    torch.bind_symbolic_shape %a, [%s], affine_map<()[s0] -> (s0, 64)> : !torch.vtensor<[?,64],f32>
    %b = torch.aten.tanh %x : !torch.vtensor<[?,64],f32> -> !torch.vtensor<[?,64],f32>
    torch.bind_symbolic_shape %b, [%s], affine_map<()[s0] -> (s0, 64)> : !torch.vtensor<[?,64],f32>
    %ra = torch.aten.sum.dim_IntList %a, %dims, %false, %none : !torch.vtensor<[?,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[64],f32>
    %rb = torch.aten.sum.dim_IntList %b, %dims, %false, %none : !torch.vtensor<[?,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[64],f32>
    %r = torch.aten.add.Tensor %ra, %rb, %int1 : !torch.vtensor<[64],f32>, !torch.vtensor<[64],f32>, !torch.int -> !torch.vtensor<[64],f32>
    return %r : !torch.vtensor<[64],f32>
  }
}

// -----

// A host read (`Bool.Tensor`) between the branches is a partition point: no op crosses it, so
// the temporaries made before it stay alive across it. Neither segment (before and after it)
// has a lower order.
// CHECK-LABEL: module attributes {dync.execution = {exact = 2 : i64, reordered = 0 : i64, segments = 2 : i64}} {
// CHECK-LABEL: func.func @host_read
// CHECK:         torch.aten.mul.Tensor
// CHECK-NEXT:    torch.aten.add.Tensor
// CHECK-NEXT:    torch.aten.Bool.Tensor
// CHECK-NEXT:    torch.aten.sum %{{.+}}, %none
// CHECK-NEXT:    torch.aten.sum %{{.+}}, %none
module {
  func.func @host_read(%x: !torch.vtensor<[1,1024],f32>) -> (!torch.vtensor<[],f32>, !torch.bool) {
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %a = torch.aten.mul.Tensor %x, %x : !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32> -> !torch.vtensor<[1,1024],f32>
    %b = torch.aten.add.Tensor %x, %x, %int1 : !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32>, !torch.int -> !torch.vtensor<[1,1024],f32>
    %flag = torch.aten.Bool.Tensor %x : !torch.vtensor<[1,1024],f32> -> !torch.bool
    %ra = torch.aten.sum %a, %none : !torch.vtensor<[1,1024],f32>, !torch.none -> !torch.vtensor<[],f32>
    %rb = torch.aten.sum %b, %none : !torch.vtensor<[1,1024],f32>, !torch.none -> !torch.vtensor<[],f32>
    %r = torch.aten.add.Tensor %ra, %rb, %int1 : !torch.vtensor<[],f32>, !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[],f32>
    return %r, %flag : !torch.vtensor<[],f32>, !torch.bool
  }
}

// -----

// A temporary that is returned lives to the end whatever the order, and so does the one the
// other branch makes if it is returned too: no order is lower, so program order stays.
// CHECK-LABEL: module attributes {dync.execution = {exact = 1 : i64, reordered = 0 : i64, segments = 1 : i64}} {
// CHECK-LABEL: func.func @returned
// CHECK:         torch.aten.mul.Tensor
// CHECK-NEXT:    torch.aten.add.Tensor %arg0, %arg0
// CHECK-NEXT:    torch.aten.sum
// CHECK-NEXT:    torch.aten.sum
module {
  func.func @returned(%x: !torch.vtensor<[1,1024],f32>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32>) {
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %a = torch.aten.mul.Tensor %x, %x : !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32> -> !torch.vtensor<[1,1024],f32>
    %b = torch.aten.add.Tensor %x, %x, %int1 : !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32>, !torch.int -> !torch.vtensor<[1,1024],f32>
    %ra = torch.aten.sum %a, %none : !torch.vtensor<[1,1024],f32>, !torch.none -> !torch.vtensor<[],f32>
    %rb = torch.aten.sum %b, %none : !torch.vtensor<[1,1024],f32>, !torch.none -> !torch.vtensor<[],f32>
    %r = torch.aten.add.Tensor %ra, %rb, %int1 : !torch.vtensor<[],f32>, !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[],f32>
    return %r, %a, %b : !torch.vtensor<[],f32>, !torch.vtensor<[1,1024],f32>, !torch.vtensor<[1,1024],f32>
  }
}
