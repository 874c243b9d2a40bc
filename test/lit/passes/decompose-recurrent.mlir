// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-decompose-recurrent))' | FileCheck %s

// A forward LSTM over 2 steps: two unrolled steps of MatMul + gates, the
// outputs concatenated in time order.
// CHECK-LABEL: func.func @lstm
// CHECK-NOT: onnx.LSTM
// CHECK-COUNT-2: onnx.Sigmoid
// CHECK: onnx.Tanh
// CHECK: onnx.Concat
// CHECK: return {{.*}} : tensor<2x1x3x4xf32>, tensor<1x3x4xf32>
func.func @lstm(%x: tensor<2x3x5xf32>, %w: tensor<1x16x5xf32>, %r: tensor<1x16x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 4 : i64} : (tensor<2x3x5xf32>, tensor<1x16x5xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (tensor<*xf32>, tensor<*xf32>, none)
  return %y, %yh : tensor<*xf32>, tensor<*xf32>
}

// -----

// A bidirectional GRU: both directions, joined along the direction axis.
// CHECK-LABEL: func.func @gru_bidirectional
// CHECK-NOT: onnx.GRU
// CHECK: onnx.Concat
// CHECK: return {{.*}} : tensor<2x3x4xf32>
func.func @gru_bidirectional(%x: tensor<1x3x5xf32>, %w: tensor<2x12x5xf32>, %r: tensor<2x12x4xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %y, %yh = onnx.GRU(%x, %w, %r, %none, %none, %none) {hidden_size = 4 : i64, direction = "bidirectional"} : (tensor<1x3x5xf32>, tensor<2x12x5xf32>, tensor<2x12x4xf32>, none, none, none) -> (none, tensor<*xf32>)
  return %yh : tensor<*xf32>
}
