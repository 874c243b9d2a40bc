// BUG: kiln-plan-memory crashes (segfault, use after free) when one buffer
// is returned twice: outputsToArguments keeps the results in a vector,
// replaces and erases the alloc for the first, then calls getDefiningOp()
// on the stale Value for the second. Reachable from `kiln compile` with an
// ONNX model whose two outputs are the same tensor, e.g. y = Relu(x),
// z = Identity(y) with outputs y and z (see driver/duplicate-output.test).
// Expected: the first output argument is written in place and the second
// gets a memref.copy.
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
