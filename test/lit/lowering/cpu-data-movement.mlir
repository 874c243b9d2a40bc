// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// Reshape and Flatten are collapse + expand, no copies.
// CHECK-LABEL: func.func @reshape
// CHECK-NOT: linalg.generic
// CHECK: %[[C0:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[E0:.*]] = tensor.expand_shape %[[C0]] {{\[\[}}0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK: %[[E1:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 12] : tensor<24xf32> into tensor<2x12xf32>
// CHECK: %[[E2:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2, 3]] output_shape [2, 3, 2, 2] : tensor<24xf32> into tensor<2x3x2x2xf32>
// CHECK: return %[[E0]], %[[E1]], %[[E2]]
func.func @reshape(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x12xf32>, tensor<2x3x2x2xf32>) {
  %s = onnx.Constant() {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Reshape(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %1 = onnx.Flatten(%x) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %t = onnx.Constant() {value = dense<[2, 3, 2, 2]> : tensor<4xi64>} : () -> tensor<4xi64>
  %2 = onnx.Reshape(%x, %t) : (tensor<2x3x4xf32>, tensor<4xi64>) -> tensor<2x3x2x2xf32>
  return %0, %1, %2 : tensor<6x4xf32>, tensor<2x12xf32>, tensor<2x3x2x2xf32>
}

// -----

// Concat inserts each input at its running offset along the axis.
// CHECK-LABEL: func.func @concat
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[S0:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
// CHECK: %[[S1:.*]] = tensor.insert_slice %arg1 into %[[S0]][0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
// CHECK: return %[[S1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = onnx.Concat(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3x4x2xf32>) permutation = [1, 2, 0]
// Without perm: reversed.
// CHECK: linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<4x3x2xf32>) permutation = [2, 1, 0]
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<3x4x2xf32>, tensor<4x3x2xf32>) {
  %0 = onnx.Transpose(%x) {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = onnx.Transpose(%x) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %0, %1 : tensor<3x4x2xf32>, tensor<4x3x2xf32>
}

// -----

// RotaryEmbedding: one generic over the output; rotated elements read the
// cos/sin caches at position_ids, the rest of each head is copied.
// CHECK-LABEL: func.func @rotary
// CHECK: linalg.generic
// CHECK: tensor.extract %arg3
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg2
// CHECK: arith.subf
// CHECK: arith.addf
func.func @rotary(%x: tensor<1x2x3x8xf32>, %cos: tensor<4x2xf32>, %sin: tensor<4x2xf32>, %pos: tensor<1x3xi64>) -> tensor<1x2x3x8xf32> {
  %0 = onnx.RotaryEmbedding(%x, %cos, %sin, %pos) {rotary_embedding_dim = 4 : i64} : (tensor<1x2x3x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x3xi64>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// ReverseSequence: the time index is mirrored below each batch entry's
// length, read at run time.
// CHECK-LABEL: func.func @reverse_sequence
// CHECK: linalg.generic
// CHECK: tensor.extract %arg1
// CHECK: arith.select
// CHECK: tensor.extract %arg0
func.func @reverse_sequence(%x: tensor<4x2xf32>, %lens: tensor<2xi64>) -> tensor<4x2xf32> {
  %0 = onnx.ReverseSequence(%x, %lens) {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// A constant Pad that only grows a static shape: the pad value filled, the
// input inserted at the low pads (row copies once bufferized), no select per
// element. (An 8-bit conv's input is padded with its zero point so.)
// CHECK-LABEL: func.func @pad_constant
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<i8>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[V]] : i8) outs(%{{.*}} : tensor<1x2x6x7xi8>)
// CHECK: %[[R:.*]] = tensor.insert_slice %arg0 into %[[F]][0, 0, 1, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xi8> into tensor<1x2x6x7xi8>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @pad_constant(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x6x7xui8> {
  %p = onnx.Constant() {value = dense<[0, 0, 1, 2, 0, 0, 1, 1]> : tensor<8xi64>} : () -> tensor<8xi64>
  %v = onnx.Constant() {value = dense<120> : tensor<ui8>} : () -> tensor<ui8>
  %n = onnx.NoValue
  %0 = onnx.Pad(%x, %p, %v, %n) : (tensor<1x2x4x4xui8>, tensor<8xi64>, tensor<ui8>, none) -> tensor<1x2x6x7xui8>
  return %0 : tensor<1x2x6x7xui8>
}
