// RUN: kiln-opt %s --split-input-file --kiln-cpu-vectorize-upsample | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-vectorize-upsample=vector-bits=256 | FileCheck %s --check-prefix=AVX2

// A YOLO neck's 2x nearest upsampling: per input row (64 x 40 of them, the
// outer loop split across threads), chunks of 16 and the last 8 loaded
// once, each element repeated twice by shuffles, every vector stored into
// both output rows.
// CHECK-LABEL: func.func @up2
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c40
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2
// CHECK: vector.load %{{.*}} : memref<1x64x40x40xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]
// CHECK-COUNT-2: vector.store %{{.*}} : memref<1x64x80x80xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15]
// CHECK: vector.load %{{.*}} : memref<1x64x40x40xf32>, vector<8xf32>
// CHECK: } {kiln.parallel = 11 : i64}
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @up2
// AVX2: linalg.generic
#in = affine_map<(n, c, h, w) -> (n, c, h floordiv 2, w floordiv 2)>
#out = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @up2(%x: memref<1x64x40x40xf32>, %y: memref<1x64x80x80xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<1x64x40x40xf32>) outs(%y : memref<1x64x80x80xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// The width alone, 3x, i32 rows of 5: one partial chunk, 15 lanes.
// CHECK-LABEL: func.func @width3
// CHECK: vector.load %{{.*}} : memref<2x5xi32>, vector<5xi32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4] : vector<5xi32>, vector<5xi32>
// CHECK: vector.store %{{.*}} : memref<2x15xi32>, vector<15xi32>
// CHECK-NOT: kiln.parallel
#in3 = affine_map<(r, w) -> (r, w floordiv 3)>
#out3 = affine_map<(r, w) -> (r, w)>
func.func @width3(%x: memref<2x5xi32>, %y: memref<2x15xi32>) {
  linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x5xi32>) outs(%y : memref<2x15xi32>) {
  ^bb0(%a: i32, %b: i32):
    linalg.yield %a : i32
  }
  return
}

// -----

// Left alone: a floordiv on an outer dim, a body that computes.
// CHECK-LABEL: func.func @left
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: vector.load
#inC = affine_map<(c, h, w) -> (c floordiv 2, h, w floordiv 2)>
#outC = affine_map<(c, h, w) -> (c, h, w)>
func.func @left(%x: memref<4x8x16xf32>, %y: memref<8x8x32xf32>,
                %u: memref<8x8x16xf32>, %v: memref<8x8x32xf32>) {
  linalg.generic {indexing_maps = [#inC, #outC], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<4x8x16xf32>) outs(%y : memref<8x8x32xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h, w floordiv 2)>, #outC], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%u : memref<8x8x16xf32>) outs(%v : memref<8x8x32xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %a : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// 2x linear upsampling in half_pixel (the taps Resize marks): per image a
// scratch plane of x-upsampled rows. Each row's first chunk and its last
// 8 columns read their window a column at a time (clamped at the edges),
// the chunk between two overlapping vector loads; every 16 outputs pick
// their two taps from the window by shuffles (past its first 16 columns
// from the second load) and weigh them per phase. Then each output row
// is the weighted sum of two rows of the plane (clamped to its rows).
// CHECK-LABEL: func.func @linear2
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c2
// CHECK: %[[PLANE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x80xf32>
// CHECK: scf.for %[[H:.*]] = %c0{{.*}} to %c8
// CHECK-COUNT-2: vector.from_elements
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8]
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9]
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[PLANE]][%[[H]], %{{.*}}] : memref<8x80xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 30]
// CHECK: scf.for %{{.*}} = %c1{{.*}} to %c2
// CHECK-COUNT-2: vector.load %{{.*}} : memref<1x2x8x40xf32>, vector<16xf32>
// CHECK: vector.from_elements
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c5
// CHECK-COUNT-2: vector.load %[[PLANE]]
// CHECK: vector.fma
// CHECK: vector.store %{{.*}} : memref<1x2x16x80xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: kiln.parallel
// AVX2-LABEL: func.func @linear2
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<8x80xf32>
// AVX2: vector.load %{{.*}} : memref<1x2x8x40xf32>, vector<8xf32>
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 1, 2, 2, 3, 3, 4] : vector<8xf32>, vector<8xf32>
// AVX2-NOT: linalg.generic
#lid = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @linear2(%x: memref<1x2x8x40xf32>, %y: memref<1x2x16x80xf32>) {
  linalg.generic {indexing_maps = [#lid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%y : memref<1x2x16x80xf32>) attrs = {kiln.linear_upsample = {
        x = {factor = 2 : i64, offsets = array<i64: -1, 0, 0, 1>, weights = array<f32: 0.25, 0.75, 0.75, 0.25>},
        y = {factor = 2 : i64, offsets = array<i64: -1, 0, 0, 1>, weights = array<f32: 0.25, 0.75, 0.75, 0.25>}}} {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %c2 = arith.constant 2 : index
    %hs = arith.divui %h, %c2 : index
    %ws = arith.divui %w, %c2 : index
    %v = memref.load %x[%n, %c, %hs, %ws] : memref<1x2x8x40xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// The width alone, 3x in asymmetric (output 3i + r reads inputs i and i + 1
// at 1 - r/3 and r/3), the source a buffer of another shape with the same
// elements (a conv's output collapsed for its matmul): read as the
// output's shape over the factor, its rows of 7 one window each.
// CHECK-LABEL: func.func @linear_width3
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : memref<2x3x7xf32> into memref<42xf32>
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [6, 7] : memref<42xf32> into memref<6x7xf32>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c6
// CHECK-NOT: memref.alloc
// CHECK: vector.from_elements
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6]
// CHECK: vector.store %{{.*}} : memref<6x21xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<6x21xf32>, vector<5xf32>
// CHECK-NOT: linalg.generic
#wid = affine_map<(r, w) -> (r, w)>
func.func @linear_width3(%x: memref<2x3x7xf32>, %y: memref<6x21xf32>) {
  linalg.generic {indexing_maps = [#wid], iterator_types = ["parallel", "parallel"]}
      outs(%y : memref<6x21xf32>) attrs = {kiln.linear_upsample = {
        x = {factor = 3 : i64, offsets = array<i64: 0, 1, 0, 1, 0, 1>,
             weights = array<f32: 1.0, 0.0, 0.666666686, 0.333333343, 0.333333343, 0.666666686>}}} {
  ^bb0(%o: f32):
    %r = linalg.index 0 : index
    %w = linalg.index 1 : index
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %ws = arith.divui %w, %c3 : index
    %v = memref.load %x[%c0, %r, %ws] : memref<2x3x7xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// Without a phase pattern (align_corners 2 -> 4 on both axes): per image,
// each plane row gathers its two taps per output column through the index
// table (a global [2][4]: first taps, then second ones) and weighs them by
// the weight table's; each output row reads its two plane rows and weights
// from the y tables.
// CHECK-LABEL: func.func @linear_tables
// CHECK: %[[XI:.*]] = memref.get_global @__kiln_resize_index_0 : memref<2x4xi32>
// CHECK: %[[XW:.*]] = memref.get_global @__kiln_resize_weights_0 : memref<2x4xf32>
// CHECK: memref.get_global @__kiln_resize_index_1 : memref<2x4xi32>
// CHECK: %[[PLANE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4xf32>
// CHECK: vector.load %[[XI]][%{{.*}}, %{{.*}}] : memref<2x4xi32>, vector<4xi32>
// CHECK: vector.load %[[XW]][%{{.*}}, %{{.*}}] : memref<2x4xf32>, vector<4xf32>
// CHECK: vector.gather %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<3x2x2xf32>, vector<4xi32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[PLANE]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c4
// CHECK: memref.load %{{.*}} : memref<2x4xi32>
// CHECK: memref.load %{{.*}} : memref<2x4xf32>
// CHECK: vector.store %{{.*}} : memref<3x4x4xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
#tid = affine_map<(c, h, w) -> (c, h, w)>
func.func @linear_tables(%x: memref<3x2x2xf32>, %y: memref<3x4x4xf32>) {
  linalg.generic {indexing_maps = [#tid], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%y : memref<3x4x4xf32>) attrs = {kiln.linear_upsample = {
        x = {size = 2 : i64, index = array<i64: 0, 0, 0, 1, 0, 1, 1, 1>,
             weights = array<f32: 1.0, 0.0, 0.666666686, 0.333333343, 0.333333343, 0.666666686, 0.0, 1.0>},
        y = {size = 2 : i64, index = array<i64: 0, 0, 0, 1, 0, 1, 1, 1>,
             weights = array<f32: 1.0, 0.0, 0.666666686, 0.333333343, 0.333333343, 0.666666686, 0.0, 1.0>}}} {
  ^bb0(%o: f32):
    %c = linalg.index 0 : index
    %h = linalg.index 1 : index
    %w = linalg.index 2 : index
    %c2 = arith.constant 2 : index
    %hs = arith.divui %h, %c2 : index
    %ws = arith.divui %w, %c2 : index
    %v = memref.load %x[%c, %hs, %ws] : memref<3x2x2xf32>
    linalg.yield %v : f32
  }
  return
}
