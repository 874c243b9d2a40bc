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
