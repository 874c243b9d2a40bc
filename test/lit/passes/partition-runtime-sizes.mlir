// RUN: kiln-opt %s -split-input-file --kiln-partition=providers=cuda,cpu | FileCheck %s

// A result whose size is known only at run time is not a tiny island: the
// session serves whatever batch comes.
// CHECK-LABEL: func.func @runtime_island
// CHECK: kiln.partition "cuda_0" provider("cuda")
// CHECK-NEXT: onnx.Relu
module attributes {kiln.runtime_sizes = {}} {
func.func @runtime_island(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = onnx.Relu(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
}

// -----

// The shape arithmetic that feeds a Reshape (Shape, Gather, Unsqueeze,
// Concat, and a cast to float and back) stays on the host, where the
// Reshape reads it; the data goes to the device. --report names the reason.
// CHECK: kiln.fallbacks = ["Cast x2, Concat x1, Gather x1, Unsqueeze x1 on cpu (cuda: kept on the host (shape computation))"
// CHECK-LABEL: func.func @shape_subgraph
// CHECK: kiln.partition "cpu_0" provider("cpu")
// CHECK-NOT: kiln.partition
// CHECK: onnx.Shape
// CHECK: onnx.Gather
// CHECK: onnx.Cast
// CHECK: onnx.Cast
// CHECK: onnx.Unsqueeze
// CHECK: onnx.Concat
// CHECK: kiln.partition "cuda_0" provider("cuda")
// CHECK-NEXT: onnx.Reshape
// CHECK-NEXT: onnx.Relu
module attributes {kiln.runtime_sizes = {}} {
func.func @shape_subgraph(%x: tensor<?x8xf32>) -> tensor<?x2x4xf32> {
  %shape = onnx.Shape(%x) : (tensor<?x8xf32>) -> tensor<2xi64>
  %i0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %n = onnx.Gather(%shape, %i0) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f = onnx.Cast(%n) {to = 1 : i64} : (tensor<i64>) -> tensor<f32>
  %back = onnx.Cast(%f) {to = 7 : i64} : (tensor<f32>) -> tensor<i64>
  %zero = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %n1 = onnx.Unsqueeze(%back, %zero) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %rest = onnx.Constant() {value = dense<[2, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %target = onnx.Concat(%n1, %rest) {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %y = onnx.Reshape(%x, %target) : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %r = onnx.Relu(%y) : (tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %r : tensor<?x2x4xf32>
}
}
