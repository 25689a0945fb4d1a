// A torch-mlir bug (as bundled in IREE 3.13) dync works around (dync-collapse-views), pinned so
// that an upgrade that fixes it shows up here. `nn.MultiheadAttention` returning its weights
// (`need_weights=True`, the default) merges its heads back with
// `attn.transpose(0, 1).contiguous().view(s * b, e)` from `[s, b*H, e/H]`: a view that splits
// the input's `b*4` into `b` and `4` and merges `s` with `b` and `4` with `8`. torch-mlir
// infers the result's 32 as the input's `?x8` collapsed, so it takes the `b*4` dim for a
// static 4 and the module asserts that the input has 4 there (in a whole model the static 4
// reaches the attention products through tensor.cast folding, and they read memory past the
// tensors: values of 1e+30). The same view as an unflatten and two flattens (what
// dync-collapse-views writes) gives the 6 rows of s * b = 3 * 2.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.bad.vmfb
// RUN: not iree-run-module --module=%t.bad.vmfb --device=local-sync --function=main --input=3x8x8xf32=1 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: dync-opt %s --dync-collapse-views | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=3x8x8xf32=1 | FileCheck %s
// BAD: tensor shape dimension 1 mismatch; expected 4 but have 8
// CHECK: 6x32xf32=[2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2][2
func.func @main(%arg0: !torch.vtensor<[?,?,8],f32>) -> !torch.vtensor<[?,32],f32> {
  %int32 = torch.constant.int 32
  %int2 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %int4 = torch.constant.int 4
  %0 = torch.symbolic_int "s" {min_val = 2, max_val = 64} : !torch.int
  %1 = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
  torch.bind_symbolic_shape %arg0, [%0, %1], affine_map<()[s0, s1] -> (s0, s1 * 4, 8)> : !torch.vtensor<[?,?,8],f32>
  %2 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,?,8],f32>, !torch.int -> !torch.int
  %3 = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[?,?,8],f32>, !torch.int -> !torch.int
  %b = torch.aten.floordiv.int %3, %int4 : !torch.int, !torch.int -> !torch.int
  %6 = torch.aten.mul.int %2, %b : !torch.int, !torch.int -> !torch.int
  %7 = torch.prim.ListConstruct %6, %int32 : (!torch.int, !torch.int) -> !torch.list<int>
  %8 = torch.aten._unsafe_view %arg0, %7 : !torch.vtensor<[?,?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %8, [%0, %1], affine_map<()[s0, s1] -> (s0 * s1, 32)> : !torch.vtensor<[?,32],f32>
  %9 = torch.aten.mul.Scalar %8, %int2 : !torch.vtensor<[?,32],f32>, !torch.int -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %9, [%0, %1], affine_map<()[s0, s1] -> (s0 * s1, 32)> : !torch.vtensor<[?,32],f32>
  return %9 : !torch.vtensor<[?,32],f32>
}
