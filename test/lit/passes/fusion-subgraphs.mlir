// RUN: kiln-opt %s -split-input-file --kiln-fuse-subgraphs | FileCheck %s

// GELU, erf form as PyTorch exports it: Div by sqrt(2), Erf, Add 1, Mul x,
// Mul 0.5.
// CHECK: module attributes {kiln.report.fuse_gelu = 1 : i64}
// CHECK-LABEL: func.func @gelu_torch
// CHECK: %[[G:.*]] = onnx.Gelu(%arg0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NOT: onnx.Erf
// CHECK: return %[[G]]
func.func @gelu_torch(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s2 = onnx.Constant() {value = dense<1.41421354> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %half = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %0 = onnx.Div(%x, %s2) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = onnx.Erf(%0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = onnx.Add(%1, %one) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = onnx.Mul(%x, %2) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = onnx.Mul(%3, %half) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// -----

// GELU, erf form as TF exports it: Mul by 1/sqrt(2), 0.5 * x first, then
// times (1 + erf); and 0.5 * (1 + erf) times x.
// CHECK: kiln.report.fuse_gelu = 2 : i64
// CHECK-LABEL: func.func @gelu_tf
// CHECK: onnx.Gelu(%arg0)
// CHECK: onnx.Gelu(%arg1)
// CHECK-NOT: onnx.Erf
func.func @gelu_tf(%x: tensor<8xf32>, %u: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r2 = onnx.Constant() {value = dense<0.707106769> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %half = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %h = onnx.Mul(%half, %x) : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %0 = onnx.Mul(%x, %r2) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = onnx.Erf(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = onnx.Add(%one, %1) : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = onnx.Mul(%h, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %a = onnx.Mul(%u, %r2) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %b = onnx.Erf(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %c = onnx.Add(%b, %one) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %d = onnx.Mul(%c, %half) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = onnx.Mul(%d, %u) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %3, %e : tensor<8xf32>, tensor<8xf32>
}

// -----

// GELU, tanh approximation with Pow(x, 3).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: onnx.Gelu(%arg0) {approximate = "tanh"}
// CHECK-NOT: onnx.Tanh
func.func @gelu_tanh(%x: tensor<8xf32>) -> tensor<8xf32> {
  %three = onnx.Constant() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %k = onnx.Constant() {value = dense<0.044715> : tensor<f32>} : () -> tensor<f32>
  %s = onnx.Constant() {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %half = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %0 = onnx.Pow(%x, %three) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = onnx.Mul(%0, %k) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = onnx.Add(%x, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = onnx.Mul(%2, %s) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %4 = onnx.Tanh(%3) : (tensor<8xf32>) -> tensor<8xf32>
  %5 = onnx.Add(%4, %one) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = onnx.Mul(%x, %5) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %7 = onnx.Mul(%6, %half) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %7 : tensor<8xf32>
}

// -----

// GELU, tanh approximation factored as FastGelu writes it:
// x * (1 + 0.044715 * x * x) inside the tanh.
// CHECK-LABEL: func.func @gelu_tanh_factored
// CHECK: onnx.Gelu(%arg0) {approximate = "tanh"}
// CHECK-NOT: onnx.Tanh
func.func @gelu_tanh_factored(%x: tensor<8xf32>) -> tensor<8xf32> {
  %k = onnx.Constant() {value = dense<0.044715> : tensor<f32>} : () -> tensor<f32>
  %s = onnx.Constant() {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %half = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %0 = onnx.Mul(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = onnx.Mul(%0, %k) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = onnx.Add(%1, %one) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = onnx.Mul(%x, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = onnx.Mul(%3, %s) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %5 = onnx.Tanh(%4) : (tensor<8xf32>) -> tensor<8xf32>
  %6 = onnx.Add(%5, %one) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %7 = onnx.Mul(%6, %half) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %8 = onnx.Mul(%x, %7) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %8 : tensor<8xf32>
}

// -----

// Negative: the wrong constant (Div by 2), and an intermediate with another
// use.
// CHECK-NOT: kiln.report.fuse_gelu
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: onnx.Gelu
// CHECK: onnx.Erf
// CHECK: onnx.Erf
func.func @not_gelu(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %s2 = onnx.Constant() {value = dense<1.41421354> : tensor<f32>} : () -> tensor<f32>
  %one = onnx.Constant() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %half = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %0 = onnx.Div(%x, %two) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = onnx.Erf(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = onnx.Add(%1, %one) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = onnx.Mul(%x, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = onnx.Mul(%3, %half) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %a = onnx.Div(%x, %s2) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %b = onnx.Erf(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %c = onnx.Add(%b, %one) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %d = onnx.Mul(%x, %c) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %e = onnx.Mul(%d, %half) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %4, %e, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// LayerNormalization from its primitive chain over the last axis.
// CHECK: kiln.report.fuse_layer_norm = 1 : i64
// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = onnx.LayerNormalization(%arg0, %{{.*}}, %{{.*}}) {axis = 1 : i64, epsilon = 9.99999{{[0-9]*}}E-7 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, none, none)
// CHECK-NOT: onnx.ReduceMean
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant() {value = dense<1.0e-6> : tensor<f32>} : () -> tensor<f32>
  %g = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = onnx.Constant() {value = dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %axes = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = onnx.ReduceMean(%x, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %d = onnx.Sub(%x, %m) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %p = onnx.Pow(%d, %two) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%p, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = onnx.Sqrt(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = onnx.Div(%d, %s) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y0 = onnx.Mul(%n, %g) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y = onnx.Add(%y0, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// LayerNorm with gamma folded into the factor, as tf2onnx writes Keras'
// LayerNormalization: x * s + (beta - mean * s), s = gamma * rsqrt(var + eps).
// CHECK: kiln.report.fuse_layer_norm = 1 : i64
// CHECK-LABEL: func.func @layer_norm_tf
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = onnx.LayerNormalization(%arg0, %{{.*}}, %{{.*}}) {axis = 1 : i64}
// CHECK-NOT: onnx.ReduceMean
// CHECK: return %[[Y]]
func.func @layer_norm_tf(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %eps = onnx.Constant() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %g = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = onnx.Constant() {value = dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %axes = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = onnx.ReduceMean(%x, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %d = onnx.Sub(%x, %m) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = onnx.Mul(%d, %d) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%sq, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %sd = onnx.Sqrt(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %inv = onnx.Reciprocal(%sd) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %s = onnx.Mul(%inv, %g) : (tensor<2x1xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %xs = onnx.Mul(%x, %s) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %ms = onnx.Mul(%m, %s) : (tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %shift = onnx.Sub(%b, %ms) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = onnx.Add(%xs, %shift) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// The same factor applied to x - mean, then + beta.
// CHECK: kiln.report.fuse_layer_norm = 1 : i64
// CHECK-LABEL: func.func @layer_norm_scaled
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = onnx.LayerNormalization(%arg0, %{{.*}}, %{{.*}}) {axis = 1 : i64
// CHECK: return %[[Y]]
func.func @layer_norm_scaled(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %eps = onnx.Constant() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %g = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = onnx.Constant() {value = dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %axes = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = onnx.ReduceMean(%x, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %d = onnx.Sub(%x, %m) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = onnx.Mul(%d, %d) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%sq, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %sd = onnx.Sqrt(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %inv = onnx.Reciprocal(%sd) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %s = onnx.Mul(%g, %inv) : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %ds = onnx.Mul(%d, %s) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = onnx.Add(%ds, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Negative: the shift subtracts another tensor's mean times the factor.
// CHECK-LABEL: func.func @not_layer_norm_tf
// CHECK-NOT: onnx.LayerNormalization
func.func @not_layer_norm_tf(%x: tensor<2x4xf32>, %other: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %eps = onnx.Constant() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %g = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = onnx.Constant() {value = dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %axes = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = onnx.ReduceMean(%x, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %d = onnx.Sub(%x, %m) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = onnx.Mul(%d, %d) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%sq, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %sd = onnx.Sqrt(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %inv = onnx.Reciprocal(%sd) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %s = onnx.Mul(%inv, %g) : (tensor<2x1xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %xs = onnx.Mul(%x, %s) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %ms = onnx.Mul(%other, %s) : (tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %shift = onnx.Sub(%b, %ms) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = onnx.Add(%xs, %shift) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// RMSNorm as torch.rsqrt exports it (LLaMA): x * Div(1, Sqrt(ReduceMean(
// Pow(x, 2)) + eps)) * gamma; the Add after it is not absorbed (no bias in
// RMSNormalization).
// CHECK: kiln.report.fuse_rms_norm = 1 : i64
// CHECK-LABEL: func.func @rms_norm
// CHECK: %[[N:.*]] = onnx.RMSNormalization(%arg0, %{{.*}}) {axis = 1 : i64, epsilon = 9.99999{{[0-9]*}}E-7 : f32, kiln.fused} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NOT: onnx.ReduceMean
// CHECK-NOT: onnx.Sqrt
// CHECK: %[[Y:.*]] = onnx.Add(%[[N]], %{{.*}})
// CHECK: return %[[Y]]
func.func @rms_norm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %one = onnx.Constant() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant() {value = dense<1.0e-6> : tensor<f32>} : () -> tensor<f32>
  %g = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = onnx.Constant() {value = dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %axes = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %p = onnx.Pow(%x, %two) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%p, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = onnx.Sqrt(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %r = onnx.Div(%one, %s) : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = onnx.Mul(%x, %r) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y0 = onnx.Mul(%g, %n) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = onnx.Add(%y0, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Negative: the mean of the squares of another tensor than the numerator.
// CHECK-LABEL: func.func @not_rms_norm
// CHECK-NOT: onnx.RMSNormalization
// CHECK: onnx.ReduceMean
func.func @not_rms_norm(%x: tensor<2x4xf32>, %z: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant() {value = dense<1.0e-6> : tensor<f32>} : () -> tensor<f32>
  %axes = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %p = onnx.Pow(%z, %two) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%p, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = onnx.Sqrt(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = onnx.Div(%x, %s) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}

// -----

// Negative: mean over the first axis, not the trailing one.
// CHECK-LABEL: func.func @not_layer_norm
// CHECK-NOT: onnx.LayerNormalization
// CHECK: onnx.ReduceMean
func.func @not_layer_norm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %two = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %eps = onnx.Constant() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %axes = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = onnx.ReduceMean(%x, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x4xf32>
  %d = onnx.Sub(%x, %m) : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %p = onnx.Pow(%d, %two) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%p, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<1x4xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %s = onnx.Sqrt(%ve) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %n = onnx.Div(%d, %s) : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}

// -----

// Attention: MatMul(Q, K^T) -> Div scale -> Add mask -> Softmax -> MatMul V
// is detected and marked; a residual Add into LayerNormalization is marked
// as a skip LayerNorm.
// CHECK: kiln.report.attention_blocks = 1 : i64, kiln.report.skip_layer_norm = 1 : i64
// CHECK-LABEL: func.func @attention
// CHECK: onnx.Softmax(%{{.*}}) {kiln.pattern = "attention"}
// CHECK: onnx.LayerNormalization({{.*}}) {kiln.skip_layer_norm}
func.func @attention(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x1x4xf32>, %r: tensor<1x2x4x8xf32>, %g: tensor<8xf32>) -> tensor<1x2x4x8xf32> {
  %sc = onnx.Constant() {value = dense<2.828> : tensor<f32>} : () -> tensor<f32>
  %none = onnx.NoValue
  %s = onnx.MatMul(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = onnx.Div(%s, %sc) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = onnx.Add(%d, %mask) : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax(%m) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = onnx.MatMul(%p, %v) : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a = onnx.Add(%o, %r) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y, %mean, %inv = onnx.LayerNormalization(%a, %g, %none) : (tensor<1x2x4x8xf32>, tensor<8xf32>, none) -> (tensor<1x2x4x8xf32>, none, none)
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Negative: a Softmax that does not feed a MatMul (a classifier head) is no
// attention block.
// CHECK-NOT: kiln.report.attention_blocks
// CHECK-LABEL: func.func @softmax_head
// CHECK-NOT: kiln.pattern
func.func @softmax_head(%a: tensor<1x2x4x8xf32>, %b: tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32> {
  %s = onnx.MatMul(%a, %b) : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax(%s) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %p : tensor<1x2x4x4xf32>
}

// -----

// Multi-head attention as exporters write it: Q, K, V [B, S, H*D] split into
// heads by Reshape/Transpose, scores scaled and masked, Softmax, merged back.
// The block becomes one onnx.Attention on the 3-D tensors (1/Div = scale).
// CHECK: kiln.report.fuse_attention = 1 : i64
// CHECK-LABEL: func.func @mha
// CHECK-NOT: onnx.Transpose
// CHECK-NOT: onnx.Softmax
// CHECK: %[[Y:[^,]*]], {{.*}} = onnx.Attention(%arg0, %arg1, %arg2, %arg3, %{{.*}}, %{{.*}}, %{{.*}}) {kiln.fused, kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x1x1x4xf32>, none, none, none) -> (tensor<1x4x8xf32>, none, none, none)
// CHECK: return %[[Y]]
func.func @mha(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %v: tensor<1x4x8xf32>, %mask: tensor<1x1x1x4xf32>) -> tensor<1x4x8xf32> {
  %heads = onnx.Constant() {value = dense<[1, 4, 2, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %merged = onnx.Constant() {value = dense<[1, 4, 8]> : tensor<3xi64>} : () -> tensor<3xi64>
  %sc = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %qr = onnx.Reshape(%q, %heads) : (tensor<1x4x8xf32>, tensor<4xi64>) -> tensor<1x4x2x4xf32>
  %qh = onnx.Transpose(%qr) {perm = [0, 2, 1, 3]} : (tensor<1x4x2x4xf32>) -> tensor<1x2x4x4xf32>
  %kr = onnx.Reshape(%k, %heads) : (tensor<1x4x8xf32>, tensor<4xi64>) -> tensor<1x4x2x4xf32>
  %kt = onnx.Transpose(%kr) {perm = [0, 2, 3, 1]} : (tensor<1x4x2x4xf32>) -> tensor<1x2x4x4xf32>
  %vr = onnx.Reshape(%v, %heads) : (tensor<1x4x8xf32>, tensor<4xi64>) -> tensor<1x4x2x4xf32>
  %vh = onnx.Transpose(%vr) {perm = [0, 2, 1, 3]} : (tensor<1x4x2x4xf32>) -> tensor<1x2x4x4xf32>
  %s = onnx.MatMul(%qh, %kt) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %d = onnx.Div(%s, %sc) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = onnx.Add(%d, %mask) : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax(%m) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = onnx.MatMul(%p, %vh) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %ot = onnx.Transpose(%o) {perm = [0, 2, 1, 3]} : (tensor<1x2x4x4xf32>) -> tensor<1x4x2x4xf32>
  %y = onnx.Reshape(%ot, %merged) : (tensor<1x4x2x4xf32>, tensor<3xi64>) -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

// -----

// A causal mask applied with Where and a constant condition becomes an
// additive mask constant (-inf where the condition holds, 0 elsewhere).
// CHECK: kiln.report.fuse_attention = 1 : i64
// CHECK-LABEL: func.func @mha_where
// CHECK: %[[M:.*]] = onnx.Constant() {value = dense<{{\[}}{{\[}}{{\[}}[0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x2x2xf32>}
// CHECK: onnx.Attention(%arg0, %arg1, %arg2, %[[M]], {{.*}} {kiln.fused, kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 2.500000e-01 : f32}
func.func @mha_where(%q: tensor<1x2x4xf32>, %k: tensor<1x2x4xf32>, %v: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %heads = onnx.Constant() {value = dense<[1, 2, 1, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %merged = onnx.Constant() {value = dense<[1, 2, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %sc = onnx.Constant() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %future = onnx.Constant() {value = dense<[[[[false, true], [false, false]]]]> : tensor<1x1x2x2xi1>} : () -> tensor<1x1x2x2xi1>
  %ninf = onnx.Constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %qr = onnx.Reshape(%q, %heads) : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %qh = onnx.Transpose(%qr) {perm = [0, 2, 1, 3]} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %kr = onnx.Reshape(%k, %heads) : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %kt = onnx.Transpose(%kr) {perm = [0, 2, 3, 1]} : (tensor<1x2x1x4xf32>) -> tensor<1x1x4x2xf32>
  %vr = onnx.Reshape(%v, %heads) : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %vh = onnx.Transpose(%vr) {perm = [0, 2, 1, 3]} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %s = onnx.MatMul(%qh, %kt) : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %d = onnx.Mul(%s, %sc) : (tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %m = onnx.Where(%future, %ninf, %d) : (tensor<1x1x2x2xi1>, tensor<f32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = onnx.Softmax(%m) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %o = onnx.MatMul(%p, %vh) : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %ot = onnx.Transpose(%o) {perm = [0, 2, 1, 3]} : (tensor<1x1x2x4xf32>) -> tensor<1x2x1x4xf32>
  %y = onnx.Reshape(%ot, %merged) : (tensor<1x2x1x4xf32>, tensor<3xi64>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// Negative: the scores are read elsewhere too (returned), so the block
// stays as it is; it is only marked.
// CHECK-NOT: kiln.report.fuse_attention
// CHECK-LABEL: func.func @mha_scores_used
// CHECK: onnx.Softmax(%{{.*}}) {kiln.pattern = "attention"}
// CHECK-NOT: onnx.Attention
func.func @mha_scores_used(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %v: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x2x4x4xf32>) {
  %heads = onnx.Constant() {value = dense<[1, 4, 2, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %merged = onnx.Constant() {value = dense<[1, 4, 8]> : tensor<3xi64>} : () -> tensor<3xi64>
  %qr = onnx.Reshape(%q, %heads) : (tensor<1x4x8xf32>, tensor<4xi64>) -> tensor<1x4x2x4xf32>
  %qh = onnx.Transpose(%qr) {perm = [0, 2, 1, 3]} : (tensor<1x4x2x4xf32>) -> tensor<1x2x4x4xf32>
  %kr = onnx.Reshape(%k, %heads) : (tensor<1x4x8xf32>, tensor<4xi64>) -> tensor<1x4x2x4xf32>
  %kt = onnx.Transpose(%kr) {perm = [0, 2, 3, 1]} : (tensor<1x4x2x4xf32>) -> tensor<1x2x4x4xf32>
  %vr = onnx.Reshape(%v, %heads) : (tensor<1x4x8xf32>, tensor<4xi64>) -> tensor<1x4x2x4xf32>
  %vh = onnx.Transpose(%vr) {perm = [0, 2, 1, 3]} : (tensor<1x4x2x4xf32>) -> tensor<1x2x4x4xf32>
  %s = onnx.MatMul(%qh, %kt) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax(%s) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = onnx.MatMul(%p, %vh) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %ot = onnx.Transpose(%o) {perm = [0, 2, 1, 3]} : (tensor<1x2x4x4xf32>) -> tensor<1x4x2x4xf32>
  %y = onnx.Reshape(%ot, %merged) : (tensor<1x4x2x4xf32>, tensor<3xi64>) -> tensor<1x4x8xf32>
  return %y, %s : tensor<1x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// PyTorch's MultiheadAttention, sequence-first: [S, B, E] reshaped to
// [S, B*H, D] and transposed to [B*H, S, D], Q scaled before the product,
// merged back to [S*B, E]. One onnx.Attention {kiln.layout = "seq_first"}
// on the [S, B, E] tensors, then the block's own final reshape.
// CHECK: kiln.report.fuse_attention = 1 : i64
// CHECK-LABEL: func.func @mha_seq_first
// CHECK-NOT: onnx.Softmax
// CHECK: %[[Y:[^,]*]], {{.*}} = onnx.Attention(%arg0, %arg1, %arg2, %{{.*}}) {kiln.fused, kiln.layout = "seq_first", kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 2.500000e-01 : f32} : {{.*}} -> (tensor<4x3x8xf32>, none, none, none)
// CHECK: %[[R:.*]] = onnx.Reshape(%[[Y]], %{{.*}}) : (tensor<4x3x8xf32>, tensor<2xi64>) -> tensor<12x8xf32>
// CHECK: return %[[R]]
func.func @mha_seq_first(%q: tensor<4x3x8xf32>, %k: tensor<4x3x8xf32>, %v: tensor<4x3x8xf32>) -> tensor<12x8xf32> {
  %heads = onnx.Constant() {value = dense<[4, 6, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %merged = onnx.Constant() {value = dense<[12, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %sc = onnx.Constant() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %qr = onnx.Reshape(%q, %heads) : (tensor<4x3x8xf32>, tensor<3xi64>) -> tensor<4x6x4xf32>
  %qh = onnx.Transpose(%qr) {perm = [1, 0, 2]} : (tensor<4x6x4xf32>) -> tensor<6x4x4xf32>
  %qs = onnx.Div(%qh, %sc) : (tensor<6x4x4xf32>, tensor<f32>) -> tensor<6x4x4xf32>
  %kr = onnx.Reshape(%k, %heads) : (tensor<4x3x8xf32>, tensor<3xi64>) -> tensor<4x6x4xf32>
  %kt = onnx.Transpose(%kr) {perm = [1, 2, 0]} : (tensor<4x6x4xf32>) -> tensor<6x4x4xf32>
  %vr = onnx.Reshape(%v, %heads) : (tensor<4x3x8xf32>, tensor<3xi64>) -> tensor<4x6x4xf32>
  %vh = onnx.Transpose(%vr) {perm = [1, 0, 2]} : (tensor<4x6x4xf32>) -> tensor<6x4x4xf32>
  %s = onnx.MatMul(%qs, %kt) : (tensor<6x4x4xf32>, tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %p = onnx.Softmax(%s) : (tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %o = onnx.MatMul(%p, %vh) : (tensor<6x4x4xf32>, tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %ot = onnx.Transpose(%o) {perm = [1, 0, 2]} : (tensor<6x4x4xf32>) -> tensor<4x6x4xf32>
  %y = onnx.Reshape(%ot, %merged) : (tensor<4x6x4xf32>, tensor<2xi64>) -> tensor<12x8xf32>
  return %y : tensor<12x8xf32>
}

// -----

// HF GPT-2 keeps the scores where the causal condition holds:
// Where(keep, scores, min); the additive mask is min where keep is false.
// CHECK: kiln.report.fuse_attention = 1 : i64
// CHECK-LABEL: func.func @mha_where_keep
// CHECK: %[[M:.*]] = onnx.Constant() {value = dense<{{\[}}{{\[}}{{\[}}[0.000000e+00, -1.000000e+09], [0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x2x2xf32>}
// CHECK: onnx.Attention(%arg0, %arg1, %arg2, %[[M]],
func.func @mha_where_keep(%q: tensor<1x2x4xf32>, %k: tensor<1x2x4xf32>, %v: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %heads = onnx.Constant() {value = dense<[1, 2, 1, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %merged = onnx.Constant() {value = dense<[1, 2, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %sc = onnx.Constant() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %keep = onnx.Constant() {value = dense<[[[[true, false], [true, true]]]]> : tensor<1x1x2x2xi1>} : () -> tensor<1x1x2x2xi1>
  %min = onnx.Constant() {value = dense<-1.0e9> : tensor<f32>} : () -> tensor<f32>
  %qr = onnx.Reshape(%q, %heads) : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %qh = onnx.Transpose(%qr) {perm = [0, 2, 1, 3]} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %kr = onnx.Reshape(%k, %heads) : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %kt = onnx.Transpose(%kr) {perm = [0, 2, 3, 1]} : (tensor<1x2x1x4xf32>) -> tensor<1x1x4x2xf32>
  %vr = onnx.Reshape(%v, %heads) : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %vh = onnx.Transpose(%vr) {perm = [0, 2, 1, 3]} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %s = onnx.MatMul(%qh, %kt) : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %d = onnx.Div(%s, %sc) : (tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %m = onnx.Where(%keep, %d, %min) : (tensor<1x1x2x2xi1>, tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %p = onnx.Softmax(%m) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %o = onnx.MatMul(%p, %vh) : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %ot = onnx.Transpose(%o) {perm = [0, 2, 1, 3]} : (tensor<1x1x2x4xf32>) -> tensor<1x2x1x4xf32>
  %y = onnx.Reshape(%ot, %merged) : (tensor<1x2x1x4xf32>, tensor<3xi64>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// Other spellings of the normalization: Mul by Reciprocal(Sqrt(var + eps))
// (the squared deviation as Mul(d, d)), and Mul by Pow(var + eps, -0.5).
// CHECK: kiln.report.fuse_layer_norm = 2 : i64
// CHECK-LABEL: func.func @layer_norm_spellings
// CHECK-COUNT-2: onnx.LayerNormalization(%arg0,
// CHECK-NOT: onnx.ReduceMean
func.func @layer_norm_spellings(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %eps = onnx.Constant() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %mhalf = onnx.Constant() {value = dense<-0.5> : tensor<f32>} : () -> tensor<f32>
  %axes = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = onnx.ReduceMean(%x, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %d = onnx.Sub(%x, %m) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %p = onnx.Mul(%d, %d) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %v = onnx.ReduceMean(%p, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve = onnx.Add(%v, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s = onnx.Sqrt(%ve) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %r = onnx.Reciprocal(%s) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %y1 = onnx.Mul(%r, %d) : (tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %m2 = onnx.ReduceMean(%x, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %d2 = onnx.Sub(%x, %m2) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %p2 = onnx.Mul(%d2, %d2) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %v2 = onnx.ReduceMean(%p2, %axes) : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %ve2 = onnx.Add(%v2, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %is = onnx.Pow(%ve2, %mhalf) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %y2 = onnx.Mul(%d2, %is) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %y1, %y2 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Q, K and V already split into heads [B, H, S, D] (rotary embeddings apply
// there, as in LLaMA): K^T is a Transpose (0, 1, 3, 2); the block becomes
// one Attention with `kiln.layout = "heads"` whose [B, H, S, Dv] result
// replaces the second MatMul's.
// CHECK-LABEL: func.func @attention_heads
// CHECK: %[[M:.*]] = onnx.Constant() {value = dense<{{\[}}[0.000000e+00, -1.000000e+09
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}}, %{{.*}} = onnx.Attention(%arg0, %arg1, %arg2, %[[M]], {{.*}}) {kiln.fused, kiln.layout = "heads", kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.353553385 : f32}
// CHECK-NOT: onnx.Transpose
// CHECK-NOT: onnx.Softmax
// CHECK: return %[[Y]]
func.func @attention_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = onnx.Transpose(%k) {perm = [0, 1, 3, 2]} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = onnx.MatMul(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = onnx.Constant() {value = dense<2.828427> : tensor<f32>} : () -> tensor<f32>
  %d = onnx.Div(%s, %c) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = onnx.Constant() {value = dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>} : () -> tensor<4x4xf32>
  %a = onnx.Add(%d, %m) : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = onnx.Softmax(%a) {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.MatMul(%p, %v) : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}
