// RUN: dync-opt %s --split-input-file --dync-near-zero | FileCheck %s

// sin: the series x (1 - x^2/6 + ... - x^10/11!) by Horner's rule in x^2 where |x| < pi/4,
// a sin of its own elsewhere; the op itself is gone.
// CHECK-LABEL: func.func @sin
// CHECK:         %[[ABS:.*]] = torch.aten.abs %arg0
// CHECK:         %[[QUARTER:.*]] = torch.constant.float 0.78539816339744828
// CHECK:         %[[NEAR:.*]] = torch.aten.lt.Scalar %[[ABS]], %[[QUARTER]] : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],i1>
// CHECK:         %[[SQ:.*]] = torch.aten.mul.Tensor %arg0, %arg0
// CHECK:         torch.constant.float -2.505210838544172E-8
// CHECK-COUNT-4: torch.aten.mul.Tensor %{{.*}}, %[[SQ]]
// CHECK:         torch.constant.float 1.000000e+00
// CHECK:         %[[ONE:.*]] = torch.aten.add.Scalar
// CHECK:         %[[SERIES:.*]] = torch.aten.mul.Tensor %arg0, %[[ONE]]
// CHECK:         %[[FAR:.*]] = torch.aten.sin %arg0
// CHECK:         %[[R:.*]] = torch.aten.where.self %[[NEAR]], %[[SERIES]], %[[FAR]]
// CHECK:         return %[[R]]
func.func @sin(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %0 = torch.aten.sin %x : !torch.vtensor<[?],f32> -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}

// -----

// tan: the series over cos; sinh: the series without alternating signs, where |x| < 1.
// CHECK-LABEL: func.func @tan_and_sinh
// CHECK:         %[[COS:.*]] = torch.aten.cos %arg0
// CHECK:         %[[RATIO:.*]] = torch.aten.div.Tensor %{{.*}}, %[[COS]]
// CHECK:         %[[TAN:.*]] = torch.aten.tan %arg0
// CHECK:         torch.aten.where.self %{{.*}}, %[[RATIO]], %[[TAN]] : {{.*}} -> !torch.vtensor<[2,3],f16>
// CHECK:         torch.constant.float 2.50521{{[0-9]*}}E-8
// CHECK:         %[[SINH:.*]] = torch.aten.sinh %arg0
// CHECK:         torch.aten.where.self %{{.*}}, %{{.*}}, %[[SINH]]
// CHECK-NOT:     torch.aten.tan %arg0
func.func @tan_and_sinh(%x: !torch.vtensor<[2,3],f16>) -> (!torch.vtensor<[2,3],f16>, !torch.vtensor<[2,3],f16>) {
  %0 = torch.aten.tan %x : !torch.vtensor<[2,3],f16> -> !torch.vtensor<[2,3],f16>
  %1 = torch.aten.sinh %x : !torch.vtensor<[2,3],f16> -> !torch.vtensor<[2,3],f16>
  return %0, %1 : !torch.vtensor<[2,3],f16>, !torch.vtensor<[2,3],f16>
}

// -----

// asinh near 0 through log1p; atanh everywhere as log1p(2x / (1 - x)) / 2.
// CHECK-LABEL: func.func @inverse_hyperbolic
// CHECK:         %[[LOG:.*]] = torch.aten.log1p
// CHECK:         %[[SIGN:.*]] = torch.aten.sign %arg0
// CHECK:         %[[NEAR:.*]] = torch.aten.mul.Tensor %[[SIGN]], %[[LOG]]
// CHECK:         %[[FAR:.*]] = torch.aten.asinh %arg0
// CHECK:         torch.aten.where.self %{{.*}}, %[[NEAR]], %[[FAR]]
// CHECK:         %[[TWICE:.*]] = torch.aten.mul.Scalar %arg0
// CHECK:         %[[BELOW:.*]] = torch.aten.rsub.Scalar %arg0
// CHECK:         %[[Q:.*]] = torch.aten.div.Tensor %[[TWICE]], %[[BELOW]]
// CHECK:         %[[L:.*]] = torch.aten.log1p %[[Q]]
// CHECK:         %[[HALF:.*]] = torch.aten.mul.Scalar %[[L]]
// CHECK-NOT:     torch.aten.atanh
// CHECK:         return %{{.*}}, %[[HALF]]
func.func @inverse_hyperbolic(%x: !torch.vtensor<[?,4],f32>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) {
  %0 = torch.aten.asinh %x : !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32>
  %1 = torch.aten.atanh %x : !torch.vtensor<[?,4],f32> -> !torch.vtensor<[?,4],f32>
  return %0, %1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>
}

// -----

// Inside a branch's region too; an op whose result type differs from its operand's (an
// integer promoted to float) is left alone.
// CHECK-LABEL: func.func @in_region_and_promoted
// CHECK:         scf.if
// CHECK:           torch.aten.where.self
// CHECK:         torch.aten.sin %arg2 : !torch.vtensor<[4],si64> -> !torch.vtensor<[4],f32>
func.func @in_region_and_promoted(%x: !torch.vtensor<[4],f32>, %c: i1, %n: !torch.vtensor<[4],si64>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %0 = scf.if %c -> (!torch.vtensor<[4],f32>) {
    %1 = torch.aten.sin %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
    scf.yield %1 : !torch.vtensor<[4],f32>
  } else {
    scf.yield %x : !torch.vtensor<[4],f32>
  }
  %2 = torch.aten.sin %n : !torch.vtensor<[4],si64> -> !torch.vtensor<[4],f32>
  return %0, %2 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}
