// An IREE 3.13 miscompile that keeps dync from the cheapest zero padding, pinned so that an
// upgrade that fixes it shows up here. A convolution's padding fused into the op producing
// its input (`--iree-dispatch-creation-enable-fuse-padding-into-linalg-producer-ops`) would
// have the producer write the padded tensor itself: no padded copy (the default's cost in
// memory) and no padding of every tile inside the convolution (`dync-fuse-padding`'s cost in
// speed, 25-40%). But the result is wrong: relu(x + 1) of zeros convolved with a 3x3 filter
// of ones gives each output the count of its in-image neighbours (4 at the corners, 6 on the
// edges, 9 inside) without the flag, and counts that do not match any placement of the image
// in its border with it. (On the suite's CIFAR ResNet the first call differed from eager by
// 0.0121 for values up to 0.0264.)
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=main --input="1x1x4x4xf32=0" | FileCheck %s
// RUN: iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --iree-dispatch-creation-enable-fuse-padding-into-linalg-producer-ops -o %t.producer.vmfb
// RUN: iree-run-module --module=%t.producer.vmfb --device=local-sync --function=main --input="1x1x4x4xf32=0" | FileCheck %s --check-prefix=PRODUCER
// CHECK:          1x1x4x4xf32=[{{\[}}[4 6 6 4][6 9 9 6][6 9 9 6][4 6 6 4]]]
// PRODUCER:       1x1x4x4xf32=[{{\[}}[4 6 4 2][6 9 6 3][4 6 4 2][2 3 2 1]]]
func.func @main(%x: !torch.vtensor<[1,1,4,4],f32>) -> !torch.vtensor<[1,1,4,4],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %ones = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %w = torch.vtensor.literal(dense<1.0> : tensor<1x1x3x3xf32>) : !torch.vtensor<[1,1,3,3],f32>
  %f1 = torch.constant.float 1.0
  %y = torch.aten.add.Scalar %x, %f1, %int1 : !torch.vtensor<[1,1,4,4],f32>, !torch.float, !torch.int -> !torch.vtensor<[1,1,4,4],f32>
  %r = torch.aten.relu %y : !torch.vtensor<[1,1,4,4],f32> -> !torch.vtensor<[1,1,4,4],f32>
  %c = torch.aten.conv2d %r, %w, %none, %ones, %ones, %ones, %int1 : !torch.vtensor<[1,1,4,4],f32>, !torch.vtensor<[1,1,3,3],f32>, !torch.none, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.int -> !torch.vtensor<[1,1,4,4],f32>
  return %c : !torch.vtensor<[1,1,4,4],f32>
}
