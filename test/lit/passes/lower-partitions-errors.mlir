// RUN: not kiln-opt %s -split-input-file --kiln-lower-partitions 2>&1 | FileCheck %s

// An op placed on the CPU by hand that it cannot run is still caught.
// CHECK: error: {{.*}}node "det_1" (Det): not supported by provider cpu: no CPU lowering for this op
func.func @main(%x: tensor<2x2xf32>) -> tensor<f32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<f32> {
    %1 = onnx.Det(%x) : (tensor<2x2xf32>) -> tensor<f32> loc("det_1")
    kiln.yield %1 : tensor<f32>
  }
  return %0 : tensor<f32>
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
