// An IREE 3.13 compile failure dync works around (dync/iree_mends.py), pinned so that an upgrade
// that fixes it shows up here. The module is what dync hands IREE for
//     picked = h[h.mean(1) > 0.05]; h = h + 0.1 * picked.sum(0, keepdim=True)
//     for i in range(3):
//         picked = h[h.mean(1) > 0.3]; h = h + 0.1 * picked.sum(0, keepdim=True)
//         if h.sum() > 0.9: break
// over a dynamic batch (the loop unrolled into nested `scf.if`s). Each compaction scatters
// `arange(n)`: a dispatch that reads no tensor, which IREE's CSE merges into one at the top and
// whose result the nested regions read. Stream partitioning clones such a generator into each
// partition of its own block that reads it, but leaves the original, still read by the regions'
// partitions, outside every execution region: "streamable op expected to be in an execution
// region" (7 of 150 fresh fuzz programs). dync's flow-phase mend gives each block that reads it
// a copy of its own, whose workload passes through a barrier of its own (so that no later CSE
// merges the copies again); the module then compiles and computes eager's values.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=BUG
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=flow -o %t.flow.mlir
// RUN: %PYTHON -m dync.iree_mends flow < %t.flow.mlir | FileCheck %s --check-prefix=FLOW
// RUN: %PYTHON -m dync.iree_mends flow < %t.flow.mlir | iree-compile - --compile-from=flow --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.mended.vmfb
// RUN: iree-run-module --module=%t.mended.vmfb --device=local-sync --function=main --input=6x4xf32=0.5 | FileCheck %s --check-prefix=BREAKS
// RUN: iree-run-module --module=%t.mended.vmfb --device=local-sync --function=main --input=3x4xf32=0.01 | FileCheck %s --check-prefix=RUNS-ON
// BUG: error: 'stream.async.dispatch' op : streamable op expected to be in an execution region
// FLOW: flow.dispatch @[[GEN:.+_elementwise_broadcast_D_i64]][%[[TOP:.+]]](%[[TOP]]) : (index)
// FLOW: scf.if
// FLOW: %[[B:.+]] = util.optimization_barrier %[[TOP]] : index
// FLOW: flow.dispatch @[[GEN]][%[[B]]](%[[B]]) : (index)
// BREAKS: 6x4xf32=[1.28 1.28 1.28 1.28][1.28 1.28 1.28 1.28][1.28 1.28 1.28 1.28][1.28 1.28 1.28 1.28][1.28 1.28 1.28 1.28][1.28 1.28 1.28 1.28]
// RUNS-ON: 3x4xf32=[0.01 0.01 0.01 0.01][0.01 0.01 0.01 0.01][0.01 0.01 0.01 0.01]
module {
  func.func @main(%arg0: !torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) -> (!torch.vtensor<[?,4],f32> {dync.shape = ["n", 4]}) {
    %0 = torch.symbolic_int "n" {min_val = 1, max_val = 64} : !torch.int
    %1 = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
    %2 = torch.symbolic_int "u1" {min_val = 0, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %int0 = torch.constant.int 0
    %3 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.int
    %int0_0 = torch.constant.int 0
    %4 = torch_c.to_i64 %int0_0
    %5 = util.optimization_barrier %4 : i64
    %6 = torch_c.from_i64 %5
    %int0_1 = torch.constant.int 0
    %7 = torch_c.to_i64 %int0_1
    %8 = util.optimization_barrier %7 : i64
    %9 = torch_c.from_i64 %8
    %10 = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
    %11 = torch.symbolic_int "u1" {min_val = 0, max_val = 64} : !torch.int
    %int0_2 = torch.constant.int 0
    %12 = torch.aten.size.int %arg0, %int0_2 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.int
    %int1 = torch.constant.int 1
    %13 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %false = torch.constant.bool false
    %none = torch.constant.none
    %14 = torch.aten.mean.dim %arg0, %13, %false, %none : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %14, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
    %float5.000000e-02 = torch.constant.float 5.000000e-02
    %15 = torch.aten.gt.Scalar %14, %float5.000000e-02 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],i1>
    torch.bind_symbolic_shape %15, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
    %int-1 = torch.constant.int -1
    %int4 = torch.constant.int 4
    %16 = torch.prim.ListConstruct %int-1, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
    %17 = torch.aten.view %arg0, %16 : !torch.vtensor<[?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %17, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %18 = torch.aten.ne.Scalar %15, %int0_2 : !torch.vtensor<[?],i1>, !torch.int -> !torch.vtensor<[?],i1>
    torch.bind_symbolic_shape %18, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
    %cpu = torch.constant.device "cpu"
    %19 = torch.aten.arange %12, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %19, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %20 = torch.aten.cumsum %18, %int0_2, %none : !torch.vtensor<[?],i1>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %20, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %21 = torch.aten.sub.Scalar %20, %int1, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %21, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %22 = torch.aten.sub.int %12, %int1 : !torch.int, !torch.int -> !torch.int
    %23 = torch.aten.clamp %21, %int0_2, %22 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %23, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %24 = torch.aten.where.ScalarOther %18, %23, %22 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %24, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %25 = torch.prim.ListConstruct %24 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %true = torch.constant.bool true
    %26 = torch.aten.full_like %19, %9, %none, %none, %none, %false, %none : !torch.vtensor<[?],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?],si64>
    %27 = torch_c.to_builtin_tensor %19 : !torch.vtensor<[?],si64> -> tensor<?xi64>
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %27, %c0 : tensor<?xi64>
    %28 = iree_tensor_ext.compute_barrier.start %27 : tensor<?xi64>{%dim} -> tensor<?xi64>
    %29 = torch_c.from_builtin_tensor %28 : tensor<?xi64> -> !torch.vtensor<[?],si64>
    %30 = torch.aten.index_put %26, %25, %29, %true : !torch.vtensor<[?],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],si64>, !torch.bool -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %30, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %31 = torch.aten.sum %18, %none : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
    %32 = torch.aten.item %31 : !torch.vtensor<[],si64> -> !torch.int
    %33 = torch.aten.ge.int %32, %int0_2 : !torch.int, !torch.int -> !torch.bool
    %34 = torch.aten.Int.bool %33 : !torch.bool -> !torch.int
    %str = torch.constant.str "Runtime assertion failed for expression u0 >= 0 on node 'ge_4'"
    torch.aten._assert_scalar %34, %str : !torch.int, !torch.str
    %int64 = torch.constant.int 64
    %35 = torch.aten.le.int %32, %int64 : !torch.int, !torch.int -> !torch.bool
    %36 = torch.aten.Int.bool %35 : !torch.bool -> !torch.int
    %str_3 = torch.constant.str "Runtime assertion failed for expression u0 <= 64 on node 'le_5'"
    torch.aten._assert_scalar %36, %str_3 : !torch.int, !torch.str
    %37 = torch.aten.slice.Tensor %30, %int0_2, %int0_2, %32, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %37, [%10], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %38 = torch.aten.clamp %37, %int0_2, %22 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %38, [%10], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %39 = torch.prim.ListConstruct %38 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %40 = torch.aten.index.Tensor %17, %39 : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %40, [%10], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %41 = torch.prim.ListConstruct %int0_2 : (!torch.int) -> !torch.list<int>
    %42 = torch.aten.sum.dim_IntList %40, %41, %true, %none : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,4],f32>
    %float1.000000e-01 = torch.constant.float 1.000000e-01
    %43 = torch.aten.mul.Scalar %42, %float1.000000e-01 : !torch.vtensor<[1,4],f32>, !torch.float -> !torch.vtensor<[1,4],f32>
    %44 = torch.aten.add.Tensor %arg0, %43, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[1,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %44, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %45 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %46 = torch.aten.mean.dim %44, %45, %false, %none : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %46, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
    %float3.000000e-01 = torch.constant.float 3.000000e-01
    %47 = torch.aten.gt.Scalar %46, %float3.000000e-01 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],i1>
    torch.bind_symbolic_shape %47, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
    %48 = torch.prim.ListConstruct %int-1, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
    %49 = torch.aten.view %44, %48 : !torch.vtensor<[?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %49, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %50 = torch.aten.ne.Scalar %47, %int0_2 : !torch.vtensor<[?],i1>, !torch.int -> !torch.vtensor<[?],i1>
    torch.bind_symbolic_shape %50, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
    %cpu_4 = torch.constant.device "cpu"
    %51 = torch.aten.arange %12, %none, %none, %cpu_4, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %51, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %52 = torch.aten.cumsum %50, %int0_2, %none : !torch.vtensor<[?],i1>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %52, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %53 = torch.aten.sub.Scalar %52, %int1, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %53, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %54 = torch.aten.clamp %53, %int0_2, %22 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %54, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %55 = torch.aten.where.ScalarOther %50, %54, %22 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %55, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %56 = torch.prim.ListConstruct %55 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %57 = torch.aten.full_like %51, %6, %none, %none, %none, %false, %none : !torch.vtensor<[?],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?],si64>
    %58 = torch_c.to_builtin_tensor %51 : !torch.vtensor<[?],si64> -> tensor<?xi64>
    %c0_5 = arith.constant 0 : index
    %dim_6 = tensor.dim %58, %c0_5 : tensor<?xi64>
    %59 = iree_tensor_ext.compute_barrier.start %58 : tensor<?xi64>{%dim_6} -> tensor<?xi64>
    %60 = torch_c.from_builtin_tensor %59 : tensor<?xi64> -> !torch.vtensor<[?],si64>
    %61 = torch.aten.index_put %57, %56, %60, %true : !torch.vtensor<[?],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],si64>, !torch.bool -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %61, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %62 = torch.aten.sum %50, %none : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
    %63 = torch.aten.item %62 : !torch.vtensor<[],si64> -> !torch.int
    %64 = torch.aten.ge.int %63, %int0_2 : !torch.int, !torch.int -> !torch.bool
    %65 = torch.aten.Int.bool %64 : !torch.bool -> !torch.int
    %str_7 = torch.constant.str "Runtime assertion failed for expression u1 >= 0 on node 'ge_5'"
    torch.aten._assert_scalar %65, %str_7 : !torch.int, !torch.str
    %66 = torch.aten.le.int %63, %int64 : !torch.int, !torch.int -> !torch.bool
    %67 = torch.aten.Int.bool %66 : !torch.bool -> !torch.int
    %str_8 = torch.constant.str "Runtime assertion failed for expression u1 <= 64 on node 'le_6'"
    torch.aten._assert_scalar %67, %str_8 : !torch.int, !torch.str
    %68 = torch.aten.slice.Tensor %61, %int0_2, %int0_2, %63, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %68, [%11], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %69 = torch.aten.clamp %68, %int0_2, %22 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %69, [%11], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %70 = torch.prim.ListConstruct %69 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %71 = torch.aten.index.Tensor %49, %70 : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %71, [%11], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %72 = torch.prim.ListConstruct %int0_2 : (!torch.int) -> !torch.list<int>
    %73 = torch.aten.sum.dim_IntList %71, %72, %true, %none : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,4],f32>
    %74 = torch.aten.mul.Scalar %73, %float1.000000e-01 : !torch.vtensor<[1,4],f32>, !torch.float -> !torch.vtensor<[1,4],f32>
    %75 = torch.aten.add.Tensor %44, %74, %int1 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[1,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %75, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %76 = torch.aten.sum %75, %none : !torch.vtensor<[?,4],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float9.000000e-01 = torch.constant.float 9.000000e-01
    %77 = torch.aten.gt.Scalar %76, %float9.000000e-01 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %78 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %79 = torch.aten.view %77, %78 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %80 = torch.aten.Bool.Tensor %79 : !torch.vtensor<[],i1> -> !torch.bool
    %81 = torch_c.to_i1 %80
    %82 = scf.if %81 -> (tensor<i1>) {
      %int1_9 = torch.constant.int 1
      %int11 = torch.constant.int 11
      %none_10 = torch.constant.none
      %cpu_11 = torch.constant.device "cpu"
      %false_12 = torch.constant.bool false
      %113 = torch.aten.scalar_tensor %int1_9, %int11, %none_10, %cpu_11, %false_12 : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
      %114 = torch_c.to_builtin_tensor %113 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %114 : tensor<i1>
    } else {
      %int0_9 = torch.constant.int 0
      %int11 = torch.constant.int 11
      %none_10 = torch.constant.none
      %cpu_11 = torch.constant.device "cpu"
      %false_12 = torch.constant.bool false
      %113 = torch.aten.scalar_tensor %int0_9, %int11, %none_10, %cpu_11, %false_12 : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
      %114 = torch_c.to_builtin_tensor %113 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %114 : tensor<i1>
    }
    %83 = torch_c.from_builtin_tensor %82 : tensor<i1> -> !torch.vtensor<[],i1>
    %84 = torch_c.to_builtin_tensor %83 : !torch.vtensor<[],i1> -> tensor<i1>
    %85 = util.optimization_barrier %84 : tensor<i1>
    %86 = torch_c.from_builtin_tensor %85 : tensor<i1> -> !torch.vtensor<[],i1>
    %87 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %88 = torch.aten.view %86, %87 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %89 = torch.aten.logical_not %88 : !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %90 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %91 = torch.aten.view %89, %90 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %92 = torch.aten.Bool.Tensor %91 : !torch.vtensor<[],i1> -> !torch.bool
    %93 = torch_c.to_i1 %92
    %94:2 = scf.if %93 -> (tensor<i1>, tensor<?x4xf32>) {
      %113 = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
      %int0_9 = torch.constant.int 0
      %114 = torch_c.to_i64 %int0_9
      %115 = util.optimization_barrier %114 : i64
      %116 = torch_c.from_i64 %115
      %117 = torch.symbolic_int "u20" {min_val = 0, max_val = 64} : !torch.int
      %int0_10 = torch.constant.int 0
      %118 = torch.aten.size.int %75, %int0_10 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.int
      %int1_11 = torch.constant.int 1
      %119 = torch.prim.ListConstruct %int1_11 : (!torch.int) -> !torch.list<int>
      %false_12 = torch.constant.bool false
      %none_13 = torch.constant.none
      %120 = torch.aten.mean.dim %75, %119, %false_12, %none_13 : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
      torch.bind_symbolic_shape %120, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
      %float3.000000e-01_14 = torch.constant.float 3.000000e-01
      %121 = torch.aten.gt.Scalar %120, %float3.000000e-01_14 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],i1>
      torch.bind_symbolic_shape %121, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
      %int-1_15 = torch.constant.int -1
      %int4_16 = torch.constant.int 4
      %122 = torch.prim.ListConstruct %int-1_15, %int4_16 : (!torch.int, !torch.int) -> !torch.list<int>
      %123 = torch.aten.view %75, %122 : !torch.vtensor<[?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %123, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %124 = torch.aten.ne.Scalar %121, %int0_10 : !torch.vtensor<[?],i1>, !torch.int -> !torch.vtensor<[?],i1>
      torch.bind_symbolic_shape %124, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
      %cpu_17 = torch.constant.device "cpu"
      %125 = torch.aten.arange %118, %none_13, %none_13, %cpu_17, %false_12 : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %125, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %126 = torch.aten.cumsum %124, %int0_10, %none_13 : !torch.vtensor<[?],i1>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %126, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %127 = torch.aten.sub.Scalar %126, %int1_11, %int1_11 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %127, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %128 = torch.aten.sub.int %118, %int1_11 : !torch.int, !torch.int -> !torch.int
      %129 = torch.aten.clamp %127, %int0_10, %128 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %129, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %130 = torch.aten.where.ScalarOther %124, %129, %128 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %130, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %131 = torch.prim.ListConstruct %130 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
      %true_18 = torch.constant.bool true
      %132 = torch.aten.full_like %125, %116, %none_13, %none_13, %none_13, %false_12, %none_13 : !torch.vtensor<[?],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?],si64>
      %133 = torch_c.to_builtin_tensor %125 : !torch.vtensor<[?],si64> -> tensor<?xi64>
      %c0_19 = arith.constant 0 : index
      %dim_20 = tensor.dim %133, %c0_19 : tensor<?xi64>
      %134 = iree_tensor_ext.compute_barrier.start %133 : tensor<?xi64>{%dim_20} -> tensor<?xi64>
      %135 = torch_c.from_builtin_tensor %134 : tensor<?xi64> -> !torch.vtensor<[?],si64>
      %136 = torch.aten.index_put %132, %131, %135, %true_18 : !torch.vtensor<[?],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],si64>, !torch.bool -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %136, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %137 = torch.aten.sum %124, %none_13 : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
      %138 = torch.aten.item %137 : !torch.vtensor<[],si64> -> !torch.int
      %139 = torch.aten.ge.int %138, %int0_10 : !torch.int, !torch.int -> !torch.bool
      %140 = torch.aten.Int.bool %139 : !torch.bool -> !torch.int
      %str_21 = torch.constant.str "Runtime assertion failed for expression u20 >= 0 on node 'ge_2'"
      torch.aten._assert_scalar %140, %str_21 : !torch.int, !torch.str
      %int64_22 = torch.constant.int 64
      %141 = torch.aten.le.int %138, %int64_22 : !torch.int, !torch.int -> !torch.bool
      %142 = torch.aten.Int.bool %141 : !torch.bool -> !torch.int
      %str_23 = torch.constant.str "Runtime assertion failed for expression u20 <= 64 on node 'le_2'"
      torch.aten._assert_scalar %142, %str_23 : !torch.int, !torch.str
      %143 = torch.aten.le.int %138, %118 : !torch.int, !torch.int -> !torch.bool
      %144 = torch.aten.Int.bool %143 : !torch.bool -> !torch.int
      %str_24 = torch.constant.str "Runtime assertion failed for expression u20 <= s75 on node 'le_3'"
      torch.aten._assert_scalar %144, %str_24 : !torch.int, !torch.str
      %145 = torch.aten.slice.Tensor %136, %int0_10, %int0_10, %138, %int1_11 : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %145, [%117], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %146 = torch.aten.clamp %145, %int0_10, %128 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %146, [%117], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %147 = torch.prim.ListConstruct %146 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
      %148 = torch.aten.index.Tensor %123, %147 : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %148, [%117], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %149 = torch.prim.ListConstruct %int0_10 : (!torch.int) -> !torch.list<int>
      %150 = torch.aten.sum.dim_IntList %148, %149, %true_18, %none_13 : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,4],f32>
      %float1.000000e-01_25 = torch.constant.float 1.000000e-01
      %151 = torch.aten.mul.Scalar %150, %float1.000000e-01_25 : !torch.vtensor<[1,4],f32>, !torch.float -> !torch.vtensor<[1,4],f32>
      %152 = torch.aten.add.Tensor %75, %151, %int1_11 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[1,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %152, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %153 = torch.aten.sum %152, %none_13 : !torch.vtensor<[?,4],f32>, !torch.none -> !torch.vtensor<[],f32>
      %float9.000000e-01_26 = torch.constant.float 9.000000e-01
      %154 = torch.aten.gt.Scalar %153, %float9.000000e-01_26 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
      %155 = torch.prim.ListConstruct  : () -> !torch.list<int>
      %156 = torch.aten.view %154, %155 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
      %157 = torch.aten.Bool.Tensor %156 : !torch.vtensor<[],i1> -> !torch.bool
      %158 = torch_c.to_i1 %157
      %159 = scf.if %158 -> (tensor<i1>) {
        %int1_27 = torch.constant.int 1
        %int11 = torch.constant.int 11
        %none_28 = torch.constant.none
        %cpu_29 = torch.constant.device "cpu"
        %false_30 = torch.constant.bool false
        %166 = torch.aten.scalar_tensor %int1_27, %int11, %none_28, %cpu_29, %false_30 : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
        %167 = torch_c.to_builtin_tensor %166 : !torch.vtensor<[],i1> -> tensor<i1>
        scf.yield %167 : tensor<i1>
      } else {
        %166 = torch_c.to_builtin_tensor %86 : !torch.vtensor<[],i1> -> tensor<i1>
        scf.yield %166 : tensor<i1>
      }
      %160 = torch_c.from_builtin_tensor %159 : tensor<i1> -> !torch.vtensor<[],i1>
      %161 = torch_c.to_builtin_tensor %160 : !torch.vtensor<[],i1> -> tensor<i1>
      %162 = util.optimization_barrier %161 : tensor<i1>
      %163 = torch_c.from_builtin_tensor %162 : tensor<i1> -> !torch.vtensor<[],i1>
      %164 = torch_c.to_builtin_tensor %152 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
      %165 = torch_c.to_builtin_tensor %163 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %165, %164 : tensor<i1>, tensor<?x4xf32>
    } else {
      %113 = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
      %114 = torch_c.to_builtin_tensor %75 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
      %115 = torch_c.to_builtin_tensor %86 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %115, %114 : tensor<i1>, tensor<?x4xf32>
    } {dync.buffer = [{offset = "32*n + Max(-16*n + Max(25*n, 16*n + 24*u24, 8*u24 + 24*n, 16 + 16*n + 16*u24), 16*n + Max(-16*n + Max(24*u0 + 32*n, 16*u0 + 41*n, 16*n + 16*u0 + 24*u1, 8*u1 + 16*u0 + 24*n, 16 + 16*n + 16*u0 + 16*u1), -1 - 16*n + Max(25*n, 16*n + 24*u20, 8*u20 + 24*n, 16 + 16*n + 16*u20)))", size = "1"}, {offset = "Max(-16*n + Max(25*n, 16*n + 24*u24, 8*u24 + 24*n, 16 + 16*n + 16*u24), 16*n + Max(-16*n + Max(24*u0 + 32*n, 16*u0 + 41*n, 16*n + 16*u0 + 24*u1, 8*u1 + 16*u0 + 24*n, 16 + 16*n + 16*u0 + 16*u1), -1 - 16*n + Max(25*n, 16*n + 24*u20, 8*u20 + 24*n, 16 + 16*n + 16*u20)))", size = "16*n"}]}
    %95 = torch_c.from_builtin_tensor %94#0 : tensor<i1> -> !torch.vtensor<[],i1>
    %96 = torch_c.to_builtin_tensor %95 : !torch.vtensor<[],i1> -> tensor<i1>
    %97 = util.optimization_barrier %96 : tensor<i1>
    %98 = torch_c.from_builtin_tensor %97 : tensor<i1> -> !torch.vtensor<[],i1>
    %99 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %100 = torch.aten.view %98, %99 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %101 = torch.aten.logical_not %100 : !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %102 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %103 = torch.aten.view %101, %102 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %104 = torch.aten.Bool.Tensor %103 : !torch.vtensor<[],i1> -> !torch.bool
    %105 = torch_c.to_i1 %104
    %106 = scf.if %105 -> (tensor<?x4xf32>) {
      %113 = torch_c.from_builtin_tensor %94#1 : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %113, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %114 = torch_c.to_builtin_tensor %113 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
      %115 = torch_c.to_i64 %3
      %116 = arith.index_cast %115 : i64 to index
      %117 = flow.tensor.tie_shape %114 : tensor<?x4xf32>{%116}
      %118 = torch_c.from_builtin_tensor %117 : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %118, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %119 = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
      %int0_9 = torch.constant.int 0
      %120 = torch_c.to_i64 %int0_9
      %121 = util.optimization_barrier %120 : i64
      %122 = torch_c.from_i64 %121
      %123 = torch.symbolic_int "u24" {min_val = 0, max_val = 64} : !torch.int
      %int0_10 = torch.constant.int 0
      %124 = torch.aten.size.int %118, %int0_10 : !torch.vtensor<[?,4],f32>, !torch.int -> !torch.int
      %int1_11 = torch.constant.int 1
      %125 = torch.prim.ListConstruct %int1_11 : (!torch.int) -> !torch.list<int>
      %false_12 = torch.constant.bool false
      %none_13 = torch.constant.none
      %126 = torch.aten.mean.dim %118, %125, %false_12, %none_13 : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
      torch.bind_symbolic_shape %126, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
      %float3.000000e-01_14 = torch.constant.float 3.000000e-01
      %127 = torch.aten.gt.Scalar %126, %float3.000000e-01_14 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],i1>
      torch.bind_symbolic_shape %127, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
      %int-1_15 = torch.constant.int -1
      %int4_16 = torch.constant.int 4
      %128 = torch.prim.ListConstruct %int-1_15, %int4_16 : (!torch.int, !torch.int) -> !torch.list<int>
      %129 = torch.aten.view %118, %128 : !torch.vtensor<[?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %129, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %130 = torch.aten.ne.Scalar %127, %int0_10 : !torch.vtensor<[?],i1>, !torch.int -> !torch.vtensor<[?],i1>
      torch.bind_symbolic_shape %130, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
      %cpu_17 = torch.constant.device "cpu"
      %131 = torch.aten.arange %124, %none_13, %none_13, %cpu_17, %false_12 : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %131, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %132 = torch.aten.cumsum %130, %int0_10, %none_13 : !torch.vtensor<[?],i1>, !torch.int, !torch.none -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %132, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %133 = torch.aten.sub.Scalar %132, %int1_11, %int1_11 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %133, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %134 = torch.aten.sub.int %124, %int1_11 : !torch.int, !torch.int -> !torch.int
      %135 = torch.aten.clamp %133, %int0_10, %134 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %135, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %136 = torch.aten.where.ScalarOther %130, %135, %134 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %136, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %137 = torch.prim.ListConstruct %136 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
      %true_18 = torch.constant.bool true
      %138 = torch.aten.full_like %131, %122, %none_13, %none_13, %none_13, %false_12, %none_13 : !torch.vtensor<[?],si64>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?],si64>
      %139 = torch_c.to_builtin_tensor %131 : !torch.vtensor<[?],si64> -> tensor<?xi64>
      %c0_19 = arith.constant 0 : index
      %dim_20 = tensor.dim %139, %c0_19 : tensor<?xi64>
      %140 = iree_tensor_ext.compute_barrier.start %139 : tensor<?xi64>{%dim_20} -> tensor<?xi64>
      %141 = torch_c.from_builtin_tensor %140 : tensor<?xi64> -> !torch.vtensor<[?],si64>
      %142 = torch.aten.index_put %138, %137, %141, %true_18 : !torch.vtensor<[?],si64>, !torch.list<optional<vtensor>>, !torch.vtensor<[?],si64>, !torch.bool -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %142, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %143 = torch.aten.sum %130, %none_13 : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
      %144 = torch.aten.item %143 : !torch.vtensor<[],si64> -> !torch.int
      %145 = torch.aten.ge.int %144, %int0_10 : !torch.int, !torch.int -> !torch.bool
      %146 = torch.aten.Int.bool %145 : !torch.bool -> !torch.int
      %str_21 = torch.constant.str "Runtime assertion failed for expression u24 >= 0 on node 'ge_2'"
      torch.aten._assert_scalar %146, %str_21 : !torch.int, !torch.str
      %int64_22 = torch.constant.int 64
      %147 = torch.aten.le.int %144, %int64_22 : !torch.int, !torch.int -> !torch.bool
      %148 = torch.aten.Int.bool %147 : !torch.bool -> !torch.int
      %str_23 = torch.constant.str "Runtime assertion failed for expression u24 <= 64 on node 'le_2'"
      torch.aten._assert_scalar %148, %str_23 : !torch.int, !torch.str
      %149 = torch.aten.le.int %144, %124 : !torch.int, !torch.int -> !torch.bool
      %150 = torch.aten.Int.bool %149 : !torch.bool -> !torch.int
      %str_24 = torch.constant.str "Runtime assertion failed for expression u24 <= s75 on node 'le_3'"
      torch.aten._assert_scalar %150, %str_24 : !torch.int, !torch.str
      %151 = torch.aten.slice.Tensor %142, %int0_10, %int0_10, %144, %int1_11 : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %151, [%123], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %152 = torch.aten.clamp %151, %int0_10, %134 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
      torch.bind_symbolic_shape %152, [%123], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
      %153 = torch.prim.ListConstruct %152 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
      %154 = torch.aten.index.Tensor %129, %153 : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %154, [%123], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %155 = torch.prim.ListConstruct %int0_10 : (!torch.int) -> !torch.list<int>
      %156 = torch.aten.sum.dim_IntList %154, %155, %true_18, %none_13 : !torch.vtensor<[?,4],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,4],f32>
      %float1.000000e-01_25 = torch.constant.float 1.000000e-01
      %157 = torch.aten.mul.Scalar %156, %float1.000000e-01_25 : !torch.vtensor<[1,4],f32>, !torch.float -> !torch.vtensor<[1,4],f32>
      %158 = torch.aten.add.Tensor %118, %157, %int1_11 : !torch.vtensor<[?,4],f32>, !torch.vtensor<[1,4],f32>, !torch.int -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %158, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %159 = torch.aten.sum %158, %none_13 : !torch.vtensor<[?,4],f32>, !torch.none -> !torch.vtensor<[],f32>
      %float9.000000e-01_26 = torch.constant.float 9.000000e-01
      %160 = torch.aten.gt.Scalar %159, %float9.000000e-01_26 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
      %161 = torch.prim.ListConstruct  : () -> !torch.list<int>
      %162 = torch.aten.view %160, %161 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
      %163 = torch.aten.Bool.Tensor %162 : !torch.vtensor<[],i1> -> !torch.bool
      %164 = torch_c.to_i1 %163
      %165 = scf.if %164 -> (tensor<i1>) {
        %int1_27 = torch.constant.int 1
        %int11 = torch.constant.int 11
        %none_28 = torch.constant.none
        %cpu_29 = torch.constant.device "cpu"
        %false_30 = torch.constant.bool false
        %171 = torch.aten.scalar_tensor %int1_27, %int11, %none_28, %cpu_29, %false_30 : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
        %172 = torch_c.to_builtin_tensor %171 : !torch.vtensor<[],i1> -> tensor<i1>
        scf.yield %172 : tensor<i1>
      } else {
        %171 = torch_c.to_builtin_tensor %98 : !torch.vtensor<[],i1> -> tensor<i1>
        scf.yield %171 : tensor<i1>
      }
      %166 = torch_c.from_builtin_tensor %165 : tensor<i1> -> !torch.vtensor<[],i1>
      %167 = torch_c.to_builtin_tensor %166 : !torch.vtensor<[],i1> -> tensor<i1>
      %168 = util.optimization_barrier %167 : tensor<i1>
      %169 = torch_c.from_builtin_tensor %168 : tensor<i1> -> !torch.vtensor<[],i1>
      %170 = torch_c.to_builtin_tensor %158 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
      scf.yield %170 : tensor<?x4xf32>
    } else {
      %113 = torch_c.from_builtin_tensor %94#1 : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %113, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %114 = torch_c.to_builtin_tensor %113 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
      %115 = torch_c.to_i64 %3
      %116 = arith.index_cast %115 : i64 to index
      %117 = flow.tensor.tie_shape %114 : tensor<?x4xf32>{%116}
      %118 = torch_c.from_builtin_tensor %117 : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
      torch.bind_symbolic_shape %118, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
      %119 = torch.symbolic_int "u0" {min_val = 0, max_val = 64} : !torch.int
      %120 = torch_c.to_builtin_tensor %118 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
      scf.yield %120 : tensor<?x4xf32>
    }
    %107 = torch_c.from_builtin_tensor %106 : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %107, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    %108 = torch_c.to_builtin_tensor %107 : !torch.vtensor<[?,4],f32> -> tensor<?x4xf32>
    %109 = torch_c.to_i64 %3
    %110 = arith.index_cast %109 : i64 to index
    %111 = flow.tensor.tie_shape %108 : tensor<?x4xf32>{%110}
    %112 = torch_c.from_builtin_tensor %111 : tensor<?x4xf32> -> !torch.vtensor<[?,4],f32>
    torch.bind_symbolic_shape %112, [%0], affine_map<()[s0] -> (s0, 4)> : !torch.vtensor<[?,4],f32>
    return %112 : !torch.vtensor<[?,4],f32>
  }
}
