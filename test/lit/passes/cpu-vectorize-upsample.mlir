// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-vectorize-upsample))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-vectorize-upsample{vector-bits=256}))' | FileCheck %s --check-prefix=AVX2

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
