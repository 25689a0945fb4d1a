// An IREE 3.13 miscompile dync works around (dync-tie-region-shapes), pinned so that an
// upgrade that fixes it shows up here. The module is what dync imports for
//     h, outs = x, []
//     for _ in range(3):
//         h = torch.tanh(h + 0.1); outs.append(h.mean(dim=1, keepdim=True))
//         if h.sum() > 0.6: break
//     return h + torch.cat(outs, dim=1).mean(dim=1, keepdim=True)
// over x of [batch, 3, H, W] (H, W dynamic), reduced line by line while the miscompile
// stayed. The dims of `h` and of the list's buffer leave the loop's `scf.if` as values of
// their own, while the view of the cat reads its sizes from the argument: the dispatch that
// adds the mean to `h` gets one dim under two workload ordinals, and its workgroup count
// covers half of H x W. The rows past it are never written (zeros here, garbage in a reused
// buffer). Viewing the tensors that leave the `scf.if` to the argument's sizes gives IREE
// one value per dim, and every row is written.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=2x3x8x8xf32=0.5 | FileCheck %s
// RUN: dync-opt %s --dync-tie-region-shapes | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.tied.vmfb
// RUN: iree-run-module --module=%t.tied.vmfb --device=local-sync --function=main --input=2x3x8x8xf32=0.5 | FileCheck %s --check-prefix=TIED
// CHECK: result[0]: hal.buffer_view
// CHECK: [1.0741 1.0741 1.0741 1.0741 1.0741 1.0741 1.0741 1.0741][0 0 0 0 0 0 0 0]
// TIED: result[0]: hal.buffer_view
// TIED-NOT: 0 0 0 0
module attributes {dync.backend = "llvm-cpu", dync.symbols = {batch = {max = 16 : i64, min = 2 : i64}, h = {max = 64 : i64, min = 8 : i64}, u0 = {max = 3 : i64, min = 0 : i64}, w = {max = 64 : i64, min = 8 : i64}}} {
  func.func private @true_graph_0() -> !torch.vtensor<[],i1> {
    %false = torch.constant.bool false
    %none = torch.constant.none
    %int11 = torch.constant.int 11
    %int1 = torch.constant.int 1
    %cpu = torch.constant.device "cpu"
    %0 = torch.aten.scalar_tensor %int1, %int11, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
    return %0 : !torch.vtensor<[],i1>
  }
  func.func private @false_graph_0() -> !torch.vtensor<[],i1> {
    %none = torch.constant.none
    %int11 = torch.constant.int 11
    %false = torch.constant.bool false
    %int0 = torch.constant.int 0
    %cpu = torch.constant.device "cpu"
    %0 = torch.aten.scalar_tensor %int0, %int11, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
    return %0 : !torch.vtensor<[],i1>
  }
  func.func private @true_graph_0_0(%arg0: !torch.vtensor<[],i1>) -> !torch.vtensor<[],i1> {
    %false = torch.constant.bool false
    %none = torch.constant.none
    %int11 = torch.constant.int 11
    %int1 = torch.constant.int 1
    %cpu = torch.constant.device "cpu"
    %0 = torch.aten.scalar_tensor %int1, %int11, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],i1>
    return %0 : !torch.vtensor<[],i1>
  }
  func.func private @false_graph_0_1(%arg0: !torch.vtensor<[],i1>) -> !torch.vtensor<[],i1> {
    return %arg0 : !torch.vtensor<[],i1>
  }
  func.func private @true_graph_1(%arg0: !torch.vtensor<[],i1>, %arg1: !torch.vtensor<[?,3,?,?],f32>, %arg2: !torch.vtensor<[?,1,?,?],f32>) -> (!torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[2,?,1,?,?],f32>, !torch.vtensor<[],si64>) {
    %false = torch.constant.bool false
    %int4 = torch.constant.int 4
    %int2 = torch.constant.int 2
    %int0 = torch.constant.int 0
    %float6.000000e-01 = torch.constant.float 6.000000e-01
    %none = torch.constant.none
    %true = torch.constant.bool true
    %int1 = torch.constant.int 1
    %float1.000000e-01 = torch.constant.float 1.000000e-01
    %0 = torch.aten.add.Scalar %arg1, %float1.000000e-01, %int1 : !torch.vtensor<[?,3,?,?],f32>, !torch.float, !torch.int -> !torch.vtensor<[?,3,?,?],f32>
    %1 = torch.aten.tanh %0 : !torch.vtensor<[?,3,?,?],f32> -> !torch.vtensor<[?,3,?,?],f32>
    %2 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %3 = torch.aten.mean.dim %1, %2, %true, %none : !torch.vtensor<[?,3,?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,1,?,?],f32>
    %4 = torch.aten.sum %1, %none : !torch.vtensor<[?,3,?,?],f32>, !torch.none -> !torch.vtensor<[],f32>
    %5 = torch.aten.gt.Scalar %4, %float6.000000e-01 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %6 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %7 = torch.aten.view %5, %6 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %8 = torch.aten.Bool.Tensor %7 : !torch.vtensor<[],i1> -> !torch.bool
    %9 = torch_c.to_i1 %8
    %10 = scf.if %9 -> (tensor<i1>) {
      %15 = func.call @true_graph_0_0(%arg0) : (!torch.vtensor<[],i1>) -> !torch.vtensor<[],i1>
      %16 = torch_c.to_builtin_tensor %15 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %16 : tensor<i1>
    } else {
      %15 = func.call @false_graph_0_1(%arg0) : (!torch.vtensor<[],i1>) -> !torch.vtensor<[],i1>
      %16 = torch_c.to_builtin_tensor %15 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %16 : tensor<i1>
    }
    %11 = torch_c.from_builtin_tensor %10 : tensor<i1> -> !torch.vtensor<[],i1>
    %12 = torch.prim.ListConstruct %arg2, %3 : (!torch.vtensor<[?,1,?,?],f32>, !torch.vtensor<[?,1,?,?],f32>) -> !torch.list<vtensor>
    %13 = torch.aten.stack %12, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,?,1,?,?],f32>
    %cpu = torch.constant.device "cpu"
    %14 = torch.aten.scalar_tensor %int2, %int4, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],si64>
    return %11, %1, %13, %14 : !torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[2,?,1,?,?],f32>, !torch.vtensor<[],si64>
  }
  func.func private @false_graph_1(%arg0: !torch.vtensor<[],i1>, %arg1: !torch.vtensor<[?,3,?,?],f32>, %arg2: !torch.vtensor<[?,1,?,?],f32>) -> (!torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[2,?,1,?,?],f32>, !torch.vtensor<[],si64>) {
    %0 = torch.symbolic_int "batch" {min_val = 2, max_val = 16} : !torch.int
    %1 = torch.symbolic_int "h" {min_val = 8, max_val = 64} : !torch.int
    %2 = torch.symbolic_int "w" {min_val = 8, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg1, [%2, %1, %0], affine_map<()[s0, s1, s2] -> (s2, 3, s1, s0)> : !torch.vtensor<[?,3,?,?],f32>
    %false = torch.constant.bool false
    %none = torch.constant.none
    %int4 = torch.constant.int 4
    %int1 = torch.constant.int 1
    %int3 = torch.constant.int 3
    %int2 = torch.constant.int 2
    %int0 = torch.constant.int 0
    %3 = torch.aten.size.int %arg1, %int0 : !torch.vtensor<[?,3,?,?],f32>, !torch.int -> !torch.int
    %4 = torch.aten.size.int %arg1, %int2 : !torch.vtensor<[?,3,?,?],f32>, !torch.int -> !torch.int
    %5 = torch.aten.size.int %arg1, %int3 : !torch.vtensor<[?,3,?,?],f32>, !torch.int -> !torch.int
    %6 = torch.prim.ListConstruct %arg2 : (!torch.vtensor<[?,1,?,?],f32>) -> !torch.list<vtensor>
    %7 = torch.aten.stack %6, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[1,?,1,?,?],f32>
    %cpu = torch.constant.device "cpu"
    %8 = torch.aten.scalar_tensor %int1, %int4, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],si64>
    %9 = torch.prim.ListConstruct %int1, %3, %int1, %4, %5 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %10 = torch.aten.new_zeros %7, %9, %none, %none, %none, %false : !torch.vtensor<[1,?,1,?,?],f32>, !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[1,?,1,?,?],f32>
    %11 = torch.prim.ListConstruct %7, %10 : (!torch.vtensor<[1,?,1,?,?],f32>, !torch.vtensor<[1,?,1,?,?],f32>) -> !torch.list<vtensor>
    %12 = torch.aten.cat %11, %int0 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[2,?,1,?,?],f32>
    return %arg0, %arg1, %12, %8 : !torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[2,?,1,?,?],f32>, !torch.vtensor<[],si64>
  }
  func.func @main(%arg0: !torch.vtensor<[?,3,?,?],f32> {dync.shape = ["batch", 3, "h", "w"]}) -> (!torch.vtensor<[?,3,?,?],f32> {dync.shape = ["batch", 3, "h", "w"]}) attributes {dync.entry} {
    %0 = torch.symbolic_int "batch" {min_val = 2, max_val = 16} : !torch.int
    %1 = torch.symbolic_int "h" {min_val = 8, max_val = 64} : !torch.int
    %2 = torch.symbolic_int "w" {min_val = 8, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %arg0, [%2, %1, %0], affine_map<()[s0, s1, s2] -> (s2, 3, s1, s0)> : !torch.vtensor<[?,3,?,?],f32>
    %int4 = torch.constant.int 4
    %float6.000000e-01 = torch.constant.float 6.000000e-01
    %none = torch.constant.none
    %true = torch.constant.bool true
    %int1 = torch.constant.int 1
    %float1.000000e-01 = torch.constant.float 1.000000e-01
    %int3 = torch.constant.int 3
    %int2 = torch.constant.int 2
    %int0 = torch.constant.int 0
    %3 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,3,?,?],f32>, !torch.int -> !torch.int
    %4 = torch.aten.size.int %arg0, %int2 : !torch.vtensor<[?,3,?,?],f32>, !torch.int -> !torch.int
    %5 = torch.aten.size.int %arg0, %int3 : !torch.vtensor<[?,3,?,?],f32>, !torch.int -> !torch.int
    %6 = torch.aten.add.Scalar %arg0, %float1.000000e-01, %int1 : !torch.vtensor<[?,3,?,?],f32>, !torch.float, !torch.int -> !torch.vtensor<[?,3,?,?],f32>
    %7 = torch.aten.tanh %6 : !torch.vtensor<[?,3,?,?],f32> -> !torch.vtensor<[?,3,?,?],f32>
    %8 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %9 = torch.aten.mean.dim %7, %8, %true, %none : !torch.vtensor<[?,3,?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,1,?,?],f32>
    %10 = torch.aten.sum %7, %none : !torch.vtensor<[?,3,?,?],f32>, !torch.none -> !torch.vtensor<[],f32>
    %11 = torch.aten.gt.Scalar %10, %float6.000000e-01 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %12 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %13 = torch.aten.view %11, %12 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %14 = torch.aten.Bool.Tensor %13 : !torch.vtensor<[],i1> -> !torch.bool
    %15 = torch_c.to_i1 %14
    %16 = scf.if %15 -> (tensor<i1>) {
      %38 = func.call @true_graph_0() : () -> !torch.vtensor<[],i1>
      %39 = torch_c.to_builtin_tensor %38 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %39 : tensor<i1>
    } else {
      %38 = func.call @false_graph_0() : () -> !torch.vtensor<[],i1>
      %39 = torch_c.to_builtin_tensor %38 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %39 : tensor<i1>
    }
    %17 = torch_c.from_builtin_tensor %16 : tensor<i1> -> !torch.vtensor<[],i1>
    %18 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %19 = torch.aten.view %17, %18 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %20 = torch.aten.logical_not %19 : !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
    %21 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %22 = torch.aten.view %20, %21 : !torch.vtensor<[],i1>, !torch.list<int> -> !torch.vtensor<[],i1>
    %23 = torch.aten.Bool.Tensor %22 : !torch.vtensor<[],i1> -> !torch.bool
    %24 = torch_c.to_i1 %23
    %25:4 = scf.if %24 -> (tensor<i1>, tensor<?x3x?x?xf32>, tensor<2x?x1x?x?xf32>, tensor<i64>) {
      %38:4 = func.call @true_graph_1(%17, %7, %9) : (!torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[?,1,?,?],f32>) -> (!torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[2,?,1,?,?],f32>, !torch.vtensor<[],si64>)
      %39 = torch_c.to_builtin_tensor %38#3 : !torch.vtensor<[],si64> -> tensor<i64>
      %40 = torch_c.to_builtin_tensor %38#2 : !torch.vtensor<[2,?,1,?,?],f32> -> tensor<2x?x1x?x?xf32>
      %41 = torch_c.to_builtin_tensor %38#1 : !torch.vtensor<[?,3,?,?],f32> -> tensor<?x3x?x?xf32>
      %42 = torch_c.to_builtin_tensor %38#0 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %42, %41, %40, %39 : tensor<i1>, tensor<?x3x?x?xf32>, tensor<2x?x1x?x?xf32>, tensor<i64>
    } else {
      %38:4 = func.call @false_graph_1(%17, %7, %9) : (!torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[?,1,?,?],f32>) -> (!torch.vtensor<[],i1>, !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[2,?,1,?,?],f32>, !torch.vtensor<[],si64>)
      %39 = torch_c.to_builtin_tensor %38#3 : !torch.vtensor<[],si64> -> tensor<i64>
      %40 = torch_c.to_builtin_tensor %38#2 : !torch.vtensor<[2,?,1,?,?],f32> -> tensor<2x?x1x?x?xf32>
      %41 = torch_c.to_builtin_tensor %38#1 : !torch.vtensor<[?,3,?,?],f32> -> tensor<?x3x?x?xf32>
      %42 = torch_c.to_builtin_tensor %38#0 : !torch.vtensor<[],i1> -> tensor<i1>
      scf.yield %42, %41, %40, %39 : tensor<i1>, tensor<?x3x?x?xf32>, tensor<2x?x1x?x?xf32>, tensor<i64>
    }
    %26 = torch_c.from_builtin_tensor %25#3 : tensor<i64> -> !torch.vtensor<[],si64>
    %27 = torch_c.from_builtin_tensor %25#2 : tensor<2x?x1x?x?xf32> -> !torch.vtensor<[2,?,1,?,?],f32>
    %28 = torch_c.from_builtin_tensor %25#1 : tensor<?x3x?x?xf32> -> !torch.vtensor<[?,3,?,?],f32>
    torch.bind_symbolic_shape %28, [%2, %1, %0], affine_map<()[s0, s1, s2] -> (s2, 3, s1, s0)> : !torch.vtensor<[?,3,?,?],f32>
    %29 = torch.aten.item %26 : !torch.vtensor<[],si64> -> !torch.int
    %30 = torch.aten.slice.Tensor %27, %int0, %int0, %29, %int1 : !torch.vtensor<[2,?,1,?,?],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,?,1,?,?],f32>
    %31 = torch.prim.ListConstruct %int1, %int0, %int2, %int3, %int4 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %32 = torch.aten.permute %30, %31 : !torch.vtensor<[?,?,1,?,?],f32>, !torch.list<int> -> !torch.vtensor<[?,?,1,?,?],f32>
    %33 = torch.prim.ListConstruct %3, %29, %4, %5 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %34 = torch.aten.view %32, %33 : !torch.vtensor<[?,?,1,?,?],f32>, !torch.list<int> -> !torch.vtensor<[?,?,?,?],f32>
    %35 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %36 = torch.aten.mean.dim %34, %35, %true, %none : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,1,?,?],f32>
    %37 = torch.aten.add.Tensor %28, %36, %int1 : !torch.vtensor<[?,3,?,?],f32>, !torch.vtensor<[?,1,?,?],f32>, !torch.int -> !torch.vtensor<[?,3,?,?],f32>
    return %37 : !torch.vtensor<[?,3,?,?],f32>
  }
}
