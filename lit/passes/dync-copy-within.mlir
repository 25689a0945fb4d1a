// RUN: dync-opt %s --dync-copy-within | FileCheck %s

// A shift in place (`r[..., 1:] = r[..., :-1].clone()`): the source, a view of the tensor
// written, is read through a barrier right before the write. A source computed from the
// destination (`* 2`) and one from another tensor are left alone.
// CHECK-LABEL: func.func @shift
// CHECK:         %[[FROM:.*]] = torch.aten.slice.Tensor %[[R:.*]], %int1, %int0, %int-1, %int1
// CHECK:         %[[SRC:.*]] = torch.aten.copy %{{.*}}, %[[FROM]], %false
// CHECK-NEXT:    %[[IN:.*]] = torch_c.to_builtin_tensor %[[SRC]]
// CHECK-NEXT:    %[[BAR:.*]] = util.optimization_barrier %[[IN]] : tensor<?x?xf32>
// CHECK:         %[[OUT:.*]] = torch_c.from_builtin_tensor
// CHECK-NEXT:    torch.aten.slice_scatter %[[R]], %[[OUT]], %int1, %int1
// CHECK:         %[[TWICE:.*]] = torch.aten.mul.Scalar
// CHECK-NEXT:    torch.aten.slice_scatter %{{.*}}, %[[TWICE]], %int1, %int1
// CHECK-NEXT:    torch.aten.select_scatter %{{.*}}, %arg1, %int1, %int0
// CHECK-NOT:     util.optimization_barrier
// CHECK:         return
func.func @shift(%x: !torch.vtensor<[?,?],f32>, %col: !torch.vtensor<[?],f32>) -> (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %end = torch.constant.int 9223372036854775807
  %false = torch.constant.bool false
  %r = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[?,?],f32>, !torch.int -> !torch.vtensor<[?,?],f32>
  %from = torch.aten.slice.Tensor %r, %int1, %int0, %int-1, %int1 : !torch.vtensor<[?,?],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,?],f32>
  %to = torch.aten.slice.Tensor %r, %int1, %int1, %end, %int1 : !torch.vtensor<[?,?],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,?],f32>
  %src = torch.aten.copy %to, %from, %false : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>, !torch.bool -> !torch.vtensor<[?,?],f32>
  %shifted = torch.aten.slice_scatter %r, %src, %int1, %int1, %end, %int1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,?],f32>
  %twice = torch.aten.mul.Scalar %from, %int2 : !torch.vtensor<[?,?],f32>, !torch.int -> !torch.vtensor<[?,?],f32>
  %computed = torch.aten.slice_scatter %r, %twice, %int1, %int1, %end, %int1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,?],f32>
  %other = torch.aten.select_scatter %r, %col, %int1, %int0 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?],f32>
  return %shifted, %computed, %other : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>
}
