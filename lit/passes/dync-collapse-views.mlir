// RUN: dync-opt %s --split-input-file --dync-collapse-views | FileCheck %s

// `[s, b, 2, 16] -> [s*b, 32]` (the heads of an attention merged back): the run of the two
// static dims flattened first, then the run of the two dynamic ones; the intermediate bound
// from the input's binding, the last taking the view's binding.
// CHECK-LABEL: func.func @heads_merged
// CHECK:         %[[A:.+]] = torch.aten.flatten.using_ints %arg0, %int2{{.*}}, %int3{{.*}} : !torch.vtensor<[?,?,2,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?,32],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[A]], [%[[S:.+]], %[[B:.+]]], affine_map<()[s0, s1] -> (s0, s1, 32)>
// CHECK:         %[[C:.+]] = torch.aten.flatten.using_ints %[[A]], %int0{{.*}}, %int1{{.*}} : !torch.vtensor<[?,?,32],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,32],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[C]], [%[[S]], %[[B]]], affine_map<()[s0, s1] -> (s0 * s1, 32)>
// CHECK-NOT:     torch.bind_symbolic_shape %[[C]]
// CHECK:         torch.aten.tanh %[[C]]
func.func @heads_merged(%arg0: !torch.vtensor<[?,?,2,16],f32>, %n: !torch.int) -> !torch.vtensor<[?,32],f32> {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s, %b], affine_map<()[s0, s1] -> (s0, s1, 2, 16)> : !torch.vtensor<[?,?,2,16],f32>
  %int32 = torch.constant.int 32
  %shape = torch.prim.ListConstruct %n, %int32 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten._unsafe_view %arg0, %shape : !torch.vtensor<[?,?,2,16],f32>, !torch.list<int> -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %0, [%s, %b], affine_map<()[s0, s1] -> (s0 * s1, 32)> : !torch.vtensor<[?,32],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[?,32],f32> -> !torch.vtensor<[?,32],f32>
  return %1 : !torch.vtensor<[?,32],f32>
}

// -----

// Left alone: one dynamic dim; a view that splits dims only.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     torch.aten.flatten.using_ints
// CHECK-NOT:     torch.aten.unflatten.int
// CHECK-COUNT-2: torch.aten.view
func.func @left_alone(%arg0: !torch.vtensor<[?,2,16],f32>, %arg1: !torch.vtensor<[?,?],f32>, %n: !torch.int, %m: !torch.int) -> (!torch.vtensor<[?,32],f32>, !torch.vtensor<[?,?,2],f32>) {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (s0, 2, 16)> : !torch.vtensor<[?,2,16],f32>
  torch.bind_symbolic_shape %arg1, [%s, %b], affine_map<()[s0, s1] -> (s0, s1 * 2)> : !torch.vtensor<[?,?],f32>
  %int2 = torch.constant.int 2
  %int32 = torch.constant.int 32
  %l0 = torch.prim.ListConstruct %n, %int32 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %l0 : !torch.vtensor<[?,2,16],f32>, !torch.list<int> -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %0, [%s], affine_map<()[s0] -> (s0, 32)> : !torch.vtensor<[?,32],f32>
  %l1 = torch.prim.ListConstruct %n, %m, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg1, %l1 : !torch.vtensor<[?,?],f32>, !torch.list<int> -> !torch.vtensor<[?,?,2],f32>
  torch.bind_symbolic_shape %1, [%s, %b], affine_map<()[s0, s1] -> (s0, s1, 2)> : !torch.vtensor<[?,?,2],f32>
  return %0, %1 : !torch.vtensor<[?,32],f32>, !torch.vtensor<[?,?,2],f32>
}

// -----

// Dims regrouped: `[s, b*4, 8] -> [s*b, 32]` (`nn.MultiheadAttention` with its weights merging
// the heads back from `[s, b*H, e/H]`) splits the dynamic `b*4` into `b` (its size -1) and 4,
// then flattens `s, b` and `4, 8`, the last flatten first; each bound from the input's binding,
// the split's dynamic dim as the input's divided by the static part.
// CHECK-LABEL: func.func @heads_regrouped
// CHECK:         %[[L:.+]] = torch.prim.ListConstruct %int-1{{.*}}, %int4{{.*}} :
// CHECK:         %[[U:.+]] = torch.aten.unflatten.int %arg0, %int1{{.*}}, %[[L]] : !torch.vtensor<[?,?,8],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,4,8],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[U]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0, s1, 4, 8)>
// CHECK:         %[[A:.+]] = torch.aten.flatten.using_ints %[[U]], %int2{{.*}}, %int3{{.*}} : !torch.vtensor<[?,?,4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?,32],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[A]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0, s1, 32)>
// CHECK:         %[[C:.+]] = torch.aten.flatten.using_ints %[[A]], %int0{{.*}}, %int1{{.*}} : !torch.vtensor<[?,?,32],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,32],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[C]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0 * s1, 32)>
// CHECK-NOT:     torch.aten._unsafe_view
// CHECK:         torch.aten.tanh %[[C]]
func.func @heads_regrouped(%arg0: !torch.vtensor<[?,?,8],f32>, %n: !torch.int) -> !torch.vtensor<[?,32],f32> {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s, %b], affine_map<()[s0, s1] -> (s0, s1 * 4, 8)> : !torch.vtensor<[?,?,8],f32>
  %int32 = torch.constant.int 32
  %shape = torch.prim.ListConstruct %n, %int32 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten._unsafe_view %arg0, %shape : !torch.vtensor<[?,?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %0, [%s, %b], affine_map<()[s0, s1] -> (s0 * s1, 32)> : !torch.vtensor<[?,32],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[?,32],f32> -> !torch.vtensor<[?,32],f32>
  return %1 : !torch.vtensor<[?,32],f32>
}

// -----

// A static dim split and its part merged with a dynamic one: `[s, b, 6] -> [s, b*2, 3]`.
// CHECK-LABEL: func.func @static_split_merged
// CHECK:         %[[U:.+]] = torch.aten.unflatten.int %arg0, %int2{{.*}}, %{{.+}} : !torch.vtensor<[?,?,6],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,2,3],f32>
// CHECK:         %[[A:.+]] = torch.aten.flatten.using_ints %[[U]], %int1{{.*}}, %int2{{.*}} : !torch.vtensor<[?,?,2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?,3],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[A]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0, s1 * 2, 3)>
// CHECK-NOT:     torch.aten.view
func.func @static_split_merged(%arg0: !torch.vtensor<[?,?,6],f32>, %n: !torch.int, %m: !torch.int) -> !torch.vtensor<[?,?,3],f32> {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s, %b], affine_map<()[s0, s1] -> (s0, s1, 6)> : !torch.vtensor<[?,?,6],f32>
  %int3 = torch.constant.int 3
  %l = torch.prim.ListConstruct %n, %m, %int3 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %l : !torch.vtensor<[?,?,6],f32>, !torch.list<int> -> !torch.vtensor<[?,?,3],f32>
  torch.bind_symbolic_shape %0, [%s, %b], affine_map<()[s0, s1] -> (s0, s1 * 2, 3)> : !torch.vtensor<[?,?,3],f32>
  return %0 : !torch.vtensor<[?,?,3],f32>
}

// -----

// The heads split out after a transpose (`[s, b, 32] -> [s, b*2, 16]`, transposed, `-> [b, 2,
// s, 16]`): the input's static 32 split into 2 x 16 and permuted into the last view's order.
// CHECK-LABEL: func.func @heads_split
// CHECK:         %[[U:.+]] = torch.aten.unflatten.int %arg0, %int2{{.*}}, %{{.+}} : !torch.vtensor<[?,?,32],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,2,16],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[U]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0, s1, 2, 16)>
// CHECK:         %[[P:.+]] = torch.aten.permute %[[U]], %{{.+}} : !torch.vtensor<[?,?,2,16],f32>, !torch.list<int> -> !torch.vtensor<[?,2,?,16],f32>
// CHECK:         torch.aten.tanh %[[P]]
func.func @heads_split(%arg0: !torch.vtensor<[?,?,32],f32>, %l0: !torch.list<int>, %l1: !torch.list<int>) -> !torch.vtensor<[?,2,?,16],f32> {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 256} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s, %b], affine_map<()[s0, s1] -> (s0, s1, 32)> : !torch.vtensor<[?,?,32],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.aten.view %arg0, %l0 : !torch.vtensor<[?,?,32],f32>, !torch.list<int> -> !torch.vtensor<[?,?,16],f32>
  torch.bind_symbolic_shape %0, [%s, %b], affine_map<()[s0, s1] -> (s0, s1 * 2, 16)> : !torch.vtensor<[?,?,16],f32>
  %1 = torch.aten.transpose.int %0, %int0, %int1 : !torch.vtensor<[?,?,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?,16],f32>
  torch.bind_symbolic_shape %1, [%s, %b], affine_map<()[s0, s1] -> (s1 * 2, s0, 16)> : !torch.vtensor<[?,?,16],f32>
  %2 = torch.aten.view %1, %l1 : !torch.vtensor<[?,?,16],f32>, !torch.list<int> -> !torch.vtensor<[?,2,?,16],f32>
  torch.bind_symbolic_shape %2, [%s, %b], affine_map<()[s0, s1] -> (s1, 2, s0, 16)> : !torch.vtensor<[?,2,?,16],f32>
  %3 = torch.aten.tanh %2 : !torch.vtensor<[?,2,?,16],f32> -> !torch.vtensor<[?,2,?,16],f32>
  return %3 : !torch.vtensor<[?,2,?,16],f32>
}

// -----

// A mask merged with the heads and split again: the split gives back the expanded mask, whose
// own binding stays the only one.
// CHECK-LABEL: func.func @merged_and_split
// CHECK:         %[[E:.+]] = torch.aten.expand %arg0
// CHECK-NOT:     torch.aten.view
// CHECK:         torch.aten.add.Tensor %arg1, %[[E]]
func.func @merged_and_split(%arg0: !torch.vtensor<[?,1,1,?],f32>, %arg1: !torch.vtensor<[?,4,?,?],f32>, %l0: !torch.list<int>, %l1: !torch.list<int>, %l2: !torch.list<int>) -> !torch.vtensor<[?,4,?,?],f32> {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 256} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s, %b], affine_map<()[s0, s1] -> (s1, 1, 1, s0)> : !torch.vtensor<[?,1,1,?],f32>
  torch.bind_symbolic_shape %arg1, [%s, %b], affine_map<()[s0, s1] -> (s1, 4, s0, s0)> : !torch.vtensor<[?,4,?,?],f32>
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %0 = torch.aten.expand %arg0, %l0, %false : !torch.vtensor<[?,1,1,?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,4,1,?],f32>
  torch.bind_symbolic_shape %0, [%s, %b], affine_map<()[s0, s1] -> (s1, 4, 1, s0)> : !torch.vtensor<[?,4,1,?],f32>
  %1 = torch.aten.reshape %0, %l1 : !torch.vtensor<[?,4,1,?],f32>, !torch.list<int> -> !torch.vtensor<[?,1,?],f32>
  torch.bind_symbolic_shape %1, [%s, %b], affine_map<()[s0, s1] -> (s1 * 4, 1, s0)> : !torch.vtensor<[?,1,?],f32>
  %2 = torch.aten.view %1, %l2 : !torch.vtensor<[?,1,?],f32>, !torch.list<int> -> !torch.vtensor<[?,4,1,?],f32>
  torch.bind_symbolic_shape %2, [%b, %s], affine_map<()[s0, s1] -> (s0, 4, 1, s1)> : !torch.vtensor<[?,4,1,?],f32>
  %3 = torch.aten.add.Tensor %arg1, %2, %int1 : !torch.vtensor<[?,4,?,?],f32>, !torch.vtensor<[?,4,1,?],f32>, !torch.int -> !torch.vtensor<[?,4,?,?],f32>
  return %3 : !torch.vtensor<[?,4,?,?],f32>
}

// -----

// A length padded to a multiple of 4, then merged with the batch and split by 4 (Swin's
// windows, DPRNN's chunks): torch states the 4 as `(b*t)//((b*t)//4)`, which the bindings
// cannot regroup. The trailing 8 kept; b and t flattened and split by 4, the -1 computed.
// CHECK-LABEL: func.func @merged_then_split(%arg0: !torch.vtensor<[?,?,8],f32>) -> !torch.vtensor<[?,?,8],f32> {
func.func @merged_then_split(%arg0: !torch.vtensor<[?,?,8],f32>) -> !torch.vtensor<[?,?,8],f32> {
  %t = torch.symbolic_int "t" {min_val = 2, max_val = 32} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 8} : !torch.int
  torch.bind_symbolic_shape %arg0, [%t, %b], affine_map<()[s0, s1] -> (s1, s0, 8)> : !torch.vtensor<[?,?,8],f32>
  %int-1 = torch.constant.int -1
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %l = torch.prim.ListConstruct %int-1, %int4, %int8 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %l : !torch.vtensor<[?,?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,?,8],f32>
  torch.bind_symbolic_shape %0, [%t, %b], affine_map<()[s0, s1] -> ((s1 * s0) floordiv 4, (s1 * s0) floordiv ((s1 * s0) floordiv 4), 8)> : !torch.vtensor<[?,?,8],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[?,?,8],f32> -> !torch.vtensor<[?,?,8],f32>
  return %1 : !torch.vtensor<[?,?,8],f32>
}

// -----

// One dynamic dim, but the result's type leaves unknown a dim the size list states: the -1
// computed (torch-mlir counted it in the product and failed to compile).
// CHECK-LABEL: func.func @stated_dim_unknown(%arg0: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?,4,?],f32> {
func.func @stated_dim_unknown(%arg0: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?,4,?],f32> {
  %n = torch.symbolic_int "n" {min_val = 1, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %arg0, [%n], affine_map<()[s0] -> (s0 * 32)> : !torch.vtensor<[?],f32>
  %int-1 = torch.constant.int -1
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %l = torch.prim.ListConstruct %int-1, %int4, %int8 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %l : !torch.vtensor<[?],f32>, !torch.list<int> -> !torch.vtensor<[?,4,?],f32>
  torch.bind_symbolic_shape %0, [%n], affine_map<()[s0] -> (s0, 4, (s0 * 8) floordiv s0)> : !torch.vtensor<[?,4,?],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[?,4,?],f32> -> !torch.vtensor<[?,4,?],f32>
  return %1 : !torch.vtensor<[?,4,?],f32>
}

// -----

// Split back by a size known at run time beside a -1 (the trailing 16 kept): the -1
// computed from the flattened dim (torch-mlir's unflatten read past its input there).
// CHECK-LABEL: func.func @split_by_a_value(%arg0: !torch.vtensor<[?,?,16],f32>, %arg1: !torch.int) -> !torch.vtensor<[?,?,16],f32> {
func.func @split_by_a_value(%arg0: !torch.vtensor<[?,?,16],f32>, %arg1: !torch.int) -> !torch.vtensor<[?,?,16],f32> {
  %int-1 = torch.constant.int -1
  %int16 = torch.constant.int 16
  %l = torch.prim.ListConstruct %arg1, %int-1, %int16 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %l : !torch.vtensor<[?,?,16],f32>, !torch.list<int> -> !torch.vtensor<[?,?,16],f32>
  return %0 : !torch.vtensor<[?,?,16],f32>
}
