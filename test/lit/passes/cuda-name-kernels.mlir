// RUN: kiln-opt %s --kiln-partition=providers=cuda,cpu --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload --gpu-map-parallel-loops --convert-parallel-loops-to-gpu \
// RUN:   --gpu-kernel-outlining --kiln-name-kernels \
// RUN:   | FileCheck %s

// Kernels take their node's name, made a PTX identifier; a node's second
// kernel gets a suffix; a launch without a node name keeps the outliner's.
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func @encoder_layer_0_Add::@encoder_layer_0_Add
// CHECK: gpu.launch_func @k2nd_Relu::@k2nd_Relu
// CHECK: gpu.launch_func @main_kernel{{.*}}::@main_kernel
// CHECK: gpu.module @encoder_layer_0_Add
// CHECK-NEXT: gpu.func @encoder_layer_0_Add
// CHECK: gpu.module @k2nd_Relu
// CHECK-NEXT: gpu.func @k2nd_Relu
// CHECK-LABEL: func.func @two_kernels
// CHECK: gpu.launch_func @mm_MatMul::@mm_MatMul
// CHECK: gpu.launch_func @mm_MatMul_1::@mm_MatMul_1
func.func @main(%x: tensor<4x300xf32>, %w: tensor<300xf32>) -> tensor<4x300xf32> {
  %0 = onnx.Add(%x, %w) : (tensor<4x300xf32>, tensor<300xf32>) -> tensor<4x300xf32> loc("/encoder/layer.0/Add")
  %1 = onnx.Relu(%0) : (tensor<4x300xf32>) -> tensor<4x300xf32> loc("2nd/Relu")
  %2 = onnx.Tanh(%1) : (tensor<4x300xf32>) -> tensor<4x300xf32>
  return %2 : tensor<4x300xf32>
}

// A MatMul is two kernels: the accumulator's fill and the product.
func.func @two_kernels(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("mm/MatMul")
  return %0 : tensor<64x64xf32>
}
