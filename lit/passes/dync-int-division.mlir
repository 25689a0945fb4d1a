// RUN: dync-opt %s --split-input-file --dync-int-division | FileCheck %s

// A floor division of int64 tensors: the divisor checked for zeros (and zeros replaced by 1),
// then a truncating division corrected by one where the remainder's sign differs from y's.
// CHECK-LABEL: func.func @floor_divide
// CHECK:         %[[ZERO:.*]] = torch.aten.eq.Scalar %arg1, %{{.*}}
// CHECK:         %[[Y:.*]] = torch.aten.masked_fill.Scalar %arg1, %[[ZERO]]
// CHECK:         %[[ANY:.*]] = torch.aten.any %[[ZERO]]
// CHECK:         %[[OK:.*]] = torch.aten.logical_not %[[ANY]]
// CHECK:         %[[B:.*]] = torch.aten.Bool.Tensor %[[OK]]
// CHECK:         torch.runtime.assert %[[B]], "dync division check: floor_divide at model.py:7 divides an integer by zero"
// CHECK:         %[[TRUNC:.*]] = torch.constant.str "trunc"
// CHECK:         %[[Q:.*]] = torch.aten.div.Tensor_mode %arg0, %[[Y]], %[[TRUNC]]
// CHECK:         %[[QY:.*]] = torch.aten.mul.Tensor %[[Q]], %[[Y]]
// CHECK:         %[[R:.*]] = torch.aten.sub.Tensor %arg0, %[[QY]]
// CHECK:         %[[RNEG:.*]] = torch.aten.lt.Scalar %[[R]]
// CHECK:         %[[YNEG:.*]] = torch.aten.lt.Scalar %[[Y]]
// CHECK:         %[[DIFF:.*]] = torch.aten.ne.Tensor %[[RNEG]], %[[YNEG]]
// CHECK:         %[[INEXACT:.*]] = torch.aten.ne.Scalar %[[R]]
// CHECK:         %[[FIX:.*]] = torch.aten.logical_and %[[INEXACT]], %[[DIFF]]
// CHECK:         %[[RES:.*]] = torch.aten.sub.Tensor %[[Q]], %[[FIX]]
// CHECK-NOT:     torch.aten.floor_divide
// CHECK:         return %[[RES]]
func.func @floor_divide(%x: !torch.vtensor<[?],si64>, %y: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],si64> {
  %0 = torch.aten.floor_divide %x, %y : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64> loc("model.py":7:8)
  return %0 : !torch.vtensor<[?],si64>
}

// -----

// A constant nonzero divisor needs no check; the scalar becomes a 0-d tensor.
// CHECK-LABEL: func.func @by_constant
// CHECK-NOT:     torch.runtime.assert
// CHECK:         %[[Y:.*]] = torch.prim.NumToTensor.Scalar %{{.*}} : !torch.int -> !torch.vtensor<[],si64>
// CHECK:         torch.aten.div.Tensor_mode %arg0, %[[Y]]
// CHECK-NOT:     torch.aten.div.Scalar_mode
func.func @by_constant(%x: !torch.vtensor<[4],si32>) -> !torch.vtensor<[4],si32> {
  %int7 = torch.constant.int 7
  %floor = torch.constant.str "floor"
  %0 = torch.aten.div.Scalar_mode %x, %int7, %floor : !torch.vtensor<[4],si32>, !torch.int, !torch.str -> !torch.vtensor<[4],si32>
  return %0 : !torch.vtensor<[4],si32>
}

// -----

// A remainder is exact in IREE (arith.remsi): only its divisor is checked, and made nonzero.
// An int divisor known only at run time is checked as an int.
// CHECK-LABEL: func.func @remainder
// CHECK:         %[[Z:.*]] = torch.aten.eq.int %arg1, %{{.*}}
// CHECK:         %[[OK:.*]] = torch.aten.ne.int %arg1, %{{.*}}
// CHECK:         %[[ONE:.*]] = torch.aten.Int.bool %[[Z]]
// CHECK:         %[[N:.*]] = torch.aten.add.int %arg1, %[[ONE]]
// CHECK:         torch.runtime.assert %[[OK]], "dync division check: remainder.Scalar at {{.*}} divides an integer by zero"
// CHECK:         torch.aten.remainder.Scalar %arg0, %[[N]]
func.func @remainder(%x: !torch.vtensor<[4],si64>, %n: !torch.int) -> !torch.vtensor<[4],si64> {
  %0 = torch.aten.remainder.Scalar %x, %n : !torch.vtensor<[4],si64>, !torch.int -> !torch.vtensor<[4],si64>
  return %0 : !torch.vtensor<[4],si64>
}

// -----

// Floats are left alone, as is a truncating division by a nonzero constant.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     torch.runtime.assert
// CHECK:         torch.aten.floor_divide %arg0, %arg1
// CHECK:         torch.aten.div.Scalar_mode %arg2
func.func @left_alone(%x: !torch.vtensor<[4],f32>, %y: !torch.vtensor<[4],f32>, %i: !torch.vtensor<[4],si64>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],si64>) {
  %int3 = torch.constant.int 3
  %trunc = torch.constant.str "trunc"
  %0 = torch.aten.floor_divide %x, %y : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %1 = torch.aten.div.Scalar_mode %i, %int3, %trunc : !torch.vtensor<[4],si64>, !torch.int, !torch.str -> !torch.vtensor<[4],si64>
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],si64>
}

// -----

// Two divisions by one divisor: each fills the divisor's zeros with a constant of its own, so
// that the filled divisors are never merged into one that IREE keeps in memory between
// dispatches (it divided the lanes past a dynamic length's end, read as 0, by it: SIGFPE).
// CHECK-LABEL: func.func @one_divisor_twice
// CHECK:         %[[YA:.*]] = torch.aten.masked_fill.Scalar %arg1, %{{.*}}, %int2
// CHECK:         torch.aten.remainder.Tensor %arg0, %[[YA]]
// CHECK:         %[[YB:.*]] = torch.aten.masked_fill.Scalar %arg1, %{{.*}}, %int3
// CHECK:         torch.aten.div.Tensor_mode %arg0, %[[YB]]
func.func @one_divisor_twice(%x: !torch.vtensor<[?],si64>, %y: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) {
  %0 = torch.aten.remainder.Tensor %x, %y : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  %1 = torch.aten.floor_divide %x, %y : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  return %0, %1 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>
}

// -----

// Divisors proven nonzero need no check: a size declared from 2 up, and counts clamped to at
// least 1 (a mean of integers over segments), whose zeros are still filled (the lanes past a
// dynamic length's end). Counts clamped to 0 and up may be 0: checked.
// CHECK-LABEL: func.func @proven_nonzero
// CHECK:         %[[N:.*]] = torch.aten.size.int %arg0
// CHECK:         torch.aten.clamp %arg1, %{{.*}}, %none
// CHECK-NOT:     torch.aten.any
// CHECK:         torch.aten.masked_fill.Scalar
// CHECK-NOT:     torch.runtime.assert
// CHECK:         torch.aten.remainder.Scalar %arg0, %[[N]]
// CHECK:         %[[ANY:.*]] = torch.aten.any
// CHECK:         torch.runtime.assert %{{.*}}, "dync division check: remainder.Tensor
// CHECK-NOT:     torch.runtime.assert
// CHECK:         return
func.func @proven_nonzero(%x: !torch.vtensor<[?],si64>, %counts: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) {
  %s = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %x, [%s], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  torch.bind_symbolic_shape %counts, [%s], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %floor = torch.constant.str "floor"
  %n = torch.aten.size.int %x, %int0 : !torch.vtensor<[?],si64>, !torch.int -> !torch.int
  %at_least_1 = torch.aten.clamp %counts, %int1, %none : !torch.vtensor<[?],si64>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
  %0 = torch.aten.div.Tensor_mode %x, %at_least_1, %floor : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.str -> !torch.vtensor<[?],si64>
  %1 = torch.aten.remainder.Scalar %x, %n : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %at_least_0 = torch.aten.clamp %counts, %int0, %none : !torch.vtensor<[?],si64>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
  %2 = torch.aten.remainder.Tensor %x, %at_least_0 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  return %0, %1, %2 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>
}
