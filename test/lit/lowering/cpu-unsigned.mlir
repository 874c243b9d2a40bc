// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// Unsigned tensors lower as signless integers; the ops that depend on
// signedness pick their unsigned arith form.
// CHECK-LABEL: func.func @div_less
// CHECK-SAME: (%{{.*}}: tensor<4xi8> {{.*}}, %{{.*}}: tensor<4xi8> {{.*}}) -> (tensor<4xi8>, tensor<4xi1>)
// CHECK: arith.divui
// CHECK: arith.cmpi ult
// CHECK-NOT: ui8
func.func @div_less(%x: tensor<4xui8>, %y: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>) {
  %0 = onnx.Div(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = onnx.Less(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  return %0, %1 : tensor<4xui8>, tensor<4xi1>
}

// -----

// Casts: from unsigned zero-extends and converts as unsigned; to unsigned
// converts floats as unsigned.
// CHECK-LABEL: func.func @casts
// CHECK: arith.extui
// CHECK: arith.uitofp
// CHECK: arith.fptoui
func.func @casts(%x: tensor<4xui16>, %f: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>, tensor<4xui32>) {
  %0 = onnx.Cast(%x) {to = 7 : i64} : (tensor<4xui16>) -> tensor<4xi64>
  %1 = onnx.Cast(%x) {to = 1 : i64} : (tensor<4xui16>) -> tensor<4xf32>
  %2 = onnx.Cast(%f) {to = 12 : i64} : (tensor<4xf32>) -> tensor<4xui32>
  return %0, %1, %2 : tensor<4xi64>, tensor<4xf32>, tensor<4xui32>
}

// -----

// Unsigned right shift, Max and Mod; constants keep their bits.
// CHECK-LABEL: func.func @shift_max_mod
// CHECK: arith.constant dense<-56> : tensor<4xi8>
// CHECK: arith.shrui
// CHECK: arith.maxui
// CHECK: arith.remui
func.func @shift_max_mod(%x: tensor<4xui8>, %s: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xui8>) {
  %c = onnx.Constant() {value = dense<200> : tensor<4xui8>} : () -> tensor<4xui8>
  %0 = onnx.BitShift(%x, %s) {direction = "RIGHT"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = onnx.Max(%x, %c) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = onnx.Mod(%x, %s) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2 : tensor<4xui8>, tensor<4xui8>, tensor<4xui8>
}
