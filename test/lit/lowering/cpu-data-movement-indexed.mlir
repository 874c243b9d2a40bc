// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s
// Index-computed data movement: one parallel linalg.generic over the result
// whose body computes the source coordinates and reads with tensor.extract.

// Slice with a negative step: start -1 resolves to 5, the end clamps to -1,
// so out[i] = x[5 - 2 i] for i in [0, 3).
// CHECK-LABEL: func.func @slice_neg_step
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[M:.*]] = arith.muli %[[I]], %c-2 : index
// CHECK: %[[S:.*]] = arith.addi %[[M]], %c5 : index
// CHECK: tensor.extract %arg0[%[[S]]] : tensor<6xf32>
func.func @slice_neg_step(%x: tensor<6xf32>) -> tensor<3xf32> {
  %s = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = onnx.Constant() {value = dense<[-100]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st = onnx.Constant() {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = onnx.Slice(%x, %s, %e, %a, %st) : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Reflect padding folds the source index into [0, 2(n-1)) and mirrors it.
// CHECK-LABEL: func.func @pad_reflect
// CHECK: linalg.generic
// CHECK: arith.remsi
// CHECK: arith.select
// CHECK: tensor.extract %arg0
func.func @pad_reflect(%x: tensor<3xf32>) -> tensor<7xf32> {
  %p = onnx.Constant() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %n = onnx.NoValue
  %0 = onnx.Pad(%x, %p, %n, %n) {mode = "reflect"} : (tensor<3xf32>, tensor<2xi64>, none, none) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
