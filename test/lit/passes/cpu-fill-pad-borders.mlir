// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-fill-pad-borders))' | FileCheck %s

// A pad of 1 on each side of H and W: rows above and below the interior
// (whole rows), then the columns left and right of the interior's rows.
// The copy writes the rest.
// CHECK-LABEL: func.func @pad_hw
// CHECK: %[[T:.*]] = memref.subview %[[B:.*]][0, 0, 0, 0] [1, 4, 1, 10] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[T]] :
// CHECK: %[[D:.*]] = memref.subview %[[B]][0, 0, 9, 0] [1, 4, 1, 10] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[D]] :
// CHECK: %[[L:.*]] = memref.subview %[[B]][0, 0, 1, 0] [1, 4, 8, 1] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[L]] :
// CHECK: %[[R:.*]] = memref.subview %[[B]][0, 0, 1, 9] [1, 4, 8, 1] [1, 1, 1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[R]] :
// CHECK-NOT: linalg.fill
// CHECK: memref.copy %arg0, %{{.*}} : memref<1x4x8x8xf32> to
// CHECK: memref.copy %[[B]], %arg1
func.func @pad_hw(%a: memref<1x4x8x8xf32>, %out: memref<1x4x10x10xf32>) {
  %z = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<1x4x10x10xf32>
  linalg.fill ins(%z : f32) outs(%b : memref<1x4x10x10xf32>)
  %v = memref.subview %b[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1]
      : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %a, %v : memref<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %b, %out : memref<1x4x10x10xf32> to memref<1x4x10x10xf32>
  return
}

// -----

// A stem's pad (stride 2: only the top row and left column), with an op
// that does not touch the buffer between the fill and the copy.
// CHECK-LABEL: func.func @pad_top_left
// CHECK: memref.subview %{{.*}}[0, 0, 0, 0] [1, 3, 1, 225]
// CHECK: linalg.fill
// CHECK: memref.subview %{{.*}}[0, 0, 1, 0] [1, 3, 224, 1]
// CHECK: linalg.fill
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: memref.copy
func.func @pad_top_left(%a: memref<1x3x224x224xf32>, %c: memref<8xf32>, %out: memref<1x3x225x225xf32>) {
  %z = arith.constant -1.0 : f32
  %b = memref.alloc() : memref<1x3x225x225xf32>
  linalg.fill ins(%z : f32) outs(%b : memref<1x3x225x225xf32>)
  linalg.fill ins(%z : f32) outs(%c : memref<8xf32>)
  %v = memref.subview %b[0, 0, 1, 1] [1, 3, 224, 224] [1, 1, 1, 1]
      : memref<1x3x225x225xf32> to memref<1x3x224x224xf32, strided<[151875, 50625, 225, 1], offset: 226>>
  memref.copy %a, %v : memref<1x3x224x224xf32> to memref<1x3x224x224xf32, strided<[151875, 50625, 225, 1], offset: 226>>
  memref.copy %b, %out : memref<1x3x225x225xf32> to memref<1x3x225x225xf32>
  return
}

// -----

// A copy that covers the whole buffer: the fill goes.
// CHECK-LABEL: func.func @whole
// CHECK-NOT: linalg.fill
// CHECK: memref.copy %arg0
func.func @whole(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %z = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%z : f32) outs(%b : memref<4x8xf32>)
  %v = memref.subview %b[0, 0] [4, 8] [1, 1] : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  memref.copy %a, %v : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  memref.copy %b, %out : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// Kept whole: the buffer read (through a view) between the fill and the
// copy; a copy that reads the buffer itself; a strided interior (a
// transposed conv's zeros between the pixels).
// CHECK-LABEL: func.func @kept
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<1x4x10x10xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<2x10xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<1x4x15x15xf32>)
// CHECK-NOT: linalg.fill
func.func @kept(%a: memref<1x4x8x8xf32>, %out: memref<1x4x10x10xf32>, %s: memref<1x4x10xf32>,
                %o2: memref<2x10xf32>, %o3: memref<1x4x15x15xf32>) {
  %z = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<1x4x10x10xf32>
  linalg.fill ins(%z : f32) outs(%b : memref<1x4x10x10xf32>)
  %row = memref.subview %b[0, 0, 0, 0] [1, 4, 1, 10] [1, 1, 1, 1]
      : memref<1x4x10x10xf32> to memref<1x4x10xf32, strided<[400, 100, 1]>>
  memref.copy %row, %s : memref<1x4x10xf32, strided<[400, 100, 1]>> to memref<1x4x10xf32>
  %v = memref.subview %b[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1]
      : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %a, %v : memref<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %b, %out : memref<1x4x10x10xf32> to memref<1x4x10x10xf32>

  %c = memref.alloc() : memref<2x10xf32>
  linalg.fill ins(%z : f32) outs(%c : memref<2x10xf32>)
  %c0 = memref.subview %c[0, 0] [1, 10] [1, 1] : memref<2x10xf32> to memref<10xf32, strided<[1]>>
  %c1 = memref.subview %c[1, 0] [1, 10] [1, 1] : memref<2x10xf32> to memref<10xf32, strided<[1], offset: 10>>
  memref.copy %c0, %c1 : memref<10xf32, strided<[1]>> to memref<10xf32, strided<[1], offset: 10>>
  memref.copy %c, %o2 : memref<2x10xf32> to memref<2x10xf32>

  %d = memref.alloc() : memref<1x4x15x15xf32>
  linalg.fill ins(%z : f32) outs(%d : memref<1x4x15x15xf32>)
  %dv = memref.subview %d[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 2, 2]
      : memref<1x4x15x15xf32> to memref<1x4x8x8xf32, strided<[900, 225, 30, 2]>>
  memref.copy %a, %dv : memref<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[900, 225, 30, 2]>>
  memref.copy %d, %o3 : memref<1x4x15x15xf32> to memref<1x4x15x15xf32>
  return
}
