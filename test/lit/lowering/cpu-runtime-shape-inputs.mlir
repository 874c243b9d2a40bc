// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// Axes computed at run time, result 3x2 from 3x2x2: axis 1 or axis 2. Each
// is compiled; a kiln.check fails the run for any other axes, and an
// scf.if picks the branch.
// CHECK-LABEL: func.func @reduce_two_candidates
// CHECK: tensor.extract %arg1
// CHECK: kiln.check %{{.*}}, "node \22r\22 (ReduceSum): input 1 (computed at run time) gives a result shape other than the compiled tensor<3x2xf32>"
// CHECK: scf.if
// CHECK: linalg.generic
// CHECK: } else {
// CHECK: linalg.generic
func.func @reduce_two_candidates(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x2xf32> {
  %0 = onnx.ReduceSum(%x, %axes) {keepdims = 0 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32> loc("r")
  return %0 : tensor<3x2xf32>
}

// -----

// Reshape to a known shape with the shape computed at run time: one
// candidate, no branch, only the check.
// CHECK-LABEL: func.func @reshape_runtime
// CHECK: kiln.check
// CHECK-NOT: scf.if
// CHECK: tensor.collapse_shape
func.func @reshape_runtime(%x: tensor<2x3xf32>, %s: tensor<1xi64>) -> tensor<6xf32> {
  %0 = onnx.Reshape(%x, %s) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// CumSum over a run-time axis of a 2-D tensor: a branch per axis.
// CHECK-LABEL: func.func @cumsum_runtime_axis
// CHECK: kiln.check
// CHECK: scf.if
// CHECK: tensor.insert_slice
// CHECK: } else {
// CHECK: tensor.insert_slice
func.func @cumsum_runtime_axis(%x: tensor<2x3xf32>, %a: tensor<i64>) -> tensor<2x3xf32> {
  %0 = onnx.CumSum(%x, %a) : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Slice with starts and ends computed at run time: ONNX's clamping runs at
// run time, the sizes are checked, and the reads are clamped in bounds.
// CHECK-LABEL: func.func @slice_runtime
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg2
// CHECK: kiln.check %{{.*}}, "node {{.*}} (Slice): starts/ends/axes/steps (computed at run time) give a result shape other than the compiled tensor<2x2xf32>"
// CHECK: linalg.generic
// CHECK: arith.maxsi
// CHECK: tensor.extract %arg0
func.func @slice_runtime(%x: tensor<2x5xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<2x2xf32> {
  %a = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %none = onnx.NoValue
  %0 = onnx.Slice(%x, %s, %e, %a, %none) : (tensor<2x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, none) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Pad with pads computed at run time: the low pads are read at run time.
// CHECK-LABEL: func.func @pad_runtime
// CHECK: kiln.check %{{.*}}, "node {{.*}} (Pad): pads/axes (computed at run time) give a result shape other than the compiled tensor<5xf32>"
// CHECK: linalg.generic
// CHECK: arith.subi
func.func @pad_runtime(%x: tensor<3xf32>, %p: tensor<2xi64>) -> tensor<5xf32> {
  %none = onnx.NoValue
  %0 = onnx.Pad(%x, %p, %none, %none) : (tensor<3xf32>, tensor<2xi64>, none, none) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Resize with scales computed at run time: the scales are read, checked to
// give the compiled shape (floor(in * scale) == out), and the index/weight
// tables are computed from them at run time (a generic over (o, tap)).
// CHECK-LABEL: func.func @resize_runtime_scales
// CHECK: tensor.extract %arg1
// CHECK: math.floor
// CHECK: arith.cmpf oeq
// CHECK: kiln.check %{{.*}}, "node {{.*}} (Resize): scales, sizes or roi (computed at run time) give a result shape other than the compiled tensor<1x1x4x4xf32>"
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4x1xi64>, tensor<4x1xf32>)
// CHECK: linalg.index 0
func.func @resize_runtime_scales(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<1x1x4x4xf32> {
  %n = onnx.NoValue
  %0 = onnx.Resize(%x, %n, %s, %n) {mode = "nearest"} : (tensor<1x1x2x2xf32>, none, tensor<4xf32>, none) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Col2Im with image_shape and block_shape both computed at run time: the
// image shape is the result's (checked), then each block shape with 5
// columns that tiles the 5x5 image into 5 blocks (1x5 or 5x1) is a branch.
// CHECK-LABEL: func.func @col2im_runtime_shapes
// CHECK: kiln.check {{.*}} (Col2Im): input 1
// CHECK: kiln.check {{.*}} (Col2Im): input 2
// CHECK: scf.if
// CHECK: linalg.generic
// CHECK: } else {
// CHECK: linalg.generic
func.func @col2im_runtime_shapes(%x: tensor<1x5x5xf32>, %image: tensor<2xi64>, %block: tensor<2xi64>) -> tensor<1x1x5x5xf32> {
  %0 = onnx.Col2Im(%x, %image, %block) : (tensor<1x5x5xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}
