// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-decompose-ops))' | FileCheck %s

// 4-D causal attention: a constant causal bias, softmax, two MatMuls.
// CHECK-LABEL: func.func @attention_causal
// CHECK-NOT: onnx.Attention
// CHECK: onnx.Transpose
// CHECK: onnx.MatMul
// CHECK: onnx.Add
// CHECK: onnx.Softmax
// CHECK: onnx.MatMul
// CHECK: return {{.*}} : tensor<2x3x4x8xf32>
func.func @attention_causal(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x8xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %y, %pk, %pv, %qk = onnx.Attention(%q, %k, %v, %none, %none, %none, %none) {is_causal = 1 : i64} : (tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, none, none, none, none) -> (tensor<*xf32>, none, none, none)
  return %y : tensor<*xf32>
}

// -----

// 3-D GQA with a boolean mask and a past cache: heads split by Reshape and
// Transpose, kv heads repeated by Expand, masked rows zeroed by Where.
// CHECK-LABEL: func.func @attention_3d_gqa
// CHECK-NOT: onnx.Attention
// CHECK: onnx.Concat
// CHECK: onnx.Where
// CHECK: onnx.IsInf
// CHECK: onnx.Expand
// CHECK: onnx.Softmax
// CHECK: return {{.*}} : tensor<2x4x48xf32>, tensor<2x2x5x12xf32>
func.func @attention_3d_gqa(%q: tensor<2x4x48xf32>, %k: tensor<2x3x24xf32>, %v: tensor<2x3x24xf32>, %m: tensor<4x5xi1>, %pk: tensor<2x2x2x12xf32>, %pv: tensor<2x2x2x12xf32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %none = onnx.NoValue
  %y, %k2, %v2, %qk = onnx.Attention(%q, %k, %v, %m, %pk, %pv, %none) {q_num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<2x4x48xf32>, tensor<2x3x24xf32>, tensor<2x3x24xf32>, tensor<4x5xi1>, tensor<2x2x2x12xf32>, tensor<2x2x2x12xf32>, none) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, none)
  return %y, %k2 : tensor<*xf32>, tensor<*xf32>
}

// -----

// Dynamic shapes stay: the partitioner reports the op.
// CHECK-LABEL: func.func @attention_dynamic
// CHECK: onnx.Attention
// CHECK-NOT: onnx.Softmax
func.func @attention_dynamic(%q: tensor<?x3x4x8xf32>, %k: tensor<?x3x6x8xf32>, %v: tensor<?x3x6x8xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %y, %pk, %pv, %qk = onnx.Attention(%q, %k, %v, %none, %none, %none, %none) : (tensor<?x3x4x8xf32>, tensor<?x3x6x8xf32>, tensor<?x3x6x8xf32>, none, none, none, none) -> (tensor<*xf32>, none, none, none)
  return %y : tensor<*xf32>
}

// -----

// f16 stays too (the CPU provider cannot cast back to f16).
// CHECK-LABEL: func.func @attention_f16
// CHECK: onnx.Attention
// CHECK-NOT: onnx.Softmax
func.func @attention_f16(%q: tensor<1x1x2x4xf16>, %k: tensor<1x1x2x4xf16>, %v: tensor<1x1x2x4xf16>) -> tensor<*xf16> {
  %none = onnx.NoValue
  %y, %pk, %pv, %qk = onnx.Attention(%q, %k, %v, %none, %none, %none, %none) : (tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16>, tensor<1x1x2x4xf16>, none, none, none, none) -> (tensor<*xf16>, none, none, none)
  return %y : tensor<*xf16>
}

// -----

// CHECK-LABEL: func.func @rms_norm
// CHECK-NOT: onnx.RMSNormalization
// CHECK: onnx.ReduceMean
// CHECK: onnx.Sqrt
// CHECK: onnx.Reciprocal
// CHECK: return {{.*}} : tensor<2x3x4xf32>
func.func @rms_norm(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>) -> tensor<*xf32> {
  %y = onnx.RMSNormalization(%x, %s) {axis = -2 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm_dynamic
// CHECK: onnx.RMSNormalization
// CHECK-NOT: onnx.ReduceMean
func.func @rms_norm_dynamic(%x: tensor<?x4xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
  %y = onnx.RMSNormalization(%x, %s) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// Exclusive reverse CumSum over a constant axis of 3: the last slot is 0,
// then running sums from the end.
// CHECK-LABEL: func.func @cumsum
// CHECK-NOT: onnx.CumSum
// CHECK-COUNT-3: onnx.Slice
// CHECK: onnx.Concat
// CHECK: return {{.*}} : tensor<2x3xi32>
func.func @cumsum(%x: tensor<2x3xi32>) -> tensor<*xi32> {
  %axis = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %y = onnx.CumSum(%x, %axis) {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x3xi32>, tensor<i64>) -> tensor<*xi32>
  return %y : tensor<*xi32>
}

// -----

// A runtime axis stays.
// CHECK-LABEL: func.func @cumprod_runtime_axis
// CHECK: onnx.CumProd
// CHECK-NOT: onnx.Concat
func.func @cumprod_runtime_axis(%x: tensor<2x3xf32>, %axis: tensor<i32>) -> tensor<*xf32> {
  %y = onnx.CumProd(%x, %axis) : (tensor<2x3xf32>, tensor<i32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// DequantizeLinear per axis: (x - zero_point) * scale in f32, the 1-D
// parameters reshaped along axis 1.
// CHECK-LABEL: func.func @dequantize_axis
// CHECK: %[[X:.*]] = onnx.Cast(%arg0) {to = 1 : i64}
// CHECK: %[[Z:.*]] = onnx.Reshape
// CHECK: %[[D:.*]] = onnx.Sub(%[[X]], %[[Z]])
// CHECK: onnx.Mul(%[[D]], %{{.*}}) : (tensor<1x3x2xf32>, tensor<1x3x1xf32>) -> tensor<1x3x2xf32>
// CHECK-NOT: onnx.DequantizeLinear
func.func @dequantize_axis(%x: tensor<1x3x2xui8>, %s: tensor<3xf32>, %z: tensor<3xui8>) -> tensor<1x3x2xf32> {
  %0 = onnx.DequantizeLinear(%x, %s, %z) {axis = 1 : i64} : (tensor<1x3x2xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<1x3x2xf32>
  return %0 : tensor<1x3x2xf32>
}

// -----

// QuantizeLinear to int8: round half to even, add the zero point, then
// cast, which saturates to [-128, 127] (no Clip of its own).
// CHECK-LABEL: func.func @quantize_int8
// CHECK: onnx.Div
// CHECK: onnx.Round
// CHECK: onnx.Add
// CHECK-NOT: onnx.Clip
// CHECK: onnx.Cast(%{{.*}}) {to = 3 : i64}
// CHECK-NOT: onnx.QuantizeLinear
func.func @quantize_int8(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4xi8> {
  %0 = onnx.QuantizeLinear(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CausalConvWithState: past state + input, a depthwise Conv1d in f32, and
// the last k-1 frames as the present state.
// CHECK-LABEL: func.func @causal_conv
// CHECK: %[[P:.*]] = onnx.Concat(%arg2, %arg0) {axis = 2 : i64}
// CHECK: onnx.Conv({{.*}}) {group = 4 : i64, kernel_shape = [3], pads = [0, 0]}
// CHECK: onnx.Sigmoid
// CHECK: onnx.Slice(%[[P]]
// CHECK-NOT: onnx.CausalConvWithState
func.func @causal_conv(%x: tensor<1x4x6xf32>, %w: tensor<4x1x3xf32>, %s: tensor<1x4x2xf32>) -> (tensor<1x4x6xf32>, tensor<1x4x2xf32>) {
  %n = onnx.NoValue
  %0:2 = onnx.CausalConvWithState(%x, %w, %n, %s) {activation = "silu"} : (tensor<1x4x6xf32>, tensor<4x1x3xf32>, none, tensor<1x4x2xf32>) -> (tensor<1x4x6xf32>, tensor<1x4x2xf32>)
  return %0#0, %0#1 : tensor<1x4x6xf32>, tensor<1x4x2xf32>
}

// -----

// LinearAttention (linear rule, one head, two steps): per step a rank-1
// state update (MatMul of k^T and v) and the read q . state, scaled.
// CHECK-LABEL: func.func @linear_attention
// CHECK-COUNT-2: onnx.Add
// CHECK: onnx.Concat
// CHECK-NOT: onnx.LinearAttention
func.func @linear_attention(%q: tensor<1x2x4xf32>, %k: tensor<1x2x4xf32>, %v: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x1x4x4xf32>) {
  %n = onnx.NoValue
  %0:2 = onnx.LinearAttention(%q, %k, %v, %n, %n, %n) {update_rule = "linear", q_num_heads = 1 : i64, kv_num_heads = 1 : i64} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, none, none, none) -> (tensor<1x2x4xf32>, tensor<1x1x4x4xf32>)
  return %0#0, %0#1 : tensor<1x2x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// Loop with a run-time trip count whose scan output fixes it at 2 and a
// body that passes the condition through: checked, then unrolled, the scan
// outputs stacked.
// CHECK-LABEL: func.func @loop_unrolled
// CHECK: %[[EQ:.*]] = onnx.Equal(%arg0
// CHECK: %[[OK:.*]] = onnx.And(%[[EQ]], %arg1)
// CHECK: kiln.check %[[OK]], "node {{.*}} (Loop): the trip count or condition (computed at run time) differs from the 2 iterations compiled" : tensor<i1>
// CHECK: %[[A:.*]] = onnx.Add(%arg2
// CHECK: %[[B:.*]] = onnx.Add(%[[A]]
// CHECK: onnx.Concat
// CHECK-NOT: onnx.Loop
func.func @loop_unrolled(%m: tensor<i64>, %c: tensor<i1>, %y: tensor<1xf32>) -> (tensor<1xf32>, tensor<2x1xf32>) {
  %0:2 = onnx.Loop(%m, %c, %y) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %yi: tensor<1xf32>):
    %one = onnx.Constant() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
    %next = onnx.Add(%yi, %one) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    onnx.Yield %ci, %next, %next : tensor<i1>, tensor<1xf32>, tensor<1xf32>
  } : (tensor<i64>, tensor<i1>, tensor<1xf32>) -> (tensor<1xf32>, tensor<2x1xf32>)
  return %0#0, %0#1 : tensor<1xf32>, tensor<2x1xf32>
}

// -----

// A while loop as torch.jit.script exports it: trip count INT64_MAX, a
// counter carried from 0, the condition n + 1 < 3 computed in the body. The
// condition evaluates at compile time, so three bodies are inlined.
// CHECK-LABEL: func.func @while_loop
// CHECK: %[[A:.*]] = onnx.Mul(%arg0
// CHECK: %[[B:.*]] = onnx.Mul(%[[A]]
// CHECK: %[[C:.*]] = onnx.Mul(%[[B]]
// CHECK-NOT: onnx.Mul
// CHECK-NOT: onnx.Loop
// CHECK: return %[[C]]
func.func @while_loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = onnx.Constant() {value = dense<9223372036854775807> : tensor<i64>} : () -> tensor<i64>
  %t = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %n0 = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %0:2 = onnx.Loop(%m, %t, %x, %n0) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %yi: tensor<4xf32>, %ni: tensor<i64>):
    %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %y = onnx.Mul(%yi, %two) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %one = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %n = onnx.Add(%ni, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %three = onnx.Constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %go = onnx.Less(%n, %three) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    onnx.Yield %go, %y, %n : tensor<i1>, tensor<4xf32>, tensor<i64>
  } : (tensor<i64>, tensor<i1>, tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<i64>)
  return %0#0 : tensor<4xf32>
}

// -----

// Negative: a while condition that depends on the data stays a Loop.
// CHECK-LABEL: func.func @while_data
// CHECK: onnx.Loop
func.func @while_data(%x: tensor<4xf32>, %bound: tensor<f32>) -> tensor<4xf32> {
  %m = onnx.Constant() {value = dense<9223372036854775807> : tensor<i64>} : () -> tensor<i64>
  %t = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = onnx.Loop(%m, %t, %x) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %yi: tensor<4xf32>):
    %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %y = onnx.Mul(%yi, %two) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %none = onnx.NoValue
    %s = onnx.ReduceSum(%y, %none) {keepdims = 0 : i64} : (tensor<4xf32>, none) -> tensor<f32>
    %go = onnx.Less(%s, %bound) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    onnx.Yield %go, %y : tensor<i1>, tensor<4xf32>
  } : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Scan over axis 1 of a 2x3 input, read from the end (direction 1): three
// unrolled bodies on columns 2, 1, 0; the state threads through, and the
// scan output (direction 1, axis 1) is stacked back in column order.
// CHECK-LABEL: func.func @scan_unrolled
// CHECK: %[[I2:.*]] = onnx.Constant() {value = dense<2> : tensor<i64>}
// CHECK: %[[C2:.*]] = onnx.Gather(%arg1, %[[I2]]) {axis = 1 : i64}
// CHECK: %[[S1:.*]] = onnx.Add(%arg0, %[[C2]])
// CHECK: %[[I1:.*]] = onnx.Constant() {value = dense<1> : tensor<i64>}
// CHECK: %[[C1:.*]] = onnx.Gather(%arg1, %[[I1]]) {axis = 1 : i64}
// CHECK: %[[S2:.*]] = onnx.Add(%[[S1]], %[[C1]])
// CHECK: %[[C0:.*]] = onnx.Gather(%arg1
// CHECK: %[[S3:.*]] = onnx.Add(%[[S2]], %[[C0]])
// CHECK: %[[U3:.*]] = onnx.Unsqueeze(%[[S3]]
// CHECK: %[[U2:.*]] = onnx.Unsqueeze(%[[S2]]
// CHECK: %[[U1:.*]] = onnx.Unsqueeze(%[[S1]]
// CHECK: %[[Y:.*]] = onnx.Concat(%[[U3]], %[[U2]], %[[U1]]) {axis = 1 : i64} {{.*}} -> tensor<2x3xf32>
// CHECK: return %[[S3]], %[[Y]]
// CHECK-NOT: onnx.Scan
func.func @scan_unrolled(%s: tensor<2xf32>, %x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  %0:2 = onnx.Scan(%s, %x) {
  ^bb0(%si: tensor<2xf32>, %xi: tensor<2xf32>):
    %next = onnx.Add(%si, %xi) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %next, %next : tensor<2xf32>, tensor<2xf32>
  } attributes {num_scan_inputs = 1 : i64, scan_input_axes = [1], scan_input_directions = [1], scan_output_axes = [-1], scan_output_directions = [1]} : (tensor<2xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2x3xf32>
}

// -----

// QLinearConv with a weight zero point known only at run time (not the
// integer kernels' form): the centered operands convolve in f32 (3 taps a
// sum: 255 * 255 * 3 < 2^24, exact), cast to i32, plus the int32 bias; a
// per-channel w_scale is reshaped to [M, 1, 1]; the requantization is in
// f32 (f32 scales), as ONNX Runtime computes it.
// CHECK-LABEL: func.func @qlinear_conv
// CHECK: %[[C:.*]] = onnx.Conv(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: %[[I:.*]] = onnx.Cast(%[[C]]) {to = 6 : i64}
// CHECK: %[[B:.*]] = onnx.Reshape(%arg6, %{{.*}}) {{.*}} -> tensor<1x2x1x1xi32>
// CHECK: %[[S:.*]] = onnx.Add(%[[I]], %[[B]])
// CHECK: %[[WS:.*]] = onnx.Reshape(%arg3, %{{.*}}) {{.*}} -> tensor<2x1x1xf32>
// CHECK: onnx.Mul(%arg2, %[[WS]])
// CHECK: %[[F:.*]] = onnx.Cast(%[[S]]) {to = 1 : i64}
// CHECK: onnx.Mul(%[[F]]
// CHECK: onnx.Round
// CHECK-NOT: onnx.Clip
// CHECK: onnx.Cast({{.*}}) {to = 2 : i64} {{.*}} -> tensor<1x2x4x4xui8>
// CHECK-NOT: onnx.QLinearConv
func.func @qlinear_conv(%x: tensor<1x3x4x4xui8>, %w: tensor<2x3x1x1xi8>, %s: tensor<f32>, %ws: tensor<2xf32>, %zx: tensor<ui8>, %zw: tensor<i8>, %bias: tensor<2xi32>) -> tensor<1x2x4x4xui8> {
  %0 = onnx.QLinearConv(%x, %s, %zx, %w, %ws, %zw, %s, %zx, %bias) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x3x1x1xi8>, tensor<2xf32>, tensor<i8>, tensor<f32>, tensor<ui8>, tensor<2xi32>) -> tensor<1x2x4x4xui8>
  return %0 : tensor<1x2x4x4xui8>
}

// -----

// MaxUnpool: the values scattered into zeros of the unpooled shape (4x4),
// padded at the end to output_shape (5x5), whose run-time value a Reshape
// checks.
// CHECK-LABEL: func.func @max_unpool
// CHECK: onnx.ScatterElements({{.*}}) : {{.*}} -> tensor<16xf32>
// CHECK: onnx.Reshape({{.*}} -> tensor<1x1x4x4xf32>
// CHECK: onnx.Pad({{.*}} -> tensor<1x1x5x5xf32>
// CHECK: onnx.Reshape(%{{.*}}, %arg2) {{.*}} -> tensor<1x1x5x5xf32>
// CHECK-NOT: onnx.MaxUnpool
func.func @max_unpool(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>, %s: tensor<4xi64>) -> tensor<1x1x5x5xf32> {
  %0 = onnx.MaxUnpool(%x, %i, %s) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// TensorScatter (circular): positions (write_indices[b] + s) mod 4 along
// axis -2, one ScatterElements.
// CHECK-LABEL: func.func @tensor_scatter
// CHECK: onnx.Add
// CHECK: onnx.Mod
// CHECK: onnx.Expand({{.*}} -> tensor<2x1x2x5xi64>
// CHECK: onnx.ScatterElements(%arg0, {{.*}}, %arg1) {axis = 2 : i64}
// CHECK-NOT: onnx.TensorScatter
func.func @tensor_scatter(%past: tensor<2x1x4x5xf32>, %u: tensor<2x1x2x5xf32>, %w: tensor<2xi64>) -> tensor<2x1x4x5xf32> {
  %0 = onnx.TensorScatter(%past, %u, %w) {mode = "circular"} : (tensor<2x1x4x5xf32>, tensor<2x1x2x5xf32>, tensor<2xi64>) -> tensor<2x1x4x5xf32>
  return %0 : tensor<2x1x4x5xf32>
}

// -----

// Det of 2x2 matrices: a00 * a11 - a01 * a10; larger than 4x4 stays.
// CHECK-LABEL: func.func @det
// CHECK-COUNT-2: onnx.Mul
// CHECK: onnx.Sub({{.*}} -> tensor<3xf32>
// CHECK: onnx.Det({{.*}}) : (tensor<6x6xf32>) -> tensor<f32>
func.func @det(%x: tensor<3x2x2xf32>, %y: tensor<6x6xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %0 = onnx.Det(%x) : (tensor<3x2x2xf32>) -> tensor<3xf32>
  %1 = onnx.Det(%y) : (tensor<6x6xf32>) -> tensor<f32>
  return %0, %1 : tensor<3xf32>, tensor<f32>
}

// -----

// FlexAttention with GQA and a score_mod (soft cap, inlined): kv heads
// repeated, Q and K each scaled by sqrt(scale), the modifier applied to the
// scores before Softmax; the absent prob_mod is an empty region.
// CHECK-LABEL: func.func @flex_attention
// CHECK: onnx.Expand
// CHECK: onnx.MatMul({{.*}} -> tensor<1x4x3x5xf32>
// CHECK: onnx.Tanh
// CHECK: onnx.Softmax
// CHECK: onnx.MatMul({{.*}} -> tensor<1x4x3x8xf32>
// CHECK-NOT: onnx.FlexAttention
func.func @flex_attention(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32> {
  %0 = onnx.FlexAttention(%q, %k, %v) {
  }, {
  ^bb0(%s: tensor<1x4x3x5xf32>):
    %t = onnx.Tanh(%s) : (tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32>
    onnx.Yield %t : tensor<1x4x3x5xf32>
  } : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32>
  return %0 : tensor<1x4x3x8xf32>
}

// -----

// STFT with a run-time frame_step: 15 frames of the window's 16 samples in
// 128 imply a step of 8, checked at run time; the frames are gathered,
// windowed and transformed by one DFT.
// CHECK-LABEL: func.func @stft
// CHECK: onnx.Equal
// CHECK: kiln.check {{.*}} "{{.*}}frame_step or frame_length (computed at run time) differs from the values the result shape implies (8, 16)"
// CHECK: onnx.Gather({{.*}} -> tensor<1x15x16x1xf32>
// CHECK: onnx.Mul
// CHECK: onnx.DFT({{.*}} -> tensor<1x15x9x2xf32>
// CHECK-NOT: onnx.STFT
func.func @stft(%x: tensor<1x128x1xf32>, %step: tensor<i64>, %w: tensor<16xf32>) -> tensor<1x15x9x2xf32> {
  %none = onnx.NoValue
  %0 = onnx.STFT(%x, %step, %w, %none) : (tensor<1x128x1xf32>, tensor<i64>, tensor<16xf32>, none) -> tensor<1x15x9x2xf32>
  return %0 : tensor<1x15x9x2xf32>
}

// -----

// ai.onnx.ml preprocessing and linear model: Scaler (x - offset) * scale,
// Normalizer (L2) x / max(norm, 1e-30), LinearRegressor x . W^T + b.
// CHECK-LABEL: func.func @ml_linear
// CHECK: onnx.Sub
// CHECK: onnx.Mul
// CHECK: onnx.Sqrt
// CHECK: onnx.Max
// CHECK: onnx.Div
// CHECK: onnx.MatMul({{.*}} -> tensor<4x2xf32>
// CHECK: onnx.Add
// CHECK-NOT: onnx.Scaler
// CHECK-NOT: onnx.Normalizer
// CHECK-NOT: onnx.LinearRegressor
func.func @ml_linear(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>) {
  %0 = onnx.Scaler(%x) {offset = [0.5 : f32, 1.0 : f32, 2.0 : f32], scale = [2.0 : f32, 0.5 : f32, 1.5 : f32]} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = onnx.Normalizer(%x) {norm = "L2"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = onnx.LinearRegressor(%x) {coefficients = [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32, 5.0 : f32, 6.0 : f32], intercepts = [0.5 : f32, -0.5 : f32], targets = 2 : i64} : (tensor<4x3xf32>) -> tensor<4x2xf32>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>
}

// -----

// A known trip count with a condition computed at run time stays a Loop
// (the CPU runs it as a loop): unrolling would need the condition.
// CHECK-LABEL: func.func @loop_runtime_condition
// CHECK: onnx.Loop
func.func @loop_runtime_condition(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
  %m = onnx.Constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %0 = onnx.Loop(%m, %c, %x) {
  ^bb0(%i: tensor<i64>, %cin: tensor<i1>, %v: tensor<2xf32>):
    %d = onnx.Add(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %cin, %d : tensor<i1>, tensor<2xf32>
  } : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// QLinearConv with one channel a group (a depthwise conv): the 8-bit
// kernels' form as for group 1, u8 data padded with its zero point, a
// zero-point-free ConvInteger keeping the groups, minus za * (each
// channel's weight sum); no float conv of the centered data.
// CHECK-LABEL: func.func @qlinear_conv_depthwise
// CHECK: %[[P:.*]] = onnx.Pad(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) : {{.*}} -> tensor<1x4x8x8xui8>
// CHECK: %[[C:.*]] = onnx.ConvInteger(%[[P]], %{{.*}}, %{{.*}}, %{{.*}}) {group = 4 : i64} : (tensor<1x4x8x8xui8>, tensor<4x1x3x3xi8>, none, none) -> tensor<1x4x6x6xi32>
// CHECK: onnx.ReduceSum
// CHECK: onnx.Sub(%[[C]], %{{.*}}) : (tensor<1x4x6x6xi32>, tensor<1x4x1x1xi32>)
// CHECK-NOT: onnx.Conv(
// CHECK: onnx.Cast({{.*}}) {to = 2 : i64} {{.*}} -> tensor<1x4x6x6xui8>
func.func @qlinear_conv_depthwise(%x: tensor<1x4x6x6xui8>, %s: tensor<f32>, %zx: tensor<ui8>, %ws: tensor<4xf32>) -> tensor<1x4x6x6xui8> {
  %w = onnx.Constant() {value = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[-1, 0, 1], [0, 0, 0], [1, 0, -1]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]]]]> : tensor<4x1x3x3xi8>} : () -> tensor<4x1x3x3xi8>
  %zw = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %none = onnx.NoValue
  %0 = onnx.QLinearConv(%x, %s, %zx, %w, %ws, %zw, %s, %zx, %none) {group = 4 : i64, pads = [1, 1, 1, 1]} : (tensor<1x4x6x6xui8>, tensor<f32>, tensor<ui8>, tensor<4x1x3x3xi8>, tensor<4xf32>, tensor<i8>, tensor<f32>, tensor<ui8>, none) -> tensor<1x4x6x6xui8>
  return %0 : tensor<1x4x6x6xui8>
}

// -----

// ConvTranspose 2x2 stride 2: a 1x1 Conv to 4 phases per channel (bias
// repeated per phase), interleaved by Reshape/Transpose/Reshape; nothing
// to cut.
// CHECK-LABEL: func.func @conv_transpose_2x2_s2
// CHECK-NOT: onnx.ConvTranspose
// CHECK: onnx.Transpose{{.*}}perm = [0, 2, 4, 6, 1, 3, 5]
// CHECK: onnx.Expand
// CHECK: onnx.Conv{{.*}}kernel_shape = [1, 1]{{.*}}pads = [0, 0, 0, 0]{{.*}} -> tensor<1x32x5x6xf32>
// CHECK: onnx.Reshape{{.*}} -> tensor<1x8x2x2x5x6xf32>
// CHECK: onnx.Transpose{{.*}}perm = [0, 1, 4, 2, 5, 3]
// CHECK: onnx.Reshape{{.*}} -> tensor<1x8x10x12xf32>
// CHECK-NOT: onnx.Slice
// CHECK: return
func.func @conv_transpose_2x2_s2(%x: tensor<1x4x5x6xf32>) -> tensor<1x8x10x12xf32> {
  %w = onnx.Constant() {value = dense<1.0> : tensor<4x8x2x2xf32>} : () -> tensor<4x8x2x2xf32>
  %b = onnx.Constant() {value = dense<0.5> : tensor<8xf32>} : () -> tensor<8xf32>
  %y = onnx.ConvTranspose(%x, %w, %b) {strides = [2, 2]} : (tensor<1x4x5x6xf32>, tensor<4x8x2x2xf32>, tensor<8xf32>) -> tensor<1x8x10x12xf32>
  return %y : tensor<1x8x10x12xf32>
}

// -----

// 3x3 stride 2, pads 1, output_padding 1, two groups: the kernel padded to
// 4x4, 2x2 taps per phase reversed, the Conv padded by 1; the pads cut
// from the interleaved 12x12.
// CHECK-LABEL: func.func @conv_transpose_3x3_s2_groups
// CHECK: onnx.Pad
// CHECK: onnx.Slice
// CHECK: onnx.Conv{{.*}}group = 2{{.*}}kernel_shape = [2, 2]{{.*}}pads = [1, 1, 1, 1]{{.*}} -> tensor<1x24x6x6xf32>
// CHECK: onnx.Slice{{.*}} -> tensor<1x6x10x10xf32>
// CHECK: return
func.func @conv_transpose_3x3_s2_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x6x10x10xf32> {
  %none = onnx.NoValue
  %y = onnx.ConvTranspose(%x, %w, %none) {group = 2 : i64, strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x6x10x10xf32>
  return %y : tensor<1x6x10x10xf32>
}

// -----

// A run-time batch: the Reshapes copy it (0).
// CHECK-LABEL: func.func @conv_transpose_runtime_batch
// CHECK: onnx.Conv{{.*}} -> tensor<?x16x4x4xf32>
// CHECK: onnx.Constant() {value = dense<[0, 4, 2, 2, 4, 4]> : tensor<6xi64>}
// CHECK: onnx.Reshape{{.*}} -> tensor<?x4x2x2x4x4xf32>
// CHECK: onnx.Reshape{{.*}} -> tensor<?x4x8x8xf32>
func.func @conv_transpose_runtime_batch(%x: tensor<?x2x4x4xf32>, %w: tensor<2x4x2x2xf32>) -> tensor<?x4x8x8xf32> {
  %none = onnx.NoValue
  %y = onnx.ConvTranspose(%x, %w, %none) {strides = [2, 2]} : (tensor<?x2x4x4xf32>, tensor<2x4x2x2xf32>, none) -> tensor<?x4x8x8xf32>
  return %y : tensor<?x4x8x8xf32>
}

// -----

// Dilated kernels keep the op (lowered as it is defined).
// CHECK-LABEL: func.func @conv_transpose_dilated
// CHECK: onnx.ConvTranspose
func.func @conv_transpose_dilated(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %y = onnx.ConvTranspose(%x, %w, %none) {strides = [2, 2], dilations = [2, 2]} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, none) -> tensor<*xf32>
  return %y : tensor<*xf32>
}
