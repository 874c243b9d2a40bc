// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-conv1d-as-2d))' | FileCheck %s

// A 1-D Conv with pads, stride, dilation and a fused activation: the 2-D
// Conv of height 1 between Unsqueeze and Squeeze, constant weights
// reshaped in place, the activation kept.
// CHECK-LABEL: func.func @conv1d
// CHECK-DAG: %[[W:.*]] = onnx.Constant() {value = dense<5.000000e-01> : tensor<8x4x1x3xf32>}
// CHECK-DAG: %[[X:.*]] = onnx.Unsqueeze(%arg0, %{{.*}}) : (tensor<2x4x20xf32>, tensor<1xi64>) -> tensor<2x4x1x20xf32>
// CHECK: %[[C:.*]] = onnx.Conv(%[[X]], %[[W]], %{{.*}}) {dilations = [1, 2], kernel_shape = [1, 3], kiln.activation = "Relu", pads = [0, 2, 0, 1], strides = [1, 2]} : (tensor<2x4x1x20xf32>, tensor<8x4x1x3xf32>, tensor<8xf32>) -> tensor<2x8x1x10xf32>
// CHECK: %[[Y:.*]] = onnx.Squeeze(%[[C]], %{{.*}}) : (tensor<2x8x1x10xf32>, tensor<1xi64>) -> tensor<2x8x10xf32>
// CHECK-NOT: onnx.Conv
// CHECK: return %[[Y]]
func.func @conv1d(%x: tensor<2x4x20xf32>) -> tensor<2x8x10xf32> {
  %w = onnx.Constant() {value = dense<0.5> : tensor<8x4x3xf32>} : () -> tensor<8x4x3xf32>
  %b = onnx.Constant() {value = dense<0.25> : tensor<8xf32>} : () -> tensor<8xf32>
  %y = onnx.Conv(%x, %w, %b) {kernel_shape = [3], strides = [2], dilations = [2], pads = [2, 1], kiln.activation = "Relu"} : (tensor<2x4x20xf32>, tensor<8x4x3xf32>, tensor<8xf32>) -> tensor<2x8x10xf32>
  return %y : tensor<2x8x10xf32>
}

// -----

// Depthwise (groups), weights an input: Unsqueeze of the weights too; no
// pads attribute stays without one.
// CHECK-LABEL: func.func @conv1d_depthwise
// CHECK: onnx.Unsqueeze(%arg1
// CHECK: onnx.Conv({{.*}}) {dilations = [1, 1], group = 6 : i64, kernel_shape = [1, 5], strides = [1, 1]} : (tensor<1x6x1x16xf32>, tensor<6x1x1x5xf32>, none) -> tensor<1x6x1x12xf32>
// CHECK: onnx.Squeeze
func.func @conv1d_depthwise(%x: tensor<1x6x16xf32>, %w: tensor<6x1x5xf32>) -> tensor<1x6x12xf32> {
  %none = onnx.NoValue
  %y = onnx.Conv(%x, %w, %none) {group = 6 : i64} : (tensor<1x6x16xf32>, tensor<6x1x5xf32>, none) -> tensor<1x6x12xf32>
  return %y : tensor<1x6x12xf32>
}

// -----

// 2-D Convs and 1-D ones of run-time length stay.
// CHECK-LABEL: func.func @stays
// CHECK-NOT: onnx.Unsqueeze
// CHECK: onnx.Conv({{.*}}) : (tensor<1x2x8x8xf32>
// CHECK: onnx.Conv({{.*}}) : (tensor<1x2x?xf32>
func.func @stays(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>, %v: tensor<1x2x?xf32>, %w1: tensor<3x2x3xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x?xf32>) {
  %none = onnx.NoValue
  %y = onnx.Conv(%x, %w, %none) : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>, none) -> tensor<1x3x6x6xf32>
  %z = onnx.Conv(%v, %w1, %none) : (tensor<1x2x?xf32>, tensor<3x2x3xf32>, none) -> tensor<1x3x?xf32>
  return %y, %z : tensor<1x3x6x6xf32>, tensor<1x3x?xf32>
}
