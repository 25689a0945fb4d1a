// An IREE 3.13 bug dync works around (its attention decomposition,
// dync/frontends/pytorch/decompositions.py), pinned so that an upgrade that fixes it shows up
// here. A reduction over a dynamic dim (the row maximum of attention scores over a dynamic
// sequence, which tells rows a mask leaves empty), fused with its consumer into the packing
// of the left operand of a data-tiled matmul, fails in code generation with either data-tiling
// flag (a delinearization basis of [8, ?, 0] in the pack's tiling). A direct strided
// convolution over a dynamic batch packed for the next matmul fails with the same message
// (dync/api/iree.py). Zeroing the empty rows after the product instead compiles (the
// reduction no longer feeds the pack); so does a static reduced dim.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=znver4 --iree-opt-data-tiling -o /dev/null 2>&1 | FileCheck %s
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=znver4 --iree-global-opt-data-tiling -o /dev/null 2>&1 | FileCheck %s
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=znver4 -o /dev/null
// RUN: sed -e 's/func.func @main(/func.func private @main(/' -e 's/func.func private @after_product(/func.func @after_product(/' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=znver4 --iree-opt-data-tiling -o /dev/null
// CHECK: error: 'affine.delinearize_index' op no basis element may be statically non-positive
func.func @main(%scores: !torch.vtensor<[8,?,?],f32>, %v: !torch.vtensor<[8,?,64],f32>) -> !torch.vtensor<[8,?,64],f32> {
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %ninf = torch.constant.float 0xFFF0000000000000
  %zero = torch.constant.float 0.000000e+00
  %last = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %max = torch.aten.amax %scores, %last, %true : !torch.vtensor<[8,?,?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[8,?,1],f32>
  %empty = torch.aten.eq.Scalar %max, %ninf : !torch.vtensor<[8,?,1],f32>, !torch.float -> !torch.vtensor<[8,?,1],i1>
  %p = torch.aten.masked_fill.Scalar %scores, %empty, %zero : !torch.vtensor<[8,?,?],f32>, !torch.vtensor<[8,?,1],i1>, !torch.float -> !torch.vtensor<[8,?,?],f32>
  %o = torch.aten.bmm %p, %v : !torch.vtensor<[8,?,?],f32>, !torch.vtensor<[8,?,64],f32> -> !torch.vtensor<[8,?,64],f32>
  return %o : !torch.vtensor<[8,?,64],f32>
}
func.func private @after_product(%scores: !torch.vtensor<[8,?,?],f32>, %v: !torch.vtensor<[8,?,64],f32>) -> !torch.vtensor<[8,?,64],f32> {
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %ninf = torch.constant.float 0xFFF0000000000000
  %zero = torch.constant.float 0.000000e+00
  %last = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %max = torch.aten.amax %scores, %last, %true : !torch.vtensor<[8,?,?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[8,?,1],f32>
  %empty = torch.aten.eq.Scalar %max, %ninf : !torch.vtensor<[8,?,1],f32>, !torch.float -> !torch.vtensor<[8,?,1],i1>
  %o = torch.aten.bmm %scores, %v : !torch.vtensor<[8,?,?],f32>, !torch.vtensor<[8,?,64],f32> -> !torch.vtensor<[8,?,64],f32>
  %p = torch.aten.masked_fill.Scalar %o, %empty, %zero : !torch.vtensor<[8,?,64],f32>, !torch.vtensor<[8,?,1],i1>, !torch.float -> !torch.vtensor<[8,?,64],f32>
  return %p : !torch.vtensor<[8,?,64],f32>
}
