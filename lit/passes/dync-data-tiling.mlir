// RUN: dync-opt %s --split-input-file --dync-data-tiling | FileCheck %s

// A wide linear layer (K = N = 768) does most of the work: the module asks for data tiling,
// started in global optimization since the rows are dynamic (dispatch creation's data tiling
// left rows of such products unwritten). It records the work (M*N*K, M at the middle of its
// range) of its wide and narrow products, and that a product has dynamic rows: host mode
// weighs its sub-DNNs' records together (`dync_ir.linked_flags`).
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"], dync.tiling_work = {dynamic_rows = 1 : i64, narrow = 49152 : i64, wide = 589824 : i64}}
// CHECK-LABEL: func.func @wide
module {
  func.func @wide(%x: !torch.vtensor<[?,768],f32>, %w: !torch.vtensor<[768,768],f32>, %v: !torch.vtensor<[64,768],f32>) -> (!torch.vtensor<[?,768],f32>, !torch.vtensor<[?,64],f32>) {
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,768],f32>, !torch.vtensor<[768,768],f32>, !torch.none -> !torch.vtensor<[?,768],f32>
    %1 = torch.aten.linear %x, %v, %none : !torch.vtensor<[?,768],f32>, !torch.vtensor<[64,768],f32>, !torch.none -> !torch.vtensor<[?,64],f32>
    return %0, %1 : !torch.vtensor<[?,768],f32>, !torch.vtensor<[?,64],f32>
  }
}

// -----

// A 1×1 convolution with 1024 input channels and 256 filters counts as a wide matmul.
// CHECK: module attributes {dync.iree_flags = ["--iree-opt-data-tiling"], dync.tiling_work = {{.*}}
// CHECK-LABEL: func.func @pointwise
module {
  func.func @pointwise(%x: !torch.vtensor<[?,1024,14,14],f32>, %w: !torch.vtensor<[256,1024,1,1],f32>) -> !torch.vtensor<[?,256,14,14],f32> {
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %x, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,1024,14,14],f32>, !torch.vtensor<[256,1024,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,256,14,14],f32>
    return %0 : !torch.vtensor<[?,256,14,14],f32>
  }
}

// -----

// Narrow products do more work than the wide one (3136 rows of 64 x 64 against 8 rows of
// 256 x 256), a 3×3 convolution is not counted (IREE does not data-tile it), nor a product
// whose N is dynamic: no flag.
// CHECK-NOT: dync.iree_flags
// CHECK-LABEL: func.func @narrow
module {
  func.func @narrow(%x: !torch.vtensor<[3136,64],f32>, %w: !torch.vtensor<[64,64],f32>, %y: !torch.vtensor<[8,256],f32>, %u: !torch.vtensor<[256,256],f32>, %q: !torch.vtensor<[12,?,512],f32>, %k: !torch.vtensor<[12,512,?],f32>, %c: !torch.vtensor<[1,512,14,14],f32>, %f: !torch.vtensor<[512,512,3,3],f32>) -> (!torch.vtensor<[3136,64],f32>, !torch.vtensor<[8,256],f32>, !torch.vtensor<[12,?,?],f32>, !torch.vtensor<[1,512,14,14],f32>) {
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.mm %x, %w : !torch.vtensor<[3136,64],f32>, !torch.vtensor<[64,64],f32> -> !torch.vtensor<[3136,64],f32>
    %1 = torch.aten.mm %y, %u : !torch.vtensor<[8,256],f32>, !torch.vtensor<[256,256],f32> -> !torch.vtensor<[8,256],f32>
    %2 = torch.aten.bmm %q, %k : !torch.vtensor<[12,?,512],f32>, !torch.vtensor<[12,512,?],f32> -> !torch.vtensor<[12,?,?],f32>
    %3 = torch.aten.conv2d %c, %f, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,512,14,14],f32>, !torch.vtensor<[512,512,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,512,14,14],f32>
    return %0, %1, %2, %3 : !torch.vtensor<[3136,64],f32>, !torch.vtensor<[8,256],f32>, !torch.vtensor<[12,?,?],f32>, !torch.vtensor<[1,512,14,14],f32>
  }
}

// -----

// A wide linear layer inside a branch: data tiling, and the branches as blocks of one region
// in IREE's preprocessing (so that IREE packs the weight read in the branch at compile time).
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"], dync.iree_preprocessing = ["convert-scf-to-cf"], dync.tiling_work = {{.*}}
// CHECK-LABEL: func.func @in_a_branch
module {
  func.func @in_a_branch(%x: !torch.vtensor<[?,768],f32>, %w: !torch.vtensor<[768,768],f32>, %p: i1) -> !torch.vtensor<[?,768],f32> {
    %none = torch.constant.none
    %0 = scf.if %p -> (!torch.vtensor<[?,768],f32>) {
      %1 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,768],f32>, !torch.vtensor<[768,768],f32>, !torch.none -> !torch.vtensor<[?,768],f32>
      scf.yield %1 : !torch.vtensor<[?,768],f32>
    } else {
      scf.yield %x : !torch.vtensor<[?,768],f32>
    }
    return %0 : !torch.vtensor<[?,768],f32>
  }
}

// -----

// A batch of matrices times a vector (K = 512): its output's last dim (256) is not a matmul's
// N, and nothing else is wide: no data tiling.
// CHECK-NOT: dync.iree_flags
// CHECK-LABEL: func.func @matrix_vector
module {
  func.func @matrix_vector(%x: !torch.vtensor<[4,256,512],f32>, %v: !torch.vtensor<[512],f32>) -> !torch.vtensor<[4,256],f32> {
    %0 = torch.aten.matmul %x, %v : !torch.vtensor<[4,256,512],f32>, !torch.vtensor<[512],f32> -> !torch.vtensor<[4,256],f32>
    return %0 : !torch.vtensor<[4,256],f32>
  }
}

// -----

// One matrix times a batch of them (dync-pointwise-matmuls' form of a 1×1 convolution) is
// weighed by the matrix's dims: 256 filters over 512 channels are wide, whatever the
// image's 196 pixels.
// CHECK: module attributes {dync.iree_flags = ["--iree-opt-data-tiling"], dync.tiling_work = {{.*}}
// CHECK-LABEL: func.func @filter_times_images
module {
  func.func @filter_times_images(%x: !torch.vtensor<[?,512,196],f32>, %w: !torch.vtensor<[256,512],f32>) -> !torch.vtensor<[?,256,196],f32> {
    %0 = torch.aten.matmul %w, %x : !torch.vtensor<[256,512],f32>, !torch.vtensor<[?,512,196],f32> -> !torch.vtensor<[?,256,196],f32>
    return %0 : !torch.vtensor<[?,256,196],f32>
  }
}

// -----

// 64 filters over 64 channels are narrow, however many pixels: no data tiling (and no
// indifference: a narrow product is what the flag would slow).
// CHECK-NOT: data-tiling
// CHECK-LABEL: func.func @narrow_filter_times_images
module {
  func.func @narrow_filter_times_images(%x: !torch.vtensor<[?,64,3136],f32>, %w: !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64,3136],f32> {
    %0 = torch.aten.matmul %w, %x : !torch.vtensor<[64,64],f32>, !torch.vtensor<[?,64,3136],f32> -> !torch.vtensor<[?,64,3136],f32>
    return %0 : !torch.vtensor<[?,64,3136],f32>
  }
}

// -----

// K = N = 128 counts as wide on AVX-512 and AVX2 (`WIDE_BY_ISA`), not on other CPUs (256).
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"], dync.tiling_work = {{.*}}, dync.vector_isa = "avx512"}
// CHECK-LABEL: func.func @narrow_layer_on_avx512
module attributes {dync.vector_isa = "avx512"} {
  func.func @narrow_layer_on_avx512(%x: !torch.vtensor<[?,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[?,128],f32> {
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,128],f32>, !torch.vtensor<[128,128],f32>, !torch.none -> !torch.vtensor<[?,128],f32>
    return %0 : !torch.vtensor<[?,128],f32>
  }
}

// -----

// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"], dync.tiling_work = {{.*}}, dync.vector_isa = "avx2"}
// CHECK-LABEL: func.func @layer_on_avx2
module attributes {dync.vector_isa = "avx2"} {
  func.func @layer_on_avx2(%x: !torch.vtensor<[?,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[?,128],f32> {
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,128],f32>, !torch.vtensor<[128,128],f32>, !torch.none -> !torch.vtensor<[?,128],f32>
    return %0 : !torch.vtensor<[?,128],f32>
  }
}

// -----

// CHECK-NOT: data-tiling
// CHECK-LABEL: func.func @narrow_layer_on_another_cpu
module {
  func.func @narrow_layer_on_another_cpu(%x: !torch.vtensor<[?,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[?,128],f32> {
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,128],f32>, !torch.vtensor<[128,128],f32>, !torch.none -> !torch.vtensor<[?,128],f32>
    return %0 : !torch.vtensor<[?,128],f32>
  }
}

// -----

// A recurrent layer: the input projection of every step (M = the length, 4 to 64, counted at
// 34) against eight narrow products of one step (M = 2): the projection's work is the larger,
// as it is when the model runs; counted at M = 1 it was not.
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"], dync.tiling_work = {{.*}}
// CHECK-LABEL: func.func @sequence
module {
  func.func @sequence(%x: !torch.vtensor<[?,512],f32>, %w: !torch.vtensor<[512,384],f32>, %h: !torch.vtensor<[2,96],f32>, %u: !torch.vtensor<[96,384],f32>) -> (!torch.vtensor<[?,384],f32>, !torch.vtensor<[2,384],f32>) {
    %t = torch.symbolic_int "t" {min_val = 4, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %x, [%t], affine_map<()[s0] -> (s0, 512)> : !torch.vtensor<[?,512],f32>
    %0 = torch.aten.mm %x, %w : !torch.vtensor<[?,512],f32>, !torch.vtensor<[512,384],f32> -> !torch.vtensor<[?,384],f32>
    torch.bind_symbolic_shape %0, [%t], affine_map<()[s0] -> (s0, 384)> : !torch.vtensor<[?,384],f32>
    %1 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    %2 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    %3 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    %4 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    %5 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    %6 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    %7 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    %8 = torch.aten.mm %h, %u : !torch.vtensor<[2,96],f32>, !torch.vtensor<[96,384],f32> -> !torch.vtensor<[2,384],f32>
    return %0, %8 : !torch.vtensor<[?,384],f32>, !torch.vtensor<[2,384],f32>
  }
}

// -----

// On AVX-512 a product with dynamic rows counts as wide from N = K = 64 (`WIDE_DYNAMIC_ROWS_BY_ISA`):
// tiled from global optimization, Swin's MLP (96 -> 384 -> 96) went from 0.46x to 1.08x eager.
// CHECK: module attributes {dync.iree_flags = ["--iree-global-opt-data-tiling"], dync.tiling_work = {{.*}}, dync.vector_isa = "avx512"}
// CHECK-LABEL: func.func @mlp_rows_on_avx512
module attributes {dync.vector_isa = "avx512"} {
  func.func @mlp_rows_on_avx512(%x: !torch.vtensor<[?,96],f32>, %w: !torch.vtensor<[384,96],f32>) -> !torch.vtensor<[?,384],f32> {
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,96],f32>, !torch.vtensor<[384,96],f32>, !torch.none -> !torch.vtensor<[?,384],f32>
    return %0 : !torch.vtensor<[?,384],f32>
  }
}

// -----

// The same on AVX2, and with static rows on AVX-512: narrow, no data tiling.
// CHECK-NOT: data-tiling
// CHECK-LABEL: func.func @mlp_rows_on_avx2
module attributes {dync.vector_isa = "avx2"} {
  func.func @mlp_rows_on_avx2(%x: !torch.vtensor<[?,96],f32>, %w: !torch.vtensor<[384,96],f32>) -> !torch.vtensor<[?,384],f32> {
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,96],f32>, !torch.vtensor<[384,96],f32>, !torch.none -> !torch.vtensor<[?,384],f32>
    return %0 : !torch.vtensor<[?,384],f32>
  }
}

// -----

// CHECK-NOT: data-tiling
// CHECK-LABEL: func.func @mlp_static_rows_on_avx512
module attributes {dync.vector_isa = "avx512"} {
  func.func @mlp_static_rows_on_avx512(%x: !torch.vtensor<[3136,96],f32>, %w: !torch.vtensor<[384,96],f32>) -> !torch.vtensor<[3136,384],f32> {
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[3136,96],f32>, !torch.vtensor<[384,96],f32>, !torch.none -> !torch.vtensor<[3136,384],f32>
    return %0 : !torch.vtensor<[3136,384],f32>
  }
}

// -----

// Nothing to tile (a norm's or an embedding's sub-DNN in host mode): the module records no
// work, so that linked with wide layers' sub-DNNs it does not hold their data tiling back
// (`dync_ir.linked_flags`). A module of narrow matmuls records narrow work.
// CHECK: module attributes {dync.tiling_work = {dynamic_rows = 0 : i64, narrow = 0 : i64, wide = 0 : i64}}
// CHECK-LABEL: func.func @no_contraction
module {
  func.func @no_contraction(%x: !torch.vtensor<[?,768],f32>) -> !torch.vtensor<[?,768],f32> {
    %0 = torch.aten.tanh %x : !torch.vtensor<[?,768],f32> -> !torch.vtensor<[?,768],f32>
    return %0 : !torch.vtensor<[?,768],f32>
  }
}

// -----

// A CNN's stem: a 7×7 convolution, which IREE leaves a direct convolution with or without
// data tiling. Nothing to tile: no work, so that an early-exit CNN's stem does not hold
// back data tiling from its stages in host mode.
// CHECK: module attributes {dync.tiling_work = {dynamic_rows = 0 : i64, narrow = 0 : i64, wide = 0 : i64}}
// CHECK-LABEL: func.func @stem
module {
  func.func @stem(%x: !torch.vtensor<[?,3,224,224],f32>) -> !torch.vtensor<[?,64,112,112],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<64x3x7x7xf32>) : !torch.vtensor<[64,3,7,7],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %stride = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %pad = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %x, %w, %none, %stride, %pad, %ones, %int1 : !torch.vtensor<[?,3,224,224],f32>, !torch.vtensor<[64,3,7,7],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,64,112,112],f32>
    return %0 : !torch.vtensor<[?,64,112,112],f32>
  }
}

// -----

// A narrow 1×1 convolution (64 -> 64) is something data tiling would change: the module
// declines it, and records its work as narrow (64*56*56 rows of 64x64 at the middle batch).
// CHECK-NOT: dync.iree_flags
// CHECK: module attributes {dync.tiling_work = {dynamic_rows = 0 : i64, narrow = {{[1-9][0-9]*}} : i64, wide = 0 : i64}}
// CHECK-LABEL: func.func @narrow_pointwise
module {
  func.func @narrow_pointwise(%x: !torch.vtensor<[?,64,56,56],f32>) -> !torch.vtensor<[?,64,56,56],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<64x64x1x1xf32>) : !torch.vtensor<[64,64,1,1],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %x, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,64,56,56],f32>, !torch.vtensor<[64,64,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,64,56,56],f32>
    return %0 : !torch.vtensor<[?,64,56,56],f32>
  }
}
