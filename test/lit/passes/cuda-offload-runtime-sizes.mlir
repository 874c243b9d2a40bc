// RUN: kiln-opt %s --kiln-partition=providers=cuda,cpu --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload | FileCheck %s

// Rows known only at run time: each device buffer takes its host root's
// sizes, reading a size (memref.dim, for the next op's checks and loop
// bounds) does not bring the data back to the host, so the intermediate
// lives on the device alone and only the result crosses back; the loop
// nests that become kernels run to the run-time row count.
// CHECK-LABEL: func.func @runtime_rows
// CHECK: %[[N:.*]] = memref.dim %arg0, %{{.*}} : memref<?x300xf32>
// CHECK-NEXT: %[[DX:.*]] = gpu.alloc (%[[N]]) : memref<?x300xf32>
// CHECK: %[[DMID:.*]] = gpu.alloc (%{{.*}}) : memref<?x300xf32>
// CHECK: gpu.memcpy %[[DX]], %arg0
// CHECK-NEXT: gpu.memcpy %{{.*}}, %arg1
// CHECK-NOT: gpu.memcpy
// CHECK: %[[ROWS:.*]] = memref.dim %[[DX]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%c300, %[[ROWS]]) step (%c256{{.*}}, %c1{{.*}})
// CHECK: memref.store %{{.*}}, %[[DMID]]
// CHECK: } {kiln.device_loop}
// CHECK-NOT: gpu.memcpy
// CHECK: %[[HOST:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x300xf32>
// CHECK: %[[DOUT:.*]] = gpu.alloc (%{{.*}}) : memref<?x300xf32>
// CHECK-NOT: gpu.memcpy
// CHECK: memref.load %[[DMID]]
// CHECK: } {kiln.device_loop}
// CHECK-NEXT: gpu.memcpy %[[HOST]], %[[DOUT]]
// CHECK-NOT: gpu.memcpy
// CHECK: return %[[HOST]]
module attributes {kiln.runtime_sizes = {}} {
func.func @runtime_rows(%x: tensor<?x300xf32>, %w: tensor<300xf32>) -> tensor<?x300xf32> {
  %0 = onnx.Add(%x, %w) : (tensor<?x300xf32>, tensor<300xf32>) -> tensor<?x300xf32>
  %1 = onnx.Relu(%0) : (tensor<?x300xf32>) -> tensor<?x300xf32>
  return %1 : tensor<?x300xf32>
}
}
