// RUN: not kiln-opt %s -split-input-file --kiln-partition 2>&1 | FileCheck %s
// Reduction axes, TopK's k must be compile-time
// constants; a runtime value is reported by node name.

// CHECK: error: {{.*}}node "sum_rt" (ReduceSum): not supported by provider cpu: needs a constant axes input
func.func @reduce_runtime_axes(%x: tensor<2x3xf32>, %a: tensor<1xi64>) -> tensor<?xf32> {
  %0 = onnx.ReduceSum(%x, %a) {keepdims = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?xf32> loc("sum_rt")
  return %0 : tensor<?xf32>
}

// -----

// CHECK: error: {{.*}}node "topk_rt" (TopK): not supported by provider cpu: needs a constant k input
func.func @topk_runtime_k(%x: tensor<2x5xf32>, %k: tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>) {
  %v, %i = onnx.TopK(%x, %k) : (tensor<2x5xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>) loc("topk_rt")
  return %v, %i : tensor<2x?xf32>, tensor<2x?xi64>
}

// -----

// CHECK: error: {{.*}}node "argmax_u32" (ArgMax): not supported by provider cpu: unsigned element types are not supported
func.func @argmax_unsigned(%a: tensor<3xui32>) -> tensor<1xi64> {
  %0 = onnx.ArgMax(%a) {axis = 0 : i64} : (tensor<3xui32>) -> tensor<1xi64> loc("argmax_u32")
  return %0 : tensor<1xi64>
}

// -----

// CHECK: error: {{.*}}node "drop_dyn" (Dropout): not supported by provider cpu: training-mode dropout needs a static input shape
func.func @dropout_training_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %n = onnx.NoValue
  %t = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %y, %m = onnx.Dropout(%x, %n, %t) : (tensor<?xf32>, none, tensor<i1>) -> (tensor<?xf32>, none) loc("drop_dyn")
  return %y : tensor<?xf32>
}
