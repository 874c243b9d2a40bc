// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-widen-half))' | FileCheck %s

// Half inputs widen on entry, the ops compute in f32, and the output rounds
// back to f16 once.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>) -> tensor<4xf16>
// CHECK: %[[W:.*]] = onnx.Cast(%[[X]]) {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: %[[E:.*]] = onnx.Exp(%[[W]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[M:.*]] = onnx.Mul(%[[E]], %[[W]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[R:.*]] = onnx.Cast(%[[M]]) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: return %[[R]]
func.func @chain(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = onnx.Exp(%x) : (tensor<4xf16>) -> tensor<4xf16>
  %1 = onnx.Mul(%0, %x) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// An explicit Cast to half keeps rounding; a Cast out of half rounds its
// input to half first; CastLike becomes the Cast it stands for.
// CHECK-LABEL: func.func @casts
// CHECK: %[[H:.*]] = onnx.Cast(%arg0) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: %[[HW:.*]] = onnx.Cast(%[[H]]) {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: %[[S:.*]] = onnx.Sqrt(%[[HW]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[SR:.*]] = onnx.Cast(%[[S]]) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: onnx.Cast(%[[SR]]) {to = 7 : i64} : (tensor<4xf16>) -> tensor<4xi64>
// CHECK-NOT: onnx.CastLike
func.func @casts(%x: tensor<4xf32>, %like: tensor<4xi64>) -> tensor<4xi64> {
  %0 = onnx.Cast(%x) {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %1 = onnx.Sqrt(%0) : (tensor<4xf16>) -> tensor<4xf16>
  %2 = onnx.CastLike(%1, %like) : (tensor<4xf16>, tensor<4xi64>) -> tensor<4xi64>
  return %2 : tensor<4xi64>
}

// -----

// An initializer blob (dense_resource, f16 1.0, 2.0, -0.5 after the 2-byte
// alignment header) widens to an f32 blob like an inline constant.
// CHECK-LABEL: func.func @resource
// CHECK: %[[W:.*]] = onnx.Constant() {value = dense_resource<kiln_widened> : tensor<3xf32>} : () -> tensor<3xf32>
// CHECK: onnx.Mul(%{{.*}}, %[[W]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: kiln_widened: "0x{{[0-9A-F]+}}0000803F00000040000000BF"
func.func @resource(%x: tensor<3xf16>) -> tensor<3xf16> {
  %w = onnx.Constant() {value = dense_resource<hblob> : tensor<3xf16>} : () -> tensor<3xf16>
  %y = onnx.Mul(%x, %w) : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  return %y : tensor<3xf16>
}

{-#
  dialect_resources: {
    builtin: {
      hblob: "0x02000000003C004000B8"
    }
  }
#-}

// -----

// Sequences keep their elements' type, so a function with one is left in
// half (the CPU computes half ops in f32 per op).
// CHECK-LABEL: func.func @half_sequence
// CHECK: onnx.Abs(%arg0) : (tensor<3xf16>) -> tensor<3xf16>
// CHECK: onnx.SequenceConstruct(%{{.*}}, %arg0) : (tensor<3xf16>, tensor<3xf16>) -> !onnx.seq<tensor<3xf16>>
func.func @half_sequence(%x: tensor<3xf16>) -> !onnx.seq<tensor<3xf16>> {
  %0 = onnx.Abs(%x) : (tensor<3xf16>) -> tensor<3xf16>
  %1 = onnx.SequenceConstruct(%0, %x) : (tensor<3xf16>, tensor<3xf16>) -> !onnx.seq<tensor<3xf16>>
  return %1 : !onnx.seq<tensor<3xf16>>
}
