// An IREE 3.13 kernel choice dync works around (dync-spatial-reductions), pinned so that an
// upgrade that changes it shows up here. A sum over H and W of an NHWC tensor whose batch is
// dynamic (at most 8), feeding a data-tiled matmul: with data tiling from dispatch creation
// the reduction is fused into the packing of the matmul's operand, whose inner tile is 16
// rows of the batch, and the reduction is vectorized 16 samples wide over that dynamic batch
// (masked loads one sample apart for the samples a batch lacks; at batch 1 in ResNet-50's
// first exit, 16 loads 3.2 MB apart, 15 masked, and up to 6x slower there depending on
// what memory lies beyond the buffer). Without data tiling the batch is not vectorized.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=znver4 --iree-opt-data-tiling --compile-to=executable-configurations | FileCheck %s --check-prefix=TILED
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=znver4 --compile-to=executable-configurations | FileCheck %s --check-prefix=UNTILED
// TILED:     util.assume.int %{{.+}}<umin = 1, umax = 8>
// TILED:     linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// TILED-SAME:  vector_common_parallel = [16, 16, 0]
// TILED:     linalg.pack
// UNTILED:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// UNTILED-SAME: vector_common_parallel = [1, 8, 0]
func.func @main(%arg0: !torch.vtensor<[?,8,8,64],f32>) -> !torch.vtensor<[?,256],f32> {
  %s = torch.symbolic_int "batch" {min_val = 1, max_val = 8} : !torch.int
  torch.bind_symbolic_shape %arg0, [%s], affine_map<()[s0] -> (s0, 8, 8, 64)> : !torch.vtensor<[?,8,8,64],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %none = torch.constant.none
  %perm = torch.prim.ListConstruct %int0, %int3, %int1, %int2 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %hw = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.permute %arg0, %perm : !torch.vtensor<[?,8,8,64],f32>, !torch.list<int> -> !torch.vtensor<[?,64,8,8],f32>
  %1 = torch.aten.sum.dim_IntList %0, %hw, %false, %none : !torch.vtensor<[?,64,8,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,64],f32>
  %w = torch.vtensor.literal(dense<0.5> : tensor<256x64xf32>) : !torch.vtensor<[256,64],f32>
  %2 = torch.aten.linear %1, %w, %none : !torch.vtensor<[?,64],f32>, !torch.vtensor<[256,64],f32>, !torch.none -> !torch.vtensor<[?,256],f32>
  return %2 : !torch.vtensor<[?,256],f32>
}
