// BUG: kiln-partition groups consecutive graph ops of one provider while
// skipping non-onnx ops between them, then moves the whole group into one
// kiln.partition placed at the first op. An op after a non-onnx op that it
// depends on (here through tensor.cast) ends up before its operand's
// definition: "operand #0 does not dominate this use". Imported models
// contain only onnx ops, so `kiln compile` does not hit this; kiln-opt
// input (and any future non-onnx op in the graph) does.
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
