// RUN: kiln-opt %s -split-input-file --kiln-fuse-conv | FileCheck %s

// Conv + BatchNormalization: one Conv whose weights and bias were computed
// at compile time (eps = 1). Channel 0: s = 2/sqrt(3+1) = 1, W' = 1,
// B' = (1-1)*1 + 0.5; channel 1: s = 4/sqrt(0+1) = 4, W' = 2*4 = 8,
// B' = (0-2)*4 + 1 = -7.
// CHECK: module attributes {kiln.report.fuse_conv_bn = 1 : i64}
// CHECK-LABEL: func.func @conv_bn
// CHECK-DAG: %[[W:.*]] = onnx.Constant() {value = dense<{{\[}}{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}8.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-DAG: %[[B:.*]] = onnx.Constant() {value = dense<[5.000000e-01, -7.000000e+00]> : tensor<2xf32>}
// CHECK: %[[C:.*]] = onnx.Conv(%arg0, %[[W]], %[[B]]) {kernel_shape = [1, 1]}
// CHECK-NOT: onnx.BatchNormalization
// CHECK: return %[[C]]
func.func @conv_bn(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = onnx.Constant() {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b = onnx.Constant() {value = dense<[1.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %scale = onnx.Constant() {value = dense<[2.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %beta = onnx.Constant() {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = onnx.Constant() {value = dense<[3.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = onnx.Conv(%x, %w, %b) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y, %rm, %rv = onnx.BatchNormalization(%c, %scale, %beta, %mean, %var) {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, none, none)
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Weights from a dense_resource blob (little-endian f32 1.0 and 2.0 after
// the 4-byte alignment header); the Conv had no bias.
// CHECK-LABEL: func.func @conv_bn_resource
// CHECK-DAG: onnx.Constant() {value = dense<{{\[}}{{\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-DAG: onnx.Constant() {value = dense<-1.000000e+00> : tensor<2xf32>}
// CHECK-NOT: onnx.BatchNormalization
func.func @conv_bn_resource(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = onnx.Constant() {value = dense_resource<wblob> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %one = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %zero = onnx.Constant() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = onnx.Constant() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %y, %rm, %rv = onnx.BatchNormalization(%c, %one, %zero, %mean, %one) {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, none, none)
  return %y : tensor<1x2x4x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      wblob: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Negative: statistics are runtime values.
// CHECK-LABEL: func.func @bn_runtime_stats
// CHECK: onnx.Conv
// CHECK: onnx.BatchNormalization
func.func @bn_runtime_stats(%x: tensor<1x1x4x4xf32>, %mean: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %one = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %y, %rm, %rv = onnx.BatchNormalization(%c, %one, %one, %mean, %one) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, none, none)
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Negative: the Conv result is also returned, so it cannot change.
// CHECK-LABEL: func.func @conv_two_uses
// CHECK: %[[C:.*]] = onnx.Conv
// CHECK: onnx.BatchNormalization(%[[C]]
func.func @conv_two_uses(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %one = onnx.Constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %y, %rm, %rv = onnx.BatchNormalization(%c, %one, %one, %one, %one) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x4x4xf32>, none, none)
  return %y, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Conv + Add of a per-channel constant [2,1,1]: added to the bias.
// CHECK: module attributes {kiln.report.fuse_conv_add = 1 : i64}
// CHECK-LABEL: func.func @conv_add
// CHECK: %[[B:.*]] = onnx.Constant() {value = dense<[1.100000e+01, 2.200000e+01]> : tensor<2xf32>}
// CHECK: %[[C:.*]] = onnx.Conv(%arg0, %{{.*}}, %[[B]])
// CHECK-NOT: onnx.Add
// CHECK: return %[[C]]
func.func @conv_add(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %k = onnx.Constant() {value = dense<[[[10.0]], [[20.0]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %c = onnx.Conv(%x, %w, %b) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.Add(%k, %c) : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Negative: the addend varies over the spatial dims (not a bias), and a
// runtime addend.
// CHECK-LABEL: func.func @conv_add_not_bias
// CHECK: onnx.Add
// CHECK: onnx.Add
func.func @conv_add_not_bias(%x: tensor<1x1x4x4xf32>, %r: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %k = onnx.Constant() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %y = onnx.Add(%c, %k) : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %c2 = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %z = onnx.Add(%c2, %r) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A layer scale (a constant per output column) after a linear layer folds
// into its weights and bias: W' = W * s per column, b' = b * s.
// CHECK: kiln.report.fold_linear_scale = 2 : i64
// CHECK-LABEL: func.func @linear_scale
// CHECK: %[[W:.*]] = onnx.Constant() {value = dense<{{\[}}[2.000000e+00, 1.500000e+00], [4.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>}
// CHECK: %[[M:.*]] = onnx.MatMul(%arg0, %[[W]])
// CHECK: %[[B:.*]] = onnx.Constant() {value = dense<[1.000000e+00, 3.000000e+00]> : tensor<2xf32>}
// CHECK: %[[Y:.*]] = onnx.Add(%[[M]], %[[B]])
// CHECK: %[[M2:.*]] = onnx.MatMul(%arg0, %{{.*}})
// CHECK-NOT: onnx.Mul
// CHECK: return %[[Y]], %[[M2]]
func.func @linear_scale(%x: tensor<1x3x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>) {
  %w = onnx.Constant() {value = dense<[[1.0, 0.5], [2.0, 1.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %b = onnx.Constant() {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = onnx.Constant() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = onnx.MatMul(%x, %w) : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %a = onnx.Add(%m, %b) : (tensor<1x3x2xf32>, tensor<2xf32>) -> tensor<1x3x2xf32>
  %y = onnx.Mul(%s, %a) : (tensor<2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %m2 = onnx.MatMul(%x, %w) : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %z = onnx.Mul(%m2, %s) : (tensor<1x3x2xf32>, tensor<2xf32>) -> tensor<1x3x2xf32>
  return %y, %z : tensor<1x3x2xf32>, tensor<1x3x2xf32>
}

// -----

// Left alone: a scale over rows (not the output columns), and weights that
// are an input.
// CHECK-LABEL: func.func @linear_scale_no
// CHECK-COUNT-2: onnx.Mul
func.func @linear_scale_no(%x: tensor<3x2xf32>, %w2: tensor<2x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %r = onnx.Constant() {value = dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>} : () -> tensor<3x1xf32>
  %s = onnx.Constant() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = onnx.MatMul(%x, %w) : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %y = onnx.Mul(%m, %r) : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %m2 = onnx.MatMul(%x, %w2) : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %z = onnx.Mul(%m2, %s) : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %y, %z : tensor<3x2xf32>, tensor<3x2xf32>
}
