// RUN: kiln-opt %s -split-input-file --kiln-fuse-epilogues | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-fuse-epilogues --kiln-partition --kiln-lower-partitions | FileCheck %s --check-prefix=LOWER

// Conv + Relu: the activation becomes attributes of the Conv; the lowering
// applies it after the convolution.
// CHECK: module attributes {kiln.report.fuse_conv_activation = 1 : i64}
// CHECK-LABEL: func.func @conv_relu
// CHECK: %[[C:.*]] = onnx.Conv({{.*}}) {kernel_shape = [1, 1], kiln.activation = "Relu", kiln.activation_params = []}
// CHECK-NOT: onnx.Relu
// CHECK: return %[[C]]
// LOWER-LABEL: func.func @conv_relu
// LOWER: %[[G:.*]] = linalg.generic {{.*}}"reduction"
// LOWER: linalg.generic {{.*}} ins(%[[G]] :
// LOWER: arith.cmpf olt
// LOWER: arith.select
func.func @conv_relu(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %y = onnx.Relu(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Gemm + Clip(0, 6) and MatMul + LeakyRelu: parameters go with the name.
// CHECK: kiln.report.fuse_gemm_activation = 1 : i64, kiln.report.fuse_matmul_activation = 1 : i64
// CHECK-LABEL: func.func @gemm_clip
// CHECK: onnx.Gemm({{.*}}) {kiln.activation = "Clip", kiln.activation_params = [0.000000e+00 : f32, 6.000000e+00 : f32]}
// CHECK: onnx.MatMul({{.*}}) {kiln.activation = "LeakyRelu", kiln.activation_params = [1.000000e-01 : f32]}
// CHECK-NOT: onnx.Clip
// CHECK-NOT: onnx.LeakyRelu
// LOWER-LABEL: func.func @gemm_clip
// LOWER: arith.cmpf olt
// LOWER: arith.select
// LOWER: arith.cmpf ogt
// LOWER: arith.select
// LOWER: arith.cmpf olt
// LOWER: arith.select
func.func @gemm_clip(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %none = onnx.NoValue
  %lo = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %hi = onnx.Constant() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
  %g = onnx.Gemm(%a, %b, %none) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32>
  %y = onnx.Clip(%g, %lo, %hi) : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  %m = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %z = onnx.LeakyRelu(%m) {alpha = 0.1 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y, %z : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Negative: the MatMul result has a second use; Clip with a runtime bound;
// an activation of a non-contraction.
// CHECK-NOT: kiln.report
// CHECK-LABEL: func.func @no_activation_fusion
// CHECK-NOT: kiln.activation
// CHECK: onnx.Relu
// CHECK: onnx.Clip
// CHECK: onnx.Sigmoid
func.func @no_activation_fusion(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %hi: tensor<f32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %none = onnx.NoValue
  %m = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %r = onnx.Relu(%m) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %g = onnx.Gemm(%a, %b, %none) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32>
  %c = onnx.Clip(%g, %none, %hi) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
  %s = onnx.Sigmoid(%r) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %m, %c, %s, %r : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// 2-D MatMul + Add(bias) becomes Gemm with C; a batched MatMul keeps the
// bias as kiln.bias, which starts its accumulator.
// CHECK: kiln.report.fuse_matmul_bias = 2 : i64
// CHECK-LABEL: func.func @matmul_bias
// CHECK: %[[C:.*]] = onnx.Constant() {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>}
// CHECK: onnx.Gemm(%arg0, %arg1, %[[C]])
// CHECK: onnx.MatMul(%arg2, %arg1) {kiln.bias = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>}
// CHECK-NOT: onnx.Add
// LOWER-LABEL: func.func @matmul_bias
// LOWER: arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// LOWER: %[[INIT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<3xf32>) outs(%{{.*}} : tensor<5x2x3xf32>)
// LOWER: linalg.generic {{.*}}"reduction"{{.*}} outs(%[[INIT]] : tensor<5x2x3xf32>)
func.func @matmul_bias(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %a3: tensor<5x2x4xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>) {
  %bias = onnx.Constant() {value = dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>} : () -> tensor<1x3xf32>
  %m = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %y = onnx.Add(%m, %bias) : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %m3 = onnx.MatMul(%a3, %b) : (tensor<5x2x4xf32>, tensor<4x3xf32>) -> tensor<5x2x3xf32>
  %y3 = onnx.Add(%bias, %m3) : (tensor<1x3xf32>, tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
  return %y, %y3 : tensor<2x3xf32>, tensor<5x2x3xf32>
}

// -----

// Negative: the addend varies over rows (not a bias over the last dim), or
// is a runtime value.
// CHECK-LABEL: func.func @matmul_add_not_bias
// CHECK-NOT: onnx.Gemm
// CHECK-NOT: kiln.bias
// CHECK: onnx.Add
// CHECK: onnx.Add
func.func @matmul_add_not_bias(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %r: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %k = onnx.Constant() {value = dense<[[1.0], [2.0]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %m = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %y = onnx.Add(%m, %k) : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %m2 = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %z = onnx.Add(%m2, %r) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y, %z : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// MatMul(a, Transpose(b)) of 2-D operands: Gemm transB.
// CHECK: kiln.report.fuse_matmul_transpose = 1 : i64
// CHECK-LABEL: func.func @matmul_transpose
// CHECK: onnx.Gemm(%arg0, %arg1, %{{.*}}) {transB = 1 : i64}
// CHECK-NOT: onnx.Transpose
func.func @matmul_transpose(%a: tensor<2x4xf32>, %bt: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %t = onnx.Transpose(%bt) {perm = [1, 0]} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %m = onnx.MatMul(%a, %t) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %m : tensor<2x3xf32>
}

// -----

// Negative: a batched transpose stays (the lowering takes no permutation),
// and a transpose with another use stays.
// CHECK-LABEL: func.func @matmul_transpose_kept
// CHECK: onnx.Transpose
// CHECK: onnx.MatMul
// CHECK: onnx.Transpose
// CHECK: onnx.MatMul
func.func @matmul_transpose_kept(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %a: tensor<2x4xf32>, %bt: tensor<3x4xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>) {
  %t = onnx.Transpose(%k) {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %s = onnx.MatMul(%q, %t) : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32>
  %t2 = onnx.Transpose(%bt) {perm = [1, 0]} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %m = onnx.MatMul(%a, %t2) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %s, %m, %t2 : tensor<2x3x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// Constant weights of a transB Gemm are stored transposed at compile time.
// CHECK-LABEL: func.func @pretranspose_constant_b
// CHECK: %[[W:.*]] = onnx.Constant() {value = dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// CHECK: onnx.Gemm(%arg0, %[[W]]
// CHECK-NOT: transB = 1
func.func @pretranspose_constant_b(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = onnx.Constant() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %none = onnx.NoValue
  %0 = onnx.Gemm(%x, %w, %none) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, none) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

// Runtime weights keep transB.
// CHECK-LABEL: func.func @runtime_b_keeps_transb
// CHECK: onnx.Gemm(%arg0, %arg1, %{{.*}}) {{{.*}}transB = 1 : i64}
func.func @runtime_b_keeps_transb(%x: tensor<1x2xf32>, %w: tensor<3x2xf32>) -> tensor<1x3xf32> {
  %none = onnx.NoValue
  %0 = onnx.Gemm(%x, %w, %none) {transB = 1 : i64} : (tensor<1x2xf32>, tensor<3x2xf32>, none) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// A ResNet block's end: Conv -> Add(residual) -> Relu. The Relu becomes the
// Add's epilogue (its elementwise body applies it).
// CHECK: kiln.report.fuse_add_activation = 1 : i64
// CHECK-LABEL: func.func @residual_relu
// CHECK: %[[C:.*]] = onnx.Conv
// CHECK: %[[A:.*]] = onnx.Add(%[[C]], %arg0) {kiln.activation = "Relu", kiln.activation_params = []}
// CHECK-NOT: onnx.Relu
// CHECK: return %[[A]]
func.func @residual_relu(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %none = onnx.NoValue
  %c = onnx.Conv(%x, %w, %none) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %a = onnx.Add(%c, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = onnx.Relu(%a) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// Negative: an Add of two plain inputs is no residual of a contraction; its
// Relu stays.
// CHECK-NOT: kiln.report.fuse_add_activation
// CHECK-LABEL: func.func @plain_add_relu
// CHECK: onnx.Relu
func.func @plain_add_relu(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = onnx.Add(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = onnx.Relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// SiLU as exporters spell it, y * Sigmoid(y), after a Conv, and Tanh after
// a Gemm (BERT's pooler): both become epilogues.
// CHECK-LABEL: func.func @conv_swish_gemm_tanh
// CHECK: %[[C:.*]] = onnx.Conv({{.*}}) {kernel_shape = [1, 1], kiln.activation = "Swish", kiln.activation_params = []}
// CHECK: %[[G:.*]] = onnx.Gemm({{.*}}) {kiln.activation = "Tanh", kiln.activation_params = []}
// CHECK-NOT: onnx.Sigmoid
// CHECK-NOT: onnx.Mul
// CHECK-NOT: onnx.Tanh
// CHECK: return %[[C]], %[[G]]
// LOWER-LABEL: func.func @conv_swish_gemm_tanh
// LOWER: math.exp
// LOWER: arith.divf
// LOWER: arith.mulf
// LOWER: math.tanh
func.func @conv_swish_gemm_tanh(%x: tensor<1x1x4x4xf32>, %a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x3xf32>) {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %s = onnx.Sigmoid(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.Mul(%s, %c) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %g = onnx.Gemm(%a, %b, %none) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32>
  %t = onnx.Tanh(%g) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y, %t : tensor<1x2x4x4xf32>, tensor<2x3xf32>
}

// -----

// Not SiLU: the Conv's result has a third user, and the Sigmoid's input
// is another value.
// CHECK-LABEL: func.func @swish_no
// CHECK-NOT: kiln.activation
// CHECK-COUNT-2: onnx.Sigmoid
func.func @swish_no(%x: tensor<1x1x4x4xf32>, %z: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = onnx.Constant() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %s = onnx.Sigmoid(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = onnx.Mul(%c, %s) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s2 = onnx.Sigmoid(%z) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y2 = onnx.Mul(%c, %s2) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y, %y2, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// QuickGELU (CLIP): y * Sigmoid(1.702 * y) after a MatMul is a Swish
// epilogue with its factor.
// CHECK-LABEL: func.func @matmul_quick_gelu
// CHECK: %[[M:.*]] = onnx.MatMul({{.*}}) {kiln.activation = "Swish", kiln.activation_params = [1.702000e+00 : f32]}
// CHECK-NOT: onnx.Sigmoid
// CHECK-NOT: onnx.Mul
// CHECK: return %[[M]]
// LOWER-LABEL: func.func @matmul_quick_gelu
// LOWER: arith.constant 1.702000e+00
// LOWER: math.exp
func.func @matmul_quick_gelu(%a: tensor<1x2x4xf32>, %b: tensor<4x3xf32>) -> tensor<1x2x3xf32> {
  %k = onnx.Constant() {value = dense<1.702> : tensor<f32>} : () -> tensor<f32>
  %m = onnx.MatMul(%a, %b) : (tensor<1x2x4xf32>, tensor<4x3xf32>) -> tensor<1x2x3xf32>
  %s0 = onnx.Mul(%k, %m) : (tensor<f32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %s = onnx.Sigmoid(%s0) : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %y = onnx.Mul(%m, %s) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}
