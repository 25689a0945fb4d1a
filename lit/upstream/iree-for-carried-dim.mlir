// An IREE 3.13 failure dync works around (dync-inline-subdnns), pinned so that an upgrade
// that fixes it shows up here. The loop of iree-while-forwarded-dim.mlir as an `scf.for` over
// a trip count (the form of an ONNX `Loop` whose condition is constant true): the step
// function binds the carried buffer and the sequence computed before the loop to one shape
// symbol. IREE does not crash on the `scf.for` but fails its flow stage ("'tensor.dim' op
// unexpected during shape cleanup"). With the step function inlined and one value of the
// symbol for the whole function, the module compiles and every row is written:
// tanh(0.5 + 1) = 0.905148.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAILS
// RUN: dync-opt %s --dync-inline-subdnns | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input=3x8xf32=0.5 | FileCheck %s
// FAILS: 'tensor.dim' op unexpected during shape cleanup
// CHECK: 3x8xf32=[0.905148 0.905148 0.905148 0.905148 0.905148 0.905148 0.905148 0.905148][0.905148 0.905148 0.905148 0.905148 0.905148 0.905148 0.905148 0.905148][0.905148 0.905148 0.905148 0.905148 0.905148 0.905148 0.905148 0.905148]
module {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,8],f32> {
    %zero = torch.vtensor.literal(dense<0> : tensor<si64>) : !torch.vtensor<[],si64>
    %p:2 = call @prepare(%arg0) : (!torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>)
    %i0 = torch_c.to_builtin_tensor %zero : !torch.vtensor<[],si64> -> tensor<i64>
    %b0 = torch_c.to_builtin_tensor %p#1 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %r:2 = scf.for %k = %c0 to %c3 step %c1 iter_args(%i = %i0, %b = %b0) -> (tensor<i64>, tensor<?x8xf32>) {
      %it = torch_c.from_builtin_tensor %i : tensor<i64> -> !torch.vtensor<[],si64>
      %bt = torch_c.from_builtin_tensor %b : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
      %s:3 = func.call @step(%it, %bt, %p#0) : (!torch.vtensor<[],si64>, !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[?,8],f32>, !torch.bool)
      %i1 = torch_c.to_builtin_tensor %s#0 : !torch.vtensor<[],si64> -> tensor<i64>
      %b1 = torch_c.to_builtin_tensor %s#1 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %i1, %b1 : tensor<i64>, tensor<?x8xf32>
    }
    %out = torch_c.from_builtin_tensor %r#1 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %out : !torch.vtensor<[?,8],f32>
  }
  func.func private @prepare(%arg0: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int8 = torch.constant.int 8
    %none = torch.constant.none
    %false = torch.constant.bool false
    %n = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %0 = torch.aten.add.Scalar %arg0, %int1, %int1 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
    %shape = torch.prim.ListConstruct %n, %int8 : (!torch.int, !torch.int) -> !torch.list<int>
    %1 = torch.aten.new_zeros %0, %shape, %none, %none, %none, %false : !torch.vtensor<[?,8],f32>, !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[?,8],f32>
    return %0, %1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>
  }
  func.func private @step(%i: !torch.vtensor<[],si64>, %acc: !torch.vtensor<[?,8],f32>, %seq: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[?,8],f32>, !torch.bool) {
    %t = torch.symbolic_int "t" {min_val = 2, max_val = 64} : !torch.int
    torch.bind_symbolic_shape %seq, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    torch.bind_symbolic_shape %acc, [%t], affine_map<()[s0] -> (s0, 8)> : !torch.vtensor<[?,8],f32>
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %l1 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %idx = torch.aten.view %i, %l1 : !torch.vtensor<[],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
    %row = torch.aten.index_select %seq, %int0, %idx : !torch.vtensor<[?,8],f32>, !torch.int, !torch.vtensor<[1],si64> -> !torch.vtensor<[1,8],f32>
    %row2 = torch.aten.tanh %row : !torch.vtensor<[1,8],f32> -> !torch.vtensor<[1,8],f32>
    %ix = torch.prim.ListConstruct %idx : (!torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
    %put = torch.aten.index_put %acc, %ix, %row2, %false : !torch.vtensor<[?,8],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,8],f32>, !torch.bool -> !torch.vtensor<[?,8],f32>
    %next = torch.aten.add.Scalar %i, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    %n = torch.aten.size.int %put, %int0 : !torch.vtensor<[?,8],f32>, !torch.int -> !torch.int
    %more = torch.aten.lt.Scalar %next, %n : !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[],i1>
    %go = torch.aten.Bool.Tensor %more : !torch.vtensor<[],i1> -> !torch.bool
    return %next, %put, %go : !torch.vtensor<[],si64>, !torch.vtensor<[?,8],f32>, !torch.bool
  }
}
