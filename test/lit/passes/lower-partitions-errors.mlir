// RUN: not kiln-opt %s -split-input-file --kiln-lower-partitions 2>&1 | FileCheck %s

// An op placed on the CPU by hand that it cannot run is still caught.
// CHECK: error: {{.*}}node "gs_1" (GridSample): not supported by provider cpu: no CPU lowering for this op
func.func @main(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<1x1x2x2xf32> {
    %1 = onnx.GridSample(%x, %g) : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> loc("gs_1")
    kiln.yield %1 : tensor<1x1x2x2xf32>
  }
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// CHECK: error: {{.*}}unknown provider{{.*}}"tpu"
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.partition "tpu_0" provider("tpu") -> tensor<4xf32> {
    %1 = onnx.Neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
