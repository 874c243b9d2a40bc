// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// float8 decodes through a 256-entry f32 table indexed by the byte.
// CHECK-LABEL: func.func @from_f8
// CHECK: %[[T:.*]] = arith.constant dense<{{.*}}> : tensor<256xf32>
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: arith.index_castui
// CHECK: tensor.extract %[[T]]
func.func @from_f8(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  %0 = onnx.Cast(%x) {to = 1 : i64} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// float8 encodes by rounding |x| to its binade's quantum (nearest-even);
// with saturate=0 an overflow of E5M2 is infinity (0x7C = 124).
// CHECK-LABEL: func.func @to_f8
// CHECK: math.roundeven
// CHECK: arith.constant 124 : i32
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: arith.bitcast %{{.*}} : i8 to f8E5M2
func.func @to_f8(%x: tensor<4xf32>) -> tensor<4xf8E5M2> {
  %0 = onnx.Cast(%x) {to = 19 : i64, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

// 4-bit integers: floats round to nearest-even and wrap to the width.
// CHECK-LABEL: func.func @to_i4
// CHECK: math.roundeven
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.trunci %{{.*}} : i64 to i4
func.func @to_i4(%x: tensor<4xf32>) -> tensor<4xi4> {
  %0 = onnx.Cast(%x) {to = 22 : i64} : (tensor<4xf32>) -> tensor<4xi4>
  return %0 : tensor<4xi4>
}
