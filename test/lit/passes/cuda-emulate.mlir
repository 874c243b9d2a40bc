// RUN: kiln-opt %s --split-input-file --kiln-partition="providers=cuda,cpu min-device-elements=0" \
// RUN:   --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload --kiln-cuda-emulate | FileCheck %s

// A tiled MatMul on the host: device buffers and copies become host ones;
// shared tiles are host buffers; each thread gets a slice of the private
// accumulators; the block loops (z, y, x) hold the reduction loop, and the
// phases between barriers each loop over the 16x16 threads.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: gpu.
// CHECK: memref.copy %arg0
// CHECK: memref.alloc() : memref<16x65xf32>
// CHECK: memref.alloc() : memref<16x65xf32>
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<256x4x4xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// Initial accumulators, in every thread.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16
// CHECK: memref.store %{{.*}}, %[[ACC]][%{{.*}}, %{{.*}}, %{{.*}}]
// The reduction: staging, then the products, each phase in every thread.
// CHECK: scf.for %[[KT:.*]] =
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16
// CHECK: scf.for %{{.*}} = %{{.*}} to %c16
// CHECK: iter_args
// CHECK-NOT: gpu.
// CHECK: return
func.func @matmul(%a: tensor<40x32xf32>, %b: tensor<32x24xf32>) -> tensor<40x24xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<40x32xf32>, tensor<32x24xf32>) -> tensor<40x24xf32>
  return %0 : tensor<40x24xf32>
}

// -----

// A one-thread-per-element loop nest stays a host loop nest.
// CHECK-LABEL: func.func @relu
// CHECK-NOT: gpu.
// CHECK-NOT: kiln.device_loop
// CHECK: scf.parallel
// CHECK-NOT: gpu.
// CHECK: return
func.func @relu(%x: tensor<4x300xf32>) -> tensor<4x300xf32> {
  %0 = onnx.Relu(%x) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  return %0 : tensor<4x300xf32>
}
