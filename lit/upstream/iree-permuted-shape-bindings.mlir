// An IREE 3.13 limitation dync works around (dync-canonicalize), pinned so that an upgrade
// that lifts it shows up here. Two `torch.bind_symbolic_shape` of one value that state the
// same dims with their symbols in another order are "conflicting" to IREE's torch input
// conversion; dync's sub-DNN splitting left such pairs in while loops that carry a tensor with
// several dynamic dims (22 of the 250 programs of the first fuzzing campaign fell back to
// host mode on it). With one of the two bindings, the same module compiles.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null 2>&1 | FileCheck %s
// RUN: sed '/PERMUTED/d' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null
// CHECK: conflicting symbolic shape bindings for the same value
func.func @main(%arg0: !torch.vtensor<[?,4,?],f32>) -> !torch.vtensor<[?,4,?],f32> {
  %0 = torch.symbolic_int "s0" {min_val = 1, max_val = 16} : !torch.int
  %1 = torch.symbolic_int "s1" {min_val = 8, max_val = 64} : !torch.int
  torch.bind_symbolic_shape %arg0, [%0, %1], affine_map<()[s0, s1] -> (s0, 4, s1)> : !torch.vtensor<[?,4,?],f32>
  torch.bind_symbolic_shape %arg0, [%1, %0], affine_map<()[s0, s1] -> (s1, 4, s0)> : !torch.vtensor<[?,4,?],f32> // PERMUTED
  %2 = torch.aten.relu %arg0 : !torch.vtensor<[?,4,?],f32> -> !torch.vtensor<[?,4,?],f32>
  torch.bind_symbolic_shape %2, [%0, %1], affine_map<()[s0, s1] -> (s0, 4, s1)> : !torch.vtensor<[?,4,?],f32>
  return %2 : !torch.vtensor<[?,4,?],f32>
}
