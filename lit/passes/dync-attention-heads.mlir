// RUN: dync-opt %s --split-input-file --dync-attention-heads | FileCheck %s
// RUN: dync-opt %s --split-input-file --dync-attention-heads | FileCheck %s --check-prefix=BIND

// Four heads over at most 512 tokens (4 MB of scores): the chain q·kᵀ, scale, softmax, ·v
// repeated on each head's slices of q, kᵀ and v, the results concatenated along the heads.
// CHECK-LABEL: func.func @by_head
// CHECK:         %[[KT:.+]] = torch.aten.transpose.int %arg1
// CHECK:         %[[Q0:.+]] = torch.aten.slice.Tensor %arg0, %int1{{[_0-9]*}}, %int0{{[_0-9]*}}, %int1{{[_0-9]*}}, %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[1,1,?,64],f32>
// CHECK:         %[[K0:.+]] = torch.aten.slice.Tensor %[[KT]], %int1{{[_0-9]*}}, %int0{{[_0-9]*}}, %int1{{[_0-9]*}}, %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[1,1,64,?],f32>
// CHECK:         %[[S0:.+]] = torch.aten.matmul %[[Q0]], %[[K0]] : {{.*}} -> !torch.vtensor<[1,1,?,?],f32>
// CHECK:         %[[D0:.+]] = torch.aten.div.Scalar %[[S0]], %float8{{.*}} -> !torch.vtensor<[1,1,?,?],f32>
// CHECK:         %[[P0:.+]] = torch.aten.softmax.int %[[D0]], %int-1{{[_0-9]*}}, %none : {{.*}} -> !torch.vtensor<[1,1,?,?],f32>
// CHECK:         %[[V0:.+]] = torch.aten.slice.Tensor %arg2, %int1{{[_0-9]*}}, %int0{{[_0-9]*}}, %int1{{[_0-9]*}}, %int1{{[_0-9]*}} :
// CHECK:         %[[O0:.+]] = torch.aten.matmul %[[P0]], %[[V0]] : {{.*}} -> !torch.vtensor<[1,1,?,64],f32>
// CHECK-COUNT-3: torch.aten.softmax.int
// CHECK:         %[[V3:.+]] = torch.aten.slice.Tensor %arg2, %int1{{[_0-9]*}}, %int3{{[_0-9]*}}, %int4{{[_0-9]*}}, %int1{{[_0-9]*}} :
// CHECK:         %[[O3:.+]] = torch.aten.matmul %{{.+}}, %[[V3]] : {{.*}} -> !torch.vtensor<[1,1,?,64],f32>
// CHECK:         %[[L:.+]] = torch.prim.ListConstruct %[[O0]], %{{.+}}, %{{.+}}, %[[O3]] :
// CHECK:         %[[Y:.+]] = torch.aten.cat %[[L]], %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[1,4,?,64],f32>
// CHECK:         return %[[Y]]
// BIND-LABEL:  func.func @by_head
// BIND:          torch.aten.softmax.int
// BIND-NEXT:     torch.bind_symbolic_shape %{{.+}}, [%0], affine_map<()[s0] -> (1, 1, s0, s0)>
func.func @by_head(%arg0: !torch.vtensor<[1,4,?,64],f32>, %arg1: !torch.vtensor<[1,4,?,64],f32>, %arg2: !torch.vtensor<[1,4,?,64],f32>) -> !torch.vtensor<[1,4,?,64],f32> {
  %0 = torch.symbolic_int "seq" {min_val = 2, max_val = 512} : !torch.int
  torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (1, 4, s0, 64)> : !torch.vtensor<[1,4,?,64],f32>
  torch.bind_symbolic_shape %arg1, [%0], affine_map<()[s0] -> (1, 4, s0, 64)> : !torch.vtensor<[1,4,?,64],f32>
  torch.bind_symbolic_shape %arg2, [%0], affine_map<()[s0] -> (1, 4, s0, 64)> : !torch.vtensor<[1,4,?,64],f32>
  %none = torch.constant.none
  %float8 = torch.constant.float 8.000000e+00
  %int-2 = torch.constant.int -2
  %int-1 = torch.constant.int -1
  %1 = torch.aten.transpose.int %arg1, %int-1, %int-2 : !torch.vtensor<[1,4,?,64],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,4,64,?],f32>
  torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (1, 4, 64, s0)> : !torch.vtensor<[1,4,64,?],f32>
  %2 = torch.aten.matmul %arg0, %1 : !torch.vtensor<[1,4,?,64],f32>, !torch.vtensor<[1,4,64,?],f32> -> !torch.vtensor<[1,4,?,?],f32>
  torch.bind_symbolic_shape %2, [%0], affine_map<()[s0] -> (1, 4, s0, s0)> : !torch.vtensor<[1,4,?,?],f32>
  %3 = torch.aten.div.Scalar %2, %float8 : !torch.vtensor<[1,4,?,?],f32>, !torch.float -> !torch.vtensor<[1,4,?,?],f32>
  torch.bind_symbolic_shape %3, [%0], affine_map<()[s0] -> (1, 4, s0, s0)> : !torch.vtensor<[1,4,?,?],f32>
  %4 = torch.aten.softmax.int %3, %int-1, %none : !torch.vtensor<[1,4,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,4,?,?],f32>
  torch.bind_symbolic_shape %4, [%0], affine_map<()[s0] -> (1, 4, s0, s0)> : !torch.vtensor<[1,4,?,?],f32>
  %5 = torch.aten.matmul %4, %arg2 : !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[1,4,?,64],f32> -> !torch.vtensor<[1,4,?,64],f32>
  torch.bind_symbolic_shape %5, [%0], affine_map<()[s0] -> (1, 4, s0, 64)> : !torch.vtensor<[1,4,?,64],f32>
  return %5 : !torch.vtensor<[1,4,?,64],f32>
}

// -----

// Sixteen heads of static 256 x 256 scores under a mask added from every head's (broadcast,
// read whole) and a boolean mask of each head's own (sliced with them); sixteen heads is at
// most MAX_GROUPS groups of one.
// CHECK-LABEL: func.func @masked
// CHECK-COUNT-16: torch.aten.add.Tensor {{.*}}, %arg3, %int1{{.*}} : !torch.vtensor<[2,1,256,256],f32>, !torch.vtensor<[2,1,1,256],f32>
// CHECK:         torch.aten.slice.Tensor %arg4, %int1{{[_0-9]*}}, %int15{{[_0-9]*}}, %int16{{[_0-9]*}}, %int1{{[_0-9]*}} : !torch.vtensor<[2,16,256,256],i1>, {{.*}} -> !torch.vtensor<[2,1,256,256],i1>
// CHECK:         torch.aten.masked_fill.Scalar
// CHECK:         torch.aten.cat {{.*}} -> !torch.vtensor<[2,16,256,32],f32>
func.func @masked(%q: !torch.vtensor<[2,16,256,32],f32>, %kt: !torch.vtensor<[2,16,32,256],f32>, %v: !torch.vtensor<[2,16,256,32],f32>, %bias: !torch.vtensor<[2,1,1,256],f32>, %keep: !torch.vtensor<[2,16,256,256],i1>) -> !torch.vtensor<[2,16,256,32],f32> {
  %int1 = torch.constant.int 1
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %low = torch.constant.float -1.000000e+04
  %0 = torch.aten.matmul %q, %kt : !torch.vtensor<[2,16,256,32],f32>, !torch.vtensor<[2,16,32,256],f32> -> !torch.vtensor<[2,16,256,256],f32>
  %1 = torch.aten.add.Tensor %0, %bias, %int1 : !torch.vtensor<[2,16,256,256],f32>, !torch.vtensor<[2,1,1,256],f32>, !torch.int -> !torch.vtensor<[2,16,256,256],f32>
  %2 = torch.aten.masked_fill.Scalar %1, %keep, %low : !torch.vtensor<[2,16,256,256],f32>, !torch.vtensor<[2,16,256,256],i1>, !torch.float -> !torch.vtensor<[2,16,256,256],f32>
  %3 = torch.aten.softmax.int %2, %int-1, %none : !torch.vtensor<[2,16,256,256],f32>, !torch.int, !torch.none -> !torch.vtensor<[2,16,256,256],f32>
  %4 = torch.aten.matmul %3, %v : !torch.vtensor<[2,16,256,256],f32>, !torch.vtensor<[2,16,256,32],f32> -> !torch.vtensor<[2,16,256,32],f32>
  return %4 : !torch.vtensor<[2,16,256,32],f32>
}

// -----

// Thirty-two heads: groups of two (at most 16 groups); values shared by all heads (one head
// of keys and values, as multi-query attention has) read whole by every group.
// CHECK-LABEL: func.func @grouped
// CHECK-NOT:     torch.aten.slice.Tensor %arg{{[12]}}
// CHECK:         torch.aten.slice.Tensor %arg0, %int1{{[_0-9]*}}, %int0{{[_0-9]*}}, %int2{{[_0-9]*}}, %int1{{[_0-9]*}} : {{.*}} -> !torch.vtensor<[1,2,128,64],f32>
// CHECK-NOT:     torch.aten.slice.Tensor %arg{{[12]}}
// CHECK-COUNT-16: torch.aten.softmax.int {{.*}} -> !torch.vtensor<[1,2,128,128],f32>
// CHECK-NOT:     torch.aten.slice.Tensor %arg{{[12]}}
// CHECK:         torch.aten.cat {{.*}} -> !torch.vtensor<[1,32,128,64],f32>
func.func @grouped(%q: !torch.vtensor<[1,32,128,64],f32>, %kt: !torch.vtensor<[1,1,64,128],f32>, %v: !torch.vtensor<[1,1,128,64],f32>) -> !torch.vtensor<[1,32,128,64],f32> {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %0 = torch.aten.matmul %q, %kt : !torch.vtensor<[1,32,128,64],f32>, !torch.vtensor<[1,1,64,128],f32> -> !torch.vtensor<[1,32,128,128],f32>
  %1 = torch.aten.softmax.int %0, %int-1, %none : !torch.vtensor<[1,32,128,128],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,32,128,128],f32>
  %2 = torch.aten.matmul %1, %v : !torch.vtensor<[1,32,128,128],f32>, !torch.vtensor<[1,1,128,64],f32> -> !torch.vtensor<[1,32,128,64],f32>
  return %2 : !torch.vtensor<[1,32,128,64],f32>
}

// -----

// Heads folded into the batch of `bmm` (static: 8 heads of one sequence), both products
// sliced along it.
// CHECK-LABEL: func.func @folded
// CHECK-COUNT-8: torch.aten.bmm {{.*}} -> !torch.vtensor<[1,?,?],f32>
// CHECK:         torch.aten.cat {{.*}} -> !torch.vtensor<[8,?,64],f32>
func.func @folded(%q: !torch.vtensor<[8,?,64],f32>, %kt: !torch.vtensor<[8,64,?],f32>, %v: !torch.vtensor<[8,?,64],f32>) -> !torch.vtensor<[8,?,64],f32> {
  %0 = torch.symbolic_int "s" {min_val = 1, max_val = 256} : !torch.int
  torch.bind_symbolic_shape %q, [%0], affine_map<()[s0] -> (8, s0, 64)> : !torch.vtensor<[8,?,64],f32>
  torch.bind_symbolic_shape %kt, [%0], affine_map<()[s0] -> (8, 64, s0)> : !torch.vtensor<[8,64,?],f32>
  torch.bind_symbolic_shape %v, [%0], affine_map<()[s0] -> (8, s0, 64)> : !torch.vtensor<[8,?,64],f32>
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %1 = torch.aten.bmm %q, %kt : !torch.vtensor<[8,?,64],f32>, !torch.vtensor<[8,64,?],f32> -> !torch.vtensor<[8,?,?],f32>
  torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (8, s0, s0)> : !torch.vtensor<[8,?,?],f32>
  %2 = torch.aten._softmax %1, %int-1, %false : !torch.vtensor<[8,?,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[8,?,?],f32>
  torch.bind_symbolic_shape %2, [%0], affine_map<()[s0] -> (8, s0, s0)> : !torch.vtensor<[8,?,?],f32>
  %3 = torch.aten.bmm %2, %v : !torch.vtensor<[8,?,?],f32>, !torch.vtensor<[8,?,64],f32> -> !torch.vtensor<[8,?,64],f32>
  torch.bind_symbolic_shape %3, [%0], affine_map<()[s0] -> (8, s0, 64)> : !torch.vtensor<[8,?,64],f32>
  return %3 : !torch.vtensor<[8,?,64],f32>
}

// -----

// Left alone: scores of at most 64 KB; a sequence without a declared bound; probabilities read
// twice (returned beside the product); heads of a dynamic number; scaled scores read twice.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     torch.aten.cat
// CHECK-NOT:     torch.aten.slice.Tensor
func.func @left_alone(%q: !torch.vtensor<[1,4,64,64],f32>, %kt: !torch.vtensor<[1,4,64,64],f32>, %qd: !torch.vtensor<[1,12,?,64],f32>, %ktd: !torch.vtensor<[1,12,64,?],f32>, %vd: !torch.vtensor<[1,12,?,64],f32>, %big: !torch.vtensor<[1,12,512,512],f32>, %vb: !torch.vtensor<[1,12,512,64],f32>, %h: !torch.vtensor<[?,512,512],f32>, %vh: !torch.vtensor<[?,512,64],f32>, %qb: !torch.vtensor<[1,12,512,64],f32>, %ktb: !torch.vtensor<[1,12,64,512],f32>) -> (!torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,12,?,64],f32>, !torch.vtensor<[1,12,512,64],f32>, !torch.vtensor<[1,12,512,512],f32>, !torch.vtensor<[?,512,64],f32>, !torch.vtensor<[1,12,512,64],f32>, !torch.vtensor<[1,12,512,512],f32>) {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %0 = torch.aten.matmul %q, %kt : !torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,4,64,64],f32> -> !torch.vtensor<[1,4,64,64],f32>
  %1 = torch.aten.softmax.int %0, %int-1, %none : !torch.vtensor<[1,4,64,64],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,4,64,64],f32>
  %2 = torch.aten.matmul %1, %q : !torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,4,64,64],f32> -> !torch.vtensor<[1,4,64,64],f32>
  %3 = torch.aten.matmul %qd, %ktd : !torch.vtensor<[1,12,?,64],f32>, !torch.vtensor<[1,12,64,?],f32> -> !torch.vtensor<[1,12,?,?],f32>
  %4 = torch.aten.softmax.int %3, %int-1, %none : !torch.vtensor<[1,12,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,12,?,?],f32>
  %5 = torch.aten.matmul %4, %vd : !torch.vtensor<[1,12,?,?],f32>, !torch.vtensor<[1,12,?,64],f32> -> !torch.vtensor<[1,12,?,64],f32>
  %6 = torch.aten.softmax.int %big, %int-1, %none : !torch.vtensor<[1,12,512,512],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,12,512,512],f32>
  %7 = torch.aten.matmul %6, %vb : !torch.vtensor<[1,12,512,512],f32>, !torch.vtensor<[1,12,512,64],f32> -> !torch.vtensor<[1,12,512,64],f32>
  %8 = torch.aten.softmax.int %h, %int-1, %none : !torch.vtensor<[?,512,512],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,512,512],f32>
  %9 = torch.aten.matmul %8, %vh : !torch.vtensor<[?,512,512],f32>, !torch.vtensor<[?,512,64],f32> -> !torch.vtensor<[?,512,64],f32>
  %float8 = torch.constant.float 8.000000e+00
  %10 = torch.aten.matmul %qb, %ktb : !torch.vtensor<[1,12,512,64],f32>, !torch.vtensor<[1,12,64,512],f32> -> !torch.vtensor<[1,12,512,512],f32>
  %11 = torch.aten.div.Scalar %10, %float8 : !torch.vtensor<[1,12,512,512],f32>, !torch.float -> !torch.vtensor<[1,12,512,512],f32>
  %12 = torch.aten.softmax.int %11, %int-1, %none : !torch.vtensor<[1,12,512,512],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,12,512,512],f32>
  %13 = torch.aten.matmul %12, %vb : !torch.vtensor<[1,12,512,512],f32>, !torch.vtensor<[1,12,512,64],f32> -> !torch.vtensor<[1,12,512,64],f32>
  return %2, %5, %7, %6, %9, %13, %11 : !torch.vtensor<[1,4,64,64],f32>, !torch.vtensor<[1,12,?,64],f32>, !torch.vtensor<[1,12,512,64],f32>, !torch.vtensor<[1,12,512,512],f32>, !torch.vtensor<[?,512,64],f32>, !torch.vtensor<[1,12,512,64],f32>, !torch.vtensor<[1,12,512,512],f32>
}
