// RUN: kiln-opt %s --kiln-partition=providers=cuda,cpu | FileCheck %s
// RUN: kiln-opt %s --kiln-partition="providers=cuda,cpu min-device-elements=0" | FileCheck %s --check-prefix=NOLIMIT

// A device island below the element threshold stays on the CPU.
// CHECK-LABEL: func.func @tiny_island
// CHECK-NOT: provider("cuda")
// CHECK: kiln.partition "cpu_0" provider("cpu")
// CHECK-NOT: kiln.transfer
// NOLIMIT-LABEL: func.func @tiny_island
// NOLIMIT: kiln.transfer %arg0 from("cpu") to("cuda")
// NOLIMIT: kiln.partition "cuda_0" provider("cuda")
func.func @tiny_island(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = onnx.Relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
