// RUN: kiln-opt %s -split-input-file --kiln-lower-partitions | FileCheck %s

// The CPU partition is lowered and inlined into the function; the module
// lists it in kiln.partitions with its op count.
// CHECK: module attributes {kiln.partitions = [{name = "cpu_0", num_ops = 3 : i64, provider = "cpu"}]}
// CHECK-LABEL: func.func @main
// CHECK-NOT: kiln.partition
// CHECK-NOT: kiln.yield
// CHECK-NOT: onnx.
// CHECK: linalg.generic {{.*}}iterator_types = [{{[^]]*}}"reduction"{{[^]]*}}]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK: return %[[T]] : tensor<3x2xf32>
func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<3x2xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<3x2xf32> {
    %1 = onnx.MatMul(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %2 = onnx.Relu(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %3 = onnx.Transpose(%2) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    kiln.yield %3 : tensor<3x2xf32>
  }
  return %0 : tensor<3x2xf32>
}

// -----

// Two partitions, both recorded in order; results feed across.
// CHECK: kiln.partitions = [{name = "cpu_0", num_ops = 1 : i64, provider = "cpu"}, {name = "cpu_1", num_ops = 2 : i64, provider = "cpu"}]
// CHECK-LABEL: func.func @two
// CHECK: %[[N:.*]] = linalg.generic
// CHECK: arith.negf
// CHECK: linalg.generic {{.*}} ins(%[[N]] :
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK-NOT: kiln.partition "
func.func @two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<4xf32> {
    %1 = onnx.Neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  %2 = kiln.partition "cpu_1" provider("cpu") -> tensor<4xf32> {
    %3 = onnx.Exp(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = onnx.Tanh(%3) : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %4 : tensor<4xf32>
  }
  return %2 : tensor<4xf32>
}

// -----

// Identity forwards its operand: nothing is computed.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<4xf32> {
    %1 = onnx.Identity(%x) : (tensor<4xf32>) -> tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
