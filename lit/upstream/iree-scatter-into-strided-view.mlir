// An IREE 3.13 failure dync works around (dync-strided-views), pinned so that an upgrade that
// fixes it shows up here. Rows of a column written at indices and the column put back
// (`z = x * 3; z[..., 0][i] = -1`: an `index_put` into a `select.int` of the last dim, then a
// `select_scatter`) do not compile for the CPU: IREE folds the column into the scatter's
// dispatch as a store with strides, and refuses the write. With the column taken through a
// fence (what the pass writes), the scatter writes a contiguous copy; it compiles and writes
// the right elements.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb 2>&1 | FileCheck %s
// RUN: dync-opt %s --dync-strided-views | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.fenced.vmfb
// RUN: iree-run-module --module=%t.fenced.vmfb --device=local-sync --function=main --input="3x2x2xf32=[[1 2][3 4]][[5 6][7 8]][[9 10][11 12]]" --input="2xi64=2 0" | FileCheck %s --check-prefix=FENCED
// CHECK: write affecting operations on global resources are restricted to workgroup distributed contexts
// FENCED: 3x2x2xf32={{\[\[}}-1 6][-1 12]]{{\[\[}}15 18][21 24]]{{\[\[}}-1 30][-1 36]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @main(%x: !torch.vtensor<[?,2,2],f32>, %i: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?,2,2],f32> {
    %int0 = torch.constant.int 0
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %false = torch.constant.bool false
    %z = torch.aten.mul.Scalar %x, %int3 : !torch.vtensor<[?,2,2],f32>, !torch.int -> !torch.vtensor<[?,2,2],f32>
    %column = torch.aten.select.int %z, %int2, %int0 : !torch.vtensor<[?,2,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,2],f32>
    %value = torch.vtensor.literal(dense<-1.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
    %indices = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %written = torch.aten.index_put %column, %indices, %value, %false : !torch.vtensor<[?,2],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[?,2],f32>
    %r = torch.aten.select_scatter %z, %written, %int2, %int0 : !torch.vtensor<[?,2,2],f32>, !torch.vtensor<[?,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,2,2],f32>
    return %r : !torch.vtensor<[?,2,2],f32>
  }
}
