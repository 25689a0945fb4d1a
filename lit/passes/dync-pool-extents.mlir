// RUN: dync-opt %s --split-input-file --dync-pool-extents | FileCheck %s

// A 3 x 4 image pooled by 2: the third row is in no window; the input is cut to two rows.
// CHECK-LABEL: func.func @max_pool_cut
// CHECK:         %[[CUT:.*]] = torch.aten.slice.Tensor %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !torch.vtensor<[?,1,3,4],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,1,2,4],f32>
// CHECK:         torch.aten.max_pool2d %[[CUT]], {{.*}} -> !torch.vtensor<[?,1,1,2],f32>
func.func @max_pool_cut(%x: !torch.vtensor<[?,1,3,4],f32>) -> !torch.vtensor<[?,1,1,2],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.max_pool2d %x, %k, %k, %p, %d, %false : !torch.vtensor<[?,1,3,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[?,1,1,2],f32>
  return %0 : !torch.vtensor<[?,1,1,2],f32>
}

// -----

// An average over a depth of 5 by 2 with stride 3: windows [0, 2) and [3, 5) reach the end;
// over 4 x 4 with stride 3 only [0, 2): the depth stays, height and width are cut to 2.
// CHECK-LABEL: func.func @avg_pool_3d
// CHECK:         %[[H:.*]] = torch.aten.slice.Tensor %arg0, {{.*}} -> !torch.vtensor<[2,3,5,2,4],f32>
// CHECK:         %[[W:.*]] = torch.aten.slice.Tensor %[[H]], {{.*}} -> !torch.vtensor<[2,3,5,2,2],f32>
// CHECK:         torch.aten.avg_pool3d %[[W]],
func.func @avg_pool_3d(%x: !torch.vtensor<[2,3,5,4,4],f32>) -> !torch.vtensor<[2,3,2,1,1],f32> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %none = torch.constant.none
  %k = torch.prim.ListConstruct %int2, %int2, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %s = torch.prim.ListConstruct %int3, %int3, %int3 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.avg_pool3d %x, %k, %s, %p, %false, %true, %none : !torch.vtensor<[2,3,5,4,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[2,3,2,1,1],f32>
  return %0 : !torch.vtensor<[2,3,2,1,1],f32>
}

// -----

// Left alone: windows that tile the axis (6 by 2), padding that covers the leftover (5 by 2
// padded by 1: the last window ends in the padding), ceil mode, a dynamic spatial size.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     torch.aten.slice.Tensor
// CHECK:         return
func.func @left_alone(%x: !torch.vtensor<[1,1,6,5],f32>, %y: !torch.vtensor<[1,1,?,4],f32>) -> (!torch.vtensor<[1,1,3,3],f32>, !torch.vtensor<[1,1,3,2],f32>, !torch.vtensor<[1,1,?,2],f32>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %z = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.max_pool2d %x, %k, %k, %p, %d, %false : !torch.vtensor<[1,1,6,5],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,3,3],f32>
  %1 = torch.aten.max_pool2d %x, %k, %k, %z, %d, %true : !torch.vtensor<[1,1,6,5],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,3,2],f32>
  %2 = torch.aten.max_pool2d %y, %k, %k, %z, %d, %false : !torch.vtensor<[1,1,?,4],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,?,2],f32>
  return %0, %1, %2 : !torch.vtensor<[1,1,3,3],f32>, !torch.vtensor<[1,1,3,2],f32>, !torch.vtensor<[1,1,?,2],f32>
}

// -----

// With indices, a 3 x 5 image by 2: both axes cut (to 2 x 4); the pool's indices count within
// a plane 4 wide, so each is taken apart (// 4 % 2, % 4) and put together over 5.
// CHECK-LABEL: func.func @max_pool_indices
// CHECK:         %[[CUT:.*]] = torch.aten.slice.Tensor {{.*}} -> !torch.vtensor<[1,1,2,4],f32>
// CHECK:         %[[V:.*]], %[[I:.*]] = torch.aten.max_pool2d_with_indices %[[CUT]],
// CHECK:         %[[ROW:.*]] = torch.aten.floor_divide.Scalar %[[I]], %int4
// CHECK:         %[[H:.*]] = torch.aten.remainder.Scalar %[[ROW]], %int2
// CHECK:         %[[W:.*]] = torch.aten.remainder.Scalar %[[I]], %int4
// CHECK:         %[[HW:.*]] = torch.aten.mul.Scalar %[[H]], %int5
// CHECK:         %[[J:.*]] = torch.aten.add.Tensor %[[HW]], %[[W]]
// CHECK:         return %[[V]], %[[J]]
func.func @max_pool_indices(%x: !torch.vtensor<[1,1,3,5],f32>) -> (!torch.vtensor<[1,1,1,2],f32>, !torch.vtensor<[1,1,1,2],si64>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %k = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %0:2 = torch.aten.max_pool2d_with_indices %x, %k, %k, %p, %d, %false : !torch.vtensor<[1,1,3,5],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,1,2],f32>, !torch.vtensor<[1,1,1,2],si64>
  return %0#0, %0#1 : !torch.vtensor<[1,1,1,2],f32>, !torch.vtensor<[1,1,1,2],si64>
}
