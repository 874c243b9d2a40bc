// RUN: kiln-opt %s -split-input-file --kiln-partition="providers=cuda,cpu assignment=%inputs/assignment.json" \
// RUN:   --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload=device-io=1 | FileCheck %s

// Device I/O: the argument and the result are device memory. A chain of
// device ops reads the argument in place and writes a device buffer that
// is returned; nothing crosses, and no host buffer is left.
// CHECK-LABEL: func.func @all_device
// CHECK-SAME: attributes {kiln.device_io}
// CHECK-NOT: gpu.memcpy
// CHECK-NOT: memref.alloc
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<4x300xf32>
// CHECK-NOT: gpu.memcpy
// CHECK: memref.load %arg0
// CHECK-NOT: gpu.memcpy
// CHECK-NOT: gpu.dealloc %[[OUT]] :
// CHECK: return %[[OUT]]
func.func @all_device(%x: tensor<4x300xf32>) -> tensor<4x300xf32> {
  %0 = onnx.Relu(%x) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  %1 = onnx.Sigmoid(%0) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  return %1 : tensor<4x300xf32>
}

// -----

// Tanh is pinned to the CPU: its input comes down from the device and its
// output goes back up; the device result is returned.
// CHECK-LABEL: func.func @host_in_middle
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<64x64xf32>
// CHECK: %[[UP:.*]] = gpu.alloc () : memref<64x64xf32>
// CHECK: %[[DOWN:.*]] = gpu.alloc () : memref<64x64xf32>
// CHECK: %[[HIN:.*]] = memref.alloc
// CHECK: memref.load %arg0
// CHECK: %[[HOUT:.*]] = memref.alloc
// CHECK: gpu.memcpy %[[HIN]], %[[DOWN]]
// CHECK: math.tanh
// CHECK: gpu.memcpy %[[UP]], %[[HOUT]]
// CHECK: memref.load %[[UP]]
// CHECK-NOT: gpu.memcpy
// CHECK: return %[[OUT]]
func.func @host_in_middle(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = onnx.Relu(%x) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = onnx.Tanh(%0) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = onnx.Relu(%1) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}

// -----

// A result the host computes is copied up once; an input only the host
// reads is copied down once.
// CHECK-LABEL: func.func @host_only
// CHECK: %[[D:.*]] = gpu.alloc
// CHECK: %[[H:.*]] = memref.alloc
// CHECK: gpu.memcpy %[[H]], %arg0
// CHECK: math.tanh
// CHECK: gpu.memcpy %[[D]], %{{.*}}
// CHECK-NEXT: return %[[D]]
func.func @host_only(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = onnx.Tanh(%x) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
