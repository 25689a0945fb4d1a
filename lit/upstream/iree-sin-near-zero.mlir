// A wrong value in IREE 3.13 that dync works around (dync-near-zero), pinned so that an
// upgrade that fixes it shows up here. On the CPU, sin and sinh of f32 are accurate to about
// 1e-7 absolute near 0, not relative: sin(-1e-8) comes out +6.2e-8, sin(-1e-4) -9.99414e-5,
// sinh(-1e-8) 0 and sinh(1e-6) 9.83477e-7. dync's series near 0 gives them to the last digit.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="4xf32=[-1e-8 1e-6 -0.0001 0.001]" | FileCheck %s
// RUN: dync-opt %s --dync-near-zero | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.near.vmfb
// RUN: iree-run-module --module=%t.near.vmfb --device=local-sync --function=main --input="4xf32=[-1e-8 1e-6 -0.0001 0.001]" | FileCheck %s --check-prefix=NEAR
// CHECK: 4xf32=6.22985E-08 1E-06 -9.99414E-05 0.001
// CHECK: 4xf32=0 9.83477E-07 -0.000100017 0.00100002
// NEAR: 4xf32=-1E-08 1E-06 -0.0001 0.001
// NEAR: 4xf32=-1E-08 1E-06 -0.0001 0.001
func.func @main(%x: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>) {
  %0 = torch.aten.sin %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %1 = torch.aten.sinh %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}
