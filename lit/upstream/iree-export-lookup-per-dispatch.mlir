// An IREE 3.13 cost dync mends (dync/iree_mends.py), pinned so that an upgrade that changes it
// shows up here. A dispatch over a dynamic shape is recorded into a command buffer at every call
// (only static ones are memoized), and IREE resolves its function at every recording, in the
// function body: hal.executable.lookup.function, a linear scan over the names of every export
// of the linked executable. One bucket version of yolo_nms ran 0.87 ms alone in a module and
// 1.96 ms among 16 versions (2054 exports; strlen and memcmp took half of the time; AVX2
// machine). The mend, at the vm phase (`python -m dync.iree_mends vm`), looks each export up
// once in the initializer, right after the executable is created, into a global of its own, and
// the body loads it; a mend at the flow phase gave wrong answers (IREE then merged branch tails
// that differed only in those ids; tests/test_runtime_results.py).
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=hal -o %t.hal.mlir
// RUN: FileCheck %s --check-prefix=PER-CALL < %t.hal.mlir
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="3xf32=[1 2 3]" | FileCheck %s
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=vm -o %t.vm.mlir
// RUN: %PYTHON -m dync.iree_mends vm < %t.vm.mlir > %t.mended.mlir
// RUN: FileCheck %s --check-prefix=MENDED < %t.mended.mlir
// RUN: iree-compile %t.mended.mlir --compile-from=vm --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu -o %t.mended.vmfb
// RUN: iree-run-module --module=%t.mended.vmfb --device=local-sync --function=main --input="3xf32=[1 2 3]" | FileCheck %s
// PER-CALL-LABEL: util.func public @main
// PER-CALL:         hal.executable.lookup.function
// PER-CALL:         hal.command_buffer.dispatch
// MENDED:       vm.global.i64 private mutable @[[ID:__dync_export_id_0]] : i64
// MENDED-LABEL: vm.func private @main$async
// MENDED-NOT:     hal.executable.lookup.function
// MENDED:         %[[LOADED:.+]] = vm.global.load.i64 @[[ID]] : i64
// MENDED:         vm.call.variadic @hal.command_buffer.dispatch(%{{[^,]+}}, %{{[^,]+}}, %[[LOADED]],
// MENDED-LABEL: vm.func private @__init
// MENDED:         %[[EXE:.+]] = vm.call @hal.executable.create
// MENDED:         vm.global.store.ref %[[EXE]], @[[EXE_GLOBAL:[^ ]+]] :
// MENDED-NEXT:    %[[NAME:.+]] = vm.const.ref.rodata @{{.+}} : !vm.buffer
// MENDED-NEXT:    %[[ONCE:.+]] = vm.call @hal.executable.lookup.function(%[[EXE]], %[[NAME]])
// MENDED-NEXT:    vm.global.store.i64 %[[ONCE]], @[[ID]] : i64
// CHECK: 3xf32=3 5 7
func.func @main(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.0
  %0 = torch.aten.mul.Scalar %x, %float2 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],f32>
  %1 = torch.aten.add.Scalar %0, %int1, %int1 : !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  return %1 : !torch.vtensor<[?],f32>
}
