// RUN: dync-opt %s --split-input-file --dync-im2col | FileCheck %s

// A 3×3 stride-2 convolution over 64 channels with a dynamic batch, 6 output pixels and 8
// filters: the input permuted to NHWC and viewed as a table of its 4 × 6 pixels, unpadded;
// one gather (`index_select` over a static index) reads each output pixel's nine taps in
// (kernel row, kernel column) order, and a static mask selects zeros where a tap reads the
// padding: output (0, 0) reads pixels 0, 1, 6 and 7 at its last four taps, zeros at the
// rest (the padding row above, the padding column left); output (0, 1) two columns on
// (stride 2). The gather is fenced off from the product, its result viewed as the columns,
// multiplied by the weight as a 576 x 8 literal, the bias added, the product viewed back
// (the batch read from the columns) and permuted to NCHW.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-NOT:     torch.aten.conv2d
// CHECK:         %[[W:.+]] = torch.vtensor.literal({{.*}} : tensor<576x8xf32>)
// CHECK-NOT:     torch.aten.constant_pad_nd
// CHECK:         %[[X:.+]] = torch.aten.permute %arg0, {{.*}} -> !torch.vtensor<[?,4,6,64],f32>
// CHECK:         %[[T:.+]] = torch.aten.flatten.using_ints %[[X]], {{.*}} -> !torch.vtensor<[?,24,64],f32>
// CHECK:         %[[I:.+]] = torch.vtensor.literal(dense<[0, 0, 0, 0, 0, 1, 0, 6, 7, 0, 0, 0, 1, 2, 3, 7, 8, 9, {{.*}}]> : tensor<54xi64>)
// CHECK:         %[[G:.+]] = torch.aten.index_select %[[T]], %int1{{(_[0-9]+)?}}, %[[I]] : {{.*}} -> !torch.vtensor<[?,54,64],f32>
// CHECK:         %[[MASK:.+]] = torch.vtensor.literal(dense<{{\[\[\[}}false], [false], [false], [false], [true], [true], [false], [true], [true], {{.*}} : tensor<1x54x1xi1>)
// CHECK:         %[[Z:.+]] = torch.aten.where.ScalarOther %[[MASK]], %[[G]], %float0{{.*}} -> !torch.vtensor<[?,54,64],f32>
// CHECK:         %[[GB:.+]] = torch_c.to_builtin_tensor %[[Z]]
// CHECK:         %[[F:.+]] = iree_tensor_ext.compute_barrier.start %[[GB]]
// CHECK:         %[[GF:.+]] = torch_c.from_builtin_tensor %[[F]]
// CHECK:         %[[COLS:.+]] = torch.aten.view %[[GF]], {{.*}} -> !torch.vtensor<[?,2,3,576],f32>
// CHECK:         %[[ROWS:.+]] = torch.aten.flatten.using_ints %[[COLS]], %int0{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,576],f32>
// CHECK:         %[[M:.+]] = torch.aten.mm %[[ROWS]], %[[W]] : !torch.vtensor<[?,576],f32>, !torch.vtensor<[576,8],f32> -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[B:.+]] = torch.aten.add.Tensor %[[M]], %arg1, %int1{{(_[0-9]+)?}} :
// CHECK:         %[[N:.+]] = torch.aten.size.int %[[COLS]], %int0{{(_[0-9]+)?}}
// CHECK:         %[[SIZES:.+]] = torch.prim.ListConstruct %[[N]], %int2{{(_[0-9]+)?}}, %int3{{(_[0-9]+)?}}, %int8{{(_[0-9]+)?}} :
// CHECK:         %[[V:.+]] = torch.aten.view %[[B]], %[[SIZES]] : {{.*}} -> !torch.vtensor<[?,2,3,8],f32>
// CHECK:         %[[Y:.+]] = torch.aten.permute %[[V]], {{.*}} -> !torch.vtensor<[?,8,2,3],f32>
// CHECK:         return %[[Y]]
func.func @dynamic_batch(%arg0: !torch.vtensor<[?,64,4,6],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8,2,3],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x3x3xf32>) : !torch.vtensor<[8,64,3,3],f32>
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %stride = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %arg1, %stride, %ones, %ones, %int1 : !torch.vtensor<[?,64,4,6],f32>, !torch.vtensor<[8,64,3,3],f32>, !torch.vtensor<[8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,2,3],f32>
  return %0 : !torch.vtensor<[?,8,2,3],f32>
}

// -----

// Left alone (each has more filters than output pixels unless said): fewer than 64 input
// channels, a 1×1 kernel of stride 1, two groups, a transposed convolution, a weight that is an
// argument; 64 output pixels for 32 filters (the columns would outweigh the filter); a
// dynamic H (the pixels are unknown).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-7: torch.aten.conv
// CHECK-NOT:     torch.aten.mm
func.func @kept(%arg0: !torch.vtensor<[1,64,4,4],f32>, %arg1: !torch.vtensor<[1,32,4,4],f32>, %arg2: !torch.vtensor<[32,64,3,3],f32>, %arg3: !torch.vtensor<[1,64,8,8],f32>, %arg4: !torch.vtensor<[1,64,?,4],f32>) -> (!torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,8,8],f32>, !torch.vtensor<[1,32,?,4],f32>) {
  %few = torch.vtensor.literal(dense<1.0> : tensor<32x32x3x3xf32>) : !torch.vtensor<[32,32,3,3],f32>
  %pointwise = torch.vtensor.literal(dense<1.0> : tensor<32x64x1x1xf32>) : !torch.vtensor<[32,64,1,1],f32>
  %grouped = torch.vtensor.literal(dense<1.0> : tensor<32x32x3x3xf32>) : !torch.vtensor<[32,32,3,3],f32>
  %transposed = torch.vtensor.literal(dense<1.0> : tensor<64x32x3x3xf32>) : !torch.vtensor<[64,32,3,3],f32>
  %pixels = torch.vtensor.literal(dense<1.0> : tensor<32x64x3x3xf32>) : !torch.vtensor<[32,64,3,3],f32>
  %dynamic = torch.vtensor.literal(dense<1.0> : tensor<32x64x3x3xf32>) : !torch.vtensor<[32,64,3,3],f32>
  %none = torch.constant.none
  %true = torch.constant.bool true
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg1, %few, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[32,32,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,4,4],f32>
  %1 = torch.aten.conv2d %arg0, %pointwise, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,64,4,4],f32>, !torch.vtensor<[32,64,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,4,4],f32>
  %2 = torch.aten.conv2d %arg0, %grouped, %none, %ones, %ones, %ones, %int2 : !torch.vtensor<[1,64,4,4],f32>, !torch.vtensor<[32,32,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,4,4],f32>
  %3 = torch.aten.convolution %arg0, %transposed, %none, %ones, %ones, %ones, %true, %zeros, %int1 : !torch.vtensor<[1,64,4,4],f32>, !torch.vtensor<[64,32,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,4,4],f32>
  %4 = torch.aten.conv2d %arg0, %arg2, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,64,4,4],f32>, !torch.vtensor<[32,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,4,4],f32>
  %5 = torch.aten.conv2d %arg3, %pixels, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,64,8,8],f32>, !torch.vtensor<[32,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,8,8],f32>
  %6 = torch.aten.conv2d %arg4, %dynamic, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,64,?,4],f32>, !torch.vtensor<[32,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,32,?,4],f32>
  return %0, %1, %2, %3, %4, %5, %6 : !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,4,4],f32>, !torch.vtensor<[1,32,8,8],f32>, !torch.vtensor<[1,32,?,4],f32>
}

// -----

// A strided 1×1 convolution (IREE fuses a strided read into the convolution, which then runs
// as a 4-D contraction): one strided slice of rows and of columns, no concatenation; over a
// dynamic H x W the input is read whole (padded, here by nothing). A per-sample body's
// static-info cast is moved after the permute (torch-mlir cannot lower a slice of a permuted
// cast).
// CHECK-LABEL: func.func @pointwise_strided
// CHECK:         %[[P:.+]] = torch.aten.permute %arg0, {{.*}} -> !torch.vtensor<[1,4,6,64],f32>
// CHECK:         %[[X:.+]] = torch.tensor_static_info_cast %[[P]] : !torch.vtensor<[1,4,6,64],f32> to !torch.vtensor<[?,4,6,64],f32>
// CHECK:         %[[R:.+]] = torch.aten.slice.Tensor %[[X]], %int1{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int3{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,2,6,64],f32>
// CHECK:         %[[C:.+]] = torch.aten.slice.Tensor %[[R]], %int2{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int5{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,2,3,64],f32>
// CHECK-NOT:     torch.aten.cat
// CHECK:         torch.aten.flatten.using_ints %[[C]], %int0{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,64],f32>
// CHECK:         torch.aten.mm
// CHECK:         %[[XD:.+]] = torch.aten.permute %arg1, {{.*}} -> !torch.vtensor<[1,?,?,64],f32>
// CHECK:         torch.aten.slice.Tensor %[[XD]], %int1{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int4611686018427387904{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[1,?,?,64],f32>
// CHECK:         torch.aten.mm
// CHECK-NOT:     torch.aten.conv2d
func.func @pointwise_strided(%arg0: !torch.vtensor<[1,64,4,6],f32>, %arg1: !torch.vtensor<[1,64,?,?],f32>) -> (!torch.vtensor<[?,8,2,3],f32>, !torch.vtensor<[1,8,?,?],f32>) {
  %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x1x1xf32>) : !torch.vtensor<[8,64,1,1],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %stride = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %x = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[1,64,4,6],f32> to !torch.vtensor<[?,64,4,6],f32>
  %0 = torch.aten.conv2d %x, %w, %none, %stride, %zeros, %ones, %int1 : !torch.vtensor<[?,64,4,6],f32>, !torch.vtensor<[8,64,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,2,3],f32>
  %1 = torch.aten.conv2d %arg1, %w, %none, %stride, %zeros, %ones, %int1 : !torch.vtensor<[1,64,?,?],f32>, !torch.vtensor<[8,64,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,?,?],f32>
  return %0, %1 : !torch.vtensor<[?,8,2,3],f32>, !torch.vtensor<[1,8,?,?],f32>
}

// -----

// On AVX2 (`dync.vector_isa`), where IREE's direct convolution runs at a third of eager, a
// convolution whose columns outweigh its filter becomes a matmul too, in horizontal strips:
// 3×3 over 64 channels at 6×4 into 8 filters has 24 × 576 columns per image, three times the
// filter (4608), so three strips of two output rows. Each strip gathers its own columns
// (its rows' 72 taps) from the input's table of pixels, zeros selected where they read the
// padding (the first strip's top kernel row, the last strip's bottom one), multiplies them,
// and the strips are concatenated along H in NHWC.
// CHECK-LABEL: func.func @strips_on_avx2
// CHECK-NOT:     torch.aten.conv2d
// CHECK-NOT:     torch.aten.constant_pad_nd
// CHECK:         %[[X:.+]] = torch.aten.permute %arg0, {{.*}} -> !torch.vtensor<[?,6,4,64],f32>
// CHECK:         %[[T:.+]] = torch.aten.flatten.using_ints %[[X]], {{.*}} -> !torch.vtensor<[?,24,64],f32>
// CHECK:         torch.vtensor.literal(dense<[0, 0, 0, 0, 0, 1, 0, 4, 5, {{.*}}]> : tensor<72xi64>)
// CHECK:         torch.aten.index_select %[[T]], {{.*}} -> !torch.vtensor<[?,72,64],f32>
// CHECK:         torch.aten.where.ScalarOther
// CHECK:         torch.aten.view {{.*}} -> !torch.vtensor<[?,2,4,576],f32>
// CHECK:         torch.aten.mm {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[S0:.+]] = torch.aten.view {{.*}} -> !torch.vtensor<[?,2,4,8],f32>
// CHECK:         torch.vtensor.literal(dense<[0, 4, 5, 0, 8, 9, 0, 12, 13, {{.*}}]> : tensor<72xi64>)
// CHECK:         torch.aten.index_select %[[T]], {{.*}} -> !torch.vtensor<[?,72,64],f32>
// CHECK:         %[[S1:.+]] = torch.aten.view {{.*}} -> !torch.vtensor<[?,2,4,8],f32>
// CHECK:         torch.vtensor.literal(dense<[0, 12, 13, 0, 16, 17, 0, 20, 21, {{.*}}]> : tensor<72xi64>)
// CHECK:         torch.aten.index_select %[[T]], {{.*}} -> !torch.vtensor<[?,72,64],f32>
// CHECK:         %[[S2:.+]] = torch.aten.view {{.*}} -> !torch.vtensor<[?,2,4,8],f32>
// CHECK:         %[[L:.+]] = torch.prim.ListConstruct %[[S0]], %[[S1]], %[[S2]] :
// CHECK:         %[[Y:.+]] = torch.aten.cat %[[L]], %int1{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,6,4,8],f32>
// CHECK:         torch.aten.permute %[[Y]], {{.*}} -> !torch.vtensor<[?,8,6,4],f32>
module attributes {dync.vector_isa = "avx2"} {
  func.func @strips_on_avx2(%arg0: !torch.vtensor<[?,64,6,4],f32>) -> !torch.vtensor<[?,8,6,4],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x3x3xf32>) : !torch.vtensor<[8,64,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,64,6,4],f32>, !torch.vtensor<[8,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,6,4],f32>
    return %0 : !torch.vtensor<[?,8,6,4],f32>
  }
}

// -----

// The same convolution for AVX-512, where IREE's direct convolution is faster than these
// matmuls below 128 filters (BENCHMARKS.md "Kernels"): left alone.
// CHECK-LABEL: func.func @direct_on_avx512
// CHECK:         torch.aten.conv2d
module attributes {dync.vector_isa = "avx512"} {
  func.func @direct_on_avx512(%arg0: !torch.vtensor<[?,64,6,4],f32>) -> !torch.vtensor<[?,8,6,4],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x3x3xf32>) : !torch.vtensor<[8,64,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,64,6,4],f32>, !torch.vtensor<[8,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,6,4],f32>
    return %0 : !torch.vtensor<[?,8,6,4],f32>
  }
}

// -----

// On AVX2 a 1×1 convolution of stride 1 over 64 channels or more is a matmul too: IREE leaves
// it a contraction over the batch and pixels that runs at half its matmul speed there. The
// input permuted to NHWC and flattened whole (no slice: every pixel is read), one product,
// viewed back. Over 32 channels it stays a convolution.
// CHECK-LABEL: func.func @pointwise_on_avx2
// CHECK:         %[[W:.+]] = torch.vtensor.literal({{.*}} : tensor<64x8xf32>)
// CHECK:         %[[X:.+]] = torch.aten.permute %arg0, {{.*}} -> !torch.vtensor<[?,4,6,64],f32>
// CHECK-NOT:     torch.aten.slice.Tensor
// CHECK:         %[[ROWS:.+]] = torch.aten.flatten.using_ints %[[X]], %int0{{(_[0-9]+)?}}, %int2{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,64],f32>
// CHECK:         %[[M:.+]] = torch.aten.mm %[[ROWS]], %[[W]] : {{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK:         %[[V:.+]] = torch.aten.view %[[M]], {{.*}} -> !torch.vtensor<[?,4,6,8],f32>
// CHECK:         %[[Y:.+]] = torch.aten.permute %[[V]], {{.*}} -> !torch.vtensor<[?,8,4,6],f32>
// CHECK:         %[[FEW:.+]] = torch.aten.conv2d %arg1
// CHECK:         return %[[Y]], %[[FEW]]
module attributes {dync.vector_isa = "avx2"} {
  func.func @pointwise_on_avx2(%arg0: !torch.vtensor<[?,64,4,6],f32>, %arg1: !torch.vtensor<[?,32,4,6],f32>) -> (!torch.vtensor<[?,8,4,6],f32>, !torch.vtensor<[?,8,4,6],f32>) {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x1x1xf32>) : !torch.vtensor<[8,64,1,1],f32>
    %few = torch.vtensor.literal(dense<1.0> : tensor<8x32x1x1xf32>) : !torch.vtensor<[8,32,1,1],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,64,4,6],f32>, !torch.vtensor<[8,64,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,4,6],f32>
    %1 = torch.aten.conv2d %arg1, %few, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,32,4,6],f32>, !torch.vtensor<[8,32,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,4,6],f32>
    return %0, %1 : !torch.vtensor<[?,8,4,6],f32>, !torch.vtensor<[?,8,4,6],f32>
  }
}

// -----

// The same on AVX-512, where IREE's contraction over batch and pixels ran at a third of its
// matmul's speed too (ResNet-50's stages): one matmul.
// CHECK-LABEL: func.func @pointwise_on_avx512
// CHECK-NOT:     torch.aten.conv2d
// CHECK:         torch.aten.mm
module attributes {dync.vector_isa = "avx512"} {
  func.func @pointwise_on_avx512(%arg0: !torch.vtensor<[?,64,4,6],f32>) -> !torch.vtensor<[?,8,4,6],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x64x1x1xf32>) : !torch.vtensor<[8,64,1,1],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,64,4,6],f32>, !torch.vtensor<[8,64,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,4,6],f32>
    return %0 : !torch.vtensor<[?,8,4,6],f32>
  }
}

// -----

// On AVX-512 from 128 filters: 3×3 over 64 channels at 16×12 into 128 filters has 192 × 576
// columns per image, 1.5 times the filter (73728): two strips of eight output rows.
// CHECK-LABEL: func.func @strips_on_avx512
// CHECK-NOT:     torch.aten.conv2d
// CHECK-COUNT-2: torch.aten.mm {{.*}} -> !torch.vtensor<[?,128],f32>
// CHECK:         torch.aten.cat {{.*}} -> !torch.vtensor<[?,16,12,128],f32>
module attributes {dync.vector_isa = "avx512"} {
  func.func @strips_on_avx512(%arg0: !torch.vtensor<[?,64,16,12],f32>) -> !torch.vtensor<[?,128,16,12],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<128x64x3x3xf32>) : !torch.vtensor<[128,64,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,64,16,12],f32>, !torch.vtensor<[128,64,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,128,16,12],f32>
    return %0 : !torch.vtensor<[?,128,16,12],f32>
  }
}

// -----

// On AVX2 the channels may be few where the matmul's reduction is not: 3×3 over 8 channels
// (kh*kw*C = 72) at 8×8 into 16 filters becomes matmuls over strips; over 3 channels it
// stays direct, the reduction short (27) or not (a 7×7 stem's 147).
// CHECK-LABEL: func.func @few_channels_on_avx2
// CHECK-NOT:     torch.aten.conv2d
// CHECK:         torch.aten.mm {{.*}} -> !torch.vtensor<[?,16],f32>
// CHECK-LABEL: func.func @shallow_on_avx2
// CHECK:         torch.aten.conv2d
// CHECK-LABEL: func.func @stem_on_avx2
// CHECK-NOT:     torch.aten.mm
// CHECK:         torch.aten.conv2d
module attributes {dync.vector_isa = "avx2"} {
  func.func @few_channels_on_avx2(%arg0: !torch.vtensor<[?,8,8,8],f32>) -> !torch.vtensor<[?,16,8,8],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<16x8x3x3xf32>) : !torch.vtensor<[16,8,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,8,8,8],f32>, !torch.vtensor<[16,8,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,16,8,8],f32>
    return %0 : !torch.vtensor<[?,16,8,8],f32>
  }
  func.func @shallow_on_avx2(%arg0: !torch.vtensor<[?,3,8,8],f32>) -> !torch.vtensor<[?,16,8,8],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<16x3x3x3xf32>) : !torch.vtensor<[16,3,3,3],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,3,8,8],f32>, !torch.vtensor<[16,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,16,8,8],f32>
    return %0 : !torch.vtensor<[?,16,8,8],f32>
  }
  func.func @stem_on_avx2(%arg0: !torch.vtensor<[?,3,32,32],f32>) -> !torch.vtensor<[?,64,16,16],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<64x3x7x7xf32>) : !torch.vtensor<[64,3,7,7],f32>
    %none = torch.constant.none
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %threes = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %twos, %threes, %ones, %int1 : !torch.vtensor<[?,3,32,32],f32>, !torch.vtensor<[64,3,7,7],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,64,16,16],f32>
    return %0 : !torch.vtensor<[?,64,16,16],f32>
  }
}

// -----

// Windows that tile the input (stride = kernel, no padding), on any CPU and over 3 channels:
// the rows and columns some window reads (8 of 9), viewed as N x C x 2 x 4 x 2 x 4 tiles and
// permuted to N x 2 x 2 x 4 x 4 x C: the columns, without a slice per kernel offset.
// CHECK-LABEL: func.func @patches_on_avx512
// CHECK-NOT:     torch.aten.conv2d
// CHECK:         %[[W:.+]] = torch.vtensor.literal({{.*}} : tensor<48x8xf32>)
// CHECK:         %[[R:.+]] = torch.aten.slice.Tensor %arg0, %int2{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int8{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,3,8,9],f32>
// CHECK:         %[[C:.+]] = torch.aten.slice.Tensor %[[R]], %int3{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}}, %int8{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,3,8,8],f32>
// CHECK:         %[[N:.+]] = torch.aten.size.int %[[C]], %int0
// CHECK:         %[[T:.+]] = torch.aten.view %[[C]], {{.*}} -> !torch.vtensor<[?,3,2,4,2,4],f32>
// CHECK:         %[[P:.+]] = torch.aten.permute %[[T]], {{.*}} -> !torch.vtensor<[?,2,2,4,4,3],f32>
// CHECK:         %[[COLS:.+]] = torch.aten.flatten.using_ints %[[P]], %int3{{(_[0-9]+)?}}, %int5{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,2,2,48],f32>
// CHECK:         %[[ROWS:.+]] = torch.aten.flatten.using_ints %[[COLS]], {{.*}} -> !torch.vtensor<[?,48],f32>
// CHECK:         torch.aten.mm %[[ROWS]], %[[W]]
// CHECK:         torch.aten.permute {{.*}} -> !torch.vtensor<[?,8,2,2],f32>
module attributes {dync.vector_isa = "avx512"} {
  func.func @patches_on_avx512(%arg0: !torch.vtensor<[?,3,9,9],f32>) -> !torch.vtensor<[?,8,2,2],f32> {
    %w = torch.vtensor.literal(dense<1.0> : tensor<8x3x4x4xf32>) : !torch.vtensor<[8,3,4,4],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int4 = torch.constant.int 4
    %fours = torch.prim.ListConstruct %int4, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %fours, %zeros, %ones, %int1 : !torch.vtensor<[?,3,9,9],f32>, !torch.vtensor<[8,3,4,4],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,2,2],f32>
    return %0 : !torch.vtensor<[?,8,2,2],f32>
  }
}
