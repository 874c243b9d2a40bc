// RUN: kiln-opt %s --kiln-partition="providers=cuda,cpu min-device-elements=0" --kiln-lower-partitions --kiln-fuse-elementwise | FileCheck %s

// A fused chain of CUDA ops stays a CUDA op (kiln.device kept); without
// it, the fused generic would run on the host with transfers around it.
// CHECK-LABEL: func.func @device_chain
// CHECK: linalg.generic {{.*}} attrs = {kiln.device = "cuda"}
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @device_chain(%x: tensor<4x300xf32>) -> tensor<4x300xf32> {
  %0 = onnx.Relu(%x) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  %1 = onnx.Tanh(%0) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  return %1 : tensor<4x300xf32>
}
