// An IREE 3.13 default behind dync's `--iree-llvmcpu-reassociate-fp-reductions`
// (dync/targets/llvm-cpu.toml), pinned so that an upgrade that changes it shows up here. At
// IREE's default optimization level (O0, which dync compiles at) a float reduction along a row
// keeps the source's order: every vector of the row is folded into one scalar accumulator in
// turn (an ordered `llvm.vector.reduce.fadd` of each vector onto the row's scalar: a chain of
// dependent adds).
// With reassociation (the default at O2, which dync does not use: it strips assertions and
// fuses reductions into consumers past IREE's stack limit) each lane keeps a sum of its own
// (`fadd <4 x float>`) and the lanes are added once at the end: fewer rounding steps, closer to
// eager's cascade. Measured on this host (AVX-512, local-sync, iree-benchmark-module),
// `x.sum(-1)` over 64 x 4096 floats: 0.053 ms in order, 0.013 reassociated (eager 0.010).
// RUN: rm -rf %t && mkdir -p %t
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --iree-llvmcpu-number-of-threads=1 --iree-hal-dump-executable-intermediates-to=%t/ordered -o /dev/null
// RUN: cat %t/ordered/*.optimized.ll | FileCheck %s --check-prefix=ORDERED
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --iree-llvmcpu-number-of-threads=1 --iree-llvmcpu-reassociate-fp-reductions --iree-hal-dump-executable-intermediates-to=%t/reassociated -o /dev/null
// RUN: cat %t/reassociated/*.optimized.ll | FileCheck %s --check-prefix=REASSOCIATED
// ORDERED-NOT: fadd {{.*}}<4 x float>
// ORDERED: call float @llvm.vector.reduce.fadd.v4f32(float
// ORDERED-NOT: fadd {{.*}}<4 x float>
// ORDERED-NOT: reassoc
// REASSOCIATED: fadd contract <4 x float>
// REASSOCIATED: call reassoc float @llvm.vector.reduce.fadd.v4f32(float
func.func @main(%arg0: !torch.vtensor<[64,4096],f32>) -> !torch.vtensor<[64],f32> {
  %int-1 = torch.constant.int -1
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %false = torch.constant.bool false
  %none = torch.constant.none
  %sum = torch.aten.sum.dim_IntList %arg0, %dims, %false, %none : !torch.vtensor<[64,4096],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[64],f32>
  return %sum : !torch.vtensor<[64],f32>
}
