// RUN: dync-opt %s --split-input-file --dync-pointwise-matmuls | FileCheck %s

// A lone 1×1 convolution over a dynamic batch of 12x12 images, with a bias: the filter as
// an 8x4 matrix times each image's 4 x 144 channels, the bias as a column, viewed back to
// NCHW with the input's batch size. The filter's [8,4,1,1] literal is gone.
// CHECK-LABEL: func.func @lone
// CHECK-NOT:     tensor<8x4x1x1xf32>
// CHECK-DAG:     %[[W:.+]] = torch.vtensor.literal({{.*}} : tensor<8x4xf32>) : !torch.vtensor<[8,4],f32>
// CHECK-DAG:     %[[FLAT:.+]] = torch.aten.flatten.using_ints %arg0, %{{.+}}, %{{.+}} : !torch.vtensor<[?,4,12,12],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,4,144],f32>
// CHECK:         %[[MM:.+]] = torch.aten.matmul %[[W]], %[[FLAT]] : !torch.vtensor<[8,4],f32>, !torch.vtensor<[?,4,144],f32> -> !torch.vtensor<[?,8,144],f32>
// CHECK:         %[[COL:.+]] = torch.aten.view %arg1, %{{.+}} : !torch.vtensor<[8],f32>, !torch.list<int> -> !torch.vtensor<[8,1],f32>
// CHECK:         %[[SUM:.+]] = torch.aten.add.Tensor %[[MM]], %[[COL]], %{{.+}} : !torch.vtensor<[?,8,144],f32>, !torch.vtensor<[8,1],f32>, !torch.int -> !torch.vtensor<[?,8,144],f32>
// CHECK:         %[[N:.+]] = torch.aten.size.int %arg0, %{{.+}}
// CHECK:         %[[SHAPE:.+]] = torch.prim.ListConstruct %[[N]], %{{.+}}, %{{.+}}, %{{.+}}
// CHECK:         %[[OUT:.+]] = torch.aten.view %[[SUM]], %[[SHAPE]] : !torch.vtensor<[?,8,144],f32>, !torch.list<int> -> !torch.vtensor<[?,8,12,12],f32>
// CHECK:         %[[R:.+]] = torch.aten.relu %[[OUT]]
// CHECK:         return %[[R]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @lone(%arg0: !torch.vtensor<[?,4,12,12],f32>, %arg1: !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8,12,12],f32> {
    %w = torch.vtensor.literal(dense<0.5> : tensor<8x4x1x1xf32>) : !torch.vtensor<[8,4,1,1],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %arg1, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,4,12,12],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.vtensor<[8],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,12,12],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[?,8,12,12],f32> -> !torch.vtensor<[?,8,12,12],f32>
    return %1 : !torch.vtensor<[?,8,12,12],f32>
  }
}

// -----

// Static shapes and no bias: the product is viewed back with constant sizes, nothing added;
// over 7x7 images (49 pixels, under MIN_PIXELS) the convolution stays, and over images whose
// size is known only at run time.
// CHECK-LABEL: func.func @static_without_bias
// CHECK:         %[[MM:.+]] = torch.aten.matmul %{{.+}}, %{{.+}} : !torch.vtensor<[8,4],f32>, !torch.vtensor<[2,4,256],f32> -> !torch.vtensor<[2,8,256],f32>
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK:         torch.aten.view %[[MM]], %{{.+}} : !torch.vtensor<[2,8,256],f32>, !torch.list<int> -> !torch.vtensor<[2,8,16,16],f32>
// CHECK:         torch.aten.conv2d %arg1
// CHECK:         torch.aten.conv2d %arg2
// CHECK-NOT:     torch.aten.matmul
module attributes {dync.backend = "llvm-cpu"} {
  func.func @static_without_bias(%arg0: !torch.vtensor<[2,4,16,16],f32>, %arg1: !torch.vtensor<[2,4,7,7],f32>, %arg2: !torch.vtensor<[2,4,?,?],f32>) -> (!torch.vtensor<[2,8,16,16],f32>, !torch.vtensor<[2,8,7,7],f32>, !torch.vtensor<[2,8,?,?],f32>) {
    %w = torch.vtensor.literal(dense<0.5> : tensor<8x4x1x1xf32>) : !torch.vtensor<[8,4,1,1],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[2,4,16,16],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,16,16],f32>
    %1 = torch.aten.conv2d %arg1, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[2,4,7,7],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,7,7],f32>
    %2 = torch.aten.conv2d %arg2, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[2,4,?,?],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[2,8,?,?],f32>
    return %0, %1, %2 : !torch.vtensor<[2,8,16,16],f32>, !torch.vtensor<[2,8,7,7],f32>, !torch.vtensor<[2,8,?,?],f32>
  }
}

// -----

// Bordered: the 1×1 convolution reads a 3×3 one through a relu and a batch norm, and the other
// 1×1 one feeds a max pool through an add with the argument: IREE's NHWC transposes cancel
// between them, all stay convolutions. A strided 1×1 one and one by a filter given as an
// argument stay too.
// CHECK-LABEL: func.func @bordered
// CHECK-NOT:     torch.aten.matmul
// CHECK-COUNT-5: torch.aten.conv2d
// CHECK-NOT:     torch.aten.matmul
module attributes {dync.backend = "llvm-cpu"} {
  func.func @bordered(%arg0: !torch.vtensor<[1,4,12,12],f32>, %wa: !torch.vtensor<[8,4,1,1],f32>, %m: !torch.vtensor<[8],f32>) -> (!torch.vtensor<[1,8,12,12],f32>, !torch.vtensor<[1,8,6,6],f32>, !torch.vtensor<[1,8,6,6],f32>, !torch.vtensor<[1,8,12,12],f32>) {
    %w3 = torch.vtensor.literal(dense<0.5> : tensor<4x4x3x3xf32>) : !torch.vtensor<[4,4,3,3],f32>
    %w1 = torch.vtensor.literal(dense<0.5> : tensor<8x4x1x1xf32>) : !torch.vtensor<[8,4,1,1],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %eps = torch.constant.float 1.000000e-05
    %mom = torch.constant.float 1.000000e-01
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w3, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,4,12,12],f32>, !torch.vtensor<[4,4,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,4,12,12],f32>
    %1 = torch.aten.relu %0 : !torch.vtensor<[1,4,12,12],f32> -> !torch.vtensor<[1,4,12,12],f32>
    %2 = torch.aten.conv2d %1, %w1, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,4,12,12],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,12,12],f32>
    %3 = torch.aten.conv2d %arg0, %w1, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,4,12,12],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,12,12],f32>
    %4 = torch.aten.batch_norm %3, %m, %m, %m, %m, %false, %mom, %eps, %false : !torch.vtensor<[1,8,12,12],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.bool, !torch.float, !torch.float, !torch.bool -> !torch.vtensor<[1,8,12,12],f32>
    %5 = torch.aten.max_pool2d %4, %twos, %twos, %zeros, %ones, %false : !torch.vtensor<[1,8,12,12],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,8,6,6],f32>
    %6 = torch.aten.conv2d %arg0, %w1, %none, %twos, %zeros, %ones, %int1 : !torch.vtensor<[1,4,12,12],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,6,6],f32>
    %7 = torch.aten.conv2d %arg0, %wa, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,4,12,12],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,12,12],f32>
    return %2, %5, %6, %7 : !torch.vtensor<[1,8,12,12],f32>, !torch.vtensor<[1,8,6,6],f32>, !torch.vtensor<[1,8,6,6],f32>, !torch.vtensor<[1,8,12,12],f32>
  }
}

// -----

// For the GPU: left alone.
// CHECK-LABEL: func.func @cuda
// CHECK:         torch.aten.conv2d
module attributes {dync.backend = "cuda"} {
  func.func @cuda(%arg0: !torch.vtensor<[1,4,12,12],f32>) -> !torch.vtensor<[1,8,12,12],f32> {
    %w = torch.vtensor.literal(dense<0.5> : tensor<8x4x1x1xf32>) : !torch.vtensor<[8,4,1,1],f32>
    %none = torch.constant.none
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[1,4,12,12],f32>, !torch.vtensor<[8,4,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,12,12],f32>
    return %0 : !torch.vtensor<[1,8,12,12],f32>
  }
}
