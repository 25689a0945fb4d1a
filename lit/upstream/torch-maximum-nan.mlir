// A torch-mlir bug (in IREE 3.13's importer) dync works around (dync-nan-extremes), pinned so
// that an upgrade that fixes it shows up here. `torch.aten.maximum(a, b)` lowers to
// `select(a > b, a, b)`: a NaN in `b` comes through, a NaN in `a` does not (PyTorch's maximum
// is NaN where either input is). A clamp lowers to selects on unordered comparisons that turn
// a NaN into the bound: clamp(NaN, -1, 1) is -1 (PyTorch's is NaN). With the mend all come
// through.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="3xf32=[NaN 1 2]" --input="3xf32=[0 NaN 1]" | FileCheck %s
// RUN: dync-opt %s --dync-nan-extremes | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.mended.vmfb
// RUN: iree-run-module --module=%t.mended.vmfb --device=local-sync --function=main --input="3xf32=[NaN 1 2]" --input="3xf32=[0 NaN 1]" | FileCheck %s --check-prefix=MENDED
// CHECK: 3xf32=0 NAN 2
// CHECK: 3xf32=-1 1 1
// MENDED: 3xf32=NAN NAN 2
// MENDED: 3xf32=NAN 1 1
func.func @main(%a: !torch.vtensor<[3],f32>, %b: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>) {
  %lo = torch.constant.float -1.0
  %hi = torch.constant.float 1.0
  %0 = torch.aten.maximum %a, %b : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %1 = torch.aten.clamp %a, %lo, %hi : !torch.vtensor<[3],f32>, !torch.float, !torch.float -> !torch.vtensor<[3],f32>
  return %0, %1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}
