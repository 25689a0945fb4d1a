// IREE 3.13 computes an in-place op in the buffer of the argument it imported, and returns that
// buffer: `y = x.clone(); y[:, 0] = 5; return y` becomes one dispatch that writes the column
// into `x`'s own buffer (`rw` on the import) and a result that is the argument itself. The ABI
// allows it (iree-org/iree#16168 is the same class: an input overwritten by a tied op), so dync
// copies each argument into a buffer of IREE's unless its stream-phase reading
// (`dync.iree_mends.argument_writes`) finds no command writing an imported resource and no
// argument returned; then the CPU runtime imports the caller's arrays without a copy. Pinned so
// that a change in what IREE writes shows up here.
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=stream -o %t.stream.mlir
// RUN: FileCheck %s --check-prefix=STREAM < %t.stream.mlir
// RUN: %PYTHON -m dync.iree_mends argument-writes < %t.stream.mlir | FileCheck %s --check-prefix=READ
// STREAM: util.func public @main$async(%[[VIEW:.+]]: !hal.buffer_view,
// STREAM: %[[IMPORT:.+]] = stream.tensor.import {{.*}} %[[VIEW]] : !hal.buffer_view
// STREAM: stream.cmd.execute {{.*}} with(%[[IMPORT]] as %[[CAPTURED:[a-z0-9]+]]:
// STREAM: rw %[[CAPTURED]][
// STREAM: util.return %[[VIEW]] : !hal.buffer_view
// READ: util.return takes an argument
module {
  func.func @main(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,8],f32> {
    %int1 = torch.constant.int 1
    %int0 = torch.constant.int 0
    %0 = torch.aten.select.int %arg0, %int1, %int0 : !torch.vtensor<[4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
    %1 = torch.vtensor.literal(dense<5.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
    %2 = torch.aten.fill.Tensor %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[4],f32>
    %3 = torch.aten.select_scatter %arg0, %2, %int1, %int0 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,8],f32>
    return %3 : !torch.vtensor<[4,8],f32>
  }
}
