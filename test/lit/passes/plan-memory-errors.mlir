// RUN: kiln-opt %s -split-input-file --kiln-plan-memory -verify-diagnostics

func.func @main(%in: memref<?xf32>, %n: index) -> memref<4xf32> {
  // expected-error @+1 {{kiln-plan-memory: cannot place a dynamic or loop-carried allocation in the static arena}}
  %t = memref.alloc(%n) : memref<?xf32>
  %out = memref.alloc() : memref<4xf32>
  return %out : memref<4xf32>
}

// -----

// expected-error @+1 {{result 0 is not a static, contiguous buffer: 'memref<?xf32>'}}
func.func @main(%in: memref<?xf32>) -> memref<?xf32> {
  return %in : memref<?xf32>
}

// -----

// A buffer carried into the next iteration would be overwritten there.
func.func @main(%in: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %in) -> memref<4xf32> {
    // expected-error @+1 {{kiln-plan-memory: cannot place a dynamic or loop-carried allocation in the static arena}}
    %t = memref.alloc() : memref<4xf32>
    linalg.copy ins(%acc : memref<4xf32>) outs(%t : memref<4xf32>)
    scf.yield %t : memref<4xf32>
  }
  return %r : memref<4xf32>
}
