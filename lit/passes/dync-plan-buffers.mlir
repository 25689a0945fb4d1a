// RUN: dync-opt %s --split-input-file --dync-rdp --dync-plan-buffers | FileCheck %s

// A static chain: relu writes in place over the matmul it follows; the third [4,64] buffer
// reuses offset 0 of the first, dead by then; the result [4,16] is allocated when the
// (single) execution segment starts, so it sits above everything. Peak: two [4,64] buffers
// and the result, 1024 + 1024 + 256 bytes.
// IREE's model: the returned [4,16] is allocated apart (256); its slab packs the three [4,64]
// buffers by first use: the first at 0, the second (live with it at the second mm) on top at
// 1024, the third (live only with the second) in the gap at 0: a 2048-byte slab, 2304 in all.
// CHECK-LABEL: module attributes {dync.peak = {arena = "2304", formula = "2304", function = "main", iree = "2304", max = 2304 : i64, min = 2304 : i64, symbols = {}}
// CHECK:         func.func @main{{.*}} attributes {dync.buffers = {arena = "2304", buffers = 4 : i64, frame = "2048", in_place = 1 : i64, iree = "2304", peak = "2304", unknown = 0 : i64}, dync.entry}
// CHECK:         torch.aten.mm %arg0, %{{[0-9]+}} {dync.buffer = {offset = "0", size = "1024"}}
// CHECK-NEXT:    torch.aten.relu %{{[0-9]+}} {dync.buffer = {in_place, offset = "0", size = "1024"}}
// CHECK-NEXT:    torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "1024", size = "1024"}}
// CHECK-NEXT:    torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "0", size = "1024"}}
// CHECK-NEXT:    torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "2048", size = "256"}}
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[4,64],f32> {dync.shape = [4, 64]}) -> (!torch.vtensor<[4,16],f32> {dync.shape = [4, 16]}) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<1.0> : tensor<64x64xf32>) : !torch.vtensor<[64,64],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<64x16xf32>) : !torch.vtensor<[64,16],f32>
    %0 = torch.aten.mm %arg0, %w : !torch.vtensor<[4,64],f32>, !torch.vtensor<[64,64],f32> -> !torch.vtensor<[4,64],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[4,64],f32> -> !torch.vtensor<[4,64],f32>
    %2 = torch.aten.mm %1, %w : !torch.vtensor<[4,64],f32>, !torch.vtensor<[64,64],f32> -> !torch.vtensor<[4,64],f32>
    %3 = torch.aten.mm %2, %w : !torch.vtensor<[4,64],f32>, !torch.vtensor<[64,64],f32> -> !torch.vtensor<[4,64],f32>
    %4 = torch.aten.mm %3, %w2 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[64,16],f32> -> !torch.vtensor<[4,16],f32>
    return %4 : !torch.vtensor<[4,16],f32>
  }
}

// -----

// A symbolic chain over n in [1, 16]: sizes and offsets are expressions in n. The [n,8]
// buffer goes above the two [n,64] ones (which share offset 0), the result above all:
// 256n + 32n + 16n = 304n.
// IREE's model: dynamic sizes share a slot only with the same size expression, each slot
// rounded up to 64 bytes. The two 256n buffers are never live together: one slot, 256n; the
// 32n one: 64*ceiling(32n/64) = 64*ceiling(n/2); the returned 16n apart. 272n + 64*ceiling(n/2).
// CHECK-LABEL: module attributes {dync.peak = {arena = "304*n", formula = "304*n", function = "main", iree = "272*n + 64*ceiling(n/2)", max = 4864 : i64, min = 304 : i64, symbols = {n = [1, 16]}}
// CHECK:         torch.aten.mm %arg0, %{{[0-9]+}} {dync.buffer = {offset = "0", size = "256*n"}}
// CHECK:         torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "256*n", size = "32*n"}}
// CHECK:         torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "0", size = "256*n"}}
// CHECK:         torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "288*n", size = "16*n"}}
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,64],f32> {dync.shape = ["n", 64]}) -> (!torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<1.0> : tensor<64x64xf32>) : !torch.vtensor<[64,64],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<64x8xf32>) : !torch.vtensor<[64,8],f32>
    %w3 = torch.vtensor.literal(dense<1.0> : tensor<8x64xf32>) : !torch.vtensor<[8,64],f32>
    %w4 = torch.vtensor.literal(dense<1.0> : tensor<64x4xf32>) : !torch.vtensor<[64,4],f32>
    %0 = torch.aten.mm %arg0, %w : !torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32> -> !torch.vtensor<[?,64],f32>
    %1 = torch.aten.mm %0, %w2 : !torch.vtensor<[?,64],f32>, !torch.vtensor<[64,8],f32> -> !torch.vtensor<[?,8],f32>
    %2 = torch.aten.mm %1, %w3 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32> -> !torch.vtensor<[?,64],f32>
    %3 = torch.aten.mm %2, %w4 : !torch.vtensor<[?,64],f32>, !torch.vtensor<[64,4],f32> -> !torch.vtensor<[?,4],f32>
    return %3 : !torch.vtensor<[?,4],f32>
  }
}

// -----

// scf.if: the branches are disjoint in time, so the peak is the max over them. Then: the
// transposed copy of x, the [n,n] Gram matrix and its [n,8] product (4n^2 + 64n bytes); else:
// [n,32] then [n,8] (160n). Neither dominates over n in [1, 64], so the formula keeps both.
// Values yielded leave their branch: they are allocated when the branch starts.
// IREE's model: the dynamic sizes share no memory, each rounded up to 64 bytes and laid
// apart, and the yielded [n,8] (32n) is allocated apart. Then: the transposed copy,
// 64*ceiling(32n/64) = 64*ceiling(n/2), the Gram matrix, 64*ceiling(4n^2/64) =
// 64*ceiling(n^2/16), and 32n; else: the [n,32], 64*ceiling(128n/64) = 128n, and 32n = 160n.
// CHECK-LABEL: module attributes {dync.peak = {
// CHECK-SAME:    formula = "Max(160*n, 4*n**2 + 64*n)", function = "main", iree = "Max(160*n, 32*n + 64*ceiling(n/2) + 64*ceiling(n**2/16))", max = 20480 : i64, min = 160 : i64, symbols = {n = [1, 64]}}
// CHECK:         torch.aten.transpose.int %arg0, %{{.+}} {dync.buffer = {offset = "4*n**2 + 32*n", size = "32*n"}}
// CHECK:         torch.aten.mm %arg0, %{{[0-9]+}} {dync.buffer = {offset = "0", size = "4*n**2"}}
// CHECK:         torch.aten.mm %arg0, %{{[0-9]+}} {dync.buffer = {offset = "0", size = "128*n"}}
// CHECK:         } {dync.buffer = {offset = "0", size = "32*n"}}
module attributes {dync.symbols = {n = {max = 64 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}, %arg1: !torch.vtensor<[],i1> {dync.shape = []}) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}) attributes {dync.entry} {
    %c = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[],i1> -> tensor<i1>
    %p = tensor.extract %c[] : tensor<i1>
    %0 = scf.if %p -> (tensor<?x8xf32>) {
      %int0 = torch.constant.int 0
      %int1 = torch.constant.int 1
      %t = torch.aten.transpose.int %arg0, %int0, %int1 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,?],f32>
      %g = torch.aten.mm %arg0, %t : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,?],f32> -> !torch.vtensor<[?,?],f32>
      %y = torch.aten.mm %g, %arg0 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %y : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b : tensor<?x8xf32>
    } else {
      %w = torch.vtensor.literal(dense<1.0> : tensor<8x32xf32>) : !torch.vtensor<[8,32],f32>
      %w2 = torch.vtensor.literal(dense<1.0> : tensor<32x8xf32>) : !torch.vtensor<[32,8],f32>
      %a = torch.aten.mm %arg0, %w : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,32],f32> -> !torch.vtensor<[?,32],f32>
      %y = torch.aten.mm %a, %w2 : !torch.vtensor<[?,32],f32>, !torch.vtensor<[32,8],f32> -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %y : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b : tensor<?x8xf32>
    }
    %1 = torch_c.from_builtin_tensor %0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %1 : !torch.vtensor<[?,8],f32>
  }
}

// -----

// scf.while: the body is counted once, in its steady state: the carried [n,8] value (a buffer
// born at the top of the body), the [n,64] temporary and the [n,8] value the condition
// forwards, 32n + 256n + 32n. The carried value's buffer is on the loop as dync.carried.
// IREE's model: the [n,64] temporary, 256n; the carried [n,8], read only inside the body, in
// a slot rounded to 64 bytes, 64*ceiling(32n/64) = 64*ceiling(n/2); the forwarded [n,8]
// leaves the body, allocated apart, 32n. 288n + 64*ceiling(n/2).
// CHECK-LABEL: module attributes {dync.peak = {
// CHECK-SAME:    formula = "320*n", function = "main", iree = "288*n + 64*ceiling(n/2)", max = 5120 : i64, min = 320 : i64, symbols = {n = [1, 16]}}
// CHECK:         scf.while
// CHECK:         torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "{{.+}}", size = "256*n"}}
// CHECK:         torch.aten.mm %{{[0-9]+}}, %{{[0-9]+}} {dync.buffer = {offset = "{{.+}}", size = "32*n"}}
// CHECK:         } attributes {dync.buffer = [{}, {offset = "0", size = "32*n"}], dync.carried = [{}, {offset = "{{.+}}", size = "32*n"}]}
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}) attributes {dync.entry} {
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %c0 = arith.constant 0 : i64
    %0:2 = scf.while (%i = %c0, %h = %x) : (i64, tensor<?x8xf32>) -> (i64, tensor<?x8xf32>) {
      %w = torch.vtensor.literal(dense<1.0> : tensor<8x64xf32>) : !torch.vtensor<[8,64],f32>
      %w2 = torch.vtensor.literal(dense<1.0> : tensor<64x8xf32>) : !torch.vtensor<[64,8],f32>
      %v = torch_c.from_builtin_tensor %h : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %u = torch.aten.mm %v, %w : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32> -> !torch.vtensor<[?,64],f32>
      %t = torch.aten.mm %u, %w2 : !torch.vtensor<[?,64],f32>, !torch.vtensor<[64,8],f32> -> !torch.vtensor<[?,8],f32>
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

// A call reserves a frame at its call site: the callee's peak without its results, its
// symbols replaced by the call site's dims. @f is called on [n,8], then on [2n,8]: its frame
// (the [m,64] temporary, 256m bytes) is 256n at the first call and 512n at the second. The
// peak is at the second call: the frame, its [2n,8] argument and result (64n each).
// IREE's model: @f's own is its 256m temporary plus its 32m result, 288m. In @main each size
// expression has its own slot, laid one after another: the frames 256n and 512n, the first
// call's result 64*ceiling(32n/64) = 64*ceiling(n/2), the cat's 64n; the returned 64n apart.
// 256n + 512n + 64n + 64n + 64*ceiling(n/2) = 896n + 64*ceiling(n/2).
// CHECK-LABEL: module attributes {dync.peak = {
// CHECK-SAME:    formula = "640*n", function = "main", iree = "896*n + 64*ceiling(n/2)", max = 10240 : i64, min = 640 : i64, symbols = {n = [1, 16]}}
// CHECK:         func.func @main{{.*}} attributes {dync.buffers = {arena = "640*n", buffers = 3 : i64, frame = "576*n", in_place = 0 : i64, iree = "896*n + 64*ceiling(n/2)", peak = "640*n", unknown = 0 : i64}, dync.entry}
// CHECK:         call @f(%arg0) {dync.buffer = {offset = "{{.+}}", size = "32*n"}, dync.frame = {offset = "{{.+}}", size = "256*n"}}
// CHECK:         torch.aten.cat %{{[0-9]+}}, %{{.+}} {dync.buffer = {offset = "{{.+}}", size = "64*n"}}
// CHECK:         call @f(%{{[0-9]+}}) {dync.buffer = {offset = "{{.+}}", size = "64*n"}, dync.frame = {offset = "{{.+}}", size = "512*n"}}
// CHECK:         func.func private @f
// CHECK-SAME:    dync.buffers = {arena = "288*m", buffers = 2 : i64, frame = "256*m", in_place = 0 : i64, iree = "288*m", peak = "288*m", unknown = 0 : i64}
module attributes {dync.symbols = {n = {max = 16 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}) -> (!torch.vtensor<[?,8],f32> {dync.shape = ["2*n", 8]}) attributes {dync.entry} {
    %n = torch.symbolic_int "n" {min_val = 1, max_val = 16} : !torch.int
    torch.bind_symbolic_shape %arg0, [%n], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %0 = call @f(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %0, [%n], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %l = torch.prim.ListConstruct %0, %0 : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) -> !torch.list<vtensor>
    %c = torch.aten.cat %l, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %c, [%n], affine_map<()[s0] -> (s0 * 2, 8)> : !torch.vtensor<[?,8],f32>
    %1 = call @f(%c) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %1, [%n], affine_map<()[s0] -> (s0 * 2, 8)> : !torch.vtensor<[?,8],f32>
    return %1 : !torch.vtensor<[?,8],f32>
  }
  func.func private @f(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %m = torch.symbolic_int "m" {min_val = 1, max_val = 32} : !torch.int
    torch.bind_symbolic_shape %arg0, [%m], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x64xf32>) : !torch.vtensor<[8,64],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<64x8xf32>) : !torch.vtensor<[64,8],f32>
    %a = torch.aten.mm %arg0, %w : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32> -> !torch.vtensor<[?,64],f32>
    %b = torch.aten.mm %a, %w2 : !torch.vtensor<[?,64],f32>, !torch.vtensor<[64,8],f32> -> !torch.vtensor<[?,8],f32>
    return %b : !torch.vtensor<[?,8],f32>
  }
}

// -----

// A layout crossing: the permute dync-isolate-subdnns marks `dync.cancels` (IREE's own
// transposes cancel it) and the barrier it feeds hold no buffer of their own, they alias the
// relu's, which the add, its last reader, then writes over in place; the unmarked permute
// moves the data into a buffer of its own. Two buffers of 1024 bytes.
// CHECK-LABEL: func.func @main{{.*}} attributes {dync.buffers = {arena = "2048", buffers = 2 : i64
// CHECK:         torch.aten.relu %arg0 {dync.buffer = {offset = "{{.+}}", size = "1024"}}
// CHECK:         torch.aten.permute %{{[0-9]+}}, %{{[0-9]+}} {dync.cancels}
// CHECK-NEXT:    torch_c.to_builtin_tensor
// CHECK-NEXT:    util.optimization_barrier %{{[0-9]+}} : tensor<1x8x8x4xf32>
// CHECK-NEXT:    torch_c.from_builtin_tensor
// CHECK-NEXT:    torch.aten.permute %arg0, %{{[0-9]+}} {dync.buffer = {offset = "{{.+}}", size = "1024"}}
// CHECK-NEXT:    torch.aten.add.Tensor %{{[0-9]+}}, %{{[0-9]+}}, %{{.+}} {dync.buffer = {in_place,
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[1,4,8,8],f32> {dync.shape = [1, 4, 8, 8]}) -> (!torch.vtensor<[1,8,8,4],f32> {dync.shape = [1, 8, 8, 4]}) attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %nhwc = torch.prim.ListConstruct %int0, %int2, %int3, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %r = torch.aten.relu %arg0 : !torch.vtensor<[1,4,8,8],f32> -> !torch.vtensor<[1,4,8,8],f32>
    %p = torch.aten.permute %r, %nhwc {dync.cancels} : !torch.vtensor<[1,4,8,8],f32>, !torch.list<int> -> !torch.vtensor<[1,8,8,4],f32>
    %b = torch_c.to_builtin_tensor %p : !torch.vtensor<[1,8,8,4],f32> -> tensor<1x8x8x4xf32>
    %o = util.optimization_barrier %b : tensor<1x8x8x4xf32>
    %f = torch_c.from_builtin_tensor %o : tensor<1x8x8x4xf32> -> !torch.vtensor<[1,8,8,4],f32>
    %q = torch.aten.permute %arg0, %nhwc : !torch.vtensor<[1,4,8,8],f32>, !torch.list<int> -> !torch.vtensor<[1,8,8,4],f32>
    %s = torch.aten.add.Tensor %f, %q, %int1 : !torch.vtensor<[1,8,8,4],f32>, !torch.vtensor<[1,8,8,4],f32>, !torch.int -> !torch.vtensor<[1,8,8,4],f32>
    return %s : !torch.vtensor<[1,8,8,4],f32>
  }
}

// -----

// Elementwise fusion: the relu and the mul read only arguments (nothing of their size to
// write over) and only the add reads them, so IREE computes them inside the add's dispatch:
// they hold no buffer. One buffer of 1024 bytes, the add's.
// CHECK-LABEL: func.func @main{{.*}} attributes {dync.buffers = {arena = "1024", buffers = 1 : i64
// CHECK:         torch.aten.relu %arg0 :
// CHECK-NEXT:    torch.aten.mul.Tensor %arg0, %arg0 :
// CHECK-NEXT:    torch.aten.add.Tensor %{{[0-9]+}}, %{{[0-9]+}}, %{{.+}} {dync.buffer = {offset = "0", size = "1024"}}
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[16,16],f32> {dync.shape = [16, 16]}) -> (!torch.vtensor<[16,16],f32> {dync.shape = [16, 16]}) attributes {dync.entry} {
    %int1 = torch.constant.int 1
    %r = torch.aten.relu %arg0 : !torch.vtensor<[16,16],f32> -> !torch.vtensor<[16,16],f32>
    %m = torch.aten.mul.Tensor %arg0, %arg0 : !torch.vtensor<[16,16],f32>, !torch.vtensor<[16,16],f32> -> !torch.vtensor<[16,16],f32>
    %s = torch.aten.add.Tensor %r, %m, %int1 : !torch.vtensor<[16,16],f32>, !torch.vtensor<[16,16],f32>, !torch.int -> !torch.vtensor<[16,16],f32>
    return %s : !torch.vtensor<[16,16],f32>
  }
}

// -----

// IREE computes convolutions in NHWC (dync-channels-last requested it): a convolution that
// reads the model's NCHW input, in @main or in @f which main passes it to, reads a transposed
// copy of it (`dync.nhwc_input`, 768 bytes, live at the convolution); @g's input comes from a
// convolution, already in NHWC, so the transposes cancel and there is no copy. The peak is
// at @g's call: the relu (in place over the conv), @g's result and @f's, over which the add
// writes the returned value in place, 3 * 2048 = 6144.
// IREE's greedy packing of the slab (first come, first placed) leaves a hole the arena plan
// does not. In order of first use: the 768-byte NHWC copy at 0; the conv/relu buffer, live
// with it, on top at 768; @f's 768-byte frame in the gap at 0 (the copy is dead by then);
// @g's 2048-byte result does not fit that gap, so on top at 2816. A 4864-byte slab plus the
// returned 2048, allocated apart: 6912 against 6144.
// CHECK-LABEL: module attributes {{.*}}dync.peak = {arena = "6144", formula = "6144", function = "main", iree = "6912"
// CHECK:         torch.aten.conv2d %arg0, {{.+}} {dync.buffer = {offset = "{{.+}}", size = "2048"}, dync.nhwc_input = {offset = "{{.+}}", size = "768"}}
// CHECK:         call @f(%arg0) {dync.buffer = {offset = "{{.+}}", size = "2048"}, dync.frame = {offset = "{{.+}}", size = "768"}}
// CHECK:         call @g(
// CHECK:         func.func private @f
// CHECK:         torch.aten.conv2d %arg0, {{.+}} {dync.buffer = {offset = "{{.+}}", size = "2048"}, dync.nhwc_input = {offset = "{{.+}}", size = "768"}}
// CHECK:         func.func private @g
// CHECK:         torch.aten.conv2d %arg0, {{.+}} {dync.buffer = {offset = "0", size = "2048"}} :
module attributes {dync.iree_flags = ["--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops"], dync.iree_preprocessing = ["iree-preprocessing-convert-conv-to-channels-last"], dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[1,3,8,8],f32> {dync.shape = [1, 3, 8, 8]}) -> (!torch.vtensor<[1,8,8,8],f32> {dync.shape = [1, 8, 8, 8]}) attributes {dync.entry} {
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %c = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    %r = torch.aten.relu %c : !torch.vtensor<[1,8,8,8],f32> -> !torch.vtensor<[1,8,8,8],f32>
    %a = call @f(%arg0) : (!torch.vtensor<[1,3,8,8],f32>) -> !torch.vtensor<[1,8,8,8],f32>
    %b = call @g(%r) : (!torch.vtensor<[1,8,8,8],f32>) -> !torch.vtensor<[1,8,8,8],f32>
    %s = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[1,8,8,8],f32>, !torch.vtensor<[1,8,8,8],f32>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    return %s : !torch.vtensor<[1,8,8,8],f32>
  }
  func.func private @f(%x: !torch.vtensor<[1,3,8,8],f32>) -> !torch.vtensor<[1,8,8,8],f32> {
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %w = torch.vtensor.literal(dense<2.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
    %c = torch.aten.conv2d %x, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,3,8,8],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    return %c : !torch.vtensor<[1,8,8,8],f32>
  }
  func.func private @g(%y: !torch.vtensor<[1,8,8,8],f32>) -> !torch.vtensor<[1,8,8,8],f32> {
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %w = torch.vtensor.literal(dense<3.0> : tensor<8x8x3x3xf32>) : !torch.vtensor<[8,8,3,3],f32>
    %c = torch.aten.conv2d %y, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,8,8,8],f32>, !torch.vtensor<[8,8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,8,8],f32>
    return %c : !torch.vtensor<[1,8,8,8],f32>
  }
}

// -----

// Data no one reads: @width reads only the shape of @f's first result, so no caller reads
// that result's data; IREE inlines the calls and drops it. The call gives it no buffer and
// @f does not hold it from the start of its work as a result (it would: %h beside %t and %o,
// 2304 bytes); @f's peak is %t and %o (1280), its frame 1024 beside the 256-byte result.
// CHECK-LABEL: module attributes {dync.peak = {arena = "1280", formula = "1280", function = "main", iree = "1280"
// CHECK:         call @f(%arg0) {dync.buffer = [{}, {offset = "{{.+}}", size = "256"}], dync.frame = {offset = "{{.+}}", size = "1024"}}
// CHECK:         func.func private @f{{.*}}dync.buffers = {arena = "1280", buffers = 3 : i64, frame = "1024", in_place = 0 : i64, iree = "1280", peak = "1280"
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[4,16],f32> {dync.shape = [4, 16]}) -> (!torch.vtensor<[4,16],f32> {dync.shape = [4, 16]}) attributes {dync.entry} {
    %0:2 = call @f(%arg0) : (!torch.vtensor<[4,16],f32>) -> (!torch.vtensor<[4,64],f32>, !torch.vtensor<[4,16],f32>)
    %1 = call @width(%0#0) : (!torch.vtensor<[4,64],f32>) -> !torch.int
    return %0#1 : !torch.vtensor<[4,16],f32>
  }
  func.func private @f(%x: !torch.vtensor<[4,16],f32>) -> (!torch.vtensor<[4,64],f32>, !torch.vtensor<[4,16],f32>) {
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<16x64xf32>) : !torch.vtensor<[16,64],f32>
    %w2 = torch.vtensor.literal(dense<1.0> : tensor<64x16xf32>) : !torch.vtensor<[64,16],f32>
    %t = torch.aten.mm %x, %w1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,64],f32> -> !torch.vtensor<[4,64],f32>
    %o = torch.aten.mm %t, %w2 : !torch.vtensor<[4,64],f32>, !torch.vtensor<[64,16],f32> -> !torch.vtensor<[4,16],f32>
    %h = torch.aten.mm %o, %w1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,64],f32> -> !torch.vtensor<[4,64],f32>
    return %h, %o : !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,16],f32>
  }
  func.func private @width(%y: !torch.vtensor<[4,64],f32>) -> !torch.int {
    %int1 = torch.constant.int 1
    %n = torch.aten.size.int %y, %int1 : !torch.vtensor<[4,64],f32>, !torch.int -> !torch.int
    return %n : !torch.int
  }
}

// -----

// The join point of an scf.if is a segment of its own: what the branches read (%x) dies
// there, before the next segment's results are allocated. After the if: its result and the
// [4,64] product, 1280 bytes (with the join in the next segment, %x would be counted beside
// them: 1536). IREE's model agrees: static sizes whose lifetimes nest pack without holes.
// CHECK-LABEL: module attributes {dync.peak = {arena = "1280", formula = "1280", function = "main", iree = "1280"
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[4,16],f32> {dync.shape = [4, 16]}, %arg1: !torch.vtensor<[],i1> {dync.shape = []}) -> (!torch.vtensor<[4,64],f32> {dync.shape = [4, 64]}) attributes {dync.entry} {
    %w = torch.vtensor.literal(dense<1.0> : tensor<16x16xf32>) : !torch.vtensor<[16,16],f32>
    %w1 = torch.vtensor.literal(dense<1.0> : tensor<16x64xf32>) : !torch.vtensor<[16,64],f32>
    %x = torch.aten.relu %arg0 : !torch.vtensor<[4,16],f32> -> !torch.vtensor<[4,16],f32>
    %c = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[],i1> -> tensor<i1>
    %p = tensor.extract %c[] : tensor<i1>
    %r = scf.if %p -> (tensor<4x16xf32>) {
      %y = torch.aten.mm %x, %w : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,16],f32> -> !torch.vtensor<[4,16],f32>
      %b = torch_c.to_builtin_tensor %y : !torch.vtensor<[4,16],f32> -> tensor<4x16xf32>
      scf.yield %b : tensor<4x16xf32>
    } else {
      %b = torch_c.to_builtin_tensor %x : !torch.vtensor<[4,16],f32> -> tensor<4x16xf32>
      scf.yield %b : tensor<4x16xf32>
    }
    %v = torch_c.from_builtin_tensor %r : tensor<4x16xf32> -> !torch.vtensor<[4,16],f32>
    %z = torch.aten.mm %v, %w1 : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,64],f32> -> !torch.vtensor<[4,64],f32>
    return %z : !torch.vtensor<[4,64],f32>
  }
}
