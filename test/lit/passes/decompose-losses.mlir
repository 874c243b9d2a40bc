// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-decompose-losses))' | FileCheck %s

// Mean NLL with class weights and an ignored class: masked gather, weighted
// sum over the weight of the kept targets.
// CHECK-LABEL: func.func @nll_mean_weight_ignore
// CHECK-NOT: onnx.NegativeLogLikelihoodLoss
// CHECK: onnx.Equal
// CHECK: onnx.GatherElements
// CHECK: onnx.Gather
// CHECK: onnx.Where
// CHECK: onnx.ReduceSum
// CHECK: onnx.ReduceSum
// CHECK: onnx.Div
func.func @nll_mean_weight_ignore(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %w: tensor<5xf32>) -> tensor<f32> {
  %0 = onnx.NegativeLogLikelihoodLoss(%x, %t, %w) {ignore_index = 1 : i64} : (tensor<3x5xf32>, tensor<3xi64>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Softmax cross-entropy is LogSoftmax over the classes, then NLL; the
// optional second output is the log-probabilities.
// CHECK-LABEL: func.func @sce_none
// CHECK-NOT: onnx.SoftmaxCrossEntropyLoss
// CHECK: %[[LP:.*]] = onnx.LogSoftmax
// CHECK: onnx.GatherElements(%[[LP]]
// CHECK-NOT: onnx.Reduce
// CHECK: return %{{.*}}, %[[LP]] : tensor<3xf32>, tensor<3x5xf32>
func.func @sce_none(%x: tensor<3x5xf32>, %t: tensor<3xi64>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %0, %1 = onnx.SoftmaxCrossEntropyLoss(%x, %t, %none) {reduction = "none"} : (tensor<3x5xf32>, tensor<3xi64>, none) -> (tensor<*xf32>, tensor<*xf32>)
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Dynamic shapes: left for the partitioner to report.
// CHECK-LABEL: func.func @dynamic
// CHECK: onnx.NegativeLogLikelihoodLoss
func.func @dynamic(%x: tensor<?x5xf32>, %t: tensor<?xi64>) -> tensor<f32> {
  %none = onnx.NoValue
  %0 = onnx.NegativeLogLikelihoodLoss(%x, %t, %none) : (tensor<?x5xf32>, tensor<?xi64>, none) -> tensor<f32>
  return %0 : tensor<f32>
}
