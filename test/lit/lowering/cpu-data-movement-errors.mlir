// RUN: not kiln-opt %s -split-input-file --kiln-partition 2>&1 | FileCheck %s
// Inputs that decide a result shape must be compile-time constants; a
// runtime value is reported by node name (kiln needs static shapes).

// A slice of run-time shape can only be returned or put in a sequence.
// CHECK: error: {{.*}}node "slice_rt" (Slice): not supported by provider cpu: needs a constant `starts` input
func.func @slice_runtime(%x: tensor<6xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  %e = onnx.Constant() {value = dense<[4]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = onnx.NoValue
  %0 = onnx.Slice(%x, %s, %e, %n, %n) : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<?xf32> loc("slice_rt")
  %1 = onnx.Relu(%0) : (tensor<?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// CHECK: error: {{.*}}node "reshape_rt" (Reshape): not supported by provider cpu: needs a constant `shape` input
func.func @reshape_runtime(%x: tensor<6xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = onnx.Reshape(%x, %s) : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("reshape_rt")
  return %0 : tensor<?x?xf32>
}
