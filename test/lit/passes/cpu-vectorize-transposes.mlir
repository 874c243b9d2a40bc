// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-vectorize-transposes))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-vectorize-transposes{vector-bits=256}))' | FileCheck %s --check-prefix=AVX2

// A detector head's [A, 85, H, W] to [A, H, W, 85]: H and W collapse into
// one dim of 1600 on both sides; one loop over the 3 x 100 x 6 tiles
// (chunks of 4 column blocks), split across threads from 16384 elements
// (64 tiles of 256: a transpose moves data); 16 rows of 16 read,
// shuffled, 16 rows stored; the last row block has 85 - 80 = 5 rows.
// CHECK-LABEL: func.func @head
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<3x85x40x40xf32> into memref<3x85x1600xf32>
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : memref<3x40x40x85xf32> into memref<3x1600x85xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c1800 step %c1 {
// CHECK: scf.if
// CHECK-COUNT-16: vector.load %{{.*}} : memref<3x85x1600xf32>, vector<16xf32>
// CHECK: vector.shuffle
// CHECK-COUNT-16: vector.store %{{.*}} : memref<3x1600x85xf32>, vector<16xf32>
// CHECK: } else {
// CHECK-COUNT-5: vector.load %{{.*}} : memref<3x85x1600xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<3x1600x85xf32>, vector<5xf32>
// CHECK: } {kiln.parallel = 64 : i64}
// CHECK-NOT: linalg.transpose
// AVX2-LABEL: func.func @head
// AVX2: linalg.transpose
func.func @head(%a: memref<3x85x40x40xf32>, %b: memref<3x40x40x85xf32>) {
  linalg.transpose ins(%a : memref<3x85x40x40xf32>) outs(%b : memref<3x40x40x85xf32>) permutation = [0, 2, 3, 1]
  return
}

// -----

// 37 x 23 int32 to 23 x 37: partial blocks both ways (7 lanes read and
// widened, 5 rows); too small to split across threads.
// CHECK-LABEL: func.func @odd
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c1 {
// CHECK: vector.load %{{.*}} : memref<37x23xi32>, vector<7xi32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<7xi32>, vector<7xi32>
// CHECK: vector.store %{{.*}} : memref<23x37xi32>, vector<5xi32>
// CHECK: }
// CHECK-NOT: kiln.parallel
func.func @odd(%a: memref<37x23xi32>, %b: memref<23x37xi32>) {
  linalg.transpose ins(%a : memref<37x23xi32>) outs(%b : memref<23x37xi32>) permutation = [1, 0]
  return
}

// -----

// Left alone: the inner dim stays (row copies), rows of 3 (an image's
// channels), 16-bit elements, run-time sizes.
// CHECK-LABEL: func.func @left
// CHECK-COUNT-4: linalg.transpose
// CHECK-NOT: vector.load
func.func @left(%a: memref<2x58x784xf32>, %b: memref<58x2x784xf32>,
                %c: memref<3x1024xf32>, %d: memref<1024x3xf32>,
                %e: memref<64x64xf16>, %f: memref<64x64xf16>,
                %g: memref<?x64xf32>, %h: memref<64x?xf32>) {
  linalg.transpose ins(%a : memref<2x58x784xf32>) outs(%b : memref<58x2x784xf32>) permutation = [1, 0, 2]
  linalg.transpose ins(%c : memref<3x1024xf32>) outs(%d : memref<1024x3xf32>) permutation = [1, 0]
  linalg.transpose ins(%e : memref<64x64xf16>) outs(%f : memref<64x64xf16>) permutation = [1, 0]
  linalg.transpose ins(%g : memref<?x64xf32>) outs(%h : memref<64x?xf32>) permutation = [1, 0]
  return
}
