// An IREE 3.13 importer bug (torch-mlir's convert-torch-onnx-to-torch) dync works around,
// pinned so that an upgrade that fixes it shows up here. A Scan over a dynamic length sizes
// its scan output's buffer by the result type's dims, -1 for the dynamic one (IREE then
// allocates one row) and scatters each step's row into an empty slice: the compiled model
// returned one row for n steps. The RNN and GRU lowerings size their `Y` the same way (IREE
// fails to compile them). dync rewrites such a Scan as a Loop whose trips concatenate
// (`dync/frontends/onnx_loops.py`) and lowers RNN/GRU itself (`onnx_recurrent.py`).
// RUN: iree-opt --convert-torch-onnx-to-torch %s | FileCheck %s
// CHECK: %[[SIZES:.*]] = torch.prim.ListConstruct %int-1, %int2
// CHECK: torch.aten.full %[[SIZES]]
// CHECK: torch.prim.Loop
// CHECK: torch.aten.slice_scatter %{{.*}}, %{{.*}}, %int0, %[[I:arg[0-9]+]], %[[I]],
func.func @main(%init: !torch.vtensor<[2],f32>, %xs: !torch.vtensor<[?,2],f32>) -> (!torch.vtensor<[2],f32>, !torch.vtensor<[?,2],f32>) attributes {torch.onnx_meta.opset_version = 16 : si64} {
  %0:2 = torch.operator "onnx.Scan"(%init, %xs) {torch.onnx.num_scan_inputs = 1 : si64} : (!torch.vtensor<[2],f32>, !torch.vtensor<[?,2],f32>) -> (!torch.vtensor<[2],f32>, !torch.vtensor<[?,2],f32>) {
  ^bb0(%s: !torch.vtensor<[2],f32>, %x: !torch.vtensor<[2],f32>):
    %1 = torch.operator "onnx.Add"(%s, %x) : (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
    torch.operator_terminator %1, %1 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>
  }
  return %0#0, %0#1 : !torch.vtensor<[2],f32>, !torch.vtensor<[?,2],f32>
}
