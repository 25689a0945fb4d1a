// RUN: dync-opt %s --dync-fold-literal-layouts | FileCheck %s

// A transposed convolution's phase filter as the decompositions trace it (view, transpose,
// zero pad, flip, permute of the weight) folds into one literal, the chain's ops and the
// weight gone; a view of the bias and its expansion fold too. A view of the input, a negative
// pad (a crop), a transpose by a dim that is no constant and an expansion past 4096 elements
// and 4x its operand (a broadcast IREE fuses into its reader) stay.
// CHECK-LABEL: func.func @main
// CHECK-DAG:     torch.vtensor.literal(dense<{{\[}}[4.000000e+00, 3.000000e+00], [2.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
// CHECK-DAG:     torch.vtensor.literal(dense<{{\[}}[5.000000e-01, 5.000000e-01, 5.000000e-01], [-5.000000e-01, -5.000000e-01, -5.000000e-01]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
// CHECK-DAG:     torch.vtensor.literal(dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 0.000000e+00], [0.000000e+00, 3.000000e+00, 4.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>) : !torch.vtensor<[2,4],f32>
// CHECK-NOT:     torch.aten.flip
// CHECK-NOT:     torch.aten.permute
// CHECK:         torch.aten.view %arg0
// CHECK:         torch.aten.constant_pad_nd %{{.+}}, %{{.+}}, %{{.+}} : !torch.vtensor<[2,2],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[2,1],f32>
// CHECK:         torch.aten.transpose.int %{{.+}}, %arg1, %{{.+}}
// CHECK:         torch.aten.expand %{{.+}} -> !torch.vtensor<[4096,2],f32>
module attributes {dync.symbols = {}} {
  func.func @main(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.int) -> (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,1],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[4096,2],f32>) attributes {dync.entry} {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %int-1 = torch.constant.int -1
    %float0 = torch.constant.float 0.000000e+00
    %w = torch.vtensor.literal(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) : !torch.vtensor<[4],f32>
    %shape = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.view %w, %shape : !torch.vtensor<[4],f32>, !torch.list<int> -> !torch.vtensor<[2,2],f32>
    %1 = torch.aten.transpose.int %0, %int0, %int1 : !torch.vtensor<[2,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
    %dims = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.aten.flip %1, %dims : !torch.vtensor<[2,2],f32>, !torch.list<int> -> !torch.vtensor<[2,2],f32>
    %perm = torch.prim.ListConstruct %int1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %3 = torch.aten.permute %2, %perm : !torch.vtensor<[2,2],f32>, !torch.list<int> -> !torch.vtensor<[2,2],f32>
    %b = torch.vtensor.literal(dense<[0.5, -0.5]> : tensor<2xf32>) : !torch.vtensor<[2],f32>
    %bshape = torch.prim.ListConstruct %int2, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %4 = torch.aten.view %b, %bshape : !torch.vtensor<[2],f32>, !torch.list<int> -> !torch.vtensor<[2,1],f32>
    %eshape = torch.prim.ListConstruct %int-1, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
    %false = torch.constant.bool false
    %5 = torch.aten.expand %4, %eshape, %false : !torch.vtensor<[2,1],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[2,3],f32>
    %v = torch.vtensor.literal(dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
    %pads = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %6 = torch.aten.constant_pad_nd %v, %pads, %float0 : !torch.vtensor<[2,2],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[2,4],f32>
    %7 = torch.aten.view %arg0, %shape : !torch.vtensor<[4],f32>, !torch.list<int> -> !torch.vtensor<[2,2],f32>
    %crop = torch.prim.ListConstruct %int0, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
    %8 = torch.aten.constant_pad_nd %v, %crop, %float0 : !torch.vtensor<[2,2],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[2,1],f32>
    %9 = torch.aten.transpose.int %v, %arg1, %int0 : !torch.vtensor<[2,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
    %int4096 = torch.constant.int 4096
    %bigshape = torch.prim.ListConstruct %int4096, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
    %10 = torch.aten.expand %b, %bigshape, %false : !torch.vtensor<[2],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4096,2],f32>
    return %3, %5, %6, %7, %8, %9, %10 : !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,1],f32>, !torch.vtensor<[2,2],f32>, !torch.vtensor<[4096,2],f32>
  }
}
