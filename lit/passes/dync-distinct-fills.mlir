// RUN: dync-opt %s --dync-distinct-fills | FileCheck %s

// Fills of a dynamic shape that are written in place take their value (made explicit for
// zeros and ones) through a barrier of their own; an arange of a dynamic length written in
// place (here through a dtype conversion) gets a barrier's 0 added. A static fill (a constant
// to IREE) and a fill nothing writes into are left alone. Each barrier sits where its value
// is defined: the constants dync makes at the function's entry, the fill's own value (-1)
// right after it, never between the device ops (there it split IREE's stream).
// CHECK-LABEL: func.func @fills
// CHECK-NEXT:    %[[I0:.*]] = torch.constant.int 0
// CHECK-NEXT:    %[[I64:.*]] = torch_c.to_i64 %[[I0]]
// CHECK-NEXT:    %[[IB:.*]] = util.optimization_barrier %[[I64]] : i64
// CHECK-NEXT:    %[[IV:.*]] = torch_c.from_i64 %[[IB]]
// CHECK-NEXT:    %[[ONE:.*]] = torch.constant.float 1.000000e+00
// CHECK-NEXT:    %[[O64:.*]] = torch_c.to_f64 %[[ONE]]
// CHECK-NEXT:    %[[OB:.*]] = util.optimization_barrier %[[O64]] : f64
// CHECK-NEXT:    %[[OV:.*]] = torch_c.from_f64 %[[OB]]
// CHECK-NEXT:    %[[ZERO:.*]] = torch.constant.float 0.000000e+00
// CHECK-NEXT:    %[[Z64:.*]] = torch_c.to_f64 %[[ZERO]]
// CHECK-NEXT:    %[[ZB:.*]] = util.optimization_barrier %[[Z64]] : f64
// CHECK-NEXT:    %[[ZV:.*]] = torch_c.from_f64 %[[ZB]]
// CHECK:         %[[M1:.*]] = torch.constant.int -1
// CHECK-NEXT:    %[[M64:.*]] = torch_c.to_i64 %[[M1]]
// CHECK-NEXT:    %[[MB:.*]] = util.optimization_barrier %[[M64]] : i64
// CHECK-NEXT:    %[[MV:.*]] = torch_c.from_i64 %[[MB]]
// CHECK-NEXT:    %[[A:.*]] = torch.aten.full_like %arg0, %[[ZV]], %none, %none, %none, %false, %none
// CHECK-NEXT:    torch.aten.select_scatter %[[A]]
// CHECK:         %[[B:.*]] = torch.aten.full %{{.*}}, %[[OV]], %none, %none, %none, %none
// CHECK-NEXT:    torch.aten.select_scatter %[[B]]
// CHECK-NEXT:    %[[C:.*]] = torch.aten.arange %arg1
// CHECK-NEXT:    %{{.*}} = torch.constant.int 1
// CHECK-NEXT:    %[[C2:.*]] = torch.aten.add.Scalar %[[C]], %[[IV]]
// CHECK-NEXT:    torch.aten.to.dtype %[[C2]]
// CHECK:         torch.aten.zeros %{{.*}} -> !torch.vtensor<[4,8],f32>
// CHECK:         %[[E:.*]] = torch.aten.fill.Scalar %arg2, %[[MV]]
// CHECK:         %[[F:.*]] = torch.aten.zeros_like %arg0
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
func.func @fills(%x: !torch.vtensor<[?,8],f32>, %n: !torch.int, %ids: !torch.vtensor<[?],si64>, %row: !torch.vtensor<[8],f32>, %v: !torch.vtensor<[],f32>, %i: !torch.vtensor<[],si64>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[?],si64>, !torch.vtensor<[?,8],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int6 = torch.constant.int 6
  %int8 = torch.constant.int 8
  %int4 = torch.constant.int 4
  %int-1 = torch.constant.int -1
  %a = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[?,8],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,8],f32>
  %a1 = torch.aten.select_scatter %a, %row, %int0, %int0 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
  %size = torch.prim.ListConstruct %n, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %b = torch.aten.ones %size, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[?,8],f32>
  %b1 = torch.aten.select_scatter %b, %row, %int0, %int0 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
  %c = torch.aten.arange %n, %int4, %none, %none, %none : !torch.int, !torch.int, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[?],si64>
  %cf = torch.aten.to.dtype %c, %int6, %false, %false, %none : !torch.vtensor<[?],si64>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
  %c1 = torch.aten.select_scatter %cf, %v, %int0, %int0 : !torch.vtensor<[?],f32>, !torch.vtensor<[],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  %static = torch.prim.ListConstruct %int4, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.aten.zeros %static, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[4,8],f32>
  %d1 = torch.aten.select_scatter %d, %row, %int0, %int0 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,8],f32>
  %e = torch.aten.fill.Scalar %ids, %int-1 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %e1 = torch.aten.select_scatter %e, %i, %int0, %int0 : !torch.vtensor<[?],si64>, !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
  %f = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[?,8],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,8],f32>
  return %a1, %b1, %c1, %d1, %e1, %f : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[?],si64>, !torch.vtensor<[?,8],f32>
}

// A fill written in place twice: each write gets a fill of its own (two writes into one
// fill are the same merge inside IREE), and the original fill, read by no one, goes.
// CHECK-LABEL: func.func @written_twice
// CHECK-NOT:     torch.aten.zeros_like
// CHECK:         %[[BB:.*]] = util.optimization_barrier
// CHECK-NEXT:    %[[VB:.*]] = torch_c.from_f64 %[[BB]]
// CHECK:         %[[BA:.*]] = util.optimization_barrier
// CHECK-NEXT:    %[[VA:.*]] = torch_c.from_f64 %[[BA]]
// CHECK:         %[[A:.*]] = torch.aten.full_like %arg0, %[[VA]]
// CHECK-NEXT:    %[[A1:.*]] = torch.aten.select_scatter %[[A]], %arg1, %int0, %int0
// CHECK:         %[[B:.*]] = torch.aten.full_like %arg0, %[[VB]]
// CHECK-NEXT:    %[[A2:.*]] = torch.aten.select_scatter %[[B]], %arg1, %int0, %int1
// CHECK-NOT:     torch.aten.zeros_like
// CHECK:         return %[[A1]], %[[A2]]
func.func @written_twice(%x: !torch.vtensor<[?,8],f32>, %row: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %a = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[?,8],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,8],f32>
  %a1 = torch.aten.select_scatter %a, %row, %int0, %int0 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
  %a2 = torch.aten.select_scatter %a, %row, %int0, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
  return %a1, %a2 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>
}

// A boolean fill's value made explicit is an int (torch's fills take no `!torch.bool`).
// CHECK-LABEL: func.func @boolean
// CHECK-NEXT:    %[[ONE:.*]] = torch.constant.int 1
// CHECK-NEXT:    %[[I64:.*]] = torch_c.to_i64 %[[ONE]]
// CHECK-NEXT:    %[[B:.*]] = util.optimization_barrier %[[I64]] : i64
// CHECK-NEXT:    %[[V:.*]] = torch_c.from_i64 %[[B]]
// CHECK:         %[[K:.*]] = torch.aten.full_like %arg0, %[[V]], %int11
// CHECK-SAME:      -> !torch.vtensor<[?],i1>
// CHECK-NEXT:    torch.aten.slice_scatter %[[K]], %arg1
func.func @boolean(%ids: !torch.vtensor<[?],si64>, %mask: !torch.vtensor<[?],i1>) -> !torch.vtensor<[?],i1> {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int11 = torch.constant.int 11
  %end = torch.constant.int 9223372036854775807
  %k = torch.aten.ones_like %ids, %int11, %none, %none, %false, %none : !torch.vtensor<[?],si64>, !torch.int, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?],i1>
  %0 = torch.aten.slice_scatter %k, %mask, %int0, %int1, %end, %int1 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],i1>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],i1>
  return %0 : !torch.vtensor<[?],i1>
}

// -----

// A scatter's updates of a dynamic shape (a GCN's degree count, `index_add_` of `ones(E)`)
// are read through a fence of the tensor (IREE's `compute_barrier.start`): fused into the
// scatter's dispatch, IREE held them on the stack at E's upper bound. Static updates are left alone.
// CHECK-LABEL: func.func @updates
// CHECK:         %[[ONES:.*]] = torch.aten.ones %{{.*}} -> !torch.vtensor<[?],f32>
// CHECK:         %[[IN:.*]] = torch_c.to_builtin_tensor %[[ONES]]
// CHECK:         %[[FENCE:.*]] = iree_tensor_ext.compute_barrier.start %[[IN]] : tensor<?xf32>{%{{.*}}} -> tensor<?xf32>
// CHECK-NEXT:    %[[UPD:.*]] = torch_c.from_builtin_tensor %[[FENCE]]
// CHECK:         torch.aten.index_put %{{.*}}, %{{.*}}, %[[UPD]], %true
// CHECK:         torch.aten.index_put %{{.*}}, %{{.*}}, %arg2, %true
// CHECK-NOT:     compute_barrier
// CHECK:         return
func.func @updates(%table: !torch.vtensor<[8],f32>, %dst: !torch.vtensor<[?],si64>, %static: !torch.vtensor<[3],f32>, %idx3: !torch.vtensor<[3],si64>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %true = torch.constant.bool true
  %n = torch.aten.size.int %dst, %int0 : !torch.vtensor<[?],si64>, !torch.int -> !torch.int
  %shape = torch.prim.ListConstruct %n : (!torch.int) -> !torch.list<int>
  %ones = torch.aten.ones %shape, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[?],f32>
  %indices = torch.prim.ListConstruct %dst : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %0 = torch.aten.index_put %table, %indices, %ones, %true : !torch.vtensor<[8],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],f32>, !torch.bool -> !torch.vtensor<[8],f32>
  %indices3 = torch.prim.ListConstruct %idx3 : (!torch.vtensor<[3],si64>) -> !torch.list<optional<vtensor>>
  %1 = torch.aten.index_put %table, %indices3, %static, %true : !torch.vtensor<[8],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[3],f32>, !torch.bool -> !torch.vtensor<[8],f32>
  return %0, %1 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
}

// -----

// A zero fill of a dynamic shape read by a product (an RNN's zero initial state times its
// recurrent weight) fills from a barrier'd 0: IREE merged it with the product's zero
// accumulator and AVX2 code read the wrong buffer. A fill of ones is not a zero
// accumulator's twin and is left alone.
// CHECK-LABEL: func.func @products
// CHECK:         %[[ZB:.*]] = util.optimization_barrier %{{.*}} : f64
// CHECK-NEXT:    %[[ZV:.*]] = torch_c.from_f64 %[[ZB]]
// CHECK:         %[[H:.*]] = torch.aten.new_full %arg0, %{{.*}}, %[[ZV]]
// CHECK-NEXT:    torch.aten.mm %[[H]], %arg1
// CHECK:         %[[ONES:.*]] = torch.aten.new_ones %arg0
// CHECK-NEXT:    torch.aten.mm %[[ONES]], %arg1
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
func.func @products(%y: !torch.vtensor<[?,8],f32>, %w: !torch.vtensor<[8,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) {
  %int0 = torch.constant.int 0
  %int8 = torch.constant.int 8
  %false = torch.constant.bool false
  %none = torch.constant.none
  %n = torch.aten.size.int %y, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
  %shape = torch.prim.ListConstruct %n, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.aten.new_zeros %y, %shape, %none, %none, %none, %false : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[?,8],f32>
  %0 = torch.aten.mm %zeros, %w : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[?,8],f32>
  %ones = torch.aten.new_ones %y, %shape, %none, %none, %none, %false : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[?,8],f32>
  %1 = torch.aten.mm %ones, %w : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[?,8],f32>
  return %0, %1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>
}

// -----

// A constant broadcast to a dynamic shape (ONNX's ConstantOfShape) is a fill: each of the two
// scatters into one gets its own broadcast of the literal through a barrier of its own, right
// after the literal. IREE merged the two broadcasts, and the second scatter's writes went into
// the first one's result (`ConstantOfShape` + `ScatterElements` twice, ONNX's `Unique`).
// CHECK-LABEL: func.func @broadcast_literals
// CHECK:         %[[L:.*]] = torch.vtensor.literal(dense<0> : tensor<si64>)
// CHECK:         util.optimization_barrier
// CHECK:         util.optimization_barrier
// CHECK:         %[[A:.*]] = torch.aten.broadcast_to %{{.*}}, %[[S:.*]] :
// CHECK-NEXT:    torch.aten.scatter.src %[[A]]
// CHECK:         %[[B:.*]] = torch.aten.broadcast_to %{{.*}}, %[[S]] :
// CHECK-NEXT:    torch.aten.scatter.src %[[B]]
// CHECK-NOT:     torch.aten.broadcast_to %[[L]]
// CHECK:         return
func.func @broadcast_literals(%i: !torch.vtensor<[?],si64>, %u: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) {
  %int0 = torch.constant.int 0
  %n = torch.aten.size.int %i, %int0 : !torch.vtensor<[?],si64>, !torch.int -> !torch.int
  %shape = torch.prim.ListConstruct %n : (!torch.int) -> !torch.list<int>
  %zero = torch.vtensor.literal(dense<0> : tensor<si64>) : !torch.vtensor<[],si64>
  %a = torch.aten.broadcast_to %zero, %shape : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[?],si64>
  %b = torch.aten.broadcast_to %zero, %shape : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[?],si64>
  %0 = torch.aten.scatter.src %a, %int0, %i, %u : !torch.vtensor<[?],si64>, !torch.int, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  %1 = torch.aten.scatter.src %b, %int0, %i, %u : !torch.vtensor<[?],si64>, !torch.int, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  return %0, %1 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>
}
