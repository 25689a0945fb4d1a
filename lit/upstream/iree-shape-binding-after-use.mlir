// An IREE 3.13 behaviour dync works around (dync-canonicalize), pinned so that an upgrade
// that changes it shows up here. IREE's torch input conversion replaces the uses of a value
// after its `torch.bind_symbolic_shape` by the bound value; a use *before* the binding is
// rewritten too and then reads a value defined after it: "operand #0 does not dominate this
// use". dync's passes could leave a sub-DNN argument's binding after its first use (the MoE
// of the suite, compiled for x86-64-v3). With the binding first, the same module compiles.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null 2>&1 | FileCheck %s
// RUN: sed -e '/LATE/d' -e 's|// EARLY ||' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null
// CHECK: operand #0 does not dominate this use
func.func @main(%arg0: !torch.vtensor<[?,32],f32>) -> !torch.vtensor<[?,32],f32> {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.symbolic_int "s0" {min_val = 2, max_val = 64} : !torch.int
  // EARLY torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 32)> : !torch.vtensor<[?,32],f32>
  %1 = torch.aten.zeros_like %arg0, %none, %none, %none, %false, %none : !torch.vtensor<[?,32],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,32],f32>
  torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 32)> : !torch.vtensor<[?,32],f32> // LATE
  torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (s0, 32)> : !torch.vtensor<[?,32],f32>
  return %1 : !torch.vtensor<[?,32],f32>
}
