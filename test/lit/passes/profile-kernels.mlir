// RUN: kiln-opt %s -split-input-file --kiln-profile-kernels | FileCheck %s

// Each node of a CPU partition, but constants, is bracketed; the descriptor
// holds the node's name, op type, provider and ONNX Runtime's event args
// (a weight counts as parameter bytes, the other inputs as activations).
// CHECK-LABEL: func.func @main
// CHECK: onnx.Constant
// CHECK-NEXT: kiln.profile_begin "fc\1FMatMul\1Fcpu\1F
// CHECK-SAME: \22activation_size\22:\2232\22
// CHECK-SAME: \22fused_nodes\22:[\22fc\22]
// CHECK-SAME: \22input_type_shape\22:[{\22float\22:[2,4]},{\22float\22:[4,3]}]
// CHECK-SAME: \22output_size\22:\2224\22
// CHECK-SAME: \22output_type_shape\22:[{\22float\22:[2,3]}]
// CHECK-SAME: \22parameter_size\22:\2248\22"
// CHECK-NEXT: onnx.MatMul
// CHECK-NEXT: kiln.profile_end "fc\1FMatMul
// CHECK-NEXT: kiln.profile_begin "act\1FRelu\1Fcpu
// CHECK-NEXT: onnx.Relu
// CHECK-NEXT: kiln.profile_end "act\1FRelu
// CHECK-NEXT: kiln.yield
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<2x3xf32> {
    %w = onnx.Constant() {value = dense<1.0> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
    %1 = onnx.MatMul(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("fc")
    %2 = onnx.Relu(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("act")
    kiln.yield %2 : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

// A fused op lists every node its location holds, its own first; a node
// that a decomposition rewrote keeps the op type the importer recorded.
// CHECK-LABEL: func.func @fused
// CHECK: kiln.profile_begin "mm\1FMatMul\1Fcpu\1F{{.*}}\22fused_nodes\22:[\22mm\22,\22relu\22]
// CHECK: kiln.profile_begin "dq\1FDequantizeLinear\1Fcpu
// CHECK-NEXT: onnx.Mul
func.func @fused(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<4x4xf32> {
    %1 = onnx.MatMul(%x, %w) {kiln.activation = "Relu"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc(fused["mm", "relu"])
    %2 = onnx.Mul(%1, %1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("dq"(fused<"DequantizeLinear">["m.onnx":0:0]))
    kiln.yield %2 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}

// -----

// Partitions of a device provider keep their own (device) events.
// CHECK-LABEL: func.func @device
// CHECK-NOT: kiln.profile_begin
func.func @device(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = kiln.partition "cuda_0" provider("cuda") -> tensor<2x4xf32> {
    %1 = onnx.Relu(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    kiln.yield %1 : tensor<2x4xf32>
  }
  return %0 : tensor<2x4xf32>
}
