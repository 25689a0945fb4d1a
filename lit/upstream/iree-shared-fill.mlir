// An IREE 3.13 miscompile dync works around (dync-distinct-fills), pinned so that an upgrade
// that fixes it shows up here. Two tensors of zeros of the input's dynamic shape, each
// written in place:
//     a = torch.zeros_like(x); a[:, 0] = x[:, 1]; b = torch.zeros_like(x); b[:, 0] = x[:, 2]
// IREE cannot make a dynamic fill a constant, so the two fills are one after CSE; copy-on-write
// gives each write a fill of its own, and the CSE that follows merges them again. Both
// writes land in one buffer: `a` comes back with `b`'s column and `b` all zeros. Filling from
// a value behind an optimization barrier of its own (dync-distinct-fills) keeps the fills
// apart.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="2x4xf32=[1 2 3 4][5 6 7 8]" | FileCheck %s
// RUN: dync-opt %s --dync-distinct-fills | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.distinct.vmfb
// RUN: iree-run-module --module=%t.distinct.vmfb --device=local-sync --function=main --input="2x4xf32=[1 2 3 4][5 6 7 8]" | FileCheck %s --check-prefix=DISTINCT
// CHECK: result[0]: hal.buffer_view
// CHECK-NEXT: 2x4xf32=[3 0 0 0][7 0 0 0]
// CHECK: result[1]: hal.buffer_view
// CHECK-NEXT: 2x4xf32=[0 0 0 0][0 0 0 0]
// DISTINCT: result[0]: hal.buffer_view
// DISTINCT-NEXT: 2x4xf32=[2 0 0 0][6 0 0 0]
// DISTINCT: result[1]: hal.buffer_view
// DISTINCT-NEXT: 2x4xf32=[3 0 0 0][7 0 0 0]
func.func @main(%x: !torch.vtensor<[?,4],f32>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %none = torch.constant.none
  %a = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[?,4],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
  %u = torch.aten.select.int %x, %int1, %int1 : !torch.vtensor<[?,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  %a1 = torch.aten.select_scatter %a, %u, %int1, %int0 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,4],f32>
  %b = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[?,4],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,4],f32>
  %v = torch.aten.select.int %x, %int1, %int2 : !torch.vtensor<[?,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  %b1 = torch.aten.select_scatter %b, %v, %int1, %int0 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,4],f32>
  return %a1, %b1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>
}
