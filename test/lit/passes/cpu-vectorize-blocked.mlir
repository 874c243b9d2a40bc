// RUN: kiln-opt %s --split-input-file --kiln-cpu-vectorize-blocked | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-vectorize-blocked=vector-bits=256 | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --split-input-file --kiln-cpu-vectorize-blocked=winograd=0 | FileCheck %s --check-prefix=DIRECT

// A blocked 3x3 conv of 16 -> 32 channels on 8x8 (input padded by one
// row and column), its bias broadcast first and a residual Add + Relu
// after it: tasks of one output row for both output blocks; the weights
// packed at compile time as [1][1][16][3][3][32]; rows 0 and 7 skip the
// kernel row on the padding (their own unrolled taps); the accumulators
// start from the bias, take the residual and the Relu, and are stored.
// The weights are small: tasks rows outer (a row's task index divided by
// the one block group first), no prefetch of the next group's weights.
// CHECK: memref.global "private" constant @w_blocked2 : memref<1x1x16x3x3x32xf32>
// CHECK-LABEL: func.func @conv
// CHECK-NOT: memref.alloc
// CHECK: memref.get_global @w_blocked2
// CHECK: scf.for %[[T:.*]] = %c0{{.*}} to %c8{{.*}} step %c1
// CHECK: arith.remui %[[T]], %c1
// CHECK: vector.load %{{.*}} : memref<2x16xf32>, vector<16xf32>
// CHECK: scf.if
// CHECK-NOT: memref.prefetch
// CHECK: vector.fma
// CHECK: vector.load %{{.*}} : memref<1x2x8x8x16xf32>, vector<16xf32>
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<1x2x8x8x16xf32>, vector<16xf32>
// CHECK: } {kiln.parallel
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @conv
// AVX2: linalg.generic
memref.global "private" constant @w : memref<32x16x3x3xf32> = dense<1.000000e-01> {alignment = 64 : i64}
memref.global "private" constant @b : memref<32xf32> = dense<5.000000e-01> {alignment = 64 : i64}
#bias = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d2 + d6, d3 + d7, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1 * 16 + d4, d5 * 16 + d8, d6, d7)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
func.func @conv(%x: memref<1x1x10x10x16xf32>, %r: memref<1x2x8x8x16xf32>, %y: memref<1x2x8x8x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %w = memref.get_global @w : memref<32x16x3x3xf32>
  %b = memref.get_global @b : memref<32xf32>
  %be = memref.expand_shape %b [[0, 1]] output_shape [2, 16] : memref<32xf32> into memref<2x16xf32>
  %acc = memref.alloc() {alignment = 64 : i64} : memref<1x2x8x8x16xf32>
  linalg.generic {indexing_maps = [#bias, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%be : memref<2x16xf32>) outs(%acc : memref<1x2x8x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x1x10x10x16xf32>, memref<32x16x3x3xf32>) outs(%acc : memref<1x2x8x8x16xf32>) attrs = {kiln.blocked_conv = array<i64: 1, 9>} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%acc, %r : memref<1x2x8x8x16xf32>, memref<1x2x8x8x16xf32>) outs(%y : memref<1x2x8x8x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    %1 = arith.cmpf olt, %0, %cst : f32
    %2 = arith.select %1, %cst, %0 : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// A blocked 3x3 conv of 32 -> 32 channels on 7x7 as Winograd F(2x2, 3x3)
// tiles: the weights as G g G^T, [16][1][32][32]; a task per pair of
// output rows (4) with its V and M in thread scratch [16][4 tiles][32];
// the odd plane's 4th input row and column past x read as zeros, the
// second output row and column past the plane not stored; the bias and
// the Relu in the store. winograd=0: the direct tiles.
// CHECK: memref.global "private" constant @w2_winograd2 : memref<16x1x32x32xf32>
// CHECK-LABEL: func.func @winograd
// CHECK: memref.get_global @w2_winograd2
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<16x4x32xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<16x4x32xf32>
// CHECK: arith.select %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<16x4x32xf32>, vector<16xf32>
// CHECK: vector.fma
// CHECK: scf.if
// CHECK: arith.select
// CHECK: vector.store %{{.*}} : memref<1x2x7x7x16xf32>, vector<16xf32>
// CHECK: } {kiln.parallel
// CHECK-NOT: linalg.generic
// DIRECT-LABEL: func.func @winograd
// DIRECT-NOT: memref.alloc
// DIRECT: memref.get_global @w2_blocked2
memref.global "private" constant @w2 : memref<32x32x3x3xf32> = dense<1.000000e-01> {alignment = 64 : i64}
memref.global "private" constant @b2 : memref<32xf32> = dense<5.000000e-01> {alignment = 64 : i64}
#bias = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d2 + d6, d3 + d7, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1 * 16 + d4, d5 * 16 + d8, d6, d7)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
func.func @winograd(%x: memref<1x2x9x9x16xf32>, %y: memref<1x2x7x7x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %w = memref.get_global @w2 : memref<32x32x3x3xf32>
  %b = memref.get_global @b2 : memref<32xf32>
  %be = memref.expand_shape %b [[0, 1]] output_shape [2, 16] : memref<32xf32> into memref<2x16xf32>
  %acc = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x7x16xf32>
  linalg.generic {indexing_maps = [#bias, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%be : memref<2x16xf32>) outs(%acc : memref<1x2x7x7x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x2x9x9x16xf32>, memref<32x32x3x3xf32>) outs(%acc : memref<1x2x7x7x16xf32>) attrs = {kiln.blocked_conv = array<i64: 1, 8>} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%acc : memref<1x2x7x7x16xf32>) outs(%y : memref<1x2x7x7x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.cmpf olt, %in, %cst : f32
    %2 = arith.select %1, %cst, %in : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// A 3x3 stride-2 max pool padded by one (-inf): the source read as it
// lies (the padded copy and its fill gone), border rows and columns over
// their own taps, the inner positions 4 at a time; each max a compare and
// select pair that keeps NaNs.
// CHECK-LABEL: func.func @pool
// CHECK-NOT: memref.copy
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1
// CHECK: scf.if
// CHECK: vector.load %{{.*}} : memref<1x2x15x15x16xf32>, vector<16xf32>
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: vector.store %{{.*}} : memref<1x2x8x8x16xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 * 2 + d5, d3 * 2 + d6, d4)>
#k = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>
func.func @pool(%src: memref<1x2x15x15x16xf32>, %y: memref<1x2x8x8x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x17x17x16xf32>
  linalg.fill ins(%ninf : f32) outs(%p : memref<1x2x17x17x16xf32>)
  %sv = memref.subview %p[0, 0, 1, 1, 0] [1, 2, 15, 15, 16] [1, 1, 1, 1, 1] : memref<1x2x17x17x16xf32> to memref<1x2x15x15x16xf32, strided<[9248, 4624, 272, 16, 1], offset: 288>>
  memref.copy %src, %sv : memref<1x2x15x15x16xf32> to memref<1x2x15x15x16xf32, strided<[9248, 4624, 272, 16, 1], offset: 288>>
  %win = memref.alloc() : memref<3x3xf32>
  linalg.fill ins(%ninf : f32) outs(%y : memref<1x2x8x8x16xf32>)
  linalg.generic {indexing_maps = [#x, #k, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %win : memref<1x2x17x17x16xf32>, memref<3x3xf32>) outs(%y : memref<1x2x8x8x16xf32>) attrs = {kiln.blocked_window} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Reorders into blocks and back on a 20-wide row: a chunk of 16 positions
// and one of 4, each a 16 x 16 transpose in registers.
// CHECK-LABEL: func.func @reorders
// CHECK: vector.load %{{.*}} : memref<1x32x3x20xf32>, vector<16xf32>
// CHECK: vector.shuffle
// CHECK: vector.store %{{.*}} : memref<1x2x3x20x16xf32>, vector<16xf32>
// CHECK: vector.transfer_read
// CHECK: vector.load %{{.*}} : memref<1x2x3x20x16xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<1x32x3x20xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<1x32x3x20xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
#to = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 16 + d4, d2, d3)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#from = affine_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3, d1 mod 16)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @reorders(%x: memref<1x32x3x20xf32>, %b: memref<1x2x3x20x16xf32>, %y: memref<1x32x3x20xf32>) {
  linalg.generic {indexing_maps = [#to, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x32x3x20xf32>) outs(%b : memref<1x2x3x20x16xf32>) attrs = {kiln.to_blocked} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#from, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<1x2x3x20x16xf32>) outs(%y : memref<1x32x3x20xf32>) attrs = {kiln.from_blocked} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A 1x1 conv of 512 -> 256 channels (512 KiB of weights, past what each
// core keeps in L2): tasks blocks outer (a task index's row is its
// remainder by the 4 rows), each tile prefetching the next group's
// weights. The 3x3 max pool of its output and the global pool of the
// pool's split blocks outer too, as the threads before them wrote their
// input (a task index's row its remainder by the 2 rows).
// CHECK-LABEL: func.func @wide_conv
// CHECK: scf.for %[[T:.*]] = %c0{{.*}} to %c32{{.*}} step %c1
// CHECK: arith.remui %[[T]], %c4
// CHECK: memref.prefetch
// CHECK: vector.fma
// CHECK: } {kiln.parallel
// CHECK: scf.for %[[W:.*]] = %c0{{.*}} to %c32{{.*}} step %c1
// CHECK: arith.remui %[[W]], %c2
// CHECK: } {kiln.parallel
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x16x2x16xf32>
// CHECK: scf.for %[[G:.*]] = %c0{{.*}} to %c32{{.*}} step %c1
// CHECK: arith.remui %[[G]], %c2
memref.global "private" constant @w2 : memref<256x512x1x1xf32> = dense<1.000000e-02> {alignment = 64 : i64}
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d2 + d6, d3 + d7, d8)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1 * 16 + d4, d5 * 16 + d8, d6, d7)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
#sum = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#px = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2 + d5, d3 + d6, d4)>
#pk = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d5, d6)>
#py = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>
func.func @wide_conv(%x: memref<1x32x4x4x16xf32>, %y: memref<1x16x4x4x16xf32>, %m: memref<1x16x2x2x16xf32>, %s: memref<1x16x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %w = memref.get_global @w2 : memref<256x512x1x1xf32>
  linalg.fill ins(%cst : f32) outs(%y : memref<1x16x4x4x16xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x32x4x4x16xf32>, memref<256x512x1x1xf32>) outs(%y : memref<1x16x4x4x16xf32>) attrs = {kiln.blocked_conv = array<i64: 0, 4>} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  %ninf = arith.constant 0xFF800000 : f32
  %win = memref.alloc() : memref<3x3xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<1x16x2x2x16xf32>)
  linalg.generic {indexing_maps = [#px, #pk, #py], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%y, %win : memref<1x16x4x4x16xf32>, memref<3x3xf32>) outs(%m : memref<1x16x2x2x16xf32>) attrs = {kiln.blocked_window} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%cst : f32) outs(%s : memref<1x16x16xf32>)
  linalg.generic {indexing_maps = [#id5, #sum], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%m : memref<1x16x2x2x16xf32>) outs(%s : memref<1x16x16xf32>) attrs = {kiln.blocked_global_pool} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A global average pool's sum over a blocked 3x5 plane of 2 blocks: tasks
// of one row of a block, rows outer, each row folded with four
// accumulators (positions 0-3, then 4 into the first) into a partial;
// then each block's 3 partials added in row order to the output's fill.
// CHECK-LABEL: func.func @global_pool
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x3x16xf32>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c6{{.*}} step %c1
// CHECK-COUNT-5: vector.load %{{.*}} : memref<1x2x3x5x16xf32>, vector<16xf32>
// CHECK-COUNT-4: arith.addf %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[P]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1
// CHECK: vector.load %{{.*}} : memref<1x2x16xf32>, vector<16xf32>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c3{{.*}} step %c1
// CHECK: vector.load %[[P]]
// CHECK: arith.addf
// CHECK: vector.store %{{.*}} : memref<1x2x16xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#sum = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
func.func @global_pool(%x: memref<1x2x3x5x16xf32>, %y: memref<1x2x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%y : memref<1x2x16xf32>)
  linalg.generic {indexing_maps = [#id5, #sum], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x : memref<1x2x3x5x16xf32>) outs(%y : memref<1x2x16xf32>) attrs = {kiln.blocked_global_pool} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A global sum of clipped elements (mobilenet_v2's last Clip fused into
// its pool): each row's loads clipped before they are added.
// CHECK-LABEL: func.func @global_pool_of_clip
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c6{{.*}} step %c1
// CHECK: vector.load %{{.*}} : memref<1x2x3x5x16xf32>, vector<16xf32>
// CHECK: arith.maximumf %{{.*}} : vector<16xf32>
// CHECK: arith.minimumf %{{.*}} : vector<16xf32>
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#sum = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
func.func @global_pool_of_clip(%x: memref<1x2x3x5x16xf32>, %y: memref<1x2x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %six = arith.constant 6.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%y : memref<1x2x16xf32>)
  linalg.generic {indexing_maps = [#id5, #sum], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x : memref<1x2x3x5x16xf32>) outs(%y : memref<1x2x16xf32>) attrs = {kiln.blocked_global_pool} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %cst : f32
    %1 = arith.minimumf %0, %six : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// A squeeze-and-excitation scale on its own (no conv's store took it):
// tasks of one row of a block, rows outer (the task index's block its
// remainder by the 3 blocks), each position's vector times the image's
// scale vector for the block.
// CHECK-LABEL: func.func @scale
// CHECK: scf.for %[[T:.*]] = %c0{{.*}} to %c12{{.*}} step %c1
// CHECK: arith.remui %[[T]], %c3
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c5{{.*}} step %c1
// CHECK: vector.load %{{.*}} : memref<1x3x4x5x16xf32>, vector<16xf32>
// CHECK: vector.load %{{.*}} : memref<1x3x16xf32>, vector<16xf32>
// CHECK: arith.mulf %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<1x3x4x5x16xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#se = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
func.func @scale(%x: memref<1x3x4x5x16xf32>, %s: memref<1x3x16xf32>, %y: memref<1x3x4x5x16xf32>) {
  linalg.generic {indexing_maps = [#id5, #se, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : memref<1x3x4x5x16xf32>, memref<1x3x16xf32>) outs(%y : memref<1x3x4x5x16xf32>) attrs = {kiln.blocked_elementwise} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Out of a padded block (24 channels in 2 blocks): the last block's
// channels 24-31 lie past the plain tensor's end, so their rows are
// stored only for blocks before the last (8 stores, each under a guard).
// CHECK-LABEL: func.func @from_padded
// CHECK: vector.load %{{.*}} : memref<1x2x3x20x16xf32>, vector<16xf32>
// CHECK-COUNT-8: vector.store %{{.*}} : memref<1x24x3x20xf32>, vector<16xf32>
// CHECK-COUNT-8: scf.if
// CHECK-NOT: linalg.generic
#from = affine_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 16, d2, d3, d1 mod 16)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @from_padded(%b: memref<1x2x3x20x16xf32>, %y: memref<1x24x3x20xf32>) {
  linalg.generic {indexing_maps = [#from, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<1x2x3x20x16xf32>) outs(%y : memref<1x24x3x20xf32>) attrs = {kiln.from_blocked} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A 1x1 conv on rows of 10 (ssdlite's 10x10 maps): one tile of 10
// positions x 2 output blocks, 20 accumulators (rows of at most 24 take
// tiles of up to 12), not two of 5.
// CHECK-LABEL: func.func @narrow_rows
// CHECK: scf.for %{{.*}} = %{{.*}} to %c10{{.*}} step %c10
// CHECK-COUNT-20: vector.store %{{.*}} : memref<1x2x10x10x16xf32>
// CHECK-NOT: vector.store
// CHECK: return
memref.global "private" constant @w1 : memref<32x16x1x1xf32> = dense<1.000000e-01> {alignment = 64 : i64}
#x1 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d2 + d6, d3 + d7, d8)>
#w1 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1 * 16 + d4, d5 * 16 + d8, d6, d7)>
#y1 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
func.func @narrow_rows(%x: memref<1x1x10x10x16xf32>, %y: memref<1x2x10x10x16xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %w = memref.get_global @w1 : memref<32x16x1x1xf32>
  linalg.fill ins(%cst : f32) outs(%y : memref<1x2x10x10x16xf32>)
  linalg.generic {indexing_maps = [#x1, #w1, #y1], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x1x10x10x16xf32>, memref<32x16x1x1xf32>) outs(%y : memref<1x2x10x10x16xf32>) attrs = {kiln.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
