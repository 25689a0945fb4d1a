// An IREE 3.13 performance limit behind dync's size buckets, pinned so that an upgrade that
// lifts it shows up here. On llvm-cpu a 2-D convolution (NHWC after the channels-last
// preprocessing dync-channels-last asks for) whose output width is dynamic is never
// vectorized along the width, and the distribution for IREE's default 8 threads splits its 8
// output channels into 1-wide tiles: every vector tile is 1, the convolution runs scalar.
// With --iree-llvmcpu-number-of-threads=1 (what dync's single-threaded local-sync runtime
// uses) the channels get their vector back, the width still not. A static width with a
// dynamic height keeps both. Measured on this host (znver5, local-sync), YOLO's first
// convolution over a 224 x 320 image: dynamic H x W 1.38 ms, dynamic H and static W 0.161 ms,
// static 0.154 ms; the YOLO backbone and head, dynamic H x W: 5.12 ms, with one thread 1.08 ms.
// RUN: rm -rf %t && mkdir -p %t
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic '--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))' --iree-hal-dump-executable-configurations-to=%t/dynamic -o /dev/null
// RUN: cat %t/dynamic/*.mlir | FileCheck %s --check-prefix=DYNAMIC
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic '--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))' --iree-llvmcpu-number-of-threads=1 --iree-hal-dump-executable-configurations-to=%t/one-thread -o /dev/null
// RUN: cat %t/one-thread/*.mlir | FileCheck %s --check-prefix=ONE-THREAD
// RUN: sed -e 's/\[1,3,?,?\]/[1,3,?,64]/g' -e 's/\[1,8,?,?\]/[1,8,?,32]/g' %s > %t/static-width.mlir
// RUN: iree-compile %t/static-width.mlir --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic '--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))' --iree-hal-dump-executable-configurations-to=%t/static -o /dev/null
// RUN: cat %t/static/*.mlir | FileCheck %s --check-prefix=STATIC
// DYNAMIC: ConvTileAndDecomposeExpert
// DYNAMIC: vector_common_parallel = [1, 1, 1, 1, 0, 0, 0]
// ONE-THREAD: ConvTileAndDecomposeExpert
// ONE-THREAD: vector_common_parallel = [1, 1, 1, 4, 0, 0, 0]
// STATIC: ConvTileAndDecomposeExpert
// STATIC: vector_common_parallel = [1, 1, 4, 4, 0, 0, 0]
func.func @main(%arg0: !torch.vtensor<[1,3,?,?],f32>) -> !torch.vtensor<[1,8,?,?],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %wt = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
  %none = torch.constant.none
  %s = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %q = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %c = torch.aten.conv2d %arg0, %wt, %none, %s, %q, %q, %int1 : !torch.vtensor<[1,3,?,?],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,?,?],f32>
  return %c : !torch.vtensor<[1,8,?,?],f32>
}
