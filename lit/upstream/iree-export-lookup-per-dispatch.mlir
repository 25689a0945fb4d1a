// An IREE 3.13 cost dync works around (dync/iree_mends.py), pinned so that an upgrade that
// changes it shows up here. A dispatch over a dynamic shape is recorded into a command buffer
// at every call (only static ones are memoized), and IREE resolves its function at every
// recording, in the function body: hal.executable.lookup.function, a linear scan over the
// names of every export of the linked executable. One bucket version of yolo_nms ran 0.87 ms
// alone in a module and 1.96 ms among 16 versions (2054 exports; strlen and memcmp took half
// of the time). At the hal phase (python -m dync.iree_mends hal) each lookup a function body
// makes becomes a global that an initializer right after the executable's own sets once; the module
// still computes the same.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=hal -o %t.hal.mlir
// RUN: FileCheck %s --check-prefix=PER-CALL < %t.hal.mlir
// RUN: %PYTHON -m dync.iree_mends hal < %t.hal.mlir > %t.mended.mlir
// RUN: FileCheck %s --check-prefix=ONCE < %t.mended.mlir
// RUN: iree-compile %t.mended.mlir --compile-from=hal --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="3xf32=[1 2 3]" | FileCheck %s
// PER-CALL-LABEL: util.func public @main
// PER-CALL:         hal.executable.lookup.function
// PER-CALL:         hal.command_buffer.dispatch
// ONCE:       util.global private @__dync_function_id_0 : i64
// ONCE:         hal.executable.create
// ONCE:       util.initializer {
// ONCE-NEXT:    %[[EXE:.+]] = util.global.load @__device_0_executable_0
// ONCE-NEXT:    %[[FOUND:.+]] = hal.executable.lookup.function target(%[[EXE]]
// ONCE-NEXT:    util.global.store %[[FOUND]], @__dync_function_id_0 : i64
// ONCE-NEXT:    util.return
// ONCE-LABEL: util.func public @main
// ONCE-NOT:     hal.executable.lookup.function
// ONCE:         %[[ID:.+]] = util.global.load immutable @__dync_function_id_0 : i64
// ONCE:         hal.command_buffer.dispatch{{.*}}[%[[ID]]]
// CHECK: 3xf32=3 5 7
func.func @main(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.0
  %0 = torch.aten.mul.Scalar %x, %float2 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],f32>
  %1 = torch.aten.add.Scalar %0, %int1, %int1 : !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  return %1 : !torch.vtensor<[?],f32>
}
