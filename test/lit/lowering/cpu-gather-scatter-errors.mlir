// RUN: not kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions 2>&1 | FileCheck %s
// A constant index outside [-n, n) is a compile-time error naming the node.

// CHECK: error: {{.*}}node "g" (Gather): index 5 is outside [-4, 4)
func.func @gather(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %i = onnx.Constant() {value = dense<[1, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("g")
  return %0 : tensor<2x3xf32>
}

// -----

// The second component of a tuple is bounded by dim 1 (3 columns).
// CHECK: error: {{.*}}node "nd" (GatherND): index -4 is outside [-3, 3)
func.func @gather_nd(%x: tensor<4x3xf32>) -> tensor<2xf32> {
  %i = onnx.Constant() {value = dense<[[3, 2], [-4, -4]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  %0 = onnx.GatherND(%x, %i) : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<2xf32> loc("nd")
  return %0 : tensor<2xf32>
}

// -----

// CHECK: error: {{.*}}node "ge" (GatherElements): index -5 is outside [-4, 4)
func.func @gather_elements(%x: tensor<4x3xf32>) -> tensor<1x3xf32> {
  %i = onnx.Constant() {value = dense<[[0, -5, 1]]> : tensor<1x3xi64>} : () -> tensor<1x3xi64>
  %0 = onnx.GatherElements(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<1x3xi64>) -> tensor<1x3xf32> loc("ge")
  return %0 : tensor<1x3xf32>
}
