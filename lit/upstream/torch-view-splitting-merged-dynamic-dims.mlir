// A torch-mlir bug (as bundled in IREE 3.13) dync works around (dync-collapse-views), pinned so
// that an upgrade that fixes it shows up here. A length padded up to a multiple of 4 and then
// `reshape(-1, 4, C)` over a dynamic batch (Swin's windows, DPRNN's chunks): torch states the
// result's 4 as `(b*t)//((b*t)//4)`, so the view's type is `?x?x8`. torch-mlir pairs the
// input's dynamic `[b, t]` with the result's `[?, ?]` and the module fails at run time; a 4-D
// variant of it wrote out of bounds first and corrupted the calling process's heap. The same
// view as a flatten and an unflatten by the size list (what dync-collapse-views writes) gives
// the 4 rows of 2 * 8 / 4.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.bad.vmfb
// RUN: not iree-run-module --module=%t.bad.vmfb --device=local-sync --function=main --input=2x8x8xf32=1 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: dync-opt %s --dync-collapse-views | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=2x8x8xf32=1 | FileCheck %s
// BAD: mismatching contracting dimension
// CHECK: 4x4x8xf32=[
// CHECK-SAME: [2 2 2 2 2 2 2 2]
func.func @main(%arg0: !torch.vtensor<[?,?,8],f32>) -> !torch.vtensor<[?,?,8],f32> {
  %t = torch.symbolic_int "t" {min_val = 2, max_val = 32} : !torch.int
  %b = torch.symbolic_int "b" {min_val = 1, max_val = 8} : !torch.int
  torch.bind_symbolic_shape %arg0, [%t, %b], affine_map<()[s0, s1] -> (s1, s0, 8)> : !torch.vtensor<[?,?,8],f32>
  %int-1 = torch.constant.int -1
  %int2 = torch.constant.int 2
  %int4 = torch.constant.int 4
  %int8 = torch.constant.int 8
  %l = torch.prim.ListConstruct %int-1, %int4, %int8 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.view %arg0, %l : !torch.vtensor<[?,?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,?,8],f32>
  torch.bind_symbolic_shape %0, [%t, %b], affine_map<()[s0, s1] -> ((s1 * s0) floordiv 4, (s1 * s0) floordiv ((s1 * s0) floordiv 4), 8)> : !torch.vtensor<[?,?,8],f32>
  %1 = torch.aten.mul.Scalar %0, %int2 : !torch.vtensor<[?,?,8],f32>, !torch.int -> !torch.vtensor<[?,?,8],f32>
  return %1 : !torch.vtensor<[?,?,8],f32>
}
