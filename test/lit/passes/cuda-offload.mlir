// RUN: kiln-opt %s --kiln-partition=providers=cuda,cpu --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload | FileCheck %s

// Three device ops in a row: the inputs cross to the device once each, the
// intermediates live on the device only, the result crosses back once.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-4: gpu.alloc
// CHECK: gpu.memcpy %[[DX:.*]], %arg0
// CHECK-NEXT: gpu.memcpy %[[DW:.*]], %arg1
// CHECK-NOT: gpu.memcpy
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: memref.load %[[DX]]
// CHECK-NOT: gpu.memcpy
// CHECK: scf.parallel
// CHECK-NOT: gpu.memcpy
// CHECK: %[[HOST:.*]] = memref.alloc
// CHECK: scf.parallel
// CHECK: gpu.memcpy %[[HOST]], %{{.*}}
// CHECK-NOT: gpu.memcpy
// CHECK: gpu.dealloc
// CHECK: return %[[HOST]]
func.func @chain(%x: tensor<4x300xf32>, %w: tensor<300xf32>) -> tensor<4x300xf32> {
  %0 = onnx.Add(%x, %w) : (tensor<4x300xf32>, tensor<300xf32>) -> tensor<4x300xf32>
  %1 = onnx.Relu(%0) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  %2 = onnx.Tanh(%1) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  return %2 : tensor<4x300xf32>
}

