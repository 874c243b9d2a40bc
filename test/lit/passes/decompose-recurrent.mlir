// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-decompose-recurrent))' | FileCheck %s

// A forward LSTM over 2 steps: the input projections of both steps as one
// MatMul up front, then two unrolled steps of h times R + gates, the
// outputs concatenated in time order.
// CHECK-LABEL: func.func @lstm
// CHECK-NOT: onnx.LSTM
// CHECK: onnx.MatMul(%arg0, {{.*}}) : (tensor<2x3x5xf32>, tensor<5x16xf32>) -> tensor<2x3x16xf32>
// CHECK: onnx.MatMul({{.*}}) : (tensor<3x4xf32>, tensor<4x16xf32>) -> tensor<3x16xf32>
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

// -----

// A GRU with linear_before_reset (as PyTorch exports it): h times all of R
// in one MatMul per step; R's bias joins W's except the h gate's, which
// stays inside the product the reset gate scales.
// CHECK-LABEL: func.func @gru_linear_before_reset
// CHECK: onnx.MatMul(%arg0, {{.*}}) : (tensor<2x3x5xf32>, tensor<5x12xf32>) -> tensor<2x3x12xf32>
// CHECK: onnx.Concat({{.*}}) {axis = 0 : i64} : (tensor<8xf32>, tensor<4xf32>) -> tensor<12xf32>
// CHECK: onnx.Add({{.*}}) : (tensor<2x3x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32>
// CHECK: onnx.MatMul({{.*}}) : (tensor<3x4xf32>, tensor<4x12xf32>) -> tensor<3x12xf32>
// CHECK-NOT: tensor<4x4xf32>) -> tensor<3x4xf32>
// CHECK: onnx.MatMul({{.*}}) : (tensor<3x4xf32>, tensor<4x12xf32>) -> tensor<3x12xf32>
// CHECK: return
func.func @gru_linear_before_reset(%x: tensor<2x3x5xf32>, %w: tensor<1x12x5xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x24xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %y, %yh = onnx.GRU(%x, %w, %r, %b, %none, %none) {hidden_size = 4 : i64, linear_before_reset = 1 : i64} : (tensor<2x3x5xf32>, tensor<1x12x5xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>, none, none) -> (none, tensor<*xf32>)
  return %yh : tensor<*xf32>
}

// -----

// An initial state of unknown shape (PyTorch's stacked layers Expand zeros
// to a Shape of the previous layer's output): reshaped to [dirs, batch,
// hidden], known from X and W, so the layer unrolls without waiting for
// folding.
// CHECK-LABEL: func.func @lstm_dynamic_state
// CHECK-NOT: onnx.LSTM
// CHECK: onnx.Reshape(%arg3, {{.*}}) : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<1x3x4xf32>
// CHECK: return {{.*}} : tensor<1x3x4xf32>
func.func @lstm_dynamic_state(%x: tensor<2x3x5xf32>, %w: tensor<1x16x5xf32>, %r: tensor<1x16x4xf32>, %h0: tensor<?x?x4xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %h0, %none, %none) {hidden_size = 4 : i64} : (tensor<2x3x5xf32>, tensor<1x16x5xf32>, tensor<1x16x4xf32>, none, none, tensor<?x?x4xf32>, none, none) -> (none, tensor<*xf32>, none)
  return %yh : tensor<*xf32>
}

// -----

// A static sequence longer than 16 steps: a Loop over the steps that
// kiln-decompose-ops keeps (kiln.keep_loop), the input projections of all
// steps one MatMul before it, each step's row written with ScatterND.
// CHECK-LABEL: func.func @lstm_long_sequence
// CHECK-NOT: onnx.LSTM
// CHECK: onnx.MatMul(%arg0, {{.*}}) : (tensor<40x1x5xf32>, tensor<5x16xf32>) -> tensor<40x1x16xf32>
// CHECK: onnx.Loop
// CHECK: onnx.Gather
// CHECK: onnx.MatMul({{.*}}) : (tensor<1x4xf32>, tensor<4x16xf32>) -> tensor<1x16xf32>
// CHECK: onnx.ScatterND
// CHECK: kiln.keep_loop
// CHECK: return {{.*}} : tensor<40x1x1x4xf32>
func.func @lstm_long_sequence(%x: tensor<40x1x5xf32>, %w: tensor<1x16x5xf32>, %r: tensor<1x16x4xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %y, %yh, %yc = onnx.LSTM(%x, %w, %r, %none, %none, %none, %none, %none) {hidden_size = 4 : i64} : (tensor<40x1x5xf32>, tensor<1x16x5xf32>, tensor<1x16x4xf32>, none, none, none, none, none) -> (tensor<*xf32>, none, none)
  return %y : tensor<*xf32>
}
