// A torch-mlir bug (as bundled in IREE 3.13) dync works around (dync-collapse-views), pinned so
// that an upgrade that fixes it shows up here. `nn.MultiheadAttention` merges its heads back
// with `attn.permute(2, 0, 1, 3).reshape(s * b, e)`: a view of `[s, b, 2, 16]` to `[s*b, 32]`.
// torch-mlir pairs the result's dynamic dim with one input dim and collapses `?x1x2x16`, so
// the module asserts at run time that the batch is 1. The same view as two flattens (what
// dync-collapse-views writes) gives the 15 rows of 2 * 1.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.bad.vmfb
// RUN: not iree-run-module --module=%t.bad.vmfb --device=local-sync --function=main --input=3x2x5x16xf32=1 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: dync-opt %s --dync-collapse-views | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=3x2x5x16xf32=1 | FileCheck %s
// BAD: tensor shape dimension 0 mismatch; expected 1 but have 3
// CHECK: 15x32xf32=[2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2]
func.func @main(%arg0: !torch.vtensor<[?,2,?,16],f32>) -> !torch.vtensor<[?,32],f32> {
  %int32 = torch.constant.int 32
  %int3 = torch.constant.int 3
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int0 = torch.constant.int 0
  %0 = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  %1 = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %arg0, [%1, %0], affine_map<()[s0, s1] -> (s1, 2, s0, 16)> : !torch.vtensor<[?,2,?,16],f32>
  %2 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,2,?,16],f32>, !torch.int -> !torch.int
  %3 = torch.aten.size.int %arg0, %int2 : !torch.vtensor<[?,2,?,16],f32>, !torch.int -> !torch.int
  %4 = torch.prim.ListConstruct %int2, %int0, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %5 = torch.aten.permute %arg0, %4 : !torch.vtensor<[?,2,?,16],f32>, !torch.list<int> -> !torch.vtensor<[?,?,2,16],f32>
  torch.bind_symbolic_shape %5, [%1, %0], affine_map<()[s0, s1] -> (s0, s1, 2, 16)> : !torch.vtensor<[?,?,2,16],f32>
  %6 = torch.aten.mul.int %3, %2 : !torch.int, !torch.int -> !torch.int
  %7 = torch.prim.ListConstruct %6, %int32 : (!torch.int, !torch.int) -> !torch.list<int>
  %8 = torch.aten._unsafe_view %5, %7 : !torch.vtensor<[?,?,2,16],f32>, !torch.list<int> -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %8, [%1, %0], affine_map<()[s0, s1] -> (s0 * s1, 32)> : !torch.vtensor<[?,32],f32>
  %9 = torch.aten.mul.Scalar %8, %int2 : !torch.vtensor<[?,32],f32>, !torch.int -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %9, [%1, %0], affine_map<()[s0, s1] -> (s0 * s1, 32)> : !torch.vtensor<[?,32],f32>
  return %9 : !torch.vtensor<[?,32],f32>
}
