// An IREE 3.13 miscompile dync works around (dync-exact-loops), pinned so that an upgrade that
// fixes it shows up here. An scf.for whose carried tensor grows by a row per trip (an ONNX Loop
// scan output, a sequence built with torch.cat) comes back with the shape it started with: the
// five rows appended to an empty tensor come back as no rows. The same loop as an scf.while
// returns all five.
// RUN: iree-compile %s --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=grow_for --input=5 | FileCheck %s --check-prefix=FOR
// RUN: iree-run-module --module=%t.vmfb --device=local-sync --function=grow_while --input=5 | FileCheck %s --check-prefix=WHILE
// FOR: result[0]: hal.buffer_view
// FOR-NEXT: 0x1xf32
// WHILE: result[0]: hal.buffer_view
// WHILE-NEXT: 5x1xf32=[1][1][1][1][1]
func.func @grow_for(%trips: i64) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.index_cast %trips : i64 to index
  %empty = arith.constant dense<0.0> : tensor<0x1xf32>
  %start = tensor.cast %empty : tensor<0x1xf32> to tensor<?x1xf32>
  %rows = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %start) -> tensor<?x1xf32> {
    %row = arith.constant dense<1.0> : tensor<1x1xf32>
    %grown = tensor.concat dim(0) %acc, %row : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
    scf.yield %grown : tensor<?x1xf32>
  }
  return %rows : tensor<?x1xf32>
}
func.func @grow_while(%trips: i64) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.index_cast %trips : i64 to index
  %empty = arith.constant dense<0.0> : tensor<0x1xf32>
  %start = tensor.cast %empty : tensor<0x1xf32> to tensor<?x1xf32>
  %out:2 = scf.while (%i = %c0, %acc = %start) : (index, tensor<?x1xf32>) -> (index, tensor<?x1xf32>) {
    %more = arith.cmpi slt, %i, %n : index
    scf.condition(%more) %i, %acc : index, tensor<?x1xf32>
  } do {
  ^bb0(%j: index, %a: tensor<?x1xf32>):
    %row = arith.constant dense<1.0> : tensor<1x1xf32>
    %grown = tensor.concat dim(0) %a, %row : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
    %next = arith.addi %j, %c1 : index
    scf.yield %next, %grown : index, tensor<?x1xf32>
  }
  return %out#1 : tensor<?x1xf32>
}
