// An IREE 3.13 failure dync works around (dync-running-extremes scans bool tensors in int8),
// pinned so that an upgrade that fixes it shows up here. A `tm_tensor.scan` over `i1` values
// (a running "any", as `cummax` of a bool tensor is) does not compile for the CPU: IREE
// stores i1 in bytes and retypes the scan's operands, not its combiner region, whose
// `arith.ori` is left over `i1` beside `i8` operands. The same scan over `i8` compiles and
// gives the running maximum.
// RUN: not iree-compile %s --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.vmfb 2>&1 | FileCheck %s
// RUN: sed -e 's/xi1>/xi8>/g' -e 's/<i1>/<i8>/g' -e 's/: i1$/: i8/' -e 's/%l: i1, %r: i1/%l: i8, %r: i8/' -e 's/constant false/constant 0 : i8/' -e 's/(%false : i1)/(%false : i8)/' %s | iree-compile - --iree-input-type=torch --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic -o %t.i8.vmfb
// RUN: iree-run-module --module=%t.i8.vmfb --device=local-sync --function=main --input="5xi8=0 0 1 0 1" | FileCheck %s --check-prefix=BYTES
// CHECK: 'arith.ori' op requires the same type for all operands and results
// BYTES: 5xi8=0 0 1 1 1
func.func @main(%x: tensor<?xi1>) -> tensor<?xi1> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xi1>
  %false = arith.constant false
  %init = tensor.empty(%n) : tensor<?xi1>
  %acc_empty = tensor.empty() : tensor<i1>
  %acc = linalg.fill ins(%false : i1) outs(%acc_empty : tensor<i1>) -> tensor<i1>
  %r:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<?xi1>) outs(%init, %acc : tensor<?xi1>, tensor<i1>) {
  ^bb0(%l: i1, %r: i1):
    %m = arith.ori %l, %r : i1
    tm_tensor.yield %m : i1
  } -> tensor<?xi1>, tensor<i1>
  return %r#0 : tensor<?xi1>
}
