// An IREE 3.13 failure dync works around (dync-strided-views), pinned so that an upgrade
// that fixes it shows up here. A gather from a column of a tensor computed in the graph
// (`y = (x * 1.5).round(); y[:, 1][i], y.sum()`, the indices checked in bounds on the host
// first, as `dync-check-indices` writes for every gather) does not compile for the CPU:
// IREE folds the column into the gather's dispatch as a load with strides and vectorizes
// the gather to a `vector.gather` from a memref whose innermost stride is 3, which its LLVM
// lowering leaves as an `unrealized_conversion_cast`. With the column read through a fence
// (what the pass writes), the gather reads a contiguous copy; it compiles and gathers the
// right elements.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb 2>&1 | FileCheck %s
// RUN: dync-opt %s --dync-strided-views | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.fenced.vmfb
// RUN: iree-run-module --module=%t.fenced.vmfb --device=local-sync --function=main --input="4x3xf32=[0 1 2][3 4 5][6 7 8][9 10 11]" --input="5xi64=3 0 -1 1 1" | FileCheck %s --check-prefix=FENCED
// CHECK: LLVM Translation failed for operation: builtin.unrealized_conversion_cast
// FENCED: 5xf32=15 2 15 6 6
// FENCED: f32=99
module attributes {dync.backend = "llvm-cpu"} {
  func.func @main(%x: !torch.vtensor<[?,3],f32>, %i: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[],f32>) {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %none = torch.constant.none
    %float = torch.constant.float 1.500000e+00
    %z = torch.aten.mul.Scalar %x, %float : !torch.vtensor<[?,3],f32>, !torch.float -> !torch.vtensor<[?,3],f32>
    %y = torch.aten.round %z : !torch.vtensor<[?,3],f32> -> !torch.vtensor<[?,3],f32>
    %column = torch.aten.select.int %y, %int1, %int1 : !torch.vtensor<[?,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
    %n = torch.aten.size.int %column, %int0 : !torch.vtensor<[?],f32>, !torch.int -> !torch.int
    %minus_n = torch.aten.neg.int %n : !torch.int -> !torch.int
    %below = torch.aten.lt.Scalar %i, %minus_n : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
    %above = torch.aten.ge.Scalar %i, %n : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
    %outside = torch.aten.logical_or %below, %above : !torch.vtensor<[?],i1>, !torch.vtensor<[?],i1> -> !torch.vtensor<[?],i1>
    %any = torch.aten.any %outside : !torch.vtensor<[?],i1> -> !torch.vtensor<[],i1>
    %j = torch.aten.where.ScalarSelf %outside, %int0, %i : !torch.vtensor<[?],i1>, !torch.int, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
    %indices = torch.prim.ListConstruct %j : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %g = torch.aten.index.Tensor %column, %indices : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
    %s = torch.aten.sum %y, %none : !torch.vtensor<[?,3],f32>, !torch.none -> !torch.vtensor<[],f32>
    %inside = torch.aten.logical_not %any : !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %ok = torch.aten.Bool.Tensor %inside : !torch.vtensor<[],i1> -> !torch.bool
    torch.runtime.assert %ok, "an index outside [-n, n)"
    return %g, %s : !torch.vtensor<[?],f32>, !torch.vtensor<[],f32>
  }
}
