// An IREE 3.13 bug dync works around (dync-channels-last), pinned so that an upgrade that
// fixes it shows up here. A convolution, then a max pool with padding, over a dynamic batch
// (a ResNet stem): IREE's channels-last preprocessing turns the convolution NHWC and moves
// the transpose after it through the pool's `tensor.pad`, building the transposed pad's
// `tensor.empty` without the batch's size. Without the preprocessing it compiles; with the
// padding done in NHWC by dync-channels-last (the pad then reads the convolution's NHWC
// result, nothing moves through it) it compiles too.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic '--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))' -o /dev/null 2>&1 | FileCheck %s
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o /dev/null
// RUN: dync-opt %s --dync-channels-last | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic '--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))' -o /dev/null
// CHECK: error: 'tensor.empty' op incorrect number of dynamic sizes, has 0, expected 1
func.func @main(%arg0: !torch.vtensor<[?,3,16,16],f32>) -> !torch.vtensor<[?,8,8,8],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x3x1x1xf32>) : !torch.vtensor<[8,3,1,1],f32>
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %zeros = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %twos = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %threes = torch.prim.ListConstruct %int3, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.conv2d %arg0, %w, %none, %ones, %zeros, %ones, %int1 : !torch.vtensor<[?,3,16,16],f32>, !torch.vtensor<[8,3,1,1],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[?,8,16,16],f32>
  %1 = torch.aten.max_pool2d %0, %threes, %twos, %ones, %ones, %false : !torch.vtensor<[?,8,16,16],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,8,8,8],f32>
  return %1 : !torch.vtensor<[?,8,8,8],f32>
}
