// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// DFT of a real signal along axis 1: one contraction over the samples and
// the input components with a constant 8x1x8x2 twiddle matrix.
// CHECK-LABEL: func.func @dft
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<8x1x8x2xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%arg0, %[[W]] : tensor<1x8x1xf32>, tensor<8x1x8x2xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @dft(%x: tensor<1x8x1xf32>) -> tensor<1x8x2xf32> {
  %n = onnx.NoValue
  %a = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %0 = onnx.DFT(%x, %n, %a) : (tensor<1x8x1xf32>, none, tensor<i64>) -> tensor<1x8x2xf32>
  return %0 : tensor<1x8x2xf32>
}

// -----

// HannWindow over the result's length: 0.5 - 0.5 cos(2 pi n / N) in f64,
// rounded to the output type.
// CHECK-LABEL: func.func @hann
// CHECK: linalg.generic
// CHECK: math.cos
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @hann(%n: tensor<i64>) -> tensor<8xf32> {
  %0 = onnx.HannWindow(%n) : (tensor<i64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// MelWeightMatrix from run-time scalars: a check that they give the
// compiled shape, then per element the three band edges (log1p/expm1 in
// f64) and the triangle's value.
// CHECK-LABEL: func.func @mel_weight_matrix
// CHECK: kiln.check {{.*}} "{{.*}}num_mel_bins or dft_length (computed at run time) give a result shape other than the compiled tensor<9x8xf32>"
// CHECK: linalg.generic
// CHECK: math.log1p
// CHECK: math.expm1
func.func @mel_weight_matrix(%n: tensor<i64>, %d: tensor<i64>, %s: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<9x8xf32> {
  %0 = onnx.MelWeightMatrix(%n, %d, %s, %lo, %hi) : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<9x8xf32>
  return %0 : tensor<9x8xf32>
}
