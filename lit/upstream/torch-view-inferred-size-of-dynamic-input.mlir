// A torch-mlir bug (in IREE 3.13's torch input conversion) dync works around, pinned so that
// an upgrade that fixes it shows up here. A view of a 1-D tensor of dynamic length as
// `(-1, n)` with `n` dynamic too (`x.masked_select(m).view(-1, x.shape[1])`) keeps the `-1`
// as a size, which IREE refuses once a dispatch reads the view; written out as `length // n` it compiles.
// `frontends/pytorch/inferred_view_sizes.py` writes such sizes out when the input's length
// comes from the data.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null 2>&1 | FileCheck %s
// RUN: sed 's/%inferred = torch.constant.int -1/%inferred = torch.aten.floordiv.int %length, %n : !torch.int, !torch.int -> !torch.int/' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null
// CHECK: expected sizes to be non-negative, but got -1
func.func @main(%x: !torch.vtensor<[?],f32>, %n: !torch.int) -> !torch.vtensor<[?],f32> {
  %int0 = torch.constant.int 0
  %length = torch.aten.size.int %x, %int0 : !torch.vtensor<[?],f32>, !torch.int -> !torch.int
  %false = torch.constant.bool false
  %none = torch.constant.none
  %inferred = torch.constant.int -1
  %sizes = torch.prim.ListConstruct %inferred, %n : (!torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %x, %sizes : !torch.vtensor<[?],f32>, !torch.list<int> -> !torch.vtensor<[?,?],f32>
  %dims = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
  %s = torch.aten.sum.dim_IntList %v, %dims, %false, %none : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
  return %s : !torch.vtensor<[?],f32>
}
