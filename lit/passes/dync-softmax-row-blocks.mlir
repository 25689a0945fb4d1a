// RUN: dync-opt %s --split-input-file --dync-softmax-row-blocks | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-softmax-row-blocks | FileCheck %s --check-prefix=BIND

// Attention scores over a dynamic sequence, both dims dynamic: the rows padded with zero rows
// to a multiple of 16, viewed as blocks of 16 rows, the softmax over the last dim, viewed back
// to the padded rows and sliced to the rows the input had.
// CHECK-LABEL: func.func @scores
// CHECK:         %[[S:.+]] = torch.aten.size.int %arg0, %[[C1:.+]] : !torch.vtensor<[12,?,?],f32>, !torch.int -> !torch.int
// CHECK:         %[[R:.+]] = torch.aten.size.int %arg0, %int2 :
// CHECK:         %[[S15:.+]] = torch.aten.add.int %[[S]], %int15 :
// CHECK:         %[[N:.+]] = torch.aten.floordiv.int %[[S15]], %int16{{[_0-9]*}} :
// CHECK:         %[[SP:.+]] = torch.aten.mul.int %[[N]], %int16{{[_0-9]*}} :
// CHECK:         %[[P:.+]] = torch.aten.sub.int %[[SP]], %[[S]] :
// CHECK:         %[[PADS:.+]] = torch.prim.ListConstruct %int0{{[_0-9]*}}, %int0{{[_0-9]*}}, %int0{{[_0-9]*}}, %[[P]] :
// CHECK:         %[[PAD:.+]] = torch.aten.constant_pad_nd %arg0, %[[PADS]], %float0.000000e00 : {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK:         %[[SHAPE:.+]] = torch.prim.ListConstruct %int12, %[[N]], %int16{{[_0-9]*}}, %[[R]] :
// CHECK:         %[[B:.+]] = torch.aten.view %[[PAD]], %[[SHAPE]] : {{.*}} -> !torch.vtensor<[12,?,16,?],f32>
// CHECK:         %[[SM:.+]] = torch.aten.softmax.int %[[B]], %int-1{{[_0-9]*}}, %none : {{.*}} -> !torch.vtensor<[12,?,16,?],f32>
// CHECK:         %[[BACK:.+]] = torch.prim.ListConstruct %int12{{[_0-9]*}}, %[[SP]], %[[R]] :
// CHECK:         %[[V:.+]] = torch.aten.view %[[SM]], %[[BACK]] : {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK:         %[[Y:.+]] = torch.aten.slice.Tensor %[[V]], %int1{{[_0-9]*}}, %int0{{[_0-9]*}}, %[[S]], %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK:         return %[[Y]]
func.func @scores(%arg0: !torch.vtensor<[12,?,?],f32>) -> !torch.vtensor<[12,?,?],f32> {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int-1, %none : !torch.vtensor<[12,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[12,?,?],f32>
  return %0 : !torch.vtensor<[12,?,?],f32>
}

// -----

// A log-softmax over classes with a dynamic batch (the rows), a `_softmax` over rows of a
// rank-4 tensor with a dynamic batch too: each blocked, the rank-4 one's batch read from its
// input for both views.
// CHECK-LABEL: func.func @others
// CHECK:         torch.aten.constant_pad_nd %arg0
// CHECK:         %[[L:.+]] = torch.aten.log_softmax.int {{.*}} -> !torch.vtensor<[?,16,10],f32>
// CHECK:         torch.aten.slice.Tensor {{.*}} -> !torch.vtensor<[?,10],f32>
// CHECK:         %[[N0:.+]] = torch.aten.size.int %arg1, %int0
// CHECK:         torch.prim.ListConstruct %[[N0]], %int4{{[_0-9]*}}, %{{.+}}, %int16{{[_0-9]*}}, %int8{{[_0-9]*}} :
// CHECK:         torch.aten._softmax {{.*}} -> !torch.vtensor<[?,4,?,16,8],f32>
// CHECK:         torch.prim.ListConstruct %[[N0]], %int4{{[_0-9]*}}, %{{.+}}, %int8{{[_0-9]*}} :
// CHECK:         torch.aten.slice.Tensor {{.*}} -> !torch.vtensor<[?,4,?,8],f32>
func.func @others(%arg0: !torch.vtensor<[?,10],f32>, %arg1: !torch.vtensor<[?,4,?,8],f32>) -> (!torch.vtensor<[?,10],f32>, !torch.vtensor<[?,4,?,8],f32>) {
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten.log_softmax.int %arg0, %int1, %none : !torch.vtensor<[?,10],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,10],f32>
  %1 = torch.aten._softmax %arg1, %int3, %false : !torch.vtensor<[?,4,?,8],f32>, !torch.int, !torch.bool -> !torch.vtensor<[?,4,?,8],f32>
  return %0, %1 : !torch.vtensor<[?,10],f32>, !torch.vtensor<[?,4,?,8],f32>
}

// -----

// Left alone: static rows, a softmax over another dim than the last, a rank-1 softmax.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     torch.aten.constant_pad_nd
// CHECK-COUNT-3: torch.aten.softmax.int %arg
func.func @left_alone(%arg0: !torch.vtensor<[?,16,8],f32>, %arg1: !torch.vtensor<[4,?,8],f32>, %arg2: !torch.vtensor<[?],f32>) -> (!torch.vtensor<[?,16,8],f32>, !torch.vtensor<[4,?,8],f32>, !torch.vtensor<[?],f32>) {
  %int-1 = torch.constant.int -1
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %0 = torch.aten.softmax.int %arg0, %int-1, %none : !torch.vtensor<[?,16,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,16,8],f32>
  %1 = torch.aten.softmax.int %arg1, %int1, %none : !torch.vtensor<[4,?,8],f32>, !torch.int, !torch.none -> !torch.vtensor<[4,?,8],f32>
  %2 = torch.aten.softmax.int %arg2, %int0, %none : !torch.vtensor<[?],f32>, !torch.int, !torch.none -> !torch.vtensor<[?],f32>
  return %0, %1, %2 : !torch.vtensor<[?,16,8],f32>, !torch.vtensor<[4,?,8],f32>, !torch.vtensor<[?],f32>
}

// -----

// In a module IREE data-tiles, the split form: the whole blocks sliced off and blocked, the
// last rows (fewer than 16) softmaxed as they are, the two concatenated; no padding.
// CHECK-LABEL: func.func @data_tiled
// CHECK-NOT:     torch.aten.constant_pad_nd
// CHECK:         %[[S:.+]] = torch.aten.size.int %arg0, %int1{{[_0-9]*}} :
// CHECK:         %[[N:.+]] = torch.aten.floordiv.int %[[S]], %int16{{[_0-9]*}} :
// CHECK:         %[[M:.+]] = torch.aten.mul.int %[[N]], %int16{{[_0-9]*}} :
// CHECK:         %[[HEAD:.+]] = torch.aten.slice.Tensor %arg0, %int1{{[_0-9]*}}, %int0{{[_0-9]*}}, %[[M]], %int1{{[_0-9]*}} :
// CHECK:         %[[REST:.+]] = torch.aten.slice.Tensor %arg0, %int1{{[_0-9]*}}, %[[M]], %[[S]], %int1{{[_0-9]*}} :
// CHECK:         %[[TAIL:.+]] = torch.aten.softmax.int %[[REST]], %int-1{{[_0-9]*}}, %none : !torch.vtensor<[12,?,?],f32>
// CHECK:         %[[B:.+]] = torch.aten.view %[[HEAD]], {{.*}} -> !torch.vtensor<[12,?,16,?],f32>
// CHECK:         %[[SM:.+]] = torch.aten.softmax.int %[[B]], {{.*}} -> !torch.vtensor<[12,?,16,?],f32>
// CHECK:         %[[BACK:.+]] = torch.aten.view %[[SM]], {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK:         %[[BOTH:.+]] = torch.prim.ListConstruct %[[BACK]], %[[TAIL]] :
// CHECK:         %[[Y:.+]] = torch.aten.cat %[[BOTH]], %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[12,?,?],f32>
// CHECK:         return %[[Y]]
// The new tensors' shapes are bound from the input's, for memory planning.
// BIND-LABEL: func.func @data_tiled
// BIND-DAG:     torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (12, (s0 floordiv 16) * 16, s0)>
// BIND-DAG:     torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (12, s0 mod 16, s0)>
// BIND-DAG:     torch.bind_symbolic_shape %{{.+}}, [%{{.+}}], affine_map<()[s0] -> (12, s0 floordiv 16, 16, s0)>
module attributes {dync.iree_flags = ["--iree-opt-data-tiling"]} {
  func.func @data_tiled(%arg0: !torch.vtensor<[12,?,?],f32>) -> !torch.vtensor<[12,?,?],f32> {
    %s = torch.symbolic_int "s" {min_val = 1, max_val = 512} : !torch.int
    torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (12, s0, s0)> : !torch.vtensor<[12,?,?],f32>
    %int-1 = torch.constant.int -1
    %none = torch.constant.none
    %0 = torch.aten.softmax.int %arg0, %int-1, %none : !torch.vtensor<[12,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[12,?,?],f32>
    return %0 : !torch.vtensor<[12,?,?],f32>
  }
}
