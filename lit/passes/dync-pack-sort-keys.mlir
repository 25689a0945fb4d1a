// RUN: dync-opt %s --split-input-file --dync-pack-sort-keys | FileCheck %s

// topk of a small constant k, largest first, over a dynamic batch: float bits ordered as ints
// (negatives flipped, NaN above +inf), times 2**32, plus the index counted down from
// 2**32 - 1: unique keys. No sort: k rounds, each the greatest key below the last round's
// (keys already taken read as the row's least), every reduction behind a barrier; the index
// back from the low bits, the values gathered at them.
// CHECK-LABEL: func.func @topk
// CHECK-NOT:     torch.aten.topk
// CHECK-NOT:     torch.aten.sort
// CHECK:         %[[BITS32:.*]] = torch.aten.view.dtype %arg0
// CHECK:         %[[BITS:.*]] = torch.aten.to.dtype %[[BITS32]]
// CHECK:         %[[NEG:.*]] = torch.aten.lt.Scalar %[[BITS]]
// CHECK:         %[[FLIP:.*]] = torch.aten.rsub.Scalar %[[BITS]], %int-2147483648
// CHECK:         %[[ORDER:.*]] = torch.aten.where.self %[[NEG]], %[[FLIP]], %[[BITS]]
// CHECK:         %[[NAN:.*]] = torch.aten.isnan %arg0
// CHECK:         %[[ORDER2:.*]] = torch.aten.masked_fill.Scalar %[[ORDER]], %[[NAN]], %int2147483647
// CHECK:         %[[IOTA:.*]] = torch.aten.arange %int8
// CHECK:         %[[ROW:.*]] = torch.aten.view %[[IOTA]], {{.*}} -> !torch.vtensor<[1,8],si64>
// CHECK:         %[[DOWN:.*]] = torch.aten.rsub.Scalar %[[ROW]], %int4294967295
// CHECK:         %[[HIGH:.*]] = torch.aten.mul.Scalar %[[ORDER2]], %int4294967296
// CHECK:         %[[KEYS0:.*]] = torch.aten.add.Tensor %[[HIGH]], %[[DOWN]]
// CHECK:         util.optimization_barrier
// CHECK:         %[[KEYS:.*]] = torch_c.from_builtin_tensor {{.*}} -> !torch.vtensor<[?,8],si64>
// CHECK:         torch.aten.amin %[[KEYS]]
// CHECK:         %[[LEAST:.*]] = torch_c.from_builtin_tensor {{.*}} -> !torch.vtensor<[?,1],si64>
// CHECK:         torch.aten.amax %[[KEYS]]
// CHECK:         %[[K1:.*]] = torch_c.from_builtin_tensor {{.*}} -> !torch.vtensor<[?,1],si64>
// CHECK:         %[[BELOW1:.*]] = torch.aten.lt.Tensor %[[KEYS]], %[[K1]]
// CHECK:         %[[LEFT1:.*]] = torch.aten.where.self %[[BELOW1]], %[[KEYS]], %[[LEAST]]
// CHECK:         torch.aten.amax %[[LEFT1]]
// CHECK:         %[[K2:.*]] = torch_c.from_builtin_tensor {{.*}} -> !torch.vtensor<[?,1],si64>
// CHECK:         %[[BELOW2:.*]] = torch.aten.lt.Tensor %[[KEYS]], %[[K2]]
// CHECK:         %[[LEFT2:.*]] = torch.aten.where.self %[[BELOW2]], %[[KEYS]], %[[LEAST]]
// CHECK:         torch.aten.amax %[[LEFT2]]
// CHECK:         %[[K3:.*]] = torch_c.from_builtin_tensor {{.*}} -> !torch.vtensor<[?,1],si64>
// CHECK:         %[[TOP:.*]] = torch.prim.ListConstruct %[[K1]], %[[K2]], %[[K3]]
// CHECK:         %[[CAT:.*]] = torch.aten.cat %[[TOP]], %int1{{.*}} -> !torch.vtensor<[?,3],si64>
// CHECK:         %[[LOW:.*]] = torch.aten.remainder.Scalar %[[CAT]], %int4294967296
// CHECK:         %[[IDX:.*]] = torch.aten.rsub.Scalar %[[LOW]], %int4294967295
// CHECK:         %[[VALUES:.*]] = torch.aten.gather %arg0, %int1, %[[IDX]]
// CHECK:         return %[[VALUES]], %[[IDX]]
func.func @topk(%x: !torch.vtensor<[?,8],f32>) -> (!torch.vtensor<[?,3],f32>, !torch.vtensor<[?,3],si64>) {
  %int3 = torch.constant.int 3
  %int-1 = torch.constant.int -1
  %true = torch.constant.bool true
  %values, %indices = torch.aten.topk %x, %int3, %int-1, %true, %true : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[?,3],f32>, !torch.vtensor<[?,3],si64>
  return %values, %indices : !torch.vtensor<[?,3],f32>, !torch.vtensor<[?,3],si64>
}

// -----

// A sort read only through leading slices along its dim (a ball query's
// `sort(...)[0][..., :k]`) takes the longest slice's k in rounds, smallest first; the slices
// read the first min(k, n), the length cut off again.
// CHECK-LABEL: func.func @sort_head
// CHECK-NOT:     torch.aten.sort
// CHECK-COUNT-5: torch.aten.amin
// CHECK-NOT:     torch.aten.amin
// CHECK:         %[[CAT:.*]] = torch.aten.cat {{.*}} -> !torch.vtensor<[4,5],si64>
// CHECK:         %[[IDX:.*]] = torch.aten.remainder.Scalar %[[CAT]], %int4294967296
// CHECK:         %[[VALUES:.*]] = torch.aten.gather %arg0, %int1{{.*}}, %[[IDX]]
// CHECK:         %[[N:.*]] = torch.aten.size.int %arg0, %int1
// CHECK:         %[[HEAD:.*]] = torch.aten.slice.Tensor %[[VALUES]], %int1{{.*}}, %int0{{.*}}, %[[N]], %int1{{.*}} -> !torch.vtensor<[4,?],si32>
// CHECK:         %[[N2:.*]] = torch.aten.size.int %arg0, %int1
// CHECK:         %[[HEADI:.*]] = torch.aten.slice.Tensor %[[IDX]], %int1{{.*}}, %int0{{.*}}, %[[N2]], %int1{{.*}} -> !torch.vtensor<[4,?],si64>
// CHECK:         %[[V:.*]] = torch.aten.slice.Tensor %[[HEAD]], %int1, %int0, %int2, %int1
// CHECK:         %[[I:.*]] = torch.aten.slice.Tensor %[[HEADI]], %int1, %int0, %int5, %int1
// CHECK:         return %[[V]], %[[I]]
func.func @sort_head(%x: !torch.vtensor<[4,?],si32>) -> (!torch.vtensor<[4,2],si32>, !torch.vtensor<[4,5],si64>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int5 = torch.constant.int 5
  %false = torch.constant.bool false
  %values, %indices = torch.aten.sort %x, %int1, %false : !torch.vtensor<[4,?],si32>, !torch.int, !torch.bool -> !torch.vtensor<[4,?],si32>, !torch.vtensor<[4,?],si64>
  %0 = torch.aten.slice.Tensor %values, %int1, %int0, %int2, %int1 : !torch.vtensor<[4,?],si32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,2],si32>
  %1 = torch.aten.slice.Tensor %indices, %int1, %int0, %int5, %int1 : !torch.vtensor<[4,?],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,5],si64>
  return %0, %1 : !torch.vtensor<[4,2],si32>, !torch.vtensor<[4,5],si64>
}

// -----

// A sort also read whole, along a dim of at most 512, is sorted whole, not in rounds: by
// ranks up to 64 elements (4 rows), by networks past them.
// CHECK-LABEL: func.func @sort_head_and_all
// CHECK:         torch.aten.le.int %{{.*}}, %int64
// CHECK:         torch.aten.sum.dim_IntList
// CHECK-NOT:     torch.aten.amin
// CHECK-NOT:     torch.aten.cumsum
func.func @sort_head_and_all(%x: !torch.vtensor<[4,?],si32>) -> (!torch.vtensor<[4,2],si32>, !torch.vtensor<[4,?],si64>) {
  %n = torch.symbolic_int "n" {min_val = 2, max_val = 512} : !torch.int
  torch.bind_symbolic_shape %x, [%n], affine_map<()[s0] -> (4, s0)> : !torch.vtensor<[4,?],si32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %values, %indices = torch.aten.sort %x, %int1, %false : !torch.vtensor<[4,?],si32>, !torch.int, !torch.bool -> !torch.vtensor<[4,?],si32>, !torch.vtensor<[4,?],si64>
  %0 = torch.aten.slice.Tensor %values, %int1, %int0, %int2, %int1 : !torch.vtensor<[4,?],si32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[4,2],si32>
  return %0, %indices : !torch.vtensor<[4,2],si32>, !torch.vtensor<[4,?],si64>
}

// -----

// int64 (no room for the index in a key) of unknown range: each round the least value not
// taken yet (taken ones read as the row's greatest), then its first position (none chosen:
// the last position, in range), marked taken.
// CHECK-LABEL: func.func @wide_topk
// CHECK-NOT:     torch.aten.topk
// CHECK-NOT:     torch.aten.sort
// CHECK:         %[[POS:.*]] = torch.aten.view {{.*}} -> !torch.vtensor<[?],si64>
// CHECK:         %[[LAST:.*]] = torch.aten.sub.int
// CHECK:         %[[X:.*]] = torch_c.from_builtin_tensor {{.*}} -> !torch.vtensor<[?],si64>
// CHECK:         torch.aten.amax %[[X]]
// CHECK:         %[[MOST:.*]] = torch_c.from_builtin_tensor
// CHECK:         torch.aten.amin %[[X]]
// CHECK:         %[[LEAST:.*]] = torch_c.from_builtin_tensor
// CHECK:         %[[AT:.*]] = torch.aten.eq.Tensor %[[X]], %[[LEAST]]
// CHECK:         %[[FIRST:.*]] = torch.aten.where.ScalarOther %[[AT]], %[[POS]], %[[LAST]]
// CHECK:         torch.aten.amin %[[FIRST]]
// CHECK:         %[[P1:.*]] = torch_c.from_builtin_tensor
// CHECK:         %[[TAKEN:.*]] = torch.aten.eq.Tensor %[[POS]], %[[P1]]
// CHECK:         %[[LEFT:.*]] = torch.aten.where.self %[[TAKEN]], %[[MOST]], %[[X]]
// CHECK:         torch.aten.logical_not %[[TAKEN]]
// CHECK:         %[[P2:.*]] = torch_c.from_builtin_tensor
// CHECK:         torch.aten.logical_or %[[TAKEN]]
// CHECK:         %[[TOP:.*]] = torch.prim.ListConstruct %[[P1]], %[[P2]]
// CHECK:         %[[IDX:.*]] = torch.aten.cat %[[TOP]]
// CHECK-NOT:     torch.aten.gather
// CHECK:         return %[[IDX]]
func.func @wide_topk(%x: !torch.vtensor<[?],si64>) -> !torch.vtensor<[2],si64> {
  %int2 = torch.constant.int 2
  %int0 = torch.constant.int 0
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %values, %indices = torch.aten.topk %x, %int2, %int0, %false, %true : !torch.vtensor<[?],si64>, !torch.int, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2],si64>, !torch.vtensor<[2],si64>
  return %indices : !torch.vtensor<[2],si64>
}

// -----

// argsort(stable=True), smallest first, of f16 along a dynamic dim of at most 48, in 2 rows:
// converted to f32 first, the length read at run time, the index counted up into the keys.
// A few rows (at most 16) of at most 64 are sorted by ranks, with no choice at run time: each
// key counts the keys below it (every pair compared, the compares summed), and each place then
// takes the position whose rank it is (a compare of every rank with every place, the matching
// position summed).
// CHECK-LABEL: func.func @argsort_stable
// CHECK-NOT:     torch.operator
// CHECK-NOT:     scf.if
// CHECK:         %[[F32:.*]] = torch.aten.to.dtype %arg0, %int6
// CHECK:         torch.aten.view.dtype %[[F32]], %int3
// CHECK:         %[[N:.*]] = torch.aten.size.int %arg0, %int1
// CHECK:         %[[IOTA:.*]] = torch.aten.arange %[[N]]
// CHECK:         %[[SHAPE:.*]] = torch.prim.ListConstruct %{{.*}}, %[[N]]
// CHECK:         %[[ROW:.*]] = torch.aten.view %[[IOTA]], %[[SHAPE]]
// CHECK:         %[[HIGH:.*]] = torch.aten.mul.Scalar
// CHECK-NEXT:    %[[KEYS:.*]] = torch.aten.add.Tensor %[[HIGH]], %[[ROW]]
// CHECK:         %[[OTHERS:.*]] = torch.aten.unsqueeze %[[KEYS]], %int1{{.*}} -> !torch.vtensor<[2,1,?],si64>
// CHECK:         %[[MINE:.*]] = torch.aten.unsqueeze %[[KEYS]], %int2{{.*}} -> !torch.vtensor<[2,?,1],si64>
// CHECK:         %[[BELOW:.*]] = torch.aten.lt.Tensor %[[OTHERS]], %[[MINE]] : {{.*}} -> !torch.vtensor<[2,?,?],i1>
// CHECK:         %[[RANKS:.*]] = torch.aten.sum.dim_IntList %[[BELOW]], {{.*}} -> !torch.vtensor<[2,?],si64>
// CHECK:         %[[RANKED:.*]] = torch.aten.unsqueeze %[[RANKS]], %int1{{.*}} -> !torch.vtensor<[2,1,?],si64>
// CHECK:         %[[PLACES:.*]] = torch.aten.unsqueeze %[[ROW]], %int2{{.*}} -> !torch.vtensor<[1,?,1],si64>
// CHECK:         %[[TAKEN:.*]] = torch.aten.eq.Tensor %[[RANKED]], %[[PLACES]] : {{.*}} -> !torch.vtensor<[2,?,?],i1>
// CHECK:         %[[FROM:.*]] = torch.aten.unsqueeze %[[ROW]], %int1{{.*}} -> !torch.vtensor<[1,1,?],si64>
// CHECK:         %[[CHOSEN:.*]] = torch.aten.where.ScalarOther %[[TAKEN]], %[[FROM]], %int0
// CHECK:         %[[IDX:.*]] = torch.aten.sum.dim_IntList %[[CHOSEN]], {{.*}} -> !torch.vtensor<[2,?],si64>
// CHECK-NEXT:    return %[[IDX]]
func.func @argsort_stable(%x: !torch.vtensor<[2,?],f16>) -> !torch.vtensor<[2,?],si64> {
  %n = torch.symbolic_int "n" {min_val = 1, max_val = 48} : !torch.int
  torch.bind_symbolic_shape %x, [%n], affine_map<()[s0] -> (2, s0)> : !torch.vtensor<[2,?],f16>
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %0 = torch.operator "torch.aten.argsort.stable"(%x, %true, %int1, %false) : (!torch.vtensor<[2,?],f16>, !torch.bool, !torch.int, !torch.bool) -> !torch.vtensor<[2,?],si64>
  return %0 : !torch.vtensor<[2,?],si64>
}

// -----

// msort of int32: the values are their own order, along dim 0.
// CHECK-LABEL: func.func @msort
// CHECK-NOT:     torch.operator
// CHECK-NOT:     torch.aten.view.dtype
// CHECK:         %[[ORDER:.*]] = torch.aten.to.dtype %arg0, %int4
// CHECK:         torch.aten.view {{.*}} -> !torch.vtensor<[5,1],si64>
// CHECK:         torch.aten.mul.Scalar %[[ORDER]], %int4294967296
// CHECK:         torch.aten.sort %{{.*}}, %int0{{.*}}, %false
// CHECK:         %[[VALUES:.*]] = torch.aten.gather %arg0, %int0
// CHECK:         return %[[VALUES]]
func.func @msort(%x: !torch.vtensor<[5,3],si32>) -> !torch.vtensor<[5,3],si32> {
  %0 = torch.operator "torch.aten.msort"(%x) : (!torch.vtensor<[5,3],si32>) -> !torch.vtensor<[5,3],si32>
  return %0 : !torch.vtensor<[5,3],si32>
}

// -----

// int64 has no room for the index in one key: two sorts of 32-bit digits. The low digit (the
// value modulo 2**32, shifted into int32's range) and the high one (the rest divided by 2**32,
// exactly: a truncating division of a multiple; torch-mlir computes a floor division in f32)
// of each value; the low digit's keys sorted first, the high digit gathered in that order and
// sorted stably (its keys carry the first sort's positions), the two permutations composed,
// the values gathered. For both sorts here, stable or not, eager's stable order.
// CHECK-LABEL: func.func @wide
// CHECK-NOT:     torch.operator
// CHECK-NOT:     torch.aten.floor_divide
// CHECK:         %[[REST:.*]] = torch.aten.remainder.Scalar %arg0, %int4294967296{{.*}}
// CHECK:         %[[MULTIPLE:.*]] = torch.aten.sub.Tensor %arg0, %[[REST]]
// CHECK:         %[[TRUNC:.*]] = torch.constant.str "trunc"
// CHECK:         %[[HIGH:.*]] = torch.aten.div.Scalar_mode %[[MULTIPLE]], %int4294967296{{.*}}, %[[TRUNC]]
// CHECK:         %[[LOW:.*]] = torch.aten.sub.Scalar %[[REST]], %int2147483648{{.*}}
// CHECK:         %[[LKEYS:.*]] = torch.aten.mul.Scalar %[[LOW]], %int4294967296{{.*}}
// CHECK:         %[[S1:.*]], %{{.*}} = torch.aten.sort %{{.*}}, %int0{{.*}}, %true
// CHECK:         %[[P1:.*]] = torch.aten.remainder.Scalar %[[S1]], %int4294967296{{.*}}
// CHECK:         %[[FIRST:.*]] = torch.aten.rsub.Scalar %[[P1]], %int4294967295{{.*}}
// CHECK:         %[[H1:.*]] = torch.aten.gather %[[HIGH]], %int0{{.*}}, %[[FIRST]]
// CHECK:         torch.aten.mul.Scalar %[[H1]], %int4294967296{{.*}}
// CHECK:         %[[S2:.*]], %{{.*}} = torch.aten.sort %{{.*}}, %int0{{.*}}, %true
// CHECK:         %[[P2:.*]] = torch.aten.remainder.Scalar %[[S2]], %int4294967296{{.*}}
// CHECK:         %[[SECOND:.*]] = torch.aten.rsub.Scalar %[[P2]], %int4294967295{{.*}}
// CHECK:         %[[IDX:.*]] = torch.aten.gather %[[FIRST]], %int0{{.*}}, %[[SECOND]]
// CHECK:         %[[VALUES:.*]] = torch.aten.gather %arg0, %int0{{.*}}, %[[IDX]]
// CHECK:         torch.aten.remainder.Scalar %arg0
// CHECK-COUNT-2: torch.aten.sort %{{.*}}, %int0{{.*}}, %false
// CHECK:         %[[IDX2:.*]] = torch.aten.gather
// CHECK:         return %[[VALUES]], %[[IDX]], %[[IDX2]]
func.func @wide(%x: !torch.vtensor<[7],si64>) -> (!torch.vtensor<[7],si64>, !torch.vtensor<[7],si64>, !torch.vtensor<[7],si64>) {
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %0:2 = torch.operator "torch.aten.sort.stable"(%x, %true, %int0, %true) : (!torch.vtensor<[7],si64>, !torch.bool, !torch.int, !torch.bool) -> (!torch.vtensor<[7],si64>, !torch.vtensor<[7],si64>)
  %values, %indices = torch.aten.sort %x, %int0, %false : !torch.vtensor<[7],si64>, !torch.int, !torch.bool -> !torch.vtensor<[7],si64>, !torch.vtensor<[7],si64>
  return %0#0, %0#1, %indices : !torch.vtensor<[7],si64>, !torch.vtensor<[7],si64>, !torch.vtensor<[7],si64>
}

// -----

// float64 (at most 100 long): its bits as int64, negatives flipped below -0.0, NaN a quiet NaN's bits (above
// +inf's, and exact through a float), then the two digit sorts, each by ranks (one row of at
// most 128: no choice at run time).
// CHECK-LABEL: func.func @wide_float
// CHECK:         %[[BITS:.*]] = torch.aten.view.dtype %arg0, %int4{{.*}}
// CHECK:         %[[NEG:.*]] = torch.aten.lt.Scalar %[[BITS]], %int0{{.*}}
// CHECK:         %[[FLIP:.*]] = torch.aten.rsub.Scalar %[[BITS]], %int-9223372036854775808{{.*}}
// CHECK:         %[[ORDER:.*]] = torch.aten.where.self %[[NEG]], %[[FLIP]], %[[BITS]]
// CHECK:         %[[NAN:.*]] = torch.aten.isnan %arg0
// CHECK:         %[[KEY:.*]] = torch.aten.masked_fill.Scalar %[[ORDER]], %[[NAN]], %int9221120237041090560{{.*}}
// CHECK:         torch.aten.remainder.Scalar %[[KEY]], %int4294967296{{.*}}
// CHECK-NOT:     torch.aten.sort
// CHECK-NOT:     scf.if
// CHECK:         torch.aten.lt.Tensor {{.*}} -> !torch.vtensor<[?,?],i1>
// CHECK:         torch.aten.lt.Tensor {{.*}} -> !torch.vtensor<[?,?],i1>
// CHECK-NOT:     torch.aten.constant_pad_nd
// CHECK-NOT:     torch.aten.sort
// CHECK:         return
func.func @wide_float(%x: !torch.vtensor<[?],f64>) -> !torch.vtensor<[?],si64> {
  %n = torch.symbolic_int "n" {min_val = 0, max_val = 100} : !torch.int
  torch.bind_symbolic_shape %x, [%n], affine_map<()[s0] -> (s0)> : !torch.vtensor<[?],f64>
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %values, %indices = torch.aten.sort %x, %int0, %false : !torch.vtensor<[?],f64>, !torch.int, !torch.bool -> !torch.vtensor<[?],f64>, !torch.vtensor<[?],si64>
  return %indices : !torch.vtensor<[?],si64>
}

// -----

// A dim nothing bounds: IREE's sort is O(n^2) on the CPU, so the length (known on the host)
// chooses in a chain of scf.ifs: up to 64 elements (3 rows) the ranks; up to 128, ..., 1024
// a bitonic network padded to that width (a static shape: the pad's own length dynamic, the
// keys past the length the greatest, 28 steps for 128, the first n positions sliced back);
// past 1024 (the networks of 2048 and 4096 would pass the module's budget of steps) a radix
// sort of the order's 32 bits, 4 bits a round, each a stable counting sort. The radix sort:
// the order made unsigned; the positions start as 0..n-1. A round: the
// digit (an exact truncating division past the first round, then modulo 16), one-hot against
// 0..15, its running count along the dim (int32), the row's counts (the last row of it), the
// count of smaller digits before each (an exclusive running sum of those), each element's
// destination (smaller digits + equal ones up to it - 1), and the positions scattered there.
// The next round's digits are read through the new positions; the last round's positions are
// the result.
// CHECK-LABEL: func.func @argsort_long
// CHECK:         %[[N:.*]] = torch.aten.size.int %arg0, %int1
// CHECK:         %[[SHORT:.*]] = torch.aten.le.int %[[N]], %int64
// CHECK:         %[[FLAG:.*]] = torch_c.to_i1 %[[SHORT]]
// CHECK:         %[[CHOSEN:.*]] = scf.if %[[FLAG]] -> (tensor<3x?xi64>) {
// CHECK-NOT:       torch.aten.cumsum
// CHECK-NOT:       torch.aten.sort
// CHECK:           torch.aten.lt.Tensor {{.*}} -> !torch.vtensor<[3,?,?],i1>
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:           torch.aten.eq.Tensor {{.*}} -> !torch.vtensor<[3,?,?],i1>
// CHECK:           torch.aten.sum.dim_IntList
// CHECK:           scf.yield
// CHECK-NEXT:    } else {
// CHECK:           %[[N128:.*]] = torch.aten.size.int %arg0, %int1
// CHECK:           torch.aten.le.int %[[N128]], %int128
// CHECK:           scf.if
// CHECK-NOT:         torch.aten.sort
// CHECK:             %[[PAD:.*]] = torch.aten.sub.int %int128{{.*}}, %[[LEN:.*]] :
// CHECK:             %[[PADS:.*]] = torch.prim.ListConstruct {{.*}}, %[[PAD]]
// CHECK:             %[[PADDED:.*]] = torch.aten.constant_pad_nd %{{.*}}, %[[PADS]], {{.*}} -> !torch.vtensor<[3,128],si64>
// CHECK:             %[[PAST:.*]] = torch.aten.ge.Scalar %{{.*}}, %[[LEN]]
// CHECK:             torch.aten.masked_fill.Scalar %[[PADDED]], %[[PAST]], %int2147483647
// CHECK-COUNT-28:    torch.aten.flip
// CHECK-NOT:         torch.aten.flip
// CHECK:             torch.aten.slice.Tensor %{{.*}}, %{{.*}}, %{{.*}}, %[[LEN]], {{.*}} -> !torch.vtensor<[3,?],si64>
// CHECK:             scf.yield
// CHECK-NEXT:      } else {
// CHECK:             torch.aten.le.int %{{.*}}, %int256
// CHECK:             torch.aten.le.int %{{.*}}, %int512
// CHECK:             torch.aten.le.int %{{.*}}, %int1024
// CHECK:             torch.aten.constant_pad_nd {{.*}} -> !torch.vtensor<[3,1024],si64>
// CHECK-COUNT-55:    torch.aten.flip
// CHECK-NOT:         torch.aten.flip
// CHECK-NOT:         torch.aten.sort
// CHECK:           %[[U:.*]] = torch.aten.add.Scalar %{{.*}}, %int2147483648
// CHECK:           %[[DIGITS:.*]] = torch.aten.arange %int16,
// CHECK:           %[[ZERO:.*]] = torch.aten.zeros_like %{{.*}} -> !torch.vtensor<[3,?],si64>
// CHECK:           %[[POS0:.*]] = torch.aten.add.Tensor %[[ZERO]], %{{.*}} -> !torch.vtensor<[3,?],si64>
// CHECK:           %[[LAST:.*]] = torch.aten.sub.int %{{.*}}, %int1{{.*}}
// CHECK:           %[[D:.*]] = torch.aten.remainder.Scalar %[[U]], %int16
// CHECK:           %[[COL:.*]] = torch.aten.unsqueeze %[[D]], %int2
// CHECK:           %[[EQ:.*]] = torch.aten.eq.Tensor %[[COL]], %[[DIGITS]] {{.*}} -> !torch.vtensor<[3,?,16],i1>
// CHECK:           %[[HOT:.*]] = torch.aten.to.dtype %[[EQ]], %int3
// CHECK:           %[[RUNNING:.*]] = torch.aten.cumsum %[[HOT]], %int1{{.*}}, %int3
// CHECK:           %[[COUNTS:.*]] = torch.aten.slice.Tensor %[[RUNNING]], %int1{{.*}}, %[[LAST]], {{.*}} -> !torch.vtensor<[3,1,16],si32>
// CHECK:           %[[UPTO:.*]] = torch.aten.cumsum %[[COUNTS]], %int2, %int3
// CHECK:           %[[BEFORE:.*]] = torch.aten.sub.Tensor %[[UPTO]], %[[COUNTS]]
// CHECK:           %[[END:.*]] = torch.aten.add.Tensor %[[RUNNING]], %[[BEFORE]]
// CHECK:           %[[SLOT:.*]] = torch.aten.sub.Scalar %[[END]], %int1{{.*}}
// CHECK:           %[[TAKEN:.*]] = torch.aten.gather %[[SLOT]], %int2, %[[COL]]
// CHECK:           %[[DEST:.*]] = torch.aten.squeeze.dim %[[TAKEN]], %int2
// CHECK:           %[[DEST64:.*]] = torch.aten.to.dtype %[[DEST]], %int4
// CHECK:           %[[INTO:.*]] = torch.aten.zeros_like %[[POS0]]
// CHECK:           %[[POS1:.*]] = torch.aten.scatter.src %[[INTO]], %int1{{.*}}, %[[DEST64]], %[[POS0]]
// CHECK:           %[[KEYS:.*]] = torch.aten.gather %[[U]], %int1{{.*}}, %[[POS1]]
// CHECK:           torch.aten.div.Scalar_mode %[[KEYS]], %int16,
// CHECK-COUNT-6:   torch.aten.scatter.src
// CHECK:           %[[POS8:.*]] = torch.aten.scatter.src
// CHECK-NOT:       torch.aten.scatter.src
// CHECK:           %[[OUT:.*]] = torch_c.to_builtin_tensor %[[POS8]]
// CHECK-NEXT:      scf.yield %[[OUT]]
// CHECK-NEXT:    }
// CHECK-COUNT-4: scf.yield
// CHECK:         %[[IDX:.*]] = torch_c.from_builtin_tensor %[[CHOSEN]]
// CHECK-NEXT:    return %[[IDX]]
func.func @argsort_long(%x: !torch.vtensor<[3,?],f32>) -> !torch.vtensor<[3,?],si64> {
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %0 = torch.aten.argsort %x, %int1, %false : !torch.vtensor<[3,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,?],si64>
  return %0 : !torch.vtensor<[3,?],si64>
}

// -----

// Descending, along a static dim of 600 (a bitonic network, no choice at run time): the
// complement of the order, padded to 1024 with the greatest order, as keys that carry the
// positions; 10 * 11 / 2 = 55 compare-exchange steps, each with its partner at i ^ d (a flip
// of a view) and the least or greatest kept; the first 600 keys' positions, and the values
// gathered at them.
// CHECK-LABEL: func.func @sort_descending_long
// CHECK-NOT:     torch.aten.sort
// CHECK-NOT:     scf.if
// CHECK:         %[[ORDER:.*]] = torch.aten.bitwise_not
// CHECK:         %[[PADDED:.*]] = torch.aten.constant_pad_nd %[[ORDER]], {{.*}} -> !torch.vtensor<[1024],si64>
// CHECK:         torch.aten.masked_fill.Scalar %[[PADDED]], %{{.*}}, %int2147483647
// CHECK:         %[[PAIRS:.*]] = torch.aten.flip
// CHECK:         %[[PARTNER:.*]] = torch.aten.view %[[PAIRS]]
// CHECK:         %[[LEAST:.*]] = torch.aten.minimum %{{.*}}, %[[PARTNER]]
// CHECK:         %[[GREATEST:.*]] = torch.aten.maximum %{{.*}}, %[[PARTNER]]
// CHECK:         torch.aten.where.self %{{.*}}, %[[LEAST]], %[[GREATEST]]
// CHECK-COUNT-54: torch.aten.flip
// CHECK-NOT:     torch.aten.flip
// CHECK:         %[[FIRST:.*]] = torch.aten.slice.Tensor %{{.*}}, %{{.*}}, %{{.*}}, %int600, %{{.*}} : !torch.vtensor<[1024],si64>
// CHECK:         torch.aten.remainder.Scalar %[[FIRST]], %int4294967296
// CHECK:         %[[VALUES:.*]] = torch.aten.gather %arg0, %int0
// CHECK:         return %[[VALUES]]
func.func @sort_descending_long(%x: !torch.vtensor<[600],si32>) -> !torch.vtensor<[600],si32> {
  %true = torch.constant.bool true
  %int0 = torch.constant.int 0
  %values, %indices = torch.aten.sort %x, %int0, %true : !torch.vtensor<[600],si32>, !torch.int, !torch.bool -> !torch.vtensor<[600],si32>, !torch.vtensor<[600],si64>
  return %values : !torch.vtensor<[600],si32>
}

// -----

// Two sorts along a dim of at most 300 in one module, after a sort along a static 600 (its
// network is not the budget's): the first takes the ranks up to 64 and networks up to 512
// (the widest it may need; no radix sort), 109 steps of the module's 200; the second
// networks while they fit (128 and 256: 64 steps), then the radix sort past 256.
// CHECK-LABEL: func.func @budget
// CHECK:         torch.aten.constant_pad_nd {{.*}} -> !torch.vtensor<[1024],si64>
// CHECK:         torch.aten.le.int %{{.*}}, %int64
// CHECK:         torch.aten.le.int %{{.*}}, %int128
// CHECK:         torch.aten.le.int %{{.*}}, %int256
// CHECK-NOT:     torch.aten.le.int %{{.*}}, %int512
// CHECK:         torch.aten.constant_pad_nd {{.*}} -> !torch.vtensor<[3,512],si64>
// CHECK-NOT:     torch.aten.cumsum
// CHECK:         torch.aten.le.int %{{.*}}, %int64
// CHECK:         torch.aten.le.int %{{.*}}, %int128
// CHECK:         torch.aten.le.int %{{.*}}, %int256
// CHECK:         torch.aten.constant_pad_nd {{.*}} -> !torch.vtensor<[3,256],si64>
// CHECK-NOT:     torch.aten.constant_pad_nd {{.*}} -> !torch.vtensor<[3,512],si64>
// CHECK:         torch.aten.cumsum
// CHECK:         return
func.func @budget(%x: !torch.vtensor<[3,?],f32>, %s: !torch.vtensor<[600],f32>) -> (!torch.vtensor<[3,?],si64>, !torch.vtensor<[3,?],si64>, !torch.vtensor<[600],si64>) {
  %n = torch.symbolic_int "n" {min_val = 2, max_val = 300} : !torch.int
  torch.bind_symbolic_shape %x, [%n], affine_map<()[s0] -> (3, s0)> : !torch.vtensor<[3,?],f32>
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %2 = torch.aten.argsort %s, %int0, %false : !torch.vtensor<[600],f32>, !torch.int, !torch.bool -> !torch.vtensor<[600],si64>
  %0 = torch.aten.argsort %x, %int1, %false : !torch.vtensor<[3,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,?],si64>
  %1 = torch.aten.argsort %x, %int1, %true : !torch.vtensor<[3,?],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3,?],si64>
  return %0, %1, %2 : !torch.vtensor<[3,?],si64>, !torch.vtensor<[3,?],si64>, !torch.vtensor<[600],si64>
}
