// RUN: kiln-opt %s -split-input-file --kiln-partition | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-partition=providers=cpu | FileCheck %s

// All ops go to the CPU in one partition. Values used after it (the
// MatMul result, returned, and the Tanh) are its results; the Relu, used
// only inside, is not.
// CHECK-LABEL: func.func @one_partition
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<4x3xf32>)
// CHECK: %[[P:.*]]:2 = kiln.partition "cpu_0" provider("cpu") -> tensor<2x3xf32>, tensor<2x3xf32> {
// CHECK-NEXT: onnx.NoValue
// CHECK-NEXT: %[[MM:.*]] = onnx.MatMul(%[[X]], %[[W]])
// CHECK-NEXT: %[[R:.*]] = onnx.Relu(%[[MM]])
// CHECK-NEXT: %[[T:.*]] = onnx.Tanh(%[[R]])
// CHECK-NEXT: kiln.yield %[[MM]], %[[T]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[P]]#0, %[[P]]#1
// CHECK-NOT: kiln.partition
func.func @one_partition(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %n = onnx.NoValue
  %0 = onnx.MatMul(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %1 = onnx.Relu(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = onnx.Tanh(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %2 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Constants are graph ops too and travel into the partition.
// CHECK-LABEL: func.func @constants
// CHECK: %[[P:.*]] = kiln.partition "cpu_0" provider("cpu") -> tensor<2x12xf32> {
// CHECK-NEXT: %[[S:.*]] = onnx.Constant() {value = dense<[2, 12]> : tensor<2xi64>}
// CHECK-NEXT: %[[R:.*]] = onnx.Reshape(%{{.*}}, %[[S]])
// CHECK-NEXT: kiln.yield %[[R]] : tensor<2x12xf32>
// CHECK: return %[[P]]
func.func @constants(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %s = onnx.Constant() {value = dense<[2, 12]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Reshape(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

// Every function is partitioned, with numbering per function.
// CHECK-LABEL: func.func @first
// CHECK: kiln.partition "cpu_0" provider("cpu")
// CHECK-LABEL: func.func @second
// CHECK: kiln.partition "cpu_0" provider("cpu")
func.func @first(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @second(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = onnx.Neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A function without graph ops gets no partition.
// CHECK-LABEL: func.func @passthrough
// CHECK-NOT: kiln.partition
// CHECK: return %arg0
func.func @passthrough(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
