// An IREE 3.13 cost dync pays for its barriers, pinned so that an upgrade that changes it
// shows up here. A `util.optimization_barrier` on a tensor between two dispatches makes the
// host wait for the first (`stream.timepoint.await`) and submit the second apart: a barrier
// on a value ends the execution region that computes it. Without the barrier the two
// elementwise ops are one dispatch in one submission. Measured with iree-benchmark-module
// (one thread, 64 floats): 2.2-2.5 us a call without, 3.3-3.6 with. Where dync only keeps
// two dispatches apart (dync-fence-reductions, dync-fence-gathered-reductions, a scatter's
// updates in dync-distinct-fills) it uses `iree_tensor_ext.compute_barrier.start` instead:
// two dispatches, no wait (the third RUN line). Its other barriers keep a value from CSE or
// folding, which a compute barrier does not, and each costs that wait between dispatches.
// RUN: iree-compile %s --compile-to=stream --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic | FileCheck %s
// RUN: sed -e 's/util.optimization_barrier %y :/tensor.cast %y : tensor<64xf32> to/' %s | iree-compile - --compile-to=stream --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic | FileCheck %s --check-prefix=FUSED
// CHECK: stream.cmd.execute
// CHECK: stream.timepoint.await
// CHECK: util.optimization_barrier
// CHECK: stream.cmd.execute
// RUN: sed -e 's/util.optimization_barrier %y :/iree_tensor_ext.compute_barrier.start %y : tensor<64xf32> ->/' %s | iree-compile - --compile-to=stream --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic | FileCheck %s --check-prefix=FENCED
// FENCED: stream.cmd.execute
// FENCED-COUNT-2: stream.cmd.dispatch
// FENCED-NOT: stream.cmd.execute
// FUSED: stream.cmd.execute
// FUSED-COUNT-1: stream.cmd.dispatch
// FUSED-NOT: stream.cmd.dispatch
// FUSED-NOT: stream.cmd.execute
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %yb = util.optimization_barrier %y : tensor<64xf32>
  %e2 = tensor.empty() : tensor<64xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%yb, %x : tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<64xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32):
    %m = arith.addf %a, %c : f32
    %s = math.sin %m : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %z : tensor<64xf32>
}
