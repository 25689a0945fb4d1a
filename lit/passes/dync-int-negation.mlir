// RUN: dync-opt %s --split-input-file --dync-int-negation | FileCheck %s

// A negated int64 tensor: a multiplication by -1 (arith.muli in IREE), not torch-mlir's f32 negf.
// CHECK-LABEL: func.func @negate_int
// CHECK:         %[[MINUS:.*]] = torch.constant.int -1
// CHECK:         %[[R:.*]] = torch.aten.mul.Scalar %arg0, %[[MINUS]] : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
// CHECK-NOT:     torch.aten.neg
// CHECK:         return %[[R]]
func.func @negate_int(%x: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],si64> {
  %0 = torch.aten.neg %x : !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  return %0 : !torch.vtensor<[?],si64>
}

// -----

// int32 inside a branch's region too.
// CHECK-LABEL: func.func @negate_in_region
// CHECK:         scf.if
// CHECK:           torch.aten.mul.Scalar %{{.*}}, %{{.*}} : !torch.vtensor<[4],si32>, !torch.int -> !torch.vtensor<[4],si32>
// CHECK-NOT:     torch.aten.neg
func.func @negate_in_region(%x: !torch.vtensor<[4],si32>, %c: i1) -> !torch.vtensor<[4],si32> {
  %0 = scf.if %c -> (!torch.vtensor<[4],si32>) {
    %1 = torch.aten.neg %x : !torch.vtensor<[4],si32> -> !torch.vtensor<[4],si32>
    scf.yield %1 : !torch.vtensor<[4],si32>
  } else {
    scf.yield %x : !torch.vtensor<[4],si32>
  }
  return %0 : !torch.vtensor<[4],si32>
}

// -----

// Floats, unsigned integers and the narrow ints f32 holds exactly are left as they are.
// CHECK-LABEL: func.func @negate_float
// CHECK:         torch.aten.neg %arg0 : !torch.vtensor<[?],f32>
// CHECK:         torch.aten.neg %arg1 : !torch.vtensor<[?],ui8>
// CHECK:         torch.aten.neg %arg2 : !torch.vtensor<[?],si8>
// CHECK:         torch.aten.neg %arg3 : !torch.vtensor<[?],si16>
func.func @negate_float(%x: !torch.vtensor<[?],f32>, %y: !torch.vtensor<[?],ui8>, %z: !torch.vtensor<[?],si8>, %w: !torch.vtensor<[?],si16>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],ui8>, !torch.vtensor<[?],si8>, !torch.vtensor<[?],si16>) {
  %0 = torch.aten.neg %x : !torch.vtensor<[?],f32> -> !torch.vtensor<[?],f32>
  %1 = torch.aten.neg %y : !torch.vtensor<[?],ui8> -> !torch.vtensor<[?],ui8>
  %2 = torch.aten.neg %z : !torch.vtensor<[?],si8> -> !torch.vtensor<[?],si8>
  %3 = torch.aten.neg %w : !torch.vtensor<[?],si16> -> !torch.vtensor<[?],si16>
  return %0, %1, %2, %3 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],ui8>, !torch.vtensor<[?],si8>, !torch.vtensor<[?],si16>
}
