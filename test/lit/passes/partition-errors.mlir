// RUN: not kiln-opt %s -split-input-file --kiln-partition 2>&1 | FileCheck %s
// RUN: not kiln-opt %s -split-input-file --kiln-partition=providers=gpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// An op no provider accepts is reported by node name with the reason.

// UNKNOWN: error: unknown provider "gpu" (known: cpu, cuda)

// CHECK: error: {{.*}}node "coin_1" (Bernoulli): not supported by provider cpu: no CPU lowering for this op
func.func @bernoulli(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = onnx.Bernoulli(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("coin_1")
  return %0 : tensor<4xf32>
}

// -----

// CHECK: error: {{.*}}node "det_0" (Det): not supported by provider cpu: no CPU lowering for this op
func.func @det(%x: tensor<3x3xf32>) -> tensor<f32> {
  %r = onnx.Relu(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32> loc("ok_relu")
  %0 = onnx.Det(%r) : (tensor<3x3xf32>) -> tensor<f32> loc("det_0")
  return %0 : tensor<f32>
}

// -----

// CHECK: error: {{.*}}node "relu_dyn" (Relu): not supported by provider cpu: needs static shapes, got tensor<?x3xf32> (pin input shapes with --input-shape)
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = onnx.Relu(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32> loc("relu_dyn")
  return %0 : tensor<?x3xf32>
}

// -----

// float8 is only converted (Cast/CastLike), never computed on.
// CHECK: error: {{.*}}node "id_f8" (Identity): not supported by provider cpu: element type f8E4M3FN is not supported
func.func @float8(%x: tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN> {
  %0 = onnx.Identity(%x) : (tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN> loc("id_f8")
  return %0 : tensor<2xf8E4M3FN>
}

// -----

// Training mode lowers; running statistics without it do not exist.
// CHECK: error: {{.*}}node "bn_stats" (BatchNormalization): not supported by provider cpu: running mean/var outputs need training_mode=1
func.func @bn_stats_inference(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<2xf32>) {
  %y, %m, %v = onnx.BatchNormalization(%x, %s, %s, %s, %s) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) loc("bn_stats")
  return %y, %m : tensor<1x2x3x3xf32>, tensor<2xf32>
}
// CHECK-NOT: error

// -----

// A result whose shape only the data decides may be returned or put in a
// sequence, but an ordinary op cannot compute on it.
// CHECK: error: {{.*}}node "nz_1" (NonZero): not supported by provider cpu: its result shape is known only at run time; sequence ops and the model's outputs can take it, but not node "neg_1" (Neg)
func.func @nonzero_consumed(%x: tensor<4xf32>) -> tensor<1x?xi64> {
  %0 = onnx.NonZero(%x) : (tensor<4xf32>) -> tensor<1x?xi64> loc("nz_1")
  %1 = onnx.Neg(%0) : (tensor<1x?xi64>) -> tensor<1x?xi64> loc("neg_1")
  return %1 : tensor<1x?xi64>
}

// -----

// NonMaxSuppression's scores must match its boxes.
// CHECK: error: {{.*}}node "nms_1" (NonMaxSuppression): not supported by provider cpu: needs float boxes [batches, boxes, 4] and scores [batches, classes, boxes], got tensor<1x6x4xf32> and tensor<1x1x5xf32>
func.func @nms_mismatch(%b: tensor<1x6x4xf32>, %s: tensor<1x1x5xf32>) -> tensor<?x3xi64> {
  %n = onnx.NoValue
  %0 = onnx.NonMaxSuppression(%b, %s, %n, %n, %n) : (tensor<1x6x4xf32>, tensor<1x1x5xf32>, none, none, none) -> tensor<?x3xi64> loc("nms_1")
  return %0 : tensor<?x3xi64>
}
