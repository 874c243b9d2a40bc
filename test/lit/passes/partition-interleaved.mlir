// Non-onnx ops between onnx ops end a partition, so no op is moved above
// the definition of one of its operands.
// RUN: kiln-opt %s --kiln-partition | FileCheck %s

// CHECK-LABEL: func.func @interleaved
// CHECK: kiln.partition "cpu_0"
// CHECK: onnx.Relu
// CHECK: tensor.cast
// CHECK: kiln.partition "cpu_1"
// CHECK: onnx.Tanh
func.func @interleaved(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = onnx.Relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = tensor.cast %0 : tensor<2x3xf32> to tensor<?x3xf32>
  %d = tensor.cast %c : tensor<?x3xf32> to tensor<2x3xf32>
  %2 = onnx.Tanh(%d) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
