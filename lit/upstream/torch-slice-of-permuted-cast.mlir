// A torch-mlir bug (in IREE 3.13's importer) dync works around (dync-im2col), pinned so that
// an upgrade that fixes it shows up here. A slice of a permute of a
// `torch.tensor_static_info_cast` that makes a static dim dynamic (dync-loop-batch's
// per-sample bodies read their arguments so) lowers to a `linalg.generic` whose init keeps
// the static dim and whose result does not. The same with the cast after the permute (what
// dync-im2col builds) compiles.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null 2>&1 | FileCheck %s
// RUN: sed -e 's/^ *%1 = .*//' -e 's|//ALT||' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null
// CHECK: error: 'linalg.generic' op expected type of operand #1 ('tensor<1x4x4x8xf32>') to match type of corresponding result ('tensor<?x4x4x8xf32>')
func.func @main(%arg0: !torch.vtensor<[1,8,4,4],f32>) -> !torch.vtensor<[?,4,4,8],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %p = torch.prim.ListConstruct %int0, %int2, %int3, %int1 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[1,8,4,4],f32> to !torch.vtensor<[?,8,4,4],f32>
  %1 = torch.aten.permute %0, %p : !torch.vtensor<[?,8,4,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4,4,8],f32>
  //ALT %q = torch.aten.permute %arg0, %p : !torch.vtensor<[1,8,4,4],f32>, !torch.list<int> -> !torch.vtensor<[1,4,4,8],f32>
  //ALT %1 = torch.tensor_static_info_cast %q : !torch.vtensor<[1,4,4,8],f32> to !torch.vtensor<[?,4,4,8],f32>
  %2 = torch.aten.slice.Tensor %1, %int1, %int0, %int4, %int1 : !torch.vtensor<[?,4,4,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,4,4,8],f32>
  return %2 : !torch.vtensor<[?,4,4,8],f32>
}
