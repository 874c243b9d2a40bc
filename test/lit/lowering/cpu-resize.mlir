// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// Linear, constant scales: per resized axis a constant table of 2 taps
// (source index, weight) per output position; the unchanged N and C axes
// need none. 2x in half_pixel: the taps repeat with the phase (output 2i
// reads inputs i - 1 and i at 1/4 and 3/4, 2i + 1 inputs i and i + 1 at
// 3/4 and 1/4), marked for kiln-cpu-vectorize-upsample.
// CHECK-LABEL: func.func @linear
// CHECK: arith.constant dense<{{.*}}> : tensor<8x2xi64>
// CHECK: arith.constant dense<{{.*}}> : tensor<8x2xf32>
// CHECK-NOT: tensor<1x2xi64>
// CHECK: linalg.generic
// CHECK-SAME: kiln.linear_upsample = {x = {factor = 2 : i64, offsets = array<i64: -1, 0, 0, 1>, weights = array<f32: 2.500000e-01, 7.500000e-01, 7.500000e-01, 2.500000e-01>}, y = {factor = 2 : i64, offsets = array<i64: -1, 0, 0, 1>
func.func @linear(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32> {
  %n = onnx.NoValue
  %s = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = onnx.Resize(%x, %n, %s, %n) {mode = "linear"} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>, none) -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// -----

// Linear with align_corners: the taps' weights change along the axis (no
// phase pattern): the marker carries each output's two input indices and
// weights (output 1 reads inputs 0 and 1 at 4/7 and 3/7).
// CHECK-LABEL: func.func @linear_align_corners
// CHECK: linalg.generic
// CHECK-SAME: kiln.linear_upsample = {x = {index = array<i64: 0, 0, 0, 1, 0, 1,
// CHECK-SAME: size = 4 : i64, weights = array<f32: 0.000000e+00, 1.000000e+00, 0.571428597, 0.428571433,
// CHECK-SAME: y = {index = array<i64: 0, 0, 0, 1,
// CHECK: return
func.func @linear_align_corners(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32> {
  %n = onnx.NoValue
  %s = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = onnx.Resize(%x, %n, %s, %n) {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>, none) -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// -----

// Antialias when downsampling by 0.6: the linear filter stretches by 1/0.6,
// so each output reads 4 source positions (2 - 2 * (floor(-1/0.6) + 1)).
// CHECK-LABEL: func.func @antialias
// CHECK: arith.constant dense<{{.*}}> : tensor<2x4xi64>
// CHECK: arith.constant dense<{{.*}}> : tensor<2x4xf32>
func.func @antialias(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %n = onnx.NoValue
  %s = onnx.Constant() {value = dense<[1.0, 1.0, 0.6, 0.6]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = onnx.Resize(%x, %n, %s, %n) {mode = "linear", antialias = 1 : i64} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>, none) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// tf_crop_and_resize with a roi computed at run time: the roi is read (start
// at j, end at n + j per listed axis) and the tables are computed per run;
// positions outside the roi take the extrapolation value.
// CHECK-LABEL: func.func @crop_runtime_roi
// CHECK: tensor.extract %arg1
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<3x2xi64>, tensor<3x2xf32>)
// CHECK: arith.constant 1.000000e+01 : f32
func.func @crop_runtime_roi(%x: tensor<1x1x4x4xf32>, %roi: tensor<4xf32>) -> tensor<1x1x3x3xf32> {
  %n = onnx.NoValue
  %sz = onnx.Constant() {value = dense<[3, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Resize(%x, %roi, %n, %sz) {mode = "linear", axes = [2, 3], coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f32} : (tensor<1x1x4x4xf32>, tensor<4xf32>, none, tensor<2xi64>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
