// RUN: not kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-shape-inference))' 2>&1 | FileCheck %s
// Inconsistent shapes are reported against the node, by its ONNX name.

// CHECK: error: {{.*}}node "add_7" (Add): operand shapes 'tensor<2x3xf32>' and 'tensor<4x5xf32>' do not broadcast
func.func @bad_add(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<*xf32> {
  %0 = onnx.Add(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<*xf32> loc("add_7")
  return %0 : tensor<*xf32>
}

// -----

// CHECK: error: {{.*}}node "mm" (MatMul): inner dimensions differ: 'tensor<2x3xf32>' x 'tensor<4x5xf32>'
func.func @bad_matmul(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<*xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<*xf32> loc("mm")
  return %0 : tensor<*xf32>
}

// -----

// CHECK: error: {{.*}}node "rs" (Reshape): cannot reshape 'tensor<2x3xf32>' to the requested shape
func.func @bad_reshape(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  %s = onnx.Constant() {value = dense<[4, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Reshape(%a, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<*xf32> loc("rs")
  return %0 : tensor<*xf32>
}

// -----

// A declared result shape that contradicts the inputs.
// CHECK: error: {{.*}}node "r" (Relu): inferred result shape 'tensor<2x3xf32>' disagrees with the model's declared 'tensor<3x3xf32>'
func.func @conflict(%a: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = onnx.Relu(%a) : (tensor<2x3xf32>) -> tensor<3x3xf32> loc("r")
  return %0 : tensor<3x3xf32>
}
