// An IREE 3.13 miscompile dync works around (dync-pack-sort-keys), pinned so that an upgrade
// that fixes it shows up here. Two top-k over a dynamic batch, of x and of -x:
//     i0 = torch.topk(x, 3, dim=1).indices; i1 = torch.topk(-x, 3, dim=1).indices
// Each sort's indices start as an iota that the sort permutes in place. The two iotas are one
// dispatch after CSE; copy-on-write gives each sort a dispatch of its own, and the CSE that
// follows (after the async copies are elided) merges them again. The second sort then starts
// from the first one's permutation [7 6 5 4 3 2 1 0] and returns [7 6 5] where eager returns
// [0 1 2]. Only an iota hoisted into a constant escapes (static shapes, outside any branch or
// loop). Sorting int64 keys that carry the index (dync-pack-sort-keys) needs no iota's
// contents, and both results are right.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="1x8xf32=[0 1 2 3 4 5 6 7]" | FileCheck %s
// RUN: dync-opt %s --dync-pack-sort-keys | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.keys.vmfb
// RUN: iree-run-module --module=%t.keys.vmfb --device=local-sync --function=main --input="1x8xf32=[0 1 2 3 4 5 6 7]" | FileCheck %s --check-prefix=KEYS
// CHECK: result[0]: hal.buffer_view
// CHECK-NEXT: 1x3xi64=[7 6 5]
// CHECK: result[1]: hal.buffer_view
// CHECK-NEXT: 1x3xi64=[7 6 5]
// KEYS: result[0]: hal.buffer_view
// KEYS-NEXT: 1x3xi64=[7 6 5]
// KEYS: result[1]: hal.buffer_view
// KEYS-NEXT: 1x3xi64=[0 1 2]
func.func @main(%x: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>) {
  %int3 = torch.constant.int 3
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %float-1 = torch.constant.float -1.000000e+00
  %v0, %i0 = torch.aten.topk %x, %int3, %int1, %true, %true : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[?,3],f32>, !torch.vtensor<[?,3],si64>
  %neg = torch.aten.mul.Scalar %x, %float-1 : !torch.vtensor<[?,8],f32>, !torch.float -> !torch.vtensor<[?,8],f32>
  %v1, %i1 = torch.aten.topk %neg, %int3, %int1, %true, %true : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[?,3],f32>, !torch.vtensor<[?,3],si64>
  return %i0, %i1 : !torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],si64>
}
