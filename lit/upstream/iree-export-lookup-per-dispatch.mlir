// An IREE 3.13 cost, pinned so that an upgrade that changes it shows up here. A dispatch over
// a dynamic shape is recorded into a command buffer at every call (only static ones are
// memoized), and IREE resolves its function at every recording, in the function body:
// hal.executable.lookup.function, a linear scan over the names of every export of the linked
// executable. One bucket version of yolo_nms ran 0.87 ms alone in a module and 1.96 ms among 16
// versions (2054 exports; strlen and memcmp took half of the time; AVX2 machine). Not mended: a
// mend that set each lookup once into a global gave wrong answers (IREE then merged branch tails
// that differed only in those ids, and the branch into the merged block copied its registers in
// an unsafe order; dync/iree_mends.py).
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=hal -o %t.hal.mlir
// RUN: FileCheck %s --check-prefix=PER-CALL < %t.hal.mlir
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="3xf32=[1 2 3]" | FileCheck %s
// PER-CALL-LABEL: util.func public @main
// PER-CALL:         hal.executable.lookup.function
// PER-CALL:         hal.command_buffer.dispatch
// CHECK: 3xf32=3 5 7
func.func @main(%x: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.0
  %0 = torch.aten.mul.Scalar %x, %float2 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],f32>
  %1 = torch.aten.add.Scalar %0, %int1, %int1 : !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  return %1 : !torch.vtensor<[?],f32>
}
