// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-elide-slice-copies))' | FileCheck %s

// A concat of two parts along channels: each part's buffer becomes a view
// of the result's bytes at its slice's offset (16 channels of 2x2 f32:
// 256 bytes), allocated before the first part; the copies go. The second
// part is read through a reshape, the result is read reshaped.
// CHECK-LABEL: func.func @concat
// CHECK: %[[BYTES:.*]] = memref.alloc() {alignment = 64 : i64, kiln.sliced} : memref<512xi8>
// CHECK: %[[WHOLE:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<512xi8> to memref<1x32x2x2xf32>
// CHECK: %[[A:.*]] = memref.view %[[BYTES]][%c0{{.*}}][] : memref<512xi8> to memref<1x16x2x2xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<1x16x2x2xf32>)
// CHECK: %[[B:.*]] = memref.view %[[BYTES]][%c256{{.*}}][] : memref<512xi8> to memref<1x16x2x2xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<1x16x2x2xf32>)
// CHECK-NOT: memref.copy
// CHECK: memref.collapse_shape %[[WHOLE]]
func.func @concat() -> memref<128xf32> {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x16x2x2xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<1x16x2x2xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<1x16x2x2xf32>
  linalg.fill ins(%two : f32) outs(%b : memref<1x16x2x2xf32>)
  %bc = memref.collapse_shape %b [[0, 1, 2, 3]] : memref<1x16x2x2xf32> into memref<64xf32>
  %bx = memref.expand_shape %bc [[0, 1, 2, 3]] output_shape [1, 16, 2, 2] : memref<64xf32> into memref<1x16x2x2xf32>
  %r = memref.alloc() {alignment = 64 : i64} : memref<1x32x2x2xf32>
  %s0 = memref.subview %r[0, 0, 0, 0] [1, 16, 2, 2] [1, 1, 1, 1] : memref<1x32x2x2xf32> to memref<1x16x2x2xf32, strided<[128, 4, 2, 1]>>
  memref.copy %a, %s0 : memref<1x16x2x2xf32> to memref<1x16x2x2xf32, strided<[128, 4, 2, 1]>>
  %s1 = memref.subview %r[0, 16, 0, 0] [1, 16, 2, 2] [1, 1, 1, 1] : memref<1x32x2x2xf32> to memref<1x16x2x2xf32, strided<[128, 4, 2, 1], offset: 64>>
  memref.copy %bx, %s1 : memref<1x16x2x2xf32> to memref<1x16x2x2xf32, strided<[128, 4, 2, 1], offset: 64>>
  %rc = memref.collapse_shape %r [[0, 1, 2, 3]] : memref<1x32x2x2xf32> into memref<128xf32>
  %out = memref.alloc() : memref<128xf32>
  memref.copy %rc, %out : memref<128xf32> to memref<128xf32>
  return %out : memref<128xf32>
}

// -----

// Left as they are: a part read after the copy; a part whose slice does
// not start on a 64-byte line (3 channels of 2x2 f32: 48 bytes in); a
// slice the result's earlier value is read from while the part is alive;
// a result returned from the function.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: memref.copy
// CHECK-NOT: memref.view
func.func @kept(%x: memref<1x4x2x2xf32>) -> (memref<1x8x2x2xf32>, f32) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  // Read after the copy.
  %a = memref.alloc() : memref<1x4x2x2xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<1x4x2x2xf32>)
  %r = memref.alloc() : memref<1x8x2x2xf32>
  %s0 = memref.subview %r[0, 0, 0, 0] [1, 4, 2, 2] [1, 1, 1, 1] : memref<1x8x2x2xf32> to memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>
  memref.copy %a, %s0 : memref<1x4x2x2xf32> to memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>
  %v = memref.load %a[%c0, %c0, %c0, %c0] : memref<1x4x2x2xf32>
  // Not on a line.
  %m = memref.alloc() : memref<1x2x2x2xf32>
  linalg.fill ins(%one : f32) outs(%m : memref<1x2x2x2xf32>)
  %r2 = memref.alloc() : memref<1x5x2x2xf32>
  %s2 = memref.subview %r2[0, 3, 0, 0] [1, 2, 2, 2] [1, 1, 1, 1] : memref<1x5x2x2xf32> to memref<1x2x2x2xf32, strided<[20, 4, 2, 1], offset: 12>>
  memref.copy %m, %s2 : memref<1x2x2x2xf32> to memref<1x2x2x2xf32, strided<[20, 4, 2, 1], offset: 12>>
  // The slice's old value read while the part is alive.
  %r3 = memref.alloc() : memref<1x8x2x2xf32>
  %s3 = memref.subview %r3[0, 0, 0, 0] [1, 4, 2, 2] [1, 1, 1, 1] : memref<1x8x2x2xf32> to memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>
  memref.copy %x, %s3 : memref<1x4x2x2xf32> to memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>
  %p = memref.alloc() : memref<1x4x2x2xf32>
  linalg.fill ins(%one : f32) outs(%p : memref<1x4x2x2xf32>)
  %w = memref.load %r3[%c0, %c0, %c0, %c0] : memref<1x8x2x2xf32>
  memref.copy %p, %s3 : memref<1x4x2x2xf32> to memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>
  %sum = arith.addf %v, %w : f32
  %u = memref.load %r2[%c0, %c0, %c0, %c0] : memref<1x5x2x2xf32>
  %t = arith.addf %sum, %u : f32
  // Returned.
  %q = memref.alloc() : memref<1x4x2x2xf32>
  linalg.fill ins(%one : f32) outs(%q : memref<1x4x2x2xf32>)
  %r4 = memref.alloc() : memref<1x8x2x2xf32>
  %s4 = memref.subview %r4[0, 0, 0, 0] [1, 4, 2, 2] [1, 1, 1, 1] : memref<1x8x2x2xf32> to memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>
  memref.copy %q, %s4 : memref<1x4x2x2xf32> to memref<1x4x2x2xf32, strided<[32, 4, 2, 1]>>
  return %r4, %t : memref<1x8x2x2xf32>, f32
}
