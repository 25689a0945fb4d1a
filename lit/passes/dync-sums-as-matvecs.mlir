// RUN: dync-opt %s --split-input-file --dync-sums-as-matvecs | FileCheck %s

// A sum over the dynamic last dim of [b, n]: a product with n ones (f32), the rows' sums,
// each new tensor bound from the input's binding; a mean over the last dim of [b, 4, n], kept
// as [b, 4, 1]: the rows flattened into one dim (torch-mlir lowers a product with a vector
// for a matrix only), the product viewed back as [b, 4] and divided by n, the last dim put
// back.
// CHECK-LABEL: func.func @rows
// CHECK:         %[[N:.+]] = torch.aten.size.int %arg0, %int1
// CHECK-NEXT:    %[[SHAPE:.+]] = torch.prim.ListConstruct %[[N]]
// CHECK:         %[[ONES:.+]] = torch.aten.ones %[[SHAPE]], %int6{{.*}} -> !torch.vtensor<[?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[ONES]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s1)>
// CHECK-NEXT:    %[[SUM:.+]] = torch.aten.matmul %arg0, %[[ONES]] : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor<[?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[SUM]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0)>
// CHECK-NOT:     torch.aten.sum.dim_IntList
// CHECK:         %[[N2:.+]] = torch.aten.size.int %arg1, %int2
// CHECK:         %[[FLAT:.+]] = torch.aten.flatten.using_ints %arg1, %int0{{.*}}, %int1{{.*}} -> !torch.vtensor<[?,?],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[FLAT]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0 * 4, s1)>
// CHECK:         %[[ONES2:.+]] = torch.aten.ones
// CHECK:         %[[PROD:.+]] = torch.aten.matmul %[[FLAT]], %[[ONES2]] : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor<[?],f32>
// CHECK:         %[[ROWS:.+]] = torch.aten.view %[[PROD]], %{{.+}} -> !torch.vtensor<[?,4],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[ROWS]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0, 4)>
// CHECK:         %[[MEAN:.+]] = torch.aten.div.Scalar %[[ROWS]], %[[N2]]
// CHECK:         %[[KEPT:.+]] = torch.aten.unsqueeze %[[MEAN]], %int2{{.*}} -> !torch.vtensor<[?,4,1],f32>
// CHECK-NEXT:    torch.bind_symbolic_shape %[[KEPT]], [%{{.+}}, %{{.+}}], affine_map<()[s0, s1] -> (s0, 4, 1)>
// CHECK-NOT:     torch.aten.mean.dim
// CHECK:         return %[[SUM]], %[[KEPT]]
module attributes {dync.backend = "llvm-cpu"} {
  func.func @rows(%arg0: !torch.vtensor<[?,?],f32>, %arg1: !torch.vtensor<[?,4,?],f32>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?,4,1],f32>) {
    %b = torch.symbolic_int "b" {min_val = 1, max_val = 16} : !torch.int
    %n = torch.symbolic_int "n" {min_val = 2, max_val = 4096} : !torch.int
    torch.bind_symbolic_shape %arg0, [%b, %n], affine_map<()[s0, s1] -> (s0, s1)> : !torch.vtensor<[?,?],f32>
    torch.bind_symbolic_shape %arg1, [%b, %n], affine_map<()[s0, s1] -> (s0, 4, s1)> : !torch.vtensor<[?,4,?],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %true = torch.constant.bool true
    %int-1 = torch.constant.int -1
    %int2 = torch.constant.int 2
    %last = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.sum.dim_IntList %arg0, %last, %false, %none : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    torch.bind_symbolic_shape %0, [%b, %n], affine_map<()[s0, s1] -> (s0)> : !torch.vtensor<[?],f32>
    %two = torch.prim.ListConstruct %int2 : (!torch.int) -> !torch.list<int>
    %1 = torch.aten.mean.dim %arg1, %two, %true, %none : !torch.vtensor<[?,4,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?,4,1],f32>
    torch.bind_symbolic_shape %1, [%b, %n], affine_map<()[s0, s1] -> (s0, 4, 1)> : !torch.vtensor<[?,4,1],f32>
    return %0, %1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?,4,1],f32>
  }
}

// -----

// Left alone: a static last dim (vectorized without a mask), a sum over a dim that is not the
// last (the lanes run along the last), a sum with a dtype, an f16 sum, two dims at once.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     torch.aten.matmul
// CHECK-COUNT-4: torch.aten.sum.dim_IntList
// CHECK:         torch.aten.mean.dim
// CHECK-NOT:     torch.aten.matmul
module attributes {dync.backend = "llvm-cpu"} {
  func.func @kept(%arg0: !torch.vtensor<[?,64],f32>, %arg1: !torch.vtensor<[?,?],f32>, %arg2: !torch.vtensor<[?,?],f16>) -> (!torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f64>, !torch.vtensor<[?],f16>, !torch.vtensor<[],f32>) {
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %int7 = torch.constant.int 7
    %last = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %first = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %both = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %0 = torch.aten.sum.dim_IntList %arg0, %last, %false, %none : !torch.vtensor<[?,64],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    %1 = torch.aten.sum.dim_IntList %arg1, %first, %false, %none : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    %2 = torch.aten.sum.dim_IntList %arg1, %last, %false, %int7 : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool, !torch.int -> !torch.vtensor<[?],f64>
    %3 = torch.aten.sum.dim_IntList %arg2, %last, %false, %none : !torch.vtensor<[?,?],f16>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f16>
    %4 = torch.aten.mean.dim %arg1, %both, %false, %none : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[],f32>
    return %0, %1, %2, %3, %4 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.vtensor<[?],f64>, !torch.vtensor<[?],f16>, !torch.vtensor<[],f32>
  }
}

// -----

// Left alone in a module that asks IREE for data tiling (the product's rows would be packed:
// a copy of the whole input).
// CHECK-LABEL: func.func @tiled
// CHECK-NOT:     torch.aten.matmul
// CHECK:         torch.aten.sum.dim_IntList
module attributes {dync.backend = "llvm-cpu", dync.iree_flags = ["--iree-opt-data-tiling"]} {
  func.func @tiled(%arg0: !torch.vtensor<[?,?],f32>) -> !torch.vtensor<[?],f32> {
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int1 = torch.constant.int 1
    %last = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.sum.dim_IntList %arg0, %last, %false, %none : !torch.vtensor<[?,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[?],f32>
    return %0 : !torch.vtensor<[?],f32>
  }
}

// -----

// A row declared at most 64 long stays a reduction (its masked steps cost less than the
// product's dispatch); one that may reach 65 becomes a product; a window's length, 4 at
// each n though no bound sees through its floors and remainders, stays.
// CHECK-LABEL: func.func @short
// CHECK:         torch.aten.sum.dim_IntList %arg0
// CHECK:         torch.aten.matmul %arg1
// CHECK:         torch.aten.sum.dim_IntList %arg2
// CHECK-NOT:     torch.aten.matmul
module attributes {dync.backend = "llvm-cpu"} {
  func.func @short(%arg0: !torch.vtensor<[8,?],f32>, %arg1: !torch.vtensor<[8,?],f32>, %arg2: !torch.vtensor<[8,?],f32>) -> (!torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>) {
    %n = torch.symbolic_int "n" {min_val = 2, max_val = 64} : !torch.int
    %m = torch.symbolic_int "m" {min_val = 2, max_val = 65} : !torch.int
    torch.bind_symbolic_shape %arg0, [%n], affine_map<()[s0] -> (8, s0)> : !torch.vtensor<[8,?],f32>
    torch.bind_symbolic_shape %arg1, [%m], affine_map<()[s0] -> (8, s0)> : !torch.vtensor<[8,?],f32>
    torch.bind_symbolic_shape %arg2, [%m], affine_map<()[s0] -> (8, (s0 + (s0 * 3) mod 4) floordiv ((s0 + (s0 * 3) mod 4) floordiv 4))> : !torch.vtensor<[8,?],f32>
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int1 = torch.constant.int 1
    %last = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
    %0 = torch.aten.sum.dim_IntList %arg0, %last, %false, %none : !torch.vtensor<[8,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
    %1 = torch.aten.sum.dim_IntList %arg1, %last, %false, %none : !torch.vtensor<[8,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
    %2 = torch.aten.sum.dim_IntList %arg2, %last, %false, %none : !torch.vtensor<[8,?],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[8],f32>
    return %0, %1, %2 : !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],f32>
  }
}
