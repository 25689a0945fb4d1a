// An IREE 3.13 bug dync works around, pinned so that an upgrade that fixes it shows up here.
// A zero pad with data-dependent widths to a static shape, read by a convolution, fails
// under the channels-last preprocessing (dync-channels-last asks for it on the CPU): the pad's
// result becomes dynamic and the static collapse after it stays (the convolution's own
// padding moved into the pad, as here, or kept, the same). Without the preprocessing it
// compiles. It blocks size buckets that pad inside the module, where the image would not be
// copied whole on the host first (yolo_nms's peak, BENCHMARKS.md).
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic '--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))' -o /dev/null 2>&1 | FileCheck %s
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null
// CHECK: error: 'tensor.collapse_shape' op expected dimension 1 of collapsed type to be dynamic
func.func @main(%arg0: !torch.vtensor<[1,3,?,?],f32>, %h: !torch.int, %w: !torch.int) -> !torch.vtensor<[1,8,12,12],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %zero = torch.constant.float 0.000000e+00
  %pads = torch.prim.ListConstruct %int1, %w, %int1, %h : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %p = torch.aten.constant_pad_nd %arg0, %pads, %zero : !torch.vtensor<[1,3,?,?],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[1,3,26,26],f32>
  %wt = torch.vtensor.literal(dense<1.0> : tensor<8x3x3x3xf32>) : !torch.vtensor<[8,3,3,3],f32>
  %none = torch.constant.none
  %z = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %s = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %q = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %c = torch.aten.conv2d %p, %wt, %none, %s, %z, %q, %int1 : !torch.vtensor<[1,3,26,26],f32>, !torch.vtensor<[8,3,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,8,12,12],f32>
  return %c : !torch.vtensor<[1,8,12,12],f32>
}
