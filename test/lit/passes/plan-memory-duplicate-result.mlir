// One buffer returned twice: the first output takes it over, the second
// gets a copy (this once was a use after free).
// RUN: kiln-opt %s --kiln-plan-memory | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<4xf32>, %[[OUT0:.*]]: memref<4xf32>, %[[OUT1:.*]]: memref<4xf32>, %{{.*}}: memref<1xi8>)
// CHECK: linalg.copy ins(%[[IN]] : memref<4xf32>) outs(%[[OUT0]] : memref<4xf32>)
// CHECK: memref.copy %[[OUT0]], %[[OUT1]]
func.func @main(%in: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %out = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%out : memref<4xf32>)
  return %out, %out : memref<4xf32>, memref<4xf32>
}
