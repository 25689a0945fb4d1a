// An IREE 3.13 limitation dync works around (a recurrent layer's loop runs several steps a trip:
// `frontends/pytorch/rewrite/recurrent.py`, STEPS_PER_TRIP), pinned so that an upgrade that
// lifts it shows up here. A loop that writes one row of its carried tensor per trip (an RNN's
// outputs, a decoder's tokens) copies the whole tensor on every trip: the conversion to the
// stream dialect puts a transfer on each carried block argument, which copy elision keeps, so
// the in-place update of the row becomes a copy of all rows then the row (O(trips²) bytes).
// RUN: iree-compile %s --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --compile-to=stream | FileCheck %s
// Each trip allocates a new buffer for the rows and copies all of them (%[[N]] bytes) into it
// before the dispatch writes its row there in place:
// CHECK-LABEL: util.func public @rows(
// CHECK:         cf.cond_br
// CHECK:         stream.resource.alloca uninitialized {{.*}} => !stream.resource<external>{%[[N:.+]]} =>
// CHECK:         stream.cmd.execute
// CHECK-NEXT:      stream.cmd.copy %{{.+}}[%c0], %{{.+}}[%c0], %[[N]] : !stream.resource<external>{%[[N]]} -> !stream.resource<external>{%[[N]]}
// CHECK-NEXT:      stream.cmd.dispatch
func.func @rows(%n: index, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%n) : tensor<?x8xf32>
  %start = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x8xf32>) -> tensor<?x8xf32>
  %rows = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %start) -> tensor<?x8xf32> {
    %in = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<1x8xf32>
    %e = tensor.empty() : tensor<1x8xf32>
    %row = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%in : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<1x8xf32>
    %next = tensor.insert_slice %row into %acc[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<?x8xf32>
    scf.yield %next : tensor<?x8xf32>
  }
  return %rows : tensor<?x8xf32>
}
