// A torch-mlir bug (as bundled in IREE 3.13) dync works around (dync-collapse-views), pinned so
// that an upgrade that fixes it shows up here. `unflatten.int` of a dynamic dim into sizes
// `[b, -1, 16]`, `b` a value known only at run time (`x.reshape(b, -1, c)` after a flatten):
// the lowering reads past its input (here an out-of-range access; in a model, a result with 0
// rows). The same sizes with the -1 computed as `numel // (b * 16)` (what
// dync-collapse-views writes) give 2x4x16.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: not iree-run-module --module=%t.vmfb --device=local-sync --function=inferred --input=128xf32=1 --input=si64=2 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=computed --input=128xf32=1 --input=si64=2 | FileCheck %s
// BAD: OUT_OF_RANGE
// CHECK: 2x4x16xf32=
func.func @inferred(%arg0: !torch.vtensor<[?],f32>, %bt: !torch.vtensor<[],si64>) -> !torch.vtensor<[?,?,16],f32> {
  %int0 = torch.constant.int 0
  %int16 = torch.constant.int 16
  %int-1 = torch.constant.int -1
  %b = torch.aten.item %bt : !torch.vtensor<[],si64> -> !torch.int
  %l = torch.prim.ListConstruct %b, %int-1, %int16 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.unflatten.int %arg0, %int0, %l : !torch.vtensor<[?],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,16],f32>
  return %0 : !torch.vtensor<[?,?,16],f32>
}
func.func @computed(%arg0: !torch.vtensor<[?],f32>, %bt: !torch.vtensor<[],si64>) -> !torch.vtensor<[?,?,16],f32> {
  %int0 = torch.constant.int 0
  %int16 = torch.constant.int 16
  %b = torch.aten.item %bt : !torch.vtensor<[],si64> -> !torch.int
  %n = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?],f32>, !torch.int -> !torch.int
  %b16 = torch.aten.mul.int %b, %int16 : !torch.int, !torch.int -> !torch.int
  %k = torch.aten.floordiv.int %n, %b16 : !torch.int, !torch.int -> !torch.int
  %l = torch.prim.ListConstruct %b, %k, %int16 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.unflatten.int %arg0, %int0, %l : !torch.vtensor<[?],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[?,?,16],f32>
  return %0 : !torch.vtensor<[?,?,16],f32>
}
