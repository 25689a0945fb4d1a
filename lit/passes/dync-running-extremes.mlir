// RUN: dync-opt %s --split-input-file --dync-running-extremes | FileCheck %s

// cummax of floats along a dynamic dim: the values a NaN-propagating max scan, the indices a
// max scan of each position where the input equals its running value or is NaN (else -1).
// CHECK-LABEL: func.func @float_max
// CHECK-NOT:     torch.operator
// CHECK:         %[[X:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[2,?],f32> -> tensor<2x?xf32>
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         %[[V:.*]]:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%[[X]] : tensor<2x?xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[HELD:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[X]], %[[V]]#0 : tensor<2x?xf32>, tensor<2x?xf32>)
// CHECK:           linalg.index 1
// CHECK:           arith.cmpf oeq
// CHECK:           arith.cmpf uno
// CHECK:         %[[I:.*]]:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%[[HELD]] : tensor<2x?xi64>)
// CHECK:           arith.maxsi
// CHECK:         %[[VT:.*]] = torch_c.from_builtin_tensor %[[V]]#0 : tensor<2x?xf32> -> !torch.vtensor<[2,?],f32>
// CHECK:         %[[IT:.*]] = torch_c.from_builtin_tensor %[[I]]#0 : tensor<2x?xi64> -> !torch.vtensor<[2,?],si64>
// CHECK:         return %[[VT]], %[[IT]]
func.func @float_max(%x: !torch.vtensor<[2,?],f32>) -> (!torch.vtensor<[2,?],f32>, !torch.vtensor<[2,?],si64>) {
  %int-1 = torch.constant.int -1
  %0:2 = torch.operator "torch.aten.cummax"(%x, %int-1) : (!torch.vtensor<[2,?],f32>, !torch.int) -> (!torch.vtensor<[2,?],f32>, !torch.vtensor<[2,?],si64>)
  return %0#0, %0#1 : !torch.vtensor<[2,?],f32>, !torch.vtensor<[2,?],si64>
}

// -----

// cummin of int64 along dim 0: a signed min scan from the largest int64; equality alone
// marks the positions holding the extreme.
// CHECK-LABEL: func.func @int_min
// CHECK:         arith.constant 9223372036854775807 : i64
// CHECK:         tm_tensor.scan dimension(0)
// CHECK:           arith.minsi
// CHECK:         linalg.generic
// CHECK-NOT:       arith.cmpf
// CHECK:           arith.cmpi eq
// CHECK:         tm_tensor.scan dimension(0)
// CHECK:           arith.maxsi
// CHECK-NOT:     torch.operator
func.func @int_min(%x: !torch.vtensor<[?,3],si64>) -> (!torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>) {
  %int0 = torch.constant.int 0
  %0:2 = torch.operator "torch.aten.cummin"(%x, %int0) : (!torch.vtensor<[?,3],si64>, !torch.int) -> (!torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>)
  return %0#0, %0#1 : !torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>
}

// -----

// A 0-d tensor is its own running extreme, at index 0.
// CHECK-LABEL: func.func @scalar
// CHECK:         %[[ZERO:.*]] = torch.vtensor.literal(dense<0> : tensor<si64>) : !torch.vtensor<[],si64>
// CHECK:         return %arg0, %[[ZERO]]
func.func @scalar(%x: !torch.vtensor<[],f32>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[],si64>) {
  %int0 = torch.constant.int 0
  %0:2 = torch.operator "torch.aten.cummax"(%x, %int0) : (!torch.vtensor<[],f32>, !torch.int) -> (!torch.vtensor<[],f32>, !torch.vtensor<[],si64>)
  return %0#0, %0#1 : !torch.vtensor<[],f32>, !torch.vtensor<[],si64>
}

// -----

// Unsigned bytes are scanned in int16 (torch_c keeps them ui8, which arith does not take),
// bools in int8 (IREE stores i1 in bytes, and retyped a scan's operands but not its
// combiner); the values are converted back.
// CHECK-LABEL: func.func @unsigned
// CHECK:         %[[WIDE:.*]] = torch.aten.to.dtype %arg0, %{{.*}} -> !torch.vtensor<[4],si16>
// CHECK:         torch_c.to_builtin_tensor %[[WIDE]] : !torch.vtensor<[4],si16> -> tensor<4xi16>
// CHECK:         tm_tensor.scan
// CHECK:           arith.maxsi %{{.*}} : i16
// CHECK:         %[[VALUES:.*]] = torch_c.from_builtin_tensor %{{.*}} : tensor<4xi16> -> !torch.vtensor<[4],si16>
// CHECK:         %[[NARROW:.*]] = torch.aten.to.dtype %[[VALUES]], %{{.*}} -> !torch.vtensor<[4],ui8>
// CHECK:         return %[[NARROW]]
func.func @unsigned(%x: !torch.vtensor<[4],ui8>) -> (!torch.vtensor<[4],ui8>, !torch.vtensor<[4],si64>) {
  %int0 = torch.constant.int 0
  %0:2 = torch.operator "torch.aten.cummax"(%x, %int0) : (!torch.vtensor<[4],ui8>, !torch.int) -> (!torch.vtensor<[4],ui8>, !torch.vtensor<[4],si64>)
  return %0#0, %0#1 : !torch.vtensor<[4],ui8>, !torch.vtensor<[4],si64>
}

// -----

// CHECK-LABEL: func.func @bool
// CHECK:         torch.aten.to.dtype %arg0, %{{.*}} -> !torch.vtensor<[?],si8>
// CHECK:         arith.minsi %{{.*}} : i8
// CHECK:         torch.aten.to.dtype %{{.*}} -> !torch.vtensor<[?],i1>
// CHECK-NOT:     torch.operator
func.func @bool(%x: !torch.vtensor<[?],i1>) -> (!torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>) {
  %int0 = torch.constant.int 0
  %0:2 = torch.operator "torch.aten.cummin"(%x, %int0) : (!torch.vtensor<[?],i1>, !torch.int) -> (!torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>)
  return %0#0, %0#1 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>
}
