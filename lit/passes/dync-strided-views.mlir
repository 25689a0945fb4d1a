// RUN: dync-opt %s --split-input-file --dync-strided-views | FileCheck %s

// A column of a matrix (a select of its last dim), gathered: the column passes through a
// fence (IREE's `compute_barrier.start`, given its dynamic dim), bound as the column's, and
// the gather reads it; the column's other reader keeps the value before the fence.
// CHECK-LABEL: func.func @column_gathered
// CHECK:         %[[COL:.+]] = torch.aten.select.int %{{.+}}, %int1, %int1
// CHECK:         %[[T:.+]] = torch_c.to_builtin_tensor %[[COL]] : !torch.vtensor<[?],f32> -> tensor<?xf32>
// CHECK:         %[[B:.+]] = iree_tensor_ext.compute_barrier.start %[[T]] : tensor<?xf32>{%{{.+}}} -> tensor<?xf32>
// CHECK-NEXT:    %[[F:.+]] = torch_c.from_builtin_tensor %[[B]] : tensor<?xf32> -> !torch.vtensor<[?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[F]], [%{{.+}}], affine_map<()[s0] -> (s0)>
// CHECK:         torch.aten.index.Tensor %[[F]]
// CHECK:         return %{{.+}}, %[[COL]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @column_gathered(%y: !torch.vtensor<[?,3],f32>, %i: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>) {
    %n = torch.symbolic_int "n" {min_val = 2, max_val = 64} : !torch.int
    %int1 = torch.constant.int 1
    %col = torch.aten.select.int %y, %int1, %int1 : !torch.vtensor<[?,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %col, [%n], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
    %l = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %g = torch.aten.index.Tensor %col, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %g, [%n], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f32>
    return %g, %col : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>
  }
}

// -----

// Every other element of each row (a slice of the last dim with step 2), gathered by
// `index_select`: fenced. A row (a select of dim 0) and a slice of the last dim with step 1
// keep their elements adjacent: not fenced.
// CHECK-LABEL: func.func @strided_and_adjacent
// CHECK:         %[[S:.+]] = torch.aten.slice.Tensor %{{.+}}, %int1, %int0, %{{.+}}, %int2
// CHECK:         %[[T:.+]] = torch_c.to_builtin_tensor %[[S]]
// CHECK:         iree_tensor_ext.compute_barrier.start %[[T]]
// CHECK:         torch.aten.index_select
// CHECK-NOT:     compute_barrier
// CHECK:         return
module attributes {dync.backend = "llvm-cpu"} {
  func.func @strided_and_adjacent(%y: !torch.vtensor<[?,8],f32>, %i: !torch.vtensor<[4],si64>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[?,4],f32>) {
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int8 = torch.constant.int 8
    %strided = torch.aten.slice.Tensor %y, %int1, %int0, %int8, %int2 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,4],f32>
    %a = torch.aten.index_select %strided, %int1, %i : !torch.vtensor<[?,4],f32>, !torch.int, !torch.vtensor<[4],si64> -> !torch.vtensor<[?,4],f32>
    %row = torch.aten.select.int %y, %int0, %int0 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8],f32>
    %b = torch.aten.index_select %row, %int0, %i : !torch.vtensor<[8],f32>, !torch.int, !torch.vtensor<[4],si64> -> !torch.vtensor<[4],f32>
    %half = torch.aten.slice.Tensor %y, %int1, %int0, %int8, %int1 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,8],f32>
    %c = torch.aten.index_select %half, %int1, %i : !torch.vtensor<[?,8],f32>, !torch.int, !torch.vtensor<[4],si64> -> !torch.vtensor<[?,4],f32>
    return %a, %b, %c : !torch.vtensor<[?,4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[?,4],f32>
  }
}

// -----

// A slice one element wide of the last dim, its unit dim squeezed (`y.narrow(1, 2, 1)
// .squeeze(1)`), gathered: IREE drops the unit dim, leaving a column; the squeezed view is
// fenced.
// CHECK-LABEL: func.func @one_wide_slice_squeezed
// CHECK:         %[[Q:.+]] = torch.aten.squeeze.dim
// CHECK:         %[[T:.+]] = torch_c.to_builtin_tensor %[[Q]]
// CHECK:         iree_tensor_ext.compute_barrier.start %[[T]]
// CHECK:         torch.aten.index.Tensor
module attributes {dync.backend = "llvm-cpu"} {
  func.func @one_wide_slice_squeezed(%y: !torch.vtensor<[?,3],f32>, %i: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],f32> {
    %int1 = torch.constant.int 1
    %int2 = torch.constant.int 2
    %int3 = torch.constant.int 3
    %s = torch.aten.slice.Tensor %y, %int1, %int2, %int3, %int1 : !torch.vtensor<[?,3],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,1],f32>
    %q = torch.aten.squeeze.dim %s, %int1 : !torch.vtensor<[?,1],f32>, !torch.int -> !torch.vtensor<[?],f32>
    %l = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %g = torch.aten.index.Tensor %q, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
    return %g : !torch.vtensor<[?],f32>
  }
}

// -----

// Rows of a column written at indices (`z[..., 0][i] = -1`): the `index_put` writes the
// column through a fence; the `select_scatter` that puts it back reads the full tensor, left
// as it is.
// CHECK-LABEL: func.func @column_written
// CHECK:         %[[COL:.+]] = torch.aten.select.int %{{.+}}, %int2, %int0
// CHECK:         %[[T:.+]] = torch_c.to_builtin_tensor %[[COL]]
// CHECK:         %[[B:.+]] = iree_tensor_ext.compute_barrier.start %[[T]]
// CHECK-NEXT:    %[[F:.+]] = torch_c.from_builtin_tensor %[[B]]
// CHECK:         %[[W:.+]] = torch.aten.index_put %[[F]]
// CHECK-NOT:     compute_barrier
// CHECK:         torch.aten.select_scatter %{{.+}}, %[[W]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @column_written(%z: !torch.vtensor<[?,2,2],f32>, %i: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?,2,2],f32> {
    %int0 = torch.constant.int 0
    %int2 = torch.constant.int 2
    %false = torch.constant.bool false
    %column = torch.aten.select.int %z, %int2, %int0 : !torch.vtensor<[?,2,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,2],f32>
    %value = torch.vtensor.literal(dense<-1.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
    %indices = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %written = torch.aten.index_put %column, %indices, %value, %false : !torch.vtensor<[?,2],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[?,2],f32>
    %r = torch.aten.select_scatter %z, %written, %int2, %int0 : !torch.vtensor<[?,2,2],f32>, !torch.vtensor<[?,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,2,2],f32>
    return %r : !torch.vtensor<[?,2,2],f32>
  }
}

// -----

// A plane of an input written at indices (`x[0].index_put(...)`): a scatter into any part of
// a tensor is fenced, its elements adjacent or not; a gather from the same plane is not.
// CHECK-LABEL: func.func @plane_written
// CHECK:         %[[P:.+]] = torch.aten.select.int %{{.+}}, %int0, %int0
// CHECK:         %[[T:.+]] = torch_c.to_builtin_tensor %[[P]]
// CHECK:         %[[B:.+]] = iree_tensor_ext.compute_barrier.start %[[T]]
// CHECK-NEXT:    %[[F:.+]] = torch_c.from_builtin_tensor %[[B]]
// CHECK:         torch.aten.index_put %[[F]]
// CHECK-NOT:     compute_barrier
// CHECK:         torch.aten.index.Tensor %[[P]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @plane_written(%x: !torch.vtensor<[2,?,4],f32>, %i: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>) {
    %int0 = torch.constant.int 0
    %false = torch.constant.bool false
    %plane = torch.aten.select.int %x, %int0, %int0 : !torch.vtensor<[2,?,4],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,4],f32>
    %value = torch.vtensor.literal(dense<-1.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32>
    %indices = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %written = torch.aten.index_put %plane, %indices, %value, %false : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[?,4],f32>
    %read = torch.aten.index.Tensor %plane, %indices : !torch.vtensor<[?,4],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?,4],f32>
    return %written, %read : !torch.vtensor<[?,4],f32>, !torch.vtensor<[?,4],f32>
  }
}

// -----

// The same column for another backend: left as it is (the failure is in IREE's CPU code
// generation).
// CHECK-LABEL: func.func @column_for_cuda
// CHECK-NOT:     compute_barrier
module attributes {dync.backend = "cuda"} {
  func.func @column_for_cuda(%y: !torch.vtensor<[?,3],f32>, %i: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],f32> {
    %int1 = torch.constant.int 1
    %col = torch.aten.select.int %y, %int1, %int1 : !torch.vtensor<[?,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
    %l = torch.prim.ListConstruct %i : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
    %g = torch.aten.index.Tensor %col, %l : !torch.vtensor<[?],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[?],f32>
    return %g : !torch.vtensor<[?],f32>
  }
}
