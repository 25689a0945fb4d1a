// An IREE 3.13 miscompile dync works around (dync-copy-within), pinned so that an upgrade that
// fixes it shows up here. `r = x * 2; r[..., 1:] = r[..., :-1].clone()` (a shift right in
// place, as nucleus sampling writes it): IREE copies the source, a view of the destination,
// into the destination in place and forward, so every column takes the first one's value
// ([0 0 0 ...] for [0 2 4 ...], not [0 0 2 4 ...]). With the source behind an optimization
// barrier (dync-copy-within) it is copied out first and the shift is right.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="2x6xf32=[0 1 2 3 4 5][10 11 12 13 14 15]" | FileCheck %s
// RUN: dync-opt %s --dync-copy-within | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu -o %t.within.vmfb
// RUN: iree-run-module --module=%t.within.vmfb --device=local-sync --function=main --input="2x6xf32=[0 1 2 3 4 5][10 11 12 13 14 15]" | FileCheck %s --check-prefix=WITHIN
// CHECK: 2x6xf32=[0 0 0 0 0 0][20 20 20 20 20 20]
// WITHIN: 2x6xf32=[0 0 2 4 6 8][20 20 22 24 26 28]
func.func @main(%x: !torch.vtensor<[2,6],f32>) -> !torch.vtensor<[2,6],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int-1 = torch.constant.int -1
  %end = torch.constant.int 9223372036854775807
  %false = torch.constant.bool false
  %r = torch.aten.mul.Scalar %x, %int2 : !torch.vtensor<[2,6],f32>, !torch.int -> !torch.vtensor<[2,6],f32>
  %from = torch.aten.slice.Tensor %r, %int1, %int0, %int-1, %int1 : !torch.vtensor<[2,6],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,5],f32>
  %to = torch.aten.slice.Tensor %r, %int1, %int1, %end, %int1 : !torch.vtensor<[2,6],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,5],f32>
  %src = torch.aten.copy %to, %from, %false : !torch.vtensor<[2,5],f32>, !torch.vtensor<[2,5],f32>, !torch.bool -> !torch.vtensor<[2,5],f32>
  %shifted = torch.aten.slice_scatter %r, %src, %int1, %int1, %end, %int1 : !torch.vtensor<[2,6],f32>, !torch.vtensor<[2,5],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2,6],f32>
  return %shifted : !torch.vtensor<[2,6],f32>
}
