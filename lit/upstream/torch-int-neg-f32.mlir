// A wrong value in IREE 3.13's torch-mlir that dync works around (dync-int-negation), pinned
// so that an upgrade that fixes it shows up here. An integer tensor is negated through f32
// (sitofp, negf, fptosi): exact only while |x| stays under 2**24.
// -2000000001 and -16777217 come out -2000000000 and -16777216. A multiplication by -1
// (arith.muli) is exact.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="3xi32=[2000000001 16777217 -5]" | FileCheck %s
// RUN: dync-opt %s --dync-int-negation | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.exact.vmfb
// RUN: iree-run-module --module=%t.exact.vmfb --device=local-sync --function=main --input="3xi32=[2000000001 16777217 -5]" | FileCheck %s --check-prefix=EXACT
// CHECK: 3xi32=-2000000000 -16777216 5
// EXACT: 3xi32=-2000000001 -16777217 5
func.func @main(%x: !torch.vtensor<[3],si32>) -> !torch.vtensor<[3],si32> {
  %0 = torch.aten.neg %x : !torch.vtensor<[3],si32> -> !torch.vtensor<[3],si32>
  return %0 : !torch.vtensor<[3],si32>
}
