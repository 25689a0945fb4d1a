// An IREE 3.13 bug dync works around (`dync-pool-extents`), pinned so that an upgrade that
// fixes it shows up here. A max pool whose output has one element along an axis and whose
// input has more elements along it than that window reads (a 3-row image pooled by 2 with
// stride 2: row 2 is in no window) fails to compile: the unit output dim is folded out and
// the window taken to span the input's whole extent. The same pool of the first two rows
// (what the pass hands IREE) compiles and is right.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAILS
// FAILS: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 3, but found 2
// RUN: sed -e 's/\[1,1,3,4\]/[1,1,2,4]/g' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="1x1x2x4xf32=[[[1 5 2 0][3 4 8 7]]]" | FileCheck %s
// CHECK: 1x1x1x2xf32=[[[5 8]]]
func.func @main(%x: !torch.vtensor<[1,1,3,4],f32>) -> !torch.vtensor<[1,1,1,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.max_pool2d %x, %k, %k, %p, %d, %false : !torch.vtensor<[1,1,3,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,1,2],f32>
  return %0 : !torch.vtensor<[1,1,1,2],f32>
}
