// RUN: dync-opt %s --split-input-file --dync-split-subdnns | FileCheck %s
// A second run leaves a split module as it is:
// RUN: dync-opt %s --split-input-file --dync-split-subdnns --dync-split-subdnns | FileCheck %s

// A straight-line function is one sub-DNN: the skeleton only calls it. The weight is cloned
// into the sub-DNN (it stays a literal, not an argument) and the source span comes from the
// locations, a call site counting as its outermost caller.
// CHECK-LABEL: module attributes {dync.subdnns = [{arguments = ["[2, 4]"], calls = 1 : i64, name = "subdnn_0", ops = 2 : i64, results = ["[2, 4]"], source = "model.py:12-14"}]
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[R:.+]] = call @subdnn_0(%arg0) : (!torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func private @subdnn_0(%arg0: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32> attributes {dync.source = "model.py:12-14"}
// CHECK:         %[[W:.+]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<4xf32>)
// CHECK:         %[[A:.+]] = torch.aten.add.Tensor %arg0, %[[W]]
// CHECK:         %[[B:.+]] = torch.aten.relu %[[A]]
// CHECK:         return %[[B]]
// CHECK-NOT:   func.func
#l1 = loc("model.py":12:8)
#l2 = loc(callsite("torch/nn/functional.py":1500:0 at "model.py":14:4))
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) -> (!torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) attributes {dync.entry} {
    %0 = torch.vtensor.literal(dense<1.0> : tensor<4xf32>) : !torch.vtensor<[4],f32> loc(#l1)
    %int1 = torch.constant.int 1 loc(#l1)
    %1 = torch.aten.add.Tensor %arg0, %0, %int1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[2,4],f32> loc(#l1)
    %2 = torch.aten.relu %1 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32> loc(#l2)
    return %2 : !torch.vtensor<[2,4],f32>
  }
}

// -----

// Nested ifs: the skeleton keeps both scf.if, their predicates come out of sub-DNNs as
// !torch.bool, and every region gets its own sub-DNN, numbered in pre-order. No tensor op and
// no dead constant is left in the skeleton.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[P:.+]] = call @subdnn_0(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.bool
// CHECK-NOT:     torch.aten
// CHECK:         %[[C:.+]] = torch_c.to_i1 %[[P]]
// CHECK-NEXT:    %[[IF:.+]] = scf.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[T:.+]]:2 = func.call @subdnn_1(%arg0) : (!torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.bool)
// CHECK-NOT:       torch.constant
// CHECK-NEXT:      %[[C2:.+]] = torch_c.to_i1 %[[T]]#1
// CHECK-NEXT:      scf.if %[[C2]] -> (tensor<4xf32>) {
// CHECK-NEXT:        func.call @subdnn_2(%[[T]]#0)
// CHECK:           } else {
// CHECK-NEXT:        func.call @subdnn_3(%[[T]]#0)
// CHECK:         } else {
// CHECK-NEXT:      func.call @subdnn_4(%arg0)
// CHECK:         %[[X:.+]] = torch_c.from_builtin_tensor %[[IF]]
// CHECK-NEXT:    %[[Y:.+]] = call @subdnn_5(%[[X]])
// CHECK-NEXT:    return %[[Y]]
// CHECK-LABEL: func.func private @subdnn_0(%arg0: !torch.vtensor<[4],f32>) -> !torch.bool attributes {dync.source = "{{.+}}:{{[0-9]+}}-{{[0-9]+}}"}
// CHECK:         torch.aten.sum
// CHECK:         torch.aten.gt.Scalar
// CHECK:         torch.aten.Bool.Tensor
// CHECK-LABEL: func.func private @subdnn_1(
// CHECK:         torch.aten.relu
// CHECK:         torch.aten.max
// CHECK-LABEL: func.func private @subdnn_2(
// CHECK:         torch.aten.neg
// CHECK-LABEL: func.func private @subdnn_3(
// CHECK:         torch.aten.exp
// CHECK-LABEL: func.func private @subdnn_4(
// CHECK:         torch.aten.sigmoid
// CHECK-LABEL: func.func private @subdnn_5(
// CHECK:         torch.aten.mul.Tensor
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[4],f32> {dync.shape = [4]}) -> (!torch.vtensor<[4],f32> {dync.shape = [4]}) attributes {dync.entry} {
    %none = torch.constant.none
    %0 = torch.aten.sum %arg0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float0 = torch.constant.float 0.000000e+00
    %1 = torch.aten.gt.Scalar %0, %float0 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %2 = torch.aten.Bool.Tensor %1 : !torch.vtensor<[],i1> -> !torch.bool
    %3 = torch_c.to_i1 %2
    %4 = scf.if %3 -> (tensor<4xf32>) {
      %10 = torch.aten.relu %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
      %11 = torch.aten.max %10 : !torch.vtensor<[4],f32> -> !torch.vtensor<[],f32>
      %float1 = torch.constant.float 1.000000e+00
      %12 = torch.aten.gt.Scalar %11, %float1 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
      %13 = torch.aten.Bool.Tensor %12 : !torch.vtensor<[],i1> -> !torch.bool
      %14 = torch_c.to_i1 %13
      %15 = scf.if %14 -> (tensor<4xf32>) {
        %20 = torch.aten.neg %10 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
        %21 = torch_c.to_builtin_tensor %20 : !torch.vtensor<[4],f32> -> tensor<4xf32>
        scf.yield %21 : tensor<4xf32>
      } else {
        %20 = torch.aten.exp %10 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
        %21 = torch_c.to_builtin_tensor %20 : !torch.vtensor<[4],f32> -> tensor<4xf32>
        scf.yield %21 : tensor<4xf32>
      }
      scf.yield %15 : tensor<4xf32>
    } else {
      %10 = torch.aten.sigmoid %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %11 : tensor<4xf32>
    }
    %5 = torch_c.from_builtin_tensor %4 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    %6 = torch.aten.mul.Tensor %5, %5 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %6 : !torch.vtensor<[4],f32>
  }
}

// -----

// A while loop: the loop stays in the skeleton; its body and condition functions (branch-free)
// are inlined into one sub-DNN called in the before region, which also returns the loop
// predicate. The branch functions are gone; the counter's initial literal stays in the host.
// CHECK-NOT:   @while_loop_body_graph_0
// CHECK-NOT:   @while_loop_cond_graph_0
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[I:.+]] = torch.vtensor.literal(dense<0> : tensor<si64>)
// CHECK-NOT:     call
// CHECK:         scf.while
// CHECK:           %[[A:.+]] = torch_c.from_builtin_tensor
// CHECK-NEXT:      %[[B:.+]] = torch_c.from_builtin_tensor
// CHECK-NEXT:      %[[R:.+]]:3 = func.call @subdnn_0(%[[A]], %[[B]]) : (!torch.vtensor<[],si64>, !torch.vtensor<[4],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[4],f32>, !torch.bool)
// CHECK-NEXT:      %[[C:.+]] = torch_c.to_i1 %[[R]]#2
// CHECK:           scf.condition(%[[C]])
// CHECK:         } do {
// CHECK-NOT:       call
// CHECK:           scf.yield
// CHECK-NOT:     call
// CHECK:         return
// CHECK-LABEL: func.func private @subdnn_0(%arg0: !torch.vtensor<[],si64>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[4],f32>, !torch.bool)
// CHECK:         %[[N:.+]] = torch.aten.add.Scalar %arg0
// CHECK:         %[[H:.+]] = torch.aten.tanh %arg1
// CHECK:         %[[L:.+]] = torch.aten.lt.Scalar %[[N]]
// CHECK:         %[[P:.+]] = torch.aten.Bool.Tensor %[[L]]
// CHECK:         return %[[N]], %[[H]], %[[P]]
module attributes {dync.symbols = {}} {
  func.func private @while_loop_body_graph_0(%arg0: !torch.vtensor<[],si64>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[4],f32>) {
    %int1 = torch.constant.int 1
    %0 = torch.aten.add.Scalar %arg0, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    %1 = torch.aten.tanh %arg1 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %0, %1 : !torch.vtensor<[],si64>, !torch.vtensor<[4],f32>
  }
  func.func private @while_loop_cond_graph_0(%arg0: !torch.vtensor<[],si64>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[],i1> {
    %int5 = torch.constant.int 5
    %0 = torch.aten.lt.Scalar %arg0, %int5 : !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[],i1>
    return %0 : !torch.vtensor<[],i1>
  }
  func.func @main(%arg0: !torch.vtensor<[4],f32> {dync.shape = [4]}) -> (!torch.vtensor<[4],f32> {dync.shape = [4]}) attributes {dync.entry} {
    %0 = torch.vtensor.literal(dense<0> : tensor<si64>) : !torch.vtensor<[],si64>
    %1 = torch_c.to_builtin_tensor %0 : !torch.vtensor<[],si64> -> tensor<i64>
    %2 = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[4],f32> -> tensor<4xf32>
    %3:2 = scf.while (%a = %1, %b = %2) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
      %4 = torch_c.from_builtin_tensor %a : tensor<i64> -> !torch.vtensor<[],si64>
      %5 = torch_c.from_builtin_tensor %b : tensor<4xf32> -> !torch.vtensor<[4],f32>
      %6:2 = func.call @while_loop_body_graph_0(%4, %5) : (!torch.vtensor<[],si64>, !torch.vtensor<[4],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[4],f32>)
      %7 = func.call @while_loop_cond_graph_0(%6#0, %6#1) : (!torch.vtensor<[],si64>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[],i1>
      %8 = torch.aten.Bool.Tensor %7 : !torch.vtensor<[],i1> -> !torch.bool
      %9 = torch_c.to_i1 %8
      %10 = torch_c.to_builtin_tensor %6#0 : !torch.vtensor<[],si64> -> tensor<i64>
      %11 = torch_c.to_builtin_tensor %6#1 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.condition(%9) %10, %11 : tensor<i64>, tensor<4xf32>
    } do {
    ^bb0(%a: tensor<i64>, %b: tensor<4xf32>):
      scf.yield %a, %b : tensor<i64>, tensor<4xf32>
    }
    %12 = torch_c.from_builtin_tensor %3#1 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    return %12 : !torch.vtensor<[4],f32>
  }
}

// -----

// Early exit: the exit branch only copies the logits. That copy stays a sub-DNN of its own:
// an scf.if branch yielding the outer buffer while the other computes its own fails at run
// time in IREE 3.13. The other branch computes more (the cast that follows the call is in
// the same branch-free run, so it goes along).
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[S:[0-9]+]]:2 = call @subdnn_0(%arg0) : (!torch.vtensor<[1,8],f32>) -> (!torch.vtensor<[1,10],f32>, !torch.bool)
// CHECK-NEXT:    %[[C:[0-9]+]] = torch_c.to_i1 %[[S]]#1
// CHECK-NEXT:    scf.if %[[C]] -> (tensor<1x10xf32>) {
// CHECK-NEXT:      %[[Y:[0-9]+]] = func.call @subdnn_1(%[[S]]#0) : (!torch.vtensor<[1,10],f32>) -> !torch.vtensor<[1,10],f32>
// CHECK-NEXT:      torch_c.to_builtin_tensor %[[Y]]
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[D:[0-9]+]] = func.call @subdnn_2(%[[S]]#0) : (!torch.vtensor<[1,10],f32>) -> !torch.vtensor<[1,10],f32>
// CHECK-NEXT:      torch_c.to_builtin_tensor %[[D]]
// CHECK-NEXT:      scf.yield
// CHECK-NOT:   @true_graph_0
// CHECK-NOT:   @false_graph_0
// CHECK-LABEL: func.func private @subdnn_0(
// CHECK:         torch.aten.linear
// CHECK:         torch.aten.softmax.int
// CHECK:         torch.aten.Bool.Tensor
// CHECK-LABEL: func.func private @subdnn_1(%arg0: !torch.vtensor<[1,10],f32>)
// CHECK:         %[[X:[0-9]+]] = torch.aten.clone %arg0
// CHECK-NEXT:    return %[[X]]
// CHECK-LABEL: func.func private @subdnn_2(%arg0: !torch.vtensor<[1,10],f32>)
// CHECK-NOT:     torch.aten.clone
// CHECK:         %[[M:[0-9]+]] = torch.aten.mm %arg0
// CHECK-NEXT:    %[[K:[0-9]+]] = torch.tensor_static_info_cast %[[M]]
// CHECK-NEXT:    return %[[K]]
// CHECK-NOT:   func.func
module attributes {dync.symbols = {}} {
  func.func private @true_graph_0(%arg0: !torch.vtensor<[1,10],f32>) -> !torch.vtensor<[1,10],f32> {
    %none = torch.constant.none
    %0 = torch.aten.clone %arg0, %none : !torch.vtensor<[1,10],f32>, !torch.none -> !torch.vtensor<[1,10],f32>
    return %0 : !torch.vtensor<[1,10],f32>
  }
  func.func private @false_graph_0(%arg0: !torch.vtensor<[1,10],f32>) -> !torch.vtensor<[1,10],f32> {
    %0 = torch.vtensor.literal(dense<0.5> : tensor<10x10xf32>) : !torch.vtensor<[10,10],f32>
    %1 = torch.aten.mm %arg0, %0 : !torch.vtensor<[1,10],f32>, !torch.vtensor<[10,10],f32> -> !torch.vtensor<[1,10],f32>
    return %1 : !torch.vtensor<[1,10],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[1,8],f32> {dync.shape = [1, 8]}) -> (!torch.vtensor<[1,10],f32> {dync.shape = [1, 10]}) attributes {dync.entry} {
    %0 = torch.vtensor.literal(dense<0.25> : tensor<10x8xf32>) : !torch.vtensor<[10,8],f32>
    %1 = torch.vtensor.literal(dense<0.0> : tensor<10xf32>) : !torch.vtensor<[10],f32>
    %2 = torch.aten.linear %arg0, %0, %1 : !torch.vtensor<[1,8],f32>, !torch.vtensor<[10,8],f32>, !torch.vtensor<[10],f32> -> !torch.vtensor<[1,10],f32>
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %3 = torch.aten.softmax.int %2, %int1, %none : !torch.vtensor<[1,10],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,10],f32>
    %4 = torch.aten.max %3 : !torch.vtensor<[1,10],f32> -> !torch.vtensor<[],f32>
    %float = torch.constant.float 9.000000e-01
    %5 = torch.aten.gt.Scalar %4, %float : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %6 = torch.aten.Bool.Tensor %5 : !torch.vtensor<[],i1> -> !torch.bool
    %7 = torch_c.to_i1 %6
    %8 = scf.if %7 -> (tensor<1x10xf32>) {
      %10 = func.call @true_graph_0(%2) : (!torch.vtensor<[1,10],f32>) -> !torch.vtensor<[1,10],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[1,10],f32> -> tensor<1x10xf32>
      scf.yield %11 : tensor<1x10xf32>
    } else {
      %10 = func.call @false_graph_0(%2) : (!torch.vtensor<[1,10],f32>) -> !torch.vtensor<[1,10],f32>
      %11 = torch.tensor_static_info_cast %10 : !torch.vtensor<[1,10],f32> to !torch.vtensor<[1,10],f32>
      %12 = torch_c.to_builtin_tensor %11 : !torch.vtensor<[1,10],f32> -> tensor<1x10xf32>
      scf.yield %12 : tensor<1x10xf32>
    }
    %9 = torch_c.from_builtin_tensor %8 : tensor<1x10xf32> -> !torch.vtensor<[1,10],f32>
    return %9 : !torch.vtensor<[1,10],f32>
  }
}

// -----

// Dedup: two branch functions with the same body and the same weight become one sub-DNN with
// two call sites; the one with another weight stays apart.
// CHECK-LABEL: module attributes {dync.subdnns = [{arguments = ["[4]"], calls = 1 : i64, name = "subdnn_0", ops = 3 : i64, results = ["!torch.bool"], source = "{{[^"]+}}"}, {arguments = ["[4]"], calls = 2 : i64, name = "subdnn_1", ops = 1 : i64, results = ["[4]"], source = "{{[^"]+}}"}, {arguments = ["[4]"], calls = 1 : i64, name = "subdnn_2", ops = 1 : i64, results = ["[4]"], source = "{{[^"]+}}"}]
// CHECK-LABEL: func.func @main(
// CHECK:         scf.if
// CHECK-NEXT:      func.call @subdnn_1(%arg0)
// CHECK:         } else {
// CHECK-NEXT:      func.call @subdnn_2(%arg0)
// CHECK:         %[[X:.+]] = torch_c.from_builtin_tensor
// CHECK:         scf.if
// CHECK-NEXT:      func.call @subdnn_1(%[[X]])
// CHECK-LABEL: func.func private @subdnn_1(
// CHECK:         torch.vtensor.literal(dense<2.000000e+00>
// CHECK-LABEL: func.func private @subdnn_2(
// CHECK:         torch.vtensor.literal(dense<3.000000e+00>
// CHECK-NOT:   func.func
module attributes {dync.symbols = {}} {
  func.func private @double_a(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
    %0 = torch.vtensor.literal(dense<2.0> : tensor<4xf32>) : !torch.vtensor<[4],f32>
    %1 = torch.aten.mul.Tensor %arg0, %0 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %1 : !torch.vtensor<[4],f32>
  }
  func.func private @triple(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
    %0 = torch.vtensor.literal(dense<3.0> : tensor<4xf32>) : !torch.vtensor<[4],f32>
    %1 = torch.aten.mul.Tensor %arg0, %0 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %1 : !torch.vtensor<[4],f32>
  }
  func.func private @double_b(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
    %0 = torch.vtensor.literal(dense<2.0> : tensor<4xf32>) : !torch.vtensor<[4],f32>
    %1 = torch.aten.mul.Tensor %arg0, %0 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %1 : !torch.vtensor<[4],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[4],f32> {dync.shape = [4]}) -> (!torch.vtensor<[4],f32> {dync.shape = [4]}) attributes {dync.entry} {
    %none = torch.constant.none
    %0 = torch.aten.sum %arg0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float0 = torch.constant.float 0.000000e+00
    %1 = torch.aten.gt.Scalar %0, %float0 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %2 = torch.aten.Bool.Tensor %1 : !torch.vtensor<[],i1> -> !torch.bool
    %3 = torch_c.to_i1 %2
    %4 = scf.if %3 -> (tensor<4xf32>) {
      %10 = func.call @double_a(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %11 : tensor<4xf32>
    } else {
      %10 = func.call @triple(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %11 : tensor<4xf32>
    }
    %5 = torch_c.from_builtin_tensor %4 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    %6 = scf.if %3 -> (tensor<4xf32>) {
      %10 = func.call @double_b(%5) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %11 : tensor<4xf32>
    } else {
      scf.yield %4 : tensor<4xf32>
    }
    %7 = torch_c.from_builtin_tensor %6 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    return %7 : !torch.vtensor<[4],f32>
  }
}

// -----

// Constants go to the host: of the branch's three results the sub-DNN returns the computed
// one and the copy, and the constant is rebuilt in the skeleton. The copy stays in the
// sub-DNN because the skeleton would yield it out of the scf.if (IREE 3.13 fails at run time
// on a branch yielding an outer buffer while the other computes its own).
// CHECK-LABEL: func.func @main(
// CHECK:         scf.if
// CHECK-NEXT:      %[[R:[0-9]+]]:2 = func.call @subdnn_1(%arg0, %arg1) : (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>)
// CHECK-NEXT:      %[[K:[0-9]+]] = torch.vtensor.literal(dense<5.000000e-01> : tensor<4xf32>)
// CHECK-NEXT:      torch_c.to_builtin_tensor %[[K]]
// CHECK-NEXT:      torch_c.to_builtin_tensor %[[R]]#1
// CHECK-NEXT:      torch_c.to_builtin_tensor %[[R]]#0
// CHECK-LABEL: func.func private @subdnn_1(
// CHECK-NOT:     torch.vtensor.literal
// CHECK:         torch.aten.clone %arg1
// CHECK:         torch.aten.sin %arg0
module attributes {dync.symbols = {}} {
  func.func private @branch(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
    %none = torch.constant.none
    %0 = torch.aten.clone %arg1, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[4],f32>
    %1 = torch.vtensor.literal(dense<0.5> : tensor<4xf32>) : !torch.vtensor<[4],f32>
    %2 = torch.aten.sin %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %2, %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[4],f32> {dync.shape = [4]}, %arg1: !torch.vtensor<[4],f32> {dync.shape = [4]}) -> (!torch.vtensor<[4],f32> {dync.shape = [4]}) attributes {dync.entry} {
    %none = torch.constant.none
    %0 = torch.aten.sum %arg0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float0 = torch.constant.float 0.000000e+00
    %1 = torch.aten.gt.Scalar %0, %float0 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %2 = torch.aten.Bool.Tensor %1 : !torch.vtensor<[],i1> -> !torch.bool
    %3 = torch_c.to_i1 %2
    %4:3 = scf.if %3 -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %10:3 = func.call @branch(%arg0, %arg1) : (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>)
      %11 = torch_c.to_builtin_tensor %10#2 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      %12 = torch_c.to_builtin_tensor %10#1 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      %13 = torch_c.to_builtin_tensor %10#0 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %13, %12, %11 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    } else {
      %10 = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %10, %10, %10 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }
    %5 = torch_c.from_builtin_tensor %4#0 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    %6 = torch_c.from_builtin_tensor %4#1 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    %7 = torch.aten.mul.Tensor %5, %6 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    return %7 : !torch.vtensor<[4],f32>
  }
}

// -----

// Symbolic shapes: torch.symbolic_int stays at the top of the skeleton with the binding of the
// input; the sub-DNN re-declares the symbol, binds its argument the same way, and takes along
// the binding of the tensor it computes. Without file locations the source is "unknown".
// The record gives the sub-DNN's arguments and results by their symbolic dims.
// CHECK-LABEL: module attributes {dync.subdnns = [{arguments = ["[batch, 4]"], calls = 1 : i64, name = "subdnn_0", ops = 1 : i64, results = ["[batch, 4]"], source = "unknown"}]
// CHECK:       func.func @main(
// CHECK-NEXT:    %[[S:.+]] = torch.symbolic_int "batch" {min_val = 1, max_val = 8}
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[S]]], affine_map<()[s0] -> (s0, 4)>
// CHECK-NEXT:    %[[R:.+]] = call @subdnn_0(%arg0)
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func private @subdnn_0(%arg0: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> attributes {dync.source = "unknown"}
// CHECK-NEXT:    %[[T:.+]] = torch.symbolic_int "batch" {min_val = 1, max_val = 8}
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[T]]], affine_map<()[s0] -> (s0, 4)>
// CHECK-NEXT:    %[[X:.+]] = torch.aten.tanh %arg0
// CHECK-NEXT:    torch.bind_symbolic_shape %[[X]], [%[[T]]], affine_map<()[s0] -> (s0, 4)>
// CHECK-NEXT:    return %[[X]]
module attributes {dync.symbols = {batch = {max = 8 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,4],f32> {dync.shape = ["batch", 4]}) -> (!torch.vtensor<[?,4],f32> {dync.shape = ["batch", 4]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int loc(unknown)
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32> loc(unknown)
    %1 = torch.aten.tanh %arg0 : !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32> loc(unknown)
    torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32> loc(unknown)
    return %1 : !torch.vtensor<[?,4],f32>
  }
}

// -----

// A call to a function that contains control flow stays in the skeleton, and that function is
// split in turn. The weight its only caller passes is sunk into it (the argument goes), so the
// sub-DNN keeps it as a literal rather than taking it as an argument, and the skeleton has
// no literal left.
// CHECK-LABEL: func.func private @true_graph_1(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
// CHECK-NEXT:    %[[P:.+]]:2 = call @subdnn_0(%arg0) : (!torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.bool)
// CHECK:         scf.if
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     torch.aten
// CHECK-NOT:     torch.vtensor.literal
// CHECK:         func.call @true_graph_1(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
// CHECK-NOT:     torch.vtensor.literal
// CHECK:         return
// CHECK-LABEL: func.func private @subdnn_0(%arg0: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.bool)
// CHECK:         %[[W:.+]] = torch.vtensor.literal(dense<7.000000e+00> : tensor<4xf32>)
// CHECK:         torch.aten.mul.Tensor %arg0, %[[W]]
module attributes {dync.symbols = {}} {
  func.func private @true_graph_1(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
    %0 = torch.aten.mul.Tensor %arg0, %arg1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    %none = torch.constant.none
    %1 = torch.aten.sum %0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float0 = torch.constant.float 0.000000e+00
    %2 = torch.aten.gt.Scalar %1, %float0 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %3 = torch.aten.Bool.Tensor %2 : !torch.vtensor<[],i1> -> !torch.bool
    %4 = torch_c.to_i1 %3
    %5 = scf.if %4 -> (tensor<4xf32>) {
      %10 = torch.aten.neg %0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %11 : tensor<4xf32>
    } else {
      %10 = torch_c.to_builtin_tensor %0 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %10 : tensor<4xf32>
    }
    %6 = torch_c.from_builtin_tensor %5 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    return %6 : !torch.vtensor<[4],f32>
  }
  func.func private @false_graph_1(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
    %none = torch.constant.none
    %0 = torch.aten.clone %arg0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[4],f32>
    return %0 : !torch.vtensor<[4],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[4],f32> {dync.shape = [4]}) -> (!torch.vtensor<[4],f32> {dync.shape = [4]}) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<7.0> : tensor<4xf32>) : !torch.vtensor<[4],f32>
    %none = torch.constant.none
    %0 = torch.aten.sum %arg0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float0 = torch.constant.float 0.000000e+00
    %1 = torch.aten.lt.Scalar %0, %float0 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %2 = torch.aten.Bool.Tensor %1 : !torch.vtensor<[],i1> -> !torch.bool
    %3 = torch_c.to_i1 %2
    %4 = scf.if %3 -> (tensor<4xf32>) {
      %10 = func.call @true_graph_1(%arg0, %w) : (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %11 : tensor<4xf32>
    } else {
      %10 = func.call @false_graph_1(%arg0, %w) : (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
      %11 = torch_c.to_builtin_tensor %10 : !torch.vtensor<[4],f32> -> tensor<4xf32>
      scf.yield %11 : tensor<4xf32>
    }
    %5 = torch_c.from_builtin_tensor %4 : tensor<4xf32> -> !torch.vtensor<[4],f32>
    return %5 : !torch.vtensor<[4],f32>
  }
}

// -----

// A copy that the skeleton only returns goes to the host: the sub-DNN computes the relu alone
// and main returns its own argument for the clone.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[R:[0-9]+]] = call @subdnn_0(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
// CHECK-NEXT:    return %[[R]], %arg0
// CHECK-LABEL: func.func private @subdnn_0(
// CHECK-NOT:     torch.aten.clone
// CHECK:         torch.aten.relu %arg0
// CHECK-NOT:     torch.aten.clone
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[4],f32> {dync.shape = [4]}) -> (!torch.vtensor<[4],f32> {dync.shape = [4]}, !torch.vtensor<[4],f32> {dync.shape = [4]}) attributes {dync.entry} {
    %none = torch.constant.none
    %0 = torch.aten.relu %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    %1 = torch.aten.clone %arg0, %none : !torch.vtensor<[4],f32>, !torch.none -> !torch.vtensor<[4],f32>
    return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
  }
}

// -----

// The source span is the model's own file even where the first located op is torch's (a
// runtime assertion torch.export inserts, located in torch/fx/passes/runtime_assert.py).
// CHECK-LABEL: module attributes {dync.subdnns = [{arguments = ["[2, 4]"], calls = 1 : i64, name = "subdnn_0", ops = 2 : i64, results = ["[2, 4]"], source = "model.py:20-21"}]
#t1 = loc("torch/fx/passes/runtime_assert.py":24:0)
#t2 = loc("model.py":20:8)
#t3 = loc(callsite("torch/nn/functional.py":1500:0 at "model.py":21:4))
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) -> (!torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) attributes {dync.entry} {
    %0 = torch.vtensor.literal(dense<1.0> : tensor<4xf32>) : !torch.vtensor<[4],f32> loc(#t1)
    %int1 = torch.constant.int 1 loc(#t1)
    %1 = torch.aten.add.Tensor %arg0, %0, %int1 : !torch.vtensor<[2,4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[2,4],f32> loc(#t2)
    %2 = torch.aten.relu %1 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32> loc(#t3)
    return %2 : !torch.vtensor<[2,4],f32>
  }
}

// -----

// A `util.optimization_barrier` between `torch_c` casts (dync-bucket pads an argument through
// one) stays in the run: one sub-DNN, not two with the barrier's value crossing between them.
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[R:.+]] = call @subdnn_0(%arg0)
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func private @subdnn_0(
// CHECK:         %[[A:.+]] = torch.aten.relu %arg0
// CHECK-NEXT:    %[[IN:.+]] = torch_c.to_builtin_tensor %[[A]]
// CHECK-NEXT:    %[[B:.+]] = util.optimization_barrier %[[IN]]
// CHECK-NEXT:    %[[OUT:.+]] = torch_c.from_builtin_tensor %[[B]]
// CHECK-NEXT:    %[[C:.+]] = torch.aten.relu %[[OUT]]
// CHECK-NEXT:    return %[[C]]
// CHECK-NOT:   func.func
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) -> (!torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) attributes {dync.entry} {
    %0 = torch.aten.relu %arg0 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
    %1 = torch_c.to_builtin_tensor %0 : !torch.vtensor<[2,4],f32> -> tensor<2x4xf32>
    %2 = util.optimization_barrier %1 : tensor<2x4xf32>
    %3 = torch_c.from_builtin_tensor %2 : tensor<2x4xf32> -> !torch.vtensor<[2,4],f32>
    %4 = torch.aten.relu %3 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
    return %4 : !torch.vtensor<[2,4],f32>
  }
}
