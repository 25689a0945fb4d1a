// RUN: dync-opt %s --split-input-file --dync-width-strips | FileCheck %s

// A 3×3 convolution (stride 1, padding 1) over a dynamic batch, height and width: with
// w the input's width, the output's is w and it runs in nt = (w + 7) // 8 strips of 8 output
// columns. The input padded (one column left, 1 + 8 + 2 right, one row above and below);
// its first 8*nt columns split into nt blocks of 8, and the two columns after each block
// (every 8th column from 8 and from 9) appended, so that strip i holds the 10 columns its 8
// outputs read; the strips moved into the batch; the convolution over them without padding,
// 8 columns wide; its result split back, moved behind the rows and cut to w columns.
// CHECK-LABEL: func.func @dynamic_width
// CHECK:         %[[W:.+]] = torch.aten.size.int %arg0, %int3
// CHECK:         %[[NT:.+]] = torch.aten.floordiv.int {{.*}}, %int8
// CHECK:         %[[COVERED:.+]] = torch.aten.mul.int %int8, %[[NT]]
// CHECK:         %[[PADS:.+]] = torch.prim.ListConstruct %int1{{(_[0-9]+)?}}, %int11, %int1{{(_[0-9]+)?}}, %int1{{(_[0-9]+)?}} :
// CHECK:         %[[P:.+]] = torch.aten.constant_pad_nd %arg0, %[[PADS]], {{.*}} -> !torch.vtensor<[?,4,?,?],f32>
// CHECK:         %[[BODY:.+]] = torch.aten.slice.Tensor %[[P]], %int3, %int0, %[[COVERED]], %int1{{(_[0-9]+)?}}
// CHECK:         %[[SPLIT:.+]] = torch.prim.ListConstruct %[[NT]], %int8{{(_[0-9]+)?}} :
// CHECK:         %[[BLOCKS:.+]] = torch.aten.unflatten.int %[[BODY]], %int3, %[[SPLIT]] : {{.*}} -> !torch.vtensor<[?,4,?,?,8],f32>
// CHECK:         %[[E0:.+]] = torch.aten.slice.Tensor %[[P]], %int3, %int8{{(_[0-9]+)?}}, {{.*}}, %int8{{(_[0-9]+)?}} :
// CHECK:         %[[C0:.+]] = torch.aten.unsqueeze %[[E0]], %int4 : {{.*}} -> !torch.vtensor<[?,4,?,?,1],f32>
// CHECK:         %[[E1:.+]] = torch.aten.slice.Tensor %[[P]], %int3, %int9{{(_[0-9]+)?}}, {{.*}}, %int8{{(_[0-9]+)?}} :
// CHECK:         %[[C1:.+]] = torch.aten.unsqueeze %[[E1]], %int4
// CHECK:         %[[PARTS:.+]] = torch.prim.ListConstruct %[[BLOCKS]], %[[C0]], %[[C1]] :
// CHECK:         %[[STRIPS:.+]] = torch.aten.cat %[[PARTS]], %int4 : {{.*}} -> !torch.vtensor<[?,4,?,?,10],f32>
// CHECK:         %[[MOVED:.+]] = torch.aten.permute %[[STRIPS]], {{.*}} -> !torch.vtensor<[?,?,4,?,10],f32>
// CHECK:         %[[FOLDED:.+]] = torch.aten.flatten.using_ints %[[MOVED]], %int0, %int1{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,4,?,10],f32>
// CHECK:         %[[NOPAD:.+]] = torch.prim.ListConstruct %int0{{(_[0-9]+)?}}, %int0{{(_[0-9]+)?}} :
// CHECK:         %[[Y:.+]] = torch.aten.conv2d %[[FOLDED]], {{.*}}, %arg1, {{.*}}, %[[NOPAD]], {{.*}} -> !torch.vtensor<[?,8,?,8],f32>
// CHECK:         %[[N:.+]] = torch.aten.size.int %arg0, %int0
// CHECK:         %[[BACK:.+]] = torch.prim.ListConstruct %[[N]], %[[NT]] :
// CHECK:         %[[U:.+]] = torch.aten.unflatten.int %[[Y]], %int0, %[[BACK]] : {{.*}} -> !torch.vtensor<[?,?,8,?,8],f32>
// CHECK:         %[[R:.+]] = torch.aten.permute %[[U]], {{.*}} -> !torch.vtensor<[?,8,?,?,8],f32>
// CHECK:         %[[FLAT:.+]] = torch.aten.flatten.using_ints %[[R]], %int3, %int4 : {{.*}} -> !torch.vtensor<[?,8,?,?],f32>
// CHECK:         %[[OUT:.+]] = torch.aten.slice.Tensor %[[FLAT]], %int3, %int0, %[[W]], %int1{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[?,8,?,?],f32>
// CHECK:         return %[[OUT]]
func.func @dynamic_width(%arg0: !torch.vtensor<[?,4,?,?],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8,?,?],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<8x4x3x3xf32>) : !torch.vtensor<[8,4,3,3],f32>
  %int1 = torch.constant.int 1
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %arg1, %ones, %ones, %ones, %int1 : !torch.vtensor<[?,4,?,?],f32>, !torch.vtensor<[8,4,3,3],f32>, !torch.vtensor<[8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,?,?],f32>
  return %0 : !torch.vtensor<[?,8,?,?],f32>
}

// -----

// A 1×1 convolution of stride 2 over a static height: its 8 outputs a strip read 15
// columns, fewer than the 16 between two strips, so each block is cut to 15 and nothing is
// appended; the output's width is (w - 1) // 2 + 1, the height stays static.
// CHECK-LABEL: func.func @strided_pointwise
// CHECK:         torch.aten.floordiv.int {{.*}}, %int2
// CHECK:         %[[BLOCKS:.+]] = torch.aten.unflatten.int {{.*}} -> !torch.vtensor<[1,4,6,?,16],f32>
// CHECK-NOT:     torch.aten.cat
// CHECK:         %[[CUT:.+]] = torch.aten.slice.Tensor %[[BLOCKS]], %int4, %int0{{(_[0-9]+)?}}, %int15, %int1{{(_[0-9]+)?}} : {{.*}} -> !torch.vtensor<[1,4,6,?,15],f32>
// CHECK:         torch.aten.convolution {{.*}} -> !torch.vtensor<[?,8,3,8],f32>
// CHECK:         torch.aten.slice.Tensor {{.*}} -> !torch.vtensor<[1,8,3,?],f32>
func.func @strided_pointwise(%arg0: !torch.vtensor<[1,4,6,?],f32>) -> !torch.vtensor<[1,8,3,?],f32> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<8x4x1x1xf32>) : !torch.vtensor<[8,4,1,1],f32>
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.convolution %arg0, %w, %none, %twos, %zeros, %ones, %false, %zeros, %int1 : !torch.vtensor<[1,4,6,?],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,3,?],f32>
  return %0 : !torch.vtensor<[1,8,3,?],f32>
}

// -----

// Left alone: a static width with a dynamic height (IREE vectorizes that width itself), a
// depthwise convolution (dync-depthwise-nhwc runs it in NHWC), and a shape-specialized
// version's input (a static width cast to a dynamic one).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     torch.aten.unflatten.int
// CHECK-COUNT-3: torch.aten.conv2d %
// CHECK-NOT:     torch.aten.unflatten.int
func.func @kept(%arg0: !torch.vtensor<[1,4,?,16],f32>, %arg1: !torch.vtensor<[1,4,?,?],f32>, %arg2: !torch.vtensor<[1,4,12,16],f32>) -> (!torch.vtensor<[1,8,?,16],f32>, !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[1,8,?,?],f32>) {
  %w = torch.vtensor.literal(dense<1.0> : tensor<8x4x3x3xf32>) : !torch.vtensor<[8,4,3,3],f32>
  %dw = torch.vtensor.literal(dense<1.0> : tensor<4x1x3x3xf32>) : !torch.vtensor<[4,1,3,3],f32>
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,4,?,16],f32>, !torch.vtensor<[8,4,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,?,16],f32>
  %1 = torch.aten.conv2d %arg1, %dw, %none, %ones, %ones, %ones, %int4 : !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[4,1,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,?,?],f32>
  %cast = torch.tensor_static_info_cast %arg2 : !torch.vtensor<[1,4,12,16],f32> to !torch.vtensor<[1,4,?,?],f32>
  %2 = torch.aten.conv2d %cast, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[8,4,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,?,?],f32>
  return %0, %1, %2 : !torch.vtensor<[1,8,?,16],f32>, !torch.vtensor<[1,4,?,?],f32>, !torch.vtensor<[1,8,?,?],f32>
}
