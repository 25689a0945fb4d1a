// RUN: dync-opt %s --split-input-file --dync-rdp | FileCheck %s

// Broadcasting: [n,1] + [1,8] is [n,8]. The entry argument and the sum get bindings over a
// declared symbol; the static operand needs none.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK-SAME:    = {classes = {ISDOS = 1 : i64}, static = 4 : i64, symbolic = 2 : i64, unknown = 0 : i64}
// CHECK:         %[[N:[0-9a-z_#]+]] = torch.symbolic_int "n" {min_val = 1, max_val = 16}
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[N]]], affine_map<()[s0] -> (s0, 1)>
// CHECK:         %[[ADD:[0-9a-z_#]+]] = torch.aten.add.Tensor
// CHECK-NEXT:    torch.bind_symbolic_shape %[[ADD]], [%[[N]]], affine_map<()[s0] -> (s0, 8)>
// CHECK-NOT:     torch.bind_symbolic_shape %arg1
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,1],f32> {dync.shape = ["n", 1]}, %arg1: !torch.vtensor<[1,8],f32> {dync.shape = [1, 8]}) -> !torch.vtensor<[?,8],f32> attributes {dync.entry} {
    %int1 = torch.constant.int 1
    %0 = torch.aten.add.Tensor %arg0, %arg1, %int1 : !torch.vtensor<[?,1],f32>, !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
    return %0 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// Value propagation through shape-like ops: size.int -> mul.int -> ListConstruct -> view
// gives the product n*4 (ISDO ops turn shapes into values); a `-1` is the element count
// divided by the other sizes.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[N:[0-9a-z_#]+]] = torch.symbolic_int "n"
// CHECK:         %[[V:[0-9a-z_#]+]] = torch.aten.view %arg0, %{{.+}} : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[V]], [%[[N]]], affine_map<()[s0] -> (s0 * 4, 8)>
// CHECK:         %[[W:[0-9a-z_#]+]] = torch.aten.view %[[V]], %{{.+}} : {{.*}} -> !torch.vtensor<[?,2],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[W]], [%[[N]]], affine_map<()[s0] -> (s0 * 16, 2)>
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,4,8],f32> {dync.shape = ["n", 4, 8]}) -> !torch.vtensor<[?,2],f32> attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int8 = torch.constant.int 8
    %intm1 = torch.constant.int -1
    %n = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,4,8],f32>, !torch.int -> !torch.int
    %c = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[?,4,8],f32>, !torch.int -> !torch.int
    %nc = torch.aten.mul.int %n, %c : !torch.int, !torch.int -> !torch.int
    %l = torch.prim.ListConstruct %nc, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.view %arg0, %l : !torch.vtensor<[?,4,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
    %l2 = torch.prim.ListConstruct %intm1, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %1 = torch.aten.view %0, %l2 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,2],f32>
    return %1 : !torch.vtensor<[?,2],f32>
  }
}

// -----

// Concatenation adds the dims along the axis and keeps the others.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK-DAG:     %[[N:[0-9a-z_#]+]] = torch.symbolic_int "n"
// CHECK-DAG:     %[[M:[0-9a-z_#]+]] = torch.symbolic_int "m"
// CHECK:         %[[CAT:[0-9a-z_#]+]] = torch.aten.cat
// CHECK-NEXT:    torch.bind_symbolic_shape %[[CAT]], [%[[M]], %[[N]]], affine_map<()[s0, s1] -> (s0 + s1 + 2, 8)>
module attributes {dync.symbols = {m = {max = 8 : i64, min = 1 : i64}, n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}, %arg1: !torch.vtensor<[?,8],f32> {dync.shape = ["m", 8]}, %arg2: !torch.vtensor<[2,8],f32> {dync.shape = [2, 8]}) -> !torch.vtensor<[?,8],f32> attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %l = torch.prim.ListConstruct %arg0, %arg1, %arg2 : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[2,8],f32>) -> !torch.list<vtensor>
    %0 = torch.aten.cat %l, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,8],f32>
    return %0 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// Slicing with symbolic bounds: x[1:-1] has n - 2 rows; the clamp max(n - 2, 0) goes away
// because n >= 2. x[:k] with k = size(y, 0) <= n keeps min(k, n) only when the ranges cannot
// order them; with m <= 4 < 5 <= n it is m.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[S:[0-9a-z_#]+]] = torch.aten.slice.Tensor %arg0
// CHECK-NEXT:    torch.bind_symbolic_shape %[[S]], [%{{.+}}], affine_map<()[s0] -> (s0 - 2, 8)>
// CHECK:         %[[T:[0-9a-z_#]+]] = torch.aten.slice.Tensor %arg0
// CHECK-NEXT:    torch.bind_symbolic_shape %[[T]], [%{{.+}}], affine_map<()[s0] -> (s0, 8)>
module attributes {dync.symbols = {m = {max = 4 : i64, min = 1 : i64}, n = {max = 16 : i64, min = 5 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}, %arg1: !torch.vtensor<[?],f32> {dync.shape = ["m"]}) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %intm1 = torch.constant.int -1
    %0 = torch.aten.slice.Tensor %arg0, %int0, %int1, %intm1, %int1 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
    %k = torch.aten.size.int %arg1, %int0 : !torch.vtensor<[?],f32>, !torch.int -> !torch.int
    %1 = torch.aten.slice.Tensor %arg0, %int0, %int0, %k, %int1 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
    return %0, %1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>
  }
}

// -----

// Convolution and pooling output sizes: a 3x3 stride-2 pad-1 conv maps h to
// (h - 1) floordiv 2 + 1, a 2x2 stride-2 max pool halves that again.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[H:[0-9a-z_#]+]] = torch.symbolic_int "h" {min_val = 8, max_val = 64}
// CHECK:         %[[C:[0-9a-z_#]+]] = torch.aten.conv2d
// CHECK-NEXT:    torch.bind_symbolic_shape %[[C]], [%[[H]]], affine_map<()[s0] -> (1, 4, (s0 - 1) floordiv 2 + 1, 8)>
// CHECK:         %[[P:[0-9a-z_#]+]] = torch.aten.max_pool2d
// CHECK-NEXT:    torch.bind_symbolic_shape %[[P]], [%[[H]]], affine_map<()[s0] -> (1, 4, ((s0 - 1) floordiv 2 - 1) floordiv 2 + 1, 4)>
module attributes {dync.symbols = {h = {max = 64 : i64, min = 8 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[1,3,?,16],f32> {dync.shape = [1, 3, "h", 16]}) -> !torch.vtensor<[1,4,?,4],f32> attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<1.0> : tensor<4x3x3x3xf32>) : !torch.vtensor<[4,3,3,3],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int0 = torch.constant.int 0
    %s = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %p = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %s, %p, %d, %int1 : !torch.vtensor<[1,3,?,16],f32>, !torch.vtensor<[4,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,?,8],f32>
    %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %z = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %1 = torch.aten.max_pool2d %0, %k, %s, %z, %d, %false : !torch.vtensor<[1,4,?,8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,4,?,4],f32>
    return %1 : !torch.vtensor<[1,4,?,4],f32>
  }
}

// -----

// 3-D pools get the window rule from the op table like the 2-D ones, and constant bools are
// facts (keepdim, ceil_mode): a 2x2x2 stride-2 max pool halves d, an avg pool (no dilation
// operand) with padding 1 maps that to (d floordiv 2) floordiv 2 + 1, a mean with keepdim keeps
// the rank.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[D:[0-9a-z_#]+]] = torch.symbolic_int "d" {min_val = 4, max_val = 32}
// CHECK:         %[[M:[0-9a-z_#]+]] = torch.aten.max_pool3d
// CHECK-NEXT:    torch.bind_symbolic_shape %[[M]], [%[[D]]], affine_map<()[s0] -> (1, 2, s0 floordiv 2, 4, 4)>
// CHECK:         %[[A:[0-9a-z_#]+]] = torch.aten.avg_pool3d
// CHECK-NEXT:    torch.bind_symbolic_shape %[[A]], [%[[D]]], affine_map<()[s0] -> (1, 2, (s0 floordiv 2) floordiv 2 + 1, 3, 3)>
// CHECK:         %[[R:[0-9a-z_#]+]] = torch.aten.mean.dim
// CHECK-NEXT:    torch.bind_symbolic_shape %[[R]], [%[[D]]], affine_map<()[s0] -> (1, 1, (s0 floordiv 2) floordiv 2 + 1, 3, 3)>
module attributes {dync.symbols = {d = {max = 32 : i64, min = 4 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[1,2,?,8,8],f32> {dync.shape = [1, 2, "d", 8, 8]}) -> !torch.vtensor<[1,1,?,3,3],f32> attributes {dync.entry} {
    %false = torch.constant.bool false
    %true = torch.constant.bool true
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %k = torch.prim.ListConstruct %int2, %int2, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %z = torch.prim.ListConstruct %int0, %int0, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %p = torch.prim.ListConstruct %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %d = torch.prim.ListConstruct %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.max_pool3d %arg0, %k, %k, %z, %d, %false : !torch.vtensor<[1,2,?,8,8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,?,4,4],f32>
    %1 = torch.aten.avg_pool3d %0, %k, %k, %p, %false, %true, %none : !torch.vtensor<[1,2,?,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,2,?,3,3],f32>
    %c = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %2 = torch.aten.mean.dim %1, %c, %true, %none : !torch.vtensor<[1,2,?,3,3],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,1,?,3,3],f32>
    return %2 : !torch.vtensor<[1,1,?,3,3],f32>
  }
}

// -----

// ceil_mode with a stride above 1: PyTorch drops a last window that would start in the right
// padding, min(ceil(..), floor(..)), which no affine map can say: the size stays unknown
// rather than wrong (h = 5: ceil gives 4, PyTorch 3).
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[P:[0-9a-z_#]+]] = torch.aten.max_pool2d
// CHECK-NEXT:    return %[[P]]
module attributes {dync.symbols = {h = {max = 32 : i64, min = 4 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[1,1,?,4],f32> {dync.shape = [1, 1, "h", 4]}) -> !torch.vtensor<[1,1,?,3],f32> attributes {dync.entry} {
    %true = torch.constant.bool true
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %p = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.max_pool2d %arg0, %k, %k, %p, %d, %true : !torch.vtensor<[1,1,?,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,?,3],f32>
    return %0 : !torch.vtensor<[1,1,?,3],f32>
  }
}

// -----

// scf.if joins: branches that agree keep their dim (n); branches that disagree (n rows
// against a fixed 4) get a fresh symbol of that join, ranged over both ([1, 16]).
// CHECK-LABEL: module attributes {dync.rdp
// CHECK-DAG:     %[[N:[0-9a-z_#]+]] = torch.symbolic_int "n" {min_val = 1, max_val = 16}
// CHECK-DAG:     %[[R:[0-9a-z_#]+]] = torch.symbolic_int "r{{[0-9]+}}" {min_val = 1, max_val = 16}
// CHECK:         %[[SAME:[0-9a-z_#]+]] = torch_c.from_builtin_tensor %{{.+}}#0
// CHECK-NEXT:    torch.bind_symbolic_shape %[[SAME]], [%[[N]]], affine_map<()[s0] -> (s0, 8)>
// CHECK:         %[[JOIN:[0-9a-z_#]+]] = torch_c.from_builtin_tensor %{{.+}}#1
// CHECK-NEXT:    torch.bind_symbolic_shape %[[JOIN]], [%[[R]]], affine_map<()[s0] -> (s0, 8)>
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}, %arg1: !torch.vtensor<[],i1> {dync.shape = []}) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) attributes {dync.entry} {
    %c = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[],i1> -> tensor<i1>
    %p = tensor.extract %c[] : tensor<i1>
    %0:2 = scf.if %p -> (tensor<?x8xf32>, tensor<?x8xf32>) {
      %a = torch.aten.relu %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %a : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b, %b : tensor<?x8xf32>, tensor<?x8xf32>
    } else {
      %int0 = torch.constant.int 0
      %int1 = torch.constant.int 1
      %int4 = torch.constant.int 4
      %a = torch.aten.neg %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %s = torch.aten.slice.Tensor %arg0, %int0, %int0, %int4, %int1 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %a : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      %t = torch_c.to_builtin_tensor %s : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b, %t : tensor<?x8xf32>, tensor<?x8xf32>
    }
    %1 = torch_c.from_builtin_tensor %0#0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    %2 = torch_c.from_builtin_tensor %0#1 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %1, %2 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>
  }
}

// -----

// scf.while: a carried tensor whose dims the body keeps stays [n, 8] after the loop; the
// loop is execution-determined (EDO) but its shapes are not.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK-SAME:    = {classes = {EDO = 1 : i64, ISDOS = 1 : i64}
// CHECK:         %[[N:[0-9a-z_#]+]] = torch.symbolic_int "n"
// CHECK:         scf.while
// CHECK:         %[[OUT:[0-9a-z_#]+]] = torch_c.from_builtin_tensor
// CHECK-NEXT:    torch.bind_symbolic_shape %[[OUT]], [%[[N]]], affine_map<()[s0] -> (s0, 8)>
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}) -> !torch.vtensor<[?,8],f32> attributes {dync.entry} {
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %c0 = arith.constant 0 : i64
    %0:2 = scf.while (%i = %c0, %h = %x) : (i64, tensor<?x8xf32>) -> (i64, tensor<?x8xf32>) {
      %v = torch_c.from_builtin_tensor %h : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %t = torch.aten.tanh %v : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %t : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      %c3 = arith.constant 3 : i64
      %more = arith.cmpi slt, %i, %c3 : i64
      scf.condition(%more) %i, %b : i64, tensor<?x8xf32>
    } do {
    ^bb0(%i: i64, %h: tensor<?x8xf32>):
      %c1 = arith.constant 1 : i64
      %j = arith.addi %i, %c1 : i64
      scf.yield %j, %h : i64, tensor<?x8xf32>
    }
    %1 = torch_c.from_builtin_tensor %0#1 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %1 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// nonzero is execution-determined: its row count is a fresh symbol bounded by the input's
// element count (n * 4 <= 64), which then flows through index_select.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK-SAME:    = {classes = {EDO = 1 : i64, ISDOS = 2 : i64}
// CHECK:         %[[R:[0-9a-z_#]+]] = torch.symbolic_int "r{{[0-9]+}}" {min_val = 0, max_val = 64}
// CHECK:         %[[NZ:[0-9a-z_#]+]] = torch.aten.nonzero
// CHECK-NEXT:    torch.bind_symbolic_shape %[[NZ]], [%[[R]]], affine_map<()[s0] -> (s0, 2)>
// CHECK:         %[[SEL:[0-9a-z_#]+]] = torch.aten.index_select
// CHECK-NEXT:    torch.bind_symbolic_shape %[[SEL]], [%[[R]]], affine_map<()[s0] -> (s0, 4)>
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) -> !torch.vtensor<[?,4],f32> attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,2],si64>
    %1 = torch.aten.select.int %0, %int1, %int0 : !torch.vtensor<[?,2],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    %2 = torch.aten.index_select %arg0, %int0, %1 : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[?,4],f32>
    return %2 : !torch.vtensor<[?,4],f32>
  }
}

// -----

// A `?` that RDP proves constant becomes static in the op's type; the return, whose type is
// fixed by the signature, gets a cast back.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[V:[0-9a-z_#]+]] = torch.aten.view %arg0, %{{.+}} : !torch.vtensor<[2,3,4],f32>, !torch.list<int> -> !torch.vtensor<[6,4],f32>
// CHECK-NEXT:    %[[C:[0-9a-z_#]+]] = torch.tensor_static_info_cast %[[V]] : !torch.vtensor<[6,4],f32> to !torch.vtensor<[?,?],f32>
// CHECK:         return %[[C]]
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[2,3,4],f32> {dync.shape = [2, 3, 4]}) -> !torch.vtensor<[?,?],f32> attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %intm1 = torch.constant.int -1
    %a = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[2,3,4],f32>, !torch.int -> !torch.int
    %b = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[2,3,4],f32>, !torch.int -> !torch.int
    %ab = torch.aten.mul.int %a, %b : !torch.int, !torch.int -> !torch.int
    %l = torch.prim.ListConstruct %ab, %intm1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.view %arg0, %l : !torch.vtensor<[2,3,4],f32>, !torch.list<int> -> !torch.vtensor<[?,?],f32>
    return %0 : !torch.vtensor<[?,?],f32>
  }
}

// -----

// A private function whose every call site passes the same static dims takes and returns
// them: its signature is refined (the caller's cast to `?` is folded away) and the caller
// reads the result through a cast back to the old type where a typed use (return) needs it.
// torch.aten ops then never have a static result of a dynamic operand (torch-to-linalg's
// transpose rejects that), and the sub-DNNs later made of such a function are static.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:       func.func private @transposed(%arg0: !torch.vtensor<[5,1,4],f32>) -> !torch.vtensor<[1,5,4],f32> {
// CHECK:         %[[T:[0-9a-z_#]+]] = torch.aten.transpose.int %arg0, %{{.+}}, %{{.+}} : !torch.vtensor<[5,1,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,5,4],f32>
// CHECK-NEXT:    return %[[T]] : !torch.vtensor<[1,5,4],f32>
// CHECK:       func.func @main(
// CHECK-NEXT:    %[[R:[0-9a-z_#]+]] = call @transposed(%arg0) : (!torch.vtensor<[5,1,4],f32>) -> !torch.vtensor<[1,5,4],f32>
// CHECK-NEXT:    %[[C:[0-9a-z_#]+]] = torch.tensor_static_info_cast %[[R]] : !torch.vtensor<[1,5,4],f32> to !torch.vtensor<[1,?,4],f32>
// CHECK-NEXT:    return %[[C]]
module attributes {dync.symbols = {}} {
  func.func private @transposed(%arg0: !torch.vtensor<[?,1,4],f32>) -> !torch.vtensor<[1,?,4],f32> {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %0 = torch.aten.transpose.int %arg0, %int0, %int1 : !torch.vtensor<[?,1,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,?,4],f32>
    return %0 : !torch.vtensor<[1,?,4],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[5,1,4],f32> {dync.shape = [5, 1, 4]}) -> !torch.vtensor<[1,?,4],f32> attributes {dync.entry} {
    %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[5,1,4],f32> to !torch.vtensor<[?,1,4],f32>
    %1 = func.call @transposed(%0) : (!torch.vtensor<[?,1,4],f32>) -> !torch.vtensor<[1,?,4],f32>
    return %1 : !torch.vtensor<[1,?,4],f32>
  }
}

// -----

// Call sites that disagree (5 and 7 rows): the signature keeps its `?`, bound to the join's
// fresh symbol ranged over both.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:       func.func private @relu(%arg0: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> {
// CHECK-NEXT:    %[[R:[0-9a-z_#]+]] = torch.symbolic_int "r{{[0-9]+}}" {min_val = 5, max_val = 7}
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[R]]], affine_map<()[s0] -> (s0, 4)>
// CHECK:       func.func @main(
// CHECK:         call @relu(%{{.+}}) : (!torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
// CHECK:         call @relu(%{{.+}}) : (!torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
module attributes {dync.symbols = {}} {
  func.func private @relu(%arg0: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32> {
    %0 = torch.aten.relu %arg0 : !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32>
    return %0 : !torch.vtensor<[?,4],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[5,4],f32> {dync.shape = [5, 4]}, %arg1: !torch.vtensor<[7,4],f32> {dync.shape = [7, 4]}) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) attributes {dync.entry} {
    %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[5,4],f32> to !torch.vtensor<[?,4],f32>
    %1 = torch.tensor_static_info_cast %arg1 : !torch.vtensor<[7,4],f32> to !torch.vtensor<[?,4],f32>
    %2 = func.call @relu(%0) : (!torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
    %3 = func.call @relu(%1) : (!torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,4],f32>
    return %2, %3 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>
  }
}

// -----

// An `scf.if` whose branches agree on a constant dim gets the static result type: both
// branches yield it (torch.cond's builtin tensors are converted from the static vtensor) and
// the result's uses read it directly; only the return reads a cast back to `?`.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[IF:[0-9a-z_#]+]] = scf.if %{{.+}} -> (tensor<3x8xf32>) {
// CHECK:           %[[A:[0-9a-z_#]+]] = torch.aten.relu %{{.+}} -> !torch.vtensor<[3,8],f32>
// CHECK:           %[[B:[0-9a-z_#]+]] = torch_c.to_builtin_tensor %[[A]] : !torch.vtensor<[3,8],f32> -> tensor<3x8xf32>
// CHECK:           scf.yield %[[B]] : tensor<3x8xf32>
// CHECK:         } else {
// CHECK:           scf.yield %{{.+}} : tensor<3x8xf32>
// CHECK:         }
// CHECK:         %[[V:[0-9a-z_#]+]] = torch_c.from_builtin_tensor %[[IF]] : tensor<3x8xf32> -> !torch.vtensor<[3,8],f32>
// CHECK:         %[[N:[0-9a-z_#]+]] = torch.aten.neg %[[V]] : !torch.vtensor<[3,8],f32> -> !torch.vtensor<[3,8],f32>
// CHECK:         %[[C:[0-9a-z_#]+]] = torch.tensor_static_info_cast %[[N]] : !torch.vtensor<[3,8],f32> to !torch.vtensor<[?,8],f32>
// CHECK:         return %[[C]]
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[3,8],f32> {dync.shape = [3, 8]}, %arg1: !torch.vtensor<[],i1> {dync.shape = []}) -> !torch.vtensor<[?,8],f32> attributes {dync.entry} {
    %x = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[3,8],f32> to !torch.vtensor<[?,8],f32>
    %c = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[],i1> -> tensor<i1>
    %p = tensor.extract %c[] : tensor<i1>
    %0 = scf.if %p -> (tensor<?x8xf32>) {
      %a = torch.aten.relu %x : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %a : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b : tensor<?x8xf32>
    } else {
      %a = torch.aten.sigmoid %x : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %a : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b : tensor<?x8xf32>
    }
    %1 = torch_c.from_builtin_tensor %0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    %2 = torch.aten.neg %1 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    return %2 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// Backward transfer: masked_select's length is execution-determined and has no rule, but
// adding it to an [n] tensor means it has n elements (torch's `?` dims do not broadcast).
// CHECK-LABEL: module attributes {dync.rdp
// CHECK-SAME:    = {classes = {ISDOS = 1 : i64, unclassified = 1 : i64}, static = 0 : i64, symbolic = 4 : i64, unknown = 0 : i64}
// CHECK:         %[[M:[0-9a-z_#]+]] = torch.aten.masked_select
// CHECK-NEXT:    torch.bind_symbolic_shape %[[M]], [%{{.+}}], affine_map<()[s0] -> (s0)>
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?],f32> {dync.shape = ["n"]}, %arg1: !torch.vtensor<[?],i1> {dync.shape = ["n"]}) -> !torch.vtensor<[?],f32> attributes {dync.entry} {
    %int1 = torch.constant.int 1
    %0 = torch.aten.masked_select %arg0, %arg1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],i1> -> !torch.vtensor<[?],f32>
    %1 = torch.aten.add.Tensor %0, %arg0, %int1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.int -> !torch.vtensor<[?],f32>
    return %1 : !torch.vtensor<[?],f32>
  }
}

// -----

// Backward transfer stops at a scatter's destination: its indices (and source) may be shorter
// than the tensor written into, so the indices' dim (unknown: unflatten has no rule) stays
// unknown rather than the 8 the scatter writes (which made them [1, 8]: read past at run time).
// CHECK-LABEL: module attributes {dync.rdp
// CHECK:         %[[IDX:[0-9a-z_#]+]] = torch.aten.unflatten.int
// CHECK-SAME:      -> !torch.vtensor<[1,?],si64>
// CHECK:         torch.aten.scatter.src %arg0, %{{.+}}, %[[IDX]], %{{.+}} : !torch.vtensor<[1,8],f32>, !torch.int, !torch.vtensor<[1,?],si64>, !torch.vtensor<[1,?],f32>
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[1,8],f32> {dync.shape = [1, 8]}, %arg1: !torch.vtensor<[8],i1> {dync.shape = [8]}) -> !torch.vtensor<[1,8],f32> attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %0 = torch.aten.nonzero %arg1 : !torch.vtensor<[8],i1> -> !torch.vtensor<[?,1],si64>
    %1 = torch.aten.squeeze.dim %0, %int1 : !torch.vtensor<[?,1],si64>, !torch.int -> !torch.vtensor<[?],si64>
    %int-1 = torch.constant.int -1
    %sizes = torch.prim.ListConstruct %int1, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.aten.unflatten.int %1, %int0, %sizes : !torch.vtensor<[?],si64>, !torch.int, !torch.list<int> -> !torch.vtensor<[1,?],si64>
    %3 = torch.aten.index_select %arg0, %int1, %1 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[1,?],f32>
    %4 = torch.aten.scatter.src %arg0, %int1, %2, %3 : !torch.vtensor<[1,8],f32>, !torch.int, !torch.vtensor<[1,?],si64>, !torch.vtensor<[1,?],f32> -> !torch.vtensor<[1,8],f32>
    return %4 : !torch.vtensor<[1,8],f32>
  }
}

// -----

// A pad whose width is data (an item of a 0-d tensor): the padded dim is unknown, and the
// rows padded by a constant are known, but a binding needs every dim, so the result has none.
// CHECK-LABEL: module attributes {dync.rdp
// CHECK-SAME:    unknown = 1 : i64
// CHECK:         %[[PAD:[0-9a-z_#]+]] = torch.aten.constant_pad_nd %arg0,
// CHECK-NOT:     torch.bind_symbolic_shape %[[PAD]]
// CHECK:         return %[[PAD]]
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,5],f32> {dync.shape = ["n", 5]}, %arg1: !torch.vtensor<[],si64> {dync.shape = []}) -> !torch.vtensor<[?,?],f32> attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int2 = torch.constant.int 2
    %k = torch.aten.item %arg1 : !torch.vtensor<[],si64> -> !torch.int
    %pads = torch.prim.ListConstruct %int0, %k, %int2, %int0 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %zero = torch.constant.float 0.000000e+00
    %0 = torch.aten.constant_pad_nd %arg0, %pads, %zero : !torch.vtensor<[?,5],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[?,?],f32>
    return %0 : !torch.vtensor<[?,?],f32>
  }
}

// -----

// A version static in W (dync-specialize's copy): its argument is unbound, and the exporter
// declared H after a literal. The declaration moves to the top, so that the argument's new
// binding, placed before the first op, sees it.
// CHECK-LABEL: func.func @main__w_8
// CHECK-NEXT:    %[[H:[0-9a-z_#]+]] = torch.symbolic_int "h" {min_val = 1, max_val = 16}
// CHECK-NEXT:    torch.bind_symbolic_shape %arg0, [%[[H]]], affine_map<()[s0] -> (s0, 8)>
// CHECK-NEXT:    torch.vtensor.literal
module attributes {dync.symbols = {h = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main__w_8(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["h", 8]}) -> !torch.vtensor<[?,8],f32> attributes {dync.entry} {
    %0 = torch.vtensor.literal(dense<1.0> : tensor<8xf32>) : !torch.vtensor<[8],f32>
    %1 = torch.symbolic_int "h" {min_val = 1, max_val = 16} : !torch.int
    %int1 = torch.constant.int 1
    %2 = torch.aten.add.Tensor %arg0, %0, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
    return %2 : !torch.vtensor<[?,8],f32>
  }
}
