// An IREE 3.13 crash dync works around (dync-rotate-while), pinned so that an upgrade that
// fixes it shows up here. A guarded do-while (dync-rotate-while's form of a while loop)
// carrying a tensor of a dynamic shape before a 0-d counter (`while h.sum() > 1 and i < 10`):
// the tensor's dim at the loop's entry (the argument's) and in its body (after IREE's
// `util.assume.int`) are two values, the conversion to stream forwards the dim as an extra
// loop value, leaves the loop's regions with disagreeing operand counts, and
// `ResourceUsage`'s analysis of the loop crashes (SIGSEGV, exit code 245). The same loop
// carrying the counter first compiles: dync-rotate-while orders the values of a static
// shape first. Written by hand after a model's crash.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null 2>&1 | FileCheck %s
// CHECK: ResourceUsage
module {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],si64>) {
    %0 = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
    torch.bind_symbolic_shape %arg0, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %int4 = torch.constant.int 4
    %int1 = torch.constant.int 1
    %int10 = torch.constant.int 10
    %none = torch.constant.none
    %false = torch.constant.bool false
    %cpu = torch.constant.device "cpu"
    %float1 = torch.constant.float 1.000000e+00
    %x = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %zero = torch.aten.scalar_tensor %int0, %int4, %none, %cpu, %false : !torch.int, !torch.int, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[],si64>
    %i0 = torch_c.to_builtin_tensor %zero : !torch.vtensor<[],si64> -> tensor<i64>
    %s0 = torch.aten.sum %arg0, %none : !torch.vtensor<[?,8],f32>, !torch.none -> !torch.vtensor<[],f32>
    %g0 = torch.aten.gt.Scalar %s0, %float1 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
    %b0 = torch.aten.Bool.Tensor %g0 : !torch.vtensor<[],i1> -> !torch.bool
    %c0 = torch_c.to_i1 %b0
    %r:2 = scf.if %c0 -> (tensor<?x8xf32>, tensor<i64>) {
      %w:2 = scf.while (%h = %x, %i = %i0) : (tensor<?x8xf32>, tensor<i64>) -> (tensor<?x8xf32>, tensor<i64>) {
        %ht = torch_c.from_builtin_tensor %h : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
        torch.bind_symbolic_shape %ht, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
        %it = torch_c.from_builtin_tensor %i : tensor<i64> -> !torch.vtensor<[],si64>
        %t = torch.aten.tanh %ht : !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
        torch.bind_symbolic_shape %t, [%0], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
        %s = torch.aten.sum %t, %none : !torch.vtensor<[?,8],f32>, !torch.none -> !torch.vtensor<[],f32>
        %g = torch.aten.gt.Scalar %s, %float1 : !torch.vtensor<[],f32>, !torch.float -> !torch.vtensor<[],i1>
        %n = torch.aten.add.Scalar %it, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
        %l = torch.aten.lt.Scalar %n, %int10 : !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[],i1>
        %both = torch.aten.logical_and %g, %l : !torch.vtensor<[],i1>, !torch.vtensor<[],i1> -> !torch.vtensor<[],i1>
        %bb = torch.aten.Bool.Tensor %both : !torch.vtensor<[],i1> -> !torch.bool
        %go = torch_c.to_i1 %bb
        %tb = torch_c.to_builtin_tensor %t : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
        %nb = torch_c.to_builtin_tensor %n : !torch.vtensor<[],si64> -> tensor<i64>
        scf.condition(%go) %tb, %nb : tensor<?x8xf32>, tensor<i64>
      } do {
      ^bb0(%h: tensor<?x8xf32>, %i: tensor<i64>):
        scf.yield %h, %i : tensor<?x8xf32>, tensor<i64>
      }
      scf.yield %w#0, %w#1 : tensor<?x8xf32>, tensor<i64>
    } else {
      scf.yield %x, %i0 : tensor<?x8xf32>, tensor<i64>
    }
    %o0 = torch_c.from_builtin_tensor %r#0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    %o1 = torch_c.from_builtin_tensor %r#1 : tensor<i64> -> !torch.vtensor<[],si64>
    return %o0, %o1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[],si64>
  }
}
