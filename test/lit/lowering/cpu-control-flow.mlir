// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// If compiles both branches into an scf.if on the extracted condition.
// CHECK-LABEL: func.func @if_both_branches
// CHECK: %[[C:.*]] = tensor.extract %arg0[] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[C]] -> (tensor<2x3xf32>) {
// CHECK: linalg.generic
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: } else {
// CHECK: arith.negf
// CHECK: arith.mulf
// CHECK: scf.yield
// CHECK: return %[[R]]
func.func @if_both_branches(%c: tensor<i1>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = onnx.If(%c) {
    %1 = onnx.Neg(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = onnx.Mul(%1, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    onnx.Yield %2 : tensor<2x3xf32>
  }, {
    %1 = onnx.Relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    onnx.Yield %1 : tensor<2x3xf32>
  } : (tensor<i1>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
