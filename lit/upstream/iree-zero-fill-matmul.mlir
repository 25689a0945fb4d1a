// An IREE 3.13 miscompile dync works around (dync-distinct-fills), pinned so that an upgrade
// that fixes it shows up here. `y + y.new_zeros(n, 8) @ W` (an nn.RNN's first step from its
// zero state): IREE merges the zero fill the product reads with the product's own zero
// accumulator, and the x86-64-v3 (AVX2) code it makes for that product reads the dispatch's
// other input in place of the zeros from 64 rows on: with y and W all ones, the rows come back
// 1 + 8 = 9 at n = 64 and right (1) at n = 63. Generic x86-64 and AVX-512 code are right,
// which is why only AVX2 hosts saw it. Filling from a value behind an optimization barrier of
// its own (dync-distinct-fills) keeps the fill apart from the accumulator.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=x86-64-v3 -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=63x8xf32=1 | FileCheck %s --check-prefix=ROWS63
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=64x8xf32=1 | FileCheck %s
// RUN: dync-opt %s --dync-distinct-fills | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=x86-64-v3 -o %t.distinct.vmfb
// RUN: iree-run-module --module=%t.distinct.vmfb --device=local-sync --function=main --input=64x8xf32=1 | FileCheck %s --check-prefix=DISTINCT
// ROWS63: 63x8xf32=[1 1 1 1 1 1 1 1]
// ROWS63-NOT: 9
// CHECK: 64x8xf32=[9 9 9 9 9 9 9 9]
// DISTINCT: 64x8xf32=[1 1 1 1 1 1 1 1]
// DISTINCT-NOT: 9
func.func @main(%y: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int8 = torch.constant.int 8
  %false = torch.constant.bool false
  %none = torch.constant.none
  %n = torch.aten.size.int %y, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
  %shape = torch.prim.ListConstruct %n, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
  %h = torch.aten.new_zeros %y, %shape, %none, %none, %none, %false : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[?,8],f32>
  %w = torch.vtensor.literal(dense<1.0> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
  %p = torch.aten.matmul %h, %w : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,8],f32> -> !torch.vtensor<[?,8],f32>
  %r = torch.aten.add.Tensor %y, %p, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
  return %r : !torch.vtensor<[?,8],f32>
}
