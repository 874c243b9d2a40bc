// RUN: kiln-opt %s --kiln-partition="providers=cuda,cpu assignment=%inputs/assignment.json" \
// RUN:   --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload | FileCheck %s

// Tanh is pinned to the CPU: it writes a fresh host buffer that the device
// Relu then reads, so that buffer must be copied to the device first (its
// device twin once started out as "current" and the kernel read garbage).
// CHECK-LABEL: func.func @host_then_device
// CHECK: linalg.generic {{.*}} outs(%[[T:.*]] : memref<64x64xf32>)
// CHECK: math.tanh
// CHECK: gpu.memcpy %{{.*}}, %[[T]]
// CHECK: scf.parallel
func.func @host_then_device(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = onnx.Tanh(%x) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = onnx.Relu(%0) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
