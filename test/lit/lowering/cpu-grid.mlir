// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// AffineGrid: theta . (x, y, 1) per output element, x and y from the
// output coordinates.
// CHECK-LABEL: func.func @affine_grid
// CHECK: linalg.generic
// CHECK: arith.sitofp
// CHECK: tensor.extract %arg0
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @affine_grid(%theta: tensor<1x2x3xf32>) -> tensor<1x4x5x2xf32> {
  %size = onnx.Constant() {value = dense<[1, 1, 4, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = onnx.AffineGrid(%theta, %size) : (tensor<1x2x3xf32>, tensor<4xi64>) -> tensor<1x4x5x2xf32>
  return %0 : tensor<1x4x5x2xf32>
}

// -----

// GridSample, bilinear with zeros padding: each output reads the grid
// point, then four taps weighted by the fractions, zero outside.
// CHECK-LABEL: func.func @grid_sample
// CHECK: linalg.generic
// CHECK: tensor.extract %arg1
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %arg0
func.func @grid_sample(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = onnx.GridSample(%x, %g) {mode = "linear"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// RoiAlign: per output bin, loops over the sampling grid (its size from the
// ROI at run time without sampling_ratio), four weighted taps per sample,
// the average over the grid.
// CHECK-LABEL: func.func @roi_align
// CHECK: linalg.generic
// CHECK: math.ceil
// CHECK: scf.for
// CHECK: scf.for
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK: arith.divf
func.func @roi_align(%x: tensor<1x2x8x8xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<3x2x2x2xf32> {
  %0 = onnx.RoiAlign(%x, %rois, %b) {output_height = 2 : i64, output_width = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x2x2xf32>
  return %0 : tensor<3x2x2x2xf32>
}

// -----

// DeformConv: per output element, a loop over the group's input channels;
// each of the 2x2 kernel taps reads its two offsets and samples four
// pixels (zero outside the image).
// CHECK-LABEL: func.func @deform_conv
// CHECK: linalg.generic
// CHECK: scf.for
// CHECK-COUNT-2: tensor.extract %arg2
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK: tensor.extract %arg1
func.func @deform_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x2x2xf32>, %off: tensor<1x8x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %none = onnx.NoValue
  %0 = onnx.DeformConv(%x, %w, %off, %none, %none) {kernel_shape = [2, 2]} : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>, tensor<1x8x3x3xf32>, none, none) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}
