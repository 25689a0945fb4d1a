// RUN: dync-opt %s --split-input-file --dync-widen-int8 | FileCheck %s

// int8 times a scalar: the tensor to int32, the op in int32, the result back to int8 (3 is
// torch's int32, 1 its int8).
// CHECK-LABEL: func.func @times_a_scalar
// CHECK:         torch.constant.bool false
// CHECK:         %[[I32:.*]] = torch.constant.int 3
// CHECK-NEXT:    %[[WIDE:.*]] = torch.aten.to.dtype %arg0, %[[I32]], {{.*}} -> !torch.vtensor<[?],si32>
// CHECK:         %[[MUL:.*]] = torch.aten.mul.Scalar %[[WIDE]], %{{.*}} : !torch.vtensor<[?],si32>, !torch.int -> !torch.vtensor<[?],si32>
// CHECK:         %[[I8:.*]] = torch.constant.int 1
// CHECK:         %[[R:.*]] = torch.aten.to.dtype %[[MUL]], %[[I8]], {{.*}} -> !torch.vtensor<[?],si8>
// CHECK:         return %[[R]]
func.func @times_a_scalar(%x: !torch.vtensor<[?],si8>) -> !torch.vtensor<[?],si8> {
  %int3 = torch.constant.int 3
  %0 = torch.aten.mul.Scalar %x, %int3 : !torch.vtensor<[?],si8>, !torch.int -> !torch.vtensor<[?],si8>
  return %0 : !torch.vtensor<[?],si8>
}

// -----

// uint8 divided by a 0-d int64 tensor (dync-int-division's form of `//`): only the 8-bit
// operand is widened; the whole-tensor max too, back to uint8 (0).
// CHECK-LABEL: func.func @divided_and_max
// CHECK:         %[[WIDE:.*]] = torch.aten.to.dtype %arg0, {{.*}} -> !torch.vtensor<[4,?],si32>
// CHECK:         %[[Q:.*]] = torch.aten.div.Tensor_mode %[[WIDE]], %arg1, %{{.*}} : !torch.vtensor<[4,?],si32>, !torch.vtensor<[],si64>, !torch.str -> !torch.vtensor<[4,?],si32>
// CHECK:         torch.aten.to.dtype %[[Q]], {{.*}} -> !torch.vtensor<[4,?],ui8>
// CHECK:         %[[M:.*]] = torch.aten.max %{{.*}} : !torch.vtensor<[4,?],si32> -> !torch.vtensor<[],si32>
// CHECK:         torch.aten.to.dtype %[[M]], {{.*}} -> !torch.vtensor<[],ui8>
func.func @divided_and_max(%x: !torch.vtensor<[4,?],ui8>, %d: !torch.vtensor<[],si64>) -> (!torch.vtensor<[4,?],ui8>, !torch.vtensor<[],ui8>) {
  %str = torch.constant.str "trunc"
  %0 = torch.aten.div.Tensor_mode %x, %d, %str : !torch.vtensor<[4,?],ui8>, !torch.vtensor<[],si64>, !torch.str -> !torch.vtensor<[4,?],ui8>
  %1 = torch.aten.max %x : !torch.vtensor<[4,?],ui8> -> !torch.vtensor<[],ui8>
  return %0, %1 : !torch.vtensor<[4,?],ui8>, !torch.vtensor<[],ui8>
}

// -----

// int16 and wider, and an 8-bit comparison, are left as they are.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     torch.aten.to.dtype
// CHECK:         torch.aten.mul.Scalar %arg0
// CHECK:         torch.aten.gt.Scalar %arg1
func.func @left_alone(%x: !torch.vtensor<[?],si16>, %y: !torch.vtensor<[?],si8>) -> (!torch.vtensor<[?],si16>, !torch.vtensor<[?],i1>) {
  %int3 = torch.constant.int 3
  %0 = torch.aten.mul.Scalar %x, %int3 : !torch.vtensor<[?],si16>, !torch.int -> !torch.vtensor<[?],si16>
  %1 = torch.aten.gt.Scalar %y, %int3 : !torch.vtensor<[?],si8>, !torch.int -> !torch.vtensor<[?],i1>
  return %0, %1 : !torch.vtensor<[?],si16>, !torch.vtensor<[?],i1>
}

// -----

// Floats to uint8 through int32 (3), then to uint8 (0): torch-mlir's direct conversion is an
// `fptosi` to i8, with no value past 127. An integer source is left alone.
// CHECK-LABEL: func.func @float_to_uint8
// CHECK:         %[[WIDE:.*]] = torch.aten.to.dtype %arg0, %int3{{.*}} -> !torch.vtensor<[?],si32>
// CHECK:         %[[U8:.*]] = torch.aten.to.dtype %[[WIDE]], %int0{{.*}} -> !torch.vtensor<[?],ui8>
// CHECK:         %[[FROM_INT:.*]] = torch.aten.to.dtype %arg1, %int0{{.*}} : !torch.vtensor<[?],si32>, {{.*}} -> !torch.vtensor<[?],ui8>
// CHECK:         return %[[U8]], %[[FROM_INT]]
func.func @float_to_uint8(%x: !torch.vtensor<[?],f64>, %i: !torch.vtensor<[?],si32>) -> (!torch.vtensor<[?],ui8>, !torch.vtensor<[?],ui8>) {
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.to.dtype %x, %int0, %false, %false, %none : !torch.vtensor<[?],f64>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?],ui8>
  %1 = torch.aten.to.dtype %i, %int0, %false, %false, %none : !torch.vtensor<[?],si32>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?],ui8>
  return %0, %1 : !torch.vtensor<[?],ui8>, !torch.vtensor<[?],ui8>
}

// -----

// The same for `_to_copy`, the form `.to(torch.uint8)` takes where torch.export keeps it (on
// an AVX2 CPU a float 180 came back 52 without this).
// CHECK-LABEL: func.func @float_to_copy_uint8
// CHECK:         %[[WIDE:.*]] = torch.aten.to.dtype %arg0, %int3{{.*}} -> !torch.vtensor<[2,?],si32>
// CHECK:         %[[U8:.*]] = torch.aten.to.dtype %[[WIDE]], %int0{{.*}} -> !torch.vtensor<[2,?],ui8>
// CHECK-NOT:     torch.aten._to_copy
// CHECK:         return %[[U8]]
func.func @float_to_copy_uint8(%x: !torch.vtensor<[2,?],f32>) -> !torch.vtensor<[2,?],ui8> {
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten._to_copy %x, %int0, %none, %none, %none, %false, %none : !torch.vtensor<[2,?],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[2,?],ui8>
  return %0 : !torch.vtensor<[2,?],ui8>
}
