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


// A weight read on the device gets a device copy of its own, filled by the
// runtime on the session's first run only (kilnDeviceUploadOnce), before
// any kernel: no gpu.memcpy per run, no dealloc.
// CHECK-LABEL: func.func @weights
// CHECK: %[[DW:.*]] = gpu.alloc () {kiln.device_constant} : memref<300xf32>
// CHECK-NEXT: %[[G:.*]] = memref.get_global @[[W:.*]] : memref<300xf32>
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[DW]]
// CHECK: memref.extract_aligned_pointer_as_index %[[G]]
// CHECK: %[[BYTES:.*]] = arith.constant 1200 : i64
// CHECK: call @kilnDeviceUploadOnce(%{{.*}}, %{{.*}}, %[[BYTES]]) : (i64, i64, i64) -> ()
// CHECK: gpu.memcpy %{{.*}}, %arg0
// CHECK-NOT: gpu.memcpy {{.*}}@[[W]]
// CHECK: scf.parallel
// CHECK: memref.load %[[DW]]
// CHECK-NOT: gpu.dealloc %[[DW]]
// CHECK: return
func.func @weights(%x: tensor<4x300xf32>) -> tensor<4x300xf32> {
  %w = onnx.Constant() {value = dense<1.5> : tensor<300xf32>} : () -> tensor<300xf32>
  %0 = onnx.Add(%x, %w) : (tensor<4x300xf32>, tensor<300xf32>) -> tensor<4x300xf32>
  return %0 : tensor<4x300xf32>
}
