// An IREE 3.13 VM bug dync works around (dync/iree_mends.py), pinned so that an upgrade that
// fixes it shows up here (upstream: iree-org/iree#24753, fix under review in #24781).
// Reduced from a generated program (benchmarks fuzz, seed 664) as dync compiles it:
//     if h.abs().mean() > 0.2:
//         if h.sum() < 0.1:
//             picked = h[h.mean(dim=1) > 0.6]          # no row is picked for h = -1
//             return lin(h + 0.1 * picked.sum(dim=0, keepdim=True))
//         h = h * 2
//     return lin(h)
// The inner branch's two results (its early return's value and the live `h`) share one
// allocation, so the VM passes that buffer twice on the edge that joins the outer branch; the
// bytecode register allocator coalesces one block argument with the operand and moves into
// the other, which clears the first: the result arrives null and hal.buffer_view.create fails.
// Giving each repeated ref operand a copy of its own at the vm phase (python -m
// dync.iree_mends) makes the module run, with lin(-1) in every row.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: not iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="4x8xf32=-1" 2>&1 | FileCheck %s --check-prefix=BUG
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=vm -o %t.vm.mlir
// RUN: %PYTHON -m dync.iree_mends vm < %t.vm.mlir | iree-compile - --compile-from=vm --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu -o %t.mended.vmfb
// RUN: iree-run-module --module=%t.mended.vmfb --device=local-sync --function=main --input="4x8xf32=-1" | FileCheck %s
// BUG: ref is null; while invoking native function hal.buffer_view.create
// CHECK: result[0]: hal.buffer_view
// CHECK-NEXT: 4x8xf32=[0.326301 0.774106 -0.558575 0.25377 0.762736 0.779809 -0.89746 0.306804][0.326301 0.774106 -0.558575 0.25377 0.762736 0.779809 -0.89746 0.306804][0.326301 0.774106 -0.558575 0.25377 0.762736 0.779809 -0.89746 0.306804][0.326301 0.774106 -0.558575 0.25377 0.762736 0.779809 -0.89746 0.306804]
module {
  func.func private @true_graph_0(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>) {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %1 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %2 = call @subdnn_0(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.bool
    %3 = torch_c.to_i1 %2
    %4:3 = scf.if %3 -> (tensor<?x8xf32>, tensor<i1>, tensor<?x8xf32>) {
      %15:3 = func.call @subdnn_1(%arg0) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>)
      %16 = torch_c.to_builtin_tensor %15#2 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      %17 = torch_c.to_builtin_tensor %15#1 : !torch.vtensor<[],i1> -> tensor<i1>
      %18 = torch_c.to_builtin_tensor %15#0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %18, %17, %16 : tensor<?x8xf32>, tensor<i1>, tensor<?x8xf32>
    } else {
      %15:3 = func.call @subdnn_2(%arg0) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>)
      %16 = torch_c.to_builtin_tensor %15#2 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      %17 = torch_c.to_builtin_tensor %15#1 : !torch.vtensor<[],i1> -> tensor<i1>
      %18 = torch_c.to_builtin_tensor %15#0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %18, %17, %16 : tensor<?x8xf32>, tensor<i1>, tensor<?x8xf32>
    }
    %5 = torch_c.from_builtin_tensor %4#2 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    %int8 = torch.constant.int 8
    torch.bind_symbolic_shape %5, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %6 = torch.prim.ListConstruct %1, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %7 = torch.aten.view %5, %6 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %7, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %8 = torch_c.from_builtin_tensor %4#1 : tensor<i1> -> !torch.vtensor<[],i1>
    %9 = torch_c.to_builtin_tensor %8 : !torch.vtensor<[],i1> -> tensor<i1>
    %10 = util.optimization_barrier %9 : tensor<i1>
    %11 = torch_c.from_builtin_tensor %10 : tensor<i1> -> !torch.vtensor<[],i1>
    %12 = torch_c.from_builtin_tensor %4#0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    %int8_0 = torch.constant.int 8
    torch.bind_symbolic_shape %12, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %13 = torch.prim.ListConstruct %1, %int8_0 : (!torch.int, !torch.int) -> !torch.list<int>
    %14 = torch.aten.view %12, %13 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %14, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %14, %11, %7 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>
  }
  func.func private @false_graph_1(%arg0: !torch.vtensor<[?,8],f32>, %arg1: !torch.vtensor<[?,8],f32>, %arg2: !torch.vtensor<[],i1>, %arg3: !torch.vtensor<[8,8],f32>, %arg4: !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8],f32> {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %arg1, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %arg1 : !torch.vtensor<[?,8],f32>
  }
  func.func @main(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>) {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %1 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %2 = torch.vtensor.literal(dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>) : !torch.vtensor<[8],f32>
    %3 = torch.vtensor.literal(dense_resource<torch_tensor_8_8_torch.float32> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
    %4 = call @subdnn_3(%arg0) : (!torch.vtensor<[?,8],f32>) -> !torch.bool
    %5 = torch_c.to_i1 %4
    %6:3 = scf.if %5 -> (tensor<?x8xf32>, tensor<i1>, tensor<?x8xf32>) {
      %17:3 = func.call @true_graph_0(%arg0) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>)
      torch.bind_symbolic_shape %17#0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %17#2, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %18 = torch_c.to_builtin_tensor %17#2 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      %19 = torch_c.to_builtin_tensor %17#1 : !torch.vtensor<[],i1> -> tensor<i1>
      %20 = torch_c.to_builtin_tensor %17#0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %20, %19, %18 : tensor<?x8xf32>, tensor<i1>, tensor<?x8xf32>
    } else {
      %17:2 = func.call @subdnn_4(%arg0) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>)
      %18 = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      %19 = torch_c.to_builtin_tensor %17#1 : !torch.vtensor<[],i1> -> tensor<i1>
      %20 = torch_c.to_builtin_tensor %17#0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %20, %19, %18 : tensor<?x8xf32>, tensor<i1>, tensor<?x8xf32>
    }
    %7 = torch_c.from_builtin_tensor %6#1 : tensor<i1> -> !torch.vtensor<[],i1>
    %8 = torch_c.to_builtin_tensor %7 : !torch.vtensor<[],i1> -> tensor<i1>
    %9 = util.optimization_barrier %8 : tensor<i1>
    %10 = torch_c.from_builtin_tensor %9 : tensor<i1> -> !torch.vtensor<[],i1>
    %11 = call @subdnn_5(%10) : (!torch.vtensor<[],i1>) -> !torch.bool
    %12 = torch_c.to_i1 %11
    %13 = scf.if %12 -> (tensor<?x8xf32>) {
      %17 = torch_c.from_builtin_tensor %6#2 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %int8_0 = torch.constant.int 8
      torch.bind_symbolic_shape %17, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %18 = torch.prim.ListConstruct %1, %int8_0 : (!torch.int, !torch.int) -> !torch.list<int>
      %19 = torch.aten.view %17, %18 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %19, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %20 = torch_c.from_builtin_tensor %6#0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %int8_1 = torch.constant.int 8
      torch.bind_symbolic_shape %20, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %21 = torch.prim.ListConstruct %1, %int8_1 : (!torch.int, !torch.int) -> !torch.list<int>
      %22 = torch.aten.view %20, %21 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %22, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %23 = func.call @subdnn_6(%19) : (!torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32>
      %24 = torch_c.to_builtin_tensor %23 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %24 : tensor<?x8xf32>
    } else {
      %17 = torch_c.from_builtin_tensor %6#2 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %int8_0 = torch.constant.int 8
      torch.bind_symbolic_shape %17, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %18 = torch.prim.ListConstruct %1, %int8_0 : (!torch.int, !torch.int) -> !torch.list<int>
      %19 = torch.aten.view %17, %18 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %19, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %20 = torch_c.from_builtin_tensor %6#0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %int8_1 = torch.constant.int 8
      torch.bind_symbolic_shape %20, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %21 = torch.prim.ListConstruct %1, %int8_1 : (!torch.int, !torch.int) -> !torch.list<int>
      %22 = torch.aten.view %20, %21 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %22, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %23 = func.call @false_graph_1(%19, %22, %10, %3, %2) : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[?,8],f32>
      torch.bind_symbolic_shape %23, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
      %24 = torch_c.to_builtin_tensor %23 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %24 : tensor<?x8xf32>
    }
    %14 = torch_c.from_builtin_tensor %13 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    %int8 = torch.constant.int 8
    torch.bind_symbolic_shape %14, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %15 = torch.prim.ListConstruct %1, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %16 = torch.aten.view %14, %15 : !torch.vtensor<[?,8],f32>, !torch.list<int> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %16, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %16 : !torch.vtensor<[?,8],f32>
  }
  func.func private @subdnn_0(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.bool {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %none = torch.constant.none
    %1 = torch.aten.sum %arg0, %none : !torch.vtensor<[?,8],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float1.000000e-01 = torch.constant.float 1.000000e-01
    %2 = torch.aten.lt.Scalar %1, %float1.000000e-01 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %3 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %4 = torch.aten.view %2, %3 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %5 = torch.aten.Bool.Tensor %4 : !torch.vtensor<[],i1> -> !torch.bool
    return %5 : !torch.bool
  }
  func.func private @subdnn_1(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>) {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    %1 = torch.symbolic_int "u19" {min_val = 0, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %2 = torch.vtensor.literal(dense_resource<torch_tensor_8_8_torch.float32> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
    %3 = torch.vtensor.literal(dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>) : !torch.vtensor<[8],f32>
    %int0 = torch.constant.int 0
    %4 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %int1 = torch.constant.int 1
    %5 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %false = torch.constant.bool false
    %none = torch.constant.none
    %6 = torch.aten.mean.dim %arg0, %5, %false, %none : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %6, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
    %float6.000000e-01 = torch.constant.float 6.000000e-01
    %7 = torch.aten.gt.Scalar %6, %float6.000000e-01 : !torch.vtensor<[?],f32>, !torch.float -> !torch.vtensor<[?],i1>
    torch.bind_symbolic_shape %7, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
    %8 = torch.aten.ne.Scalar %7, %int0 : !torch.vtensor<[?],i1>, !torch.int -> !torch.vtensor<[?],i1>
    torch.bind_symbolic_shape %8, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],i1>
    %cpu = torch.constant.device "cpu"
    %9 = torch.aten.arange %4, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %9, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %10 = torch.aten.add.Scalar %9, %4, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %10, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %11 = torch.aten.where.self %8, %9, %10 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %11, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %int-1 = torch.constant.int -1
    %values, %indices = torch.aten.sort %11, %int-1, %false : !torch.vtensor<[?],si64>, !torch.int, !torch.bool -> !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %values, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %indices, [%0], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %12 = torch.aten.sum %8, %none : !torch.vtensor<[?],i1>, !torch.none -> !torch.vtensor<[],si64>
    %13 = torch.aten.item %12 : !torch.vtensor<[],si64> -> !torch.int
    %14 = torch.aten.ge.int %13, %int0 : !torch.int, !torch.int -> !torch.bool
    %15 = torch.aten.Int.bool %14 : !torch.bool -> !torch.int
    %str = torch.constant.str "Runtime assertion failed for expression u19 >= 0 on node 'ge_2'"
    torch.aten._assert_scalar %15, %str : !torch.int, !torch.str
    %int64 = torch.constant.int 64
    %16 = torch.aten.le.int %13, %int64 : !torch.int, !torch.int -> !torch.bool
    %17 = torch.aten.Int.bool %16 : !torch.bool -> !torch.int
    %str_0 = torch.constant.str "Runtime assertion failed for expression u19 <= 64 on node 'le_2'"
    torch.aten._assert_scalar %17, %str_0 : !torch.int, !torch.str
    %18 = torch.aten.le.int %13, %4 : !torch.int, !torch.int -> !torch.bool
    %19 = torch.aten.Int.bool %18 : !torch.bool -> !torch.int
    %str_1 = torch.constant.str "Runtime assertion failed for expression u19 <= s75 on node 'le_3'"
    torch.aten._assert_scalar %19, %str_1 : !torch.int, !torch.str
    %20 = torch.aten.slice.Tensor %values, %int0, %int0, %13, %int1 : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %20, [%1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %none_2 = torch.constant.none
    %21 = torch.prim.NumToTensor.Scalar %int1 : !torch.int -> !torch.vtensor<[],si64>
    %str_3 = torch.constant.str "trunc"
    %22 = torch.aten.div.Tensor_mode %20, %21, %str_3 : !torch.vtensor<[?],si64>, !torch.vtensor<[],si64>, !torch.str -> !torch.vtensor<[?],si64>
    %23 = torch.aten.mul.Tensor %22, %21 : !torch.vtensor<[?],si64>, !torch.vtensor<[],si64> -> !torch.vtensor<[?],si64>
    %int1_4 = torch.constant.int 1
    %24 = torch.aten.sub.Tensor %20, %23, %int1_4 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
    %int0_5 = torch.constant.int 0
    %25 = torch.aten.lt.Scalar %24, %int0_5 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
    %26 = torch.aten.lt.Scalar %21, %int0_5 : !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[],i1>
    %27 = torch.aten.ne.Tensor %25, %26 : !torch.vtensor<[?],i1>, !torch.vtensor<[],i1> -> !torch.vtensor<[?],i1>
    %28 = torch.aten.ne.Scalar %24, %int0_5 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
    %29 = torch.aten.logical_and %28, %27 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],i1> -> !torch.vtensor<[?],i1>
    %30 = torch.aten.sub.Tensor %22, %29, %int1_4 : !torch.vtensor<[?],si64>, !torch.vtensor<[?],i1>, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %30, [%1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %none_6 = torch.constant.none
    %int0_7 = torch.constant.int 0
    %31 = torch.aten.eq.int %4, %int0_7 : !torch.int, !torch.int -> !torch.bool
    %32 = torch.aten.ne.int %4, %int0_7 : !torch.int, !torch.int -> !torch.bool
    %33 = torch.aten.Int.bool %31 : !torch.bool -> !torch.int
    %34 = torch.aten.add.int %4, %33 : !torch.int, !torch.int -> !torch.int
    torch.runtime.assert %32, "dync division check: remainder.Scalar at model.py:11 divides an integer by zero"
    %35 = torch.aten.remainder.Scalar %30, %34 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %35, [%1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %36 = torch.prim.ListConstruct %35 : (!torch.vtensor<[?],si64>) -> !torch.list<vtensor>
    %37 = torch.aten.stack %36, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,1],si64>
    torch.bind_symbolic_shape %37, [%1], affine_map<()[s0] -> (s0, 1)> : !torch.vtensor<[?,1],si64>
    %38 = torch.aten.unbind.int %37, %int1 : !torch.vtensor<[?,1],si64>, !torch.int -> !torch.list<vtensor>
    %39 = torch.prim.ListUnpack %38 : !torch.list<vtensor> -> !torch.vtensor<[?],si64>
    torch.bind_symbolic_shape %39, [%1], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],si64>
    %40 = torch.prim.ListConstruct %39 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %int0_8 = torch.constant.int 0
    %41 = torch.aten.size.int %arg0, %int0_8 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %42 = torch.aten.neg.int %41 : !torch.int -> !torch.int
    %43 = torch.aten.lt.Scalar %39, %42 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
    %44 = torch.aten.ge.Scalar %39, %41 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],i1>
    %45 = torch.aten.logical_or %43, %44 : !torch.vtensor<[?],i1>, !torch.vtensor<[?],i1> -> !torch.vtensor<[?],i1>
    %46 = torch.aten.any %45 : !torch.vtensor<[?],i1> -> !torch.vtensor<[],i1>
    %47 = torch.aten.logical_not %46 : !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %48 = torch.aten.Bool.Tensor %47 : !torch.vtensor<[],i1> -> !torch.bool
    torch.runtime.assert %48, "dync index check: index.Tensor at model.py:11 reads an index outside [-size, size) (dim 0 of its input)"
    %49 = torch.aten.index.Tensor %arg0, %40 : !torch.vtensor<[?,8],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %49, [%1], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %50 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %true = torch.constant.bool true
    %51 = torch.aten.sum.dim_IntList %49, %50, %true, %none : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,8],f32>
    %float1.000000e-01 = torch.constant.float 1.000000e-01
    %52 = torch.aten.mul.Scalar %51, %float1.000000e-01 : !torch.vtensor<[1,8],f32>, !torch.float -> !torch.vtensor<[1,8],f32>
    %53 = torch.aten.add.Tensor %arg0, %52, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[1,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %53, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %54 = torch.aten.linear %53, %2, %3 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %54, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int11 = torch.constant.int 11
    %cpu_9 = torch.constant.device "cpu"
    %55 = torch.aten.scalar_tensor %int1, %int11, %none, %cpu_9, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
    %int8 = torch.constant.int 8
    %56 = torch.prim.ListConstruct %4, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %int6 = torch.constant.int 6
    %cpu_10 = torch.constant.device "cpu"
    %57 = torch.aten.zeros %56, %int6, %none, %cpu_10, %false : !torch.list<int>, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %57, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %54, %55, %57 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>
  }
  func.func private @subdnn_2(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>) {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %1 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %int2 = torch.constant.int 2
    %2 = torch.aten.mul.Scalar %arg0, %int2 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %2, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int8 = torch.constant.int 8
    %3 = torch.prim.ListConstruct %1, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %int6 = torch.constant.int 6
    %none = torch.constant.none
    %cpu = torch.constant.device "cpu"
    %false = torch.constant.bool false
    %4 = torch.aten.zeros %3, %int6, %none, %cpu, %false : !torch.list<int>, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %4, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int11 = torch.constant.int 11
    %cpu_0 = torch.constant.device "cpu"
    %5 = torch.aten.scalar_tensor %int0, %int11, %none, %cpu_0, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
    return %4, %5, %2 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>, !torch.vtensor<[?,8],f32>
  }
  func.func private @subdnn_3(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.bool {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %1 = torch.aten.abs %arg0 : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %1, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %none = torch.constant.none
    %2 = torch.aten.mean %1, %none : !torch.vtensor<[?,8],f32>, !torch.none -> !torch.vtensor<[],f32>
    %float2.000000e-01 = torch.constant.float 2.000000e-01
    %3 = torch.aten.gt.Scalar %2, %float2.000000e-01 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %4 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %5 = torch.aten.view %3, %4 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %6 = torch.aten.Bool.Tensor %5 : !torch.vtensor<[],i1> -> !torch.bool
    return %6 : !torch.bool
  }
  func.func private @subdnn_4(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>) {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %1 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %int8 = torch.constant.int 8
    %2 = torch.prim.ListConstruct %1, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %int6 = torch.constant.int 6
    %none = torch.constant.none
    %cpu = torch.constant.device "cpu"
    %false = torch.constant.bool false
    %3 = torch.aten.zeros %2, %int6, %none, %cpu, %false : !torch.list<int>, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %3, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int11 = torch.constant.int 11
    %cpu_0 = torch.constant.device "cpu"
    %4 = torch.aten.scalar_tensor %int0, %int11, %none, %cpu_0, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
    return %3, %4 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[],i1>
  }
  func.func private @subdnn_5(%arg0: !torch.vtensor<[],i1>) -> !torch.bool {
    %0 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %2 = torch.aten.logical_not %1 : !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %3 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %4 = torch.aten.view %2, %3 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %5 = torch.aten.Bool.Tensor %4 : !torch.vtensor<[],i1> -> !torch.bool
    return %5 : !torch.bool
  }
  func.func private @subdnn_6(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %1 = torch.vtensor.literal(dense_resource<torch_tensor_8_8_torch.float32> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
    %2 = torch.vtensor.literal(dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>) : !torch.vtensor<[8],f32>
    %3 = torch.aten.linear %arg0, %1, %2 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,8],f32>, !torch.vtensor<[8],f32> -> !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %3, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    return %3 : !torch.vtensor<[?,8],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_torch.float32: "0x04000000C5BF463E43C836BDCF2B5D3CAAC5A73DAE99603E4ED0AD3E6D7F8BBE1CAD04BE",
      torch_tensor_8_8_torch.float32: "0x0400000022792DBB9C36423EB1FC94BE1D3885BED6700BBEAB2AC23D578AE5BB40878F3EDE8300BD9799BF3D5DD3DABD1B548EBDC2EFACBE90C56FBE9F3D15BE4C94563C6B200F3E403B593EDE7075BE86A71DBEA77F033EF750963EE70395BD7A75873E1E6B69BD353C193DA1E8A33E20EDA7BEC5EA63BEAC4FB7BD661F0DBE9E669C3E85AA6ABE86A826BE53EF7CBE2089A9BE2D5653BE979A9B3E5E8C213E5F782F3E4952983C7B9C39BE6E01753D4D04A9BE68CC82BE4CA43ABE876C643E5D45543EF68F20BEF20251BCB38B673E12F5B33ECBAF0F3EA6A2433DF2BD723E522B55BE70ED863D65588CBE8AEC7ABEF2053BBE10D0233EFD98113E5B7456BEB8BFDA3D"
    }
  }
#-}
