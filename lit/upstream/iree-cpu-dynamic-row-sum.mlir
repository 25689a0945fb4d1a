// IREE 3.13's CPU code for a float reduction over a dynamic dim, pinned so that an upgrade that
// changes it shows up here (behind `dync-sums-as-matvecs`). A reduction (a `linalg.generic`)
// over a dynamic last dim is vectorized with a mask on its last vector, and the masked
// reduction (`llvm.vp.reduce.fadd`, which no flag reassociates) adds each vector's lanes into
// the row's scalar one after another, every step of the loop. The same sum as a product with
// a vector of ones (`linalg.matvec`, a named op) is peeled instead: each lane accumulates on
// its own (`llvm.fmuladd` of vectors; x * 1.0 + s rounds once, as x + s does), no masked
// reduction in the loop. Measured on this host (AVX-512, local-sync, iree-benchmark-module),
// 64 x 4096 floats, the length dynamic: 0.105 ms as a reduction, 0.028 as the product
// (0.013 with a static length).
// RUN: rm -rf %t && mkdir -p %t
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --iree-llvmcpu-number-of-threads=1 --iree-llvmcpu-reassociate-fp-reductions --iree-hal-dump-executable-intermediates-to=%t -o /dev/null
// RUN: cat %t/*.optimized.ll | FileCheck %s
// CHECK-LABEL: define internal {{.*}} @"sum$async_dispatch_0_reduction_64xD_f32"
// CHECK-NOT:   fmuladd
// CHECK:       call float @llvm.vp.reduce.fadd.v4f32(float
// CHECK-LABEL: define internal {{.*}} @"matvec$async_dispatch_0_matvec_64xD_f32"
// CHECK-NOT:   call float @llvm.vp.reduce.fadd
// CHECK:       call <4 x float> @llvm.fmuladd.v4f32(<4 x float>
// CHECK-NOT:   call float @llvm.vp.reduce.fadd
// CHECK-LABEL: define dso_local
func.func @sum(%arg0: !torch.vtensor<[64,?],f32>) -> !torch.vtensor<[64],f32> {
  %int-1 = torch.constant.int -1
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %sum = torch.aten.sum.dim_IntList %arg0, %dims, %false, %none : !torch.vtensor<[64,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[64],f32>
  return %sum : !torch.vtensor<[64],f32>
}
func.func @matvec(%arg0: !torch.vtensor<[64,?],f32>) -> !torch.vtensor<[64],f32> {
  %int1 = torch.constant.int 1
  %int6 = torch.constant.int 6
  %none = torch.constant.none
  %n = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[64,?],f32>, !torch.int -> !torch.int
  %l = torch.prim.ListConstruct %n : (!torch.int) -> !torch.list<int>
  %ones = torch.aten.ones %l, %int6, %none, %none, %none : !torch.list<int>, !torch.int, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[?],f32>
  %r = torch.aten.matmul %arg0, %ones : !torch.vtensor<[64,?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor<[64],f32>
  return %r : !torch.vtensor<[64],f32>
}
