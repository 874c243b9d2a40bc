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

// 4-bit integers: floats round to nearest-even and saturate (clamped in
// f32 to [-8, 7], exact there); NaN gives 0.
// CHECK-LABEL: func.func @to_i4
// CHECK: %[[R:.*]] = math.roundeven
// CHECK: %[[LO:.*]] = arith.maxnumf %[[R]], %{{.*}} : f32
// CHECK: %[[HI:.*]] = arith.minnumf %[[LO]], %{{.*}} : f32
// CHECK: arith.fptosi %[[HI]] : f32 to i32
// CHECK: arith.trunci %{{.*}} : i32 to i4
// CHECK: arith.cmpf uno, %[[R]], %[[R]] : f32
// CHECK: arith.constant 0 : i4
func.func @to_i4(%x: tensor<4xf32>) -> tensor<4xi4> {
  %0 = onnx.Cast(%x) {to = 22 : i64} : (tensor<4xf32>) -> tensor<4xi4>
  return %0 : tensor<4xi4>
}

// -----

// An unsigned 8-bit target: the clamp alone, maxnum taking 0 for NaN (no
// select).
// CHECK-LABEL: func.func @to_u8
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[LO:.*]] = arith.maxnumf %{{.*}}, %[[ZERO]] : f32
// CHECK: %[[MAX:.*]] = arith.constant 2.550000e+02 : f32
// CHECK: %[[HI:.*]] = arith.minnumf %[[LO]], %[[MAX]] : f32
// CHECK: %[[I:.*]] = arith.fptosi %[[HI]] : f32 to i32
// CHECK: %[[B:.*]] = arith.trunci %[[I]] : i32 to i8
// CHECK-NEXT: linalg.yield %[[B]] : i8
func.func @to_u8(%x: tensor<4xf32>) -> tensor<4xui8> {
  %0 = onnx.Cast(%x) {to = 2 : i64} : (tensor<4xf32>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Float -> integer saturates out of range (the bound is the first value
// past it, 2^31 for int32) and gives 0 for NaN; an unsigned 32-bit target
// converts with fptoui. f16 widens to f32 first.
// CHECK-LABEL: func.func @to_i32
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.constant 2.14748365E+9 : f32
// CHECK: arith.constant 2147483647 : i32
// CHECK: arith.constant -2.14748365E+9 : f32
// CHECK: arith.constant -2147483648 : i32
// CHECK: arith.cmpf uno
// CHECK-LABEL: func.func @f16_to_u32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.fptoui %{{.*}} : f32 to i32
// CHECK: arith.constant 4.2949673E+9 : f32
// CHECK: arith.constant -1 : i32
func.func @to_i32(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = onnx.Cast(%x) {to = 6 : i64} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
func.func @f16_to_u32(%x: tensor<4xf16>) -> tensor<4xui32> {
  %0 = onnx.Cast(%x) {to = 12 : i64} : (tensor<4xf16>) -> tensor<4xui32>
  return %0 : tensor<4xui32>
}
