// A wrong value in IREE 3.13's torch-mlir that dync works around (dync-int-division), pinned
// so that an upgrade that fixes it shows up here. An integer floor division is lowered through
// f32 (sitofp, divf, floor, fptosi): exact only while |x| stays under 2**24.
// (2**40 + 12345) // 7 is 157073091445; IREE gives 157073096704. The truncating division
// dync builds it from is arith.divsi, exact.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="2xi64=[1099511640121 -7]" --input="2xi64=[7 2]" | FileCheck %s
// RUN: dync-opt %s --dync-int-division | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.exact.vmfb
// RUN: iree-run-module --module=%t.exact.vmfb --device=local-sync --function=main --input="2xi64=[1099511640121 -7]" --input="2xi64=[7 2]" | FileCheck %s --check-prefix=EXACT
// CHECK: 2xi64=157073096704 -4
// EXACT: 2xi64=157073091445 -4
func.func @main(%x: !torch.vtensor<[2],si64>, %y: !torch.vtensor<[2],si64>) -> !torch.vtensor<[2],si64> {
  %0 = torch.aten.floor_divide %x, %y : !torch.vtensor<[2],si64>, !torch.vtensor<[2],si64> -> !torch.vtensor<[2],si64>
  return %0 : !torch.vtensor<[2],si64>
}
