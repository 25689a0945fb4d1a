// A crash in IREE 3.13's torch-mlir that dync works around (dync-widen-int8), pinned so that
// an upgrade that fixes it shows up here. An int8 tensor times an int scalar does not lower:
// "unimplemented: for conversion to byte or char type dstOriginalDtype has to be passed to
// convertScalarToDtype", then the compiler crashes (the first RUN line passes while
// iree-compile fails) (the same for `-`, `%`, `//`, `fmod` and the
// whole-tensor `max`/`min` of int8 and uint8). In int32 and back it compiles, and wraps as
// eager does: 100 * 3 = 300 is 44 in int8.
// RUN: %PYTHON -c "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode == 0)" iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb 2>&1 | FileCheck %s
// RUN: dync-opt %s --dync-widen-int8 | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.wide.vmfb
// RUN: iree-run-module --module=%t.wide.vmfb --device=local-sync --function=main --input="4xi8=[100 -100 7 -128]" | FileCheck %s --check-prefix=WIDE
// CHECK: dstOriginalDtype has to be passed to convertScalarToDtype
// WIDE: 4xi8=44 -44 21 -128
func.func @main(%x: !torch.vtensor<[?],si8>) -> !torch.vtensor<[?],si8> {
  %int3 = torch.constant.int 3
  %0 = torch.aten.mul.Scalar %x, %int3 : !torch.vtensor<[?],si8>, !torch.int -> !torch.vtensor<[?],si8>
  return %0 : !torch.vtensor<[?],si8>
}
