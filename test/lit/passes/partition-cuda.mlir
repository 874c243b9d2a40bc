// RUN: kiln-opt %s -split-input-file --kiln-partition="providers=cuda,cpu min-device-elements=0" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-partition=providers=cpu,cuda | FileCheck %s --check-prefix=CPUFIRST
// RUN: kiln-opt %s -split-input-file --kiln-partition="providers=cuda,cpu min-device-elements=0" --mlir-print-op-generic | FileCheck %s --check-prefix=BYTES

// Priority order: compute goes to cuda, the constant stays on the host.
// CHECK-LABEL: func.func @priority
// CHECK: kiln.partition "cpu_0" provider("cpu")
// CHECK: onnx.Constant
// CHECK: kiln.partition "cuda_0" provider("cuda")
// CHECK: onnx.MatMul
// CHECK: onnx.Relu
// CPUFIRST-LABEL: func.func @priority
// CPUFIRST: kiln.partition "cpu_0" provider("cpu")
// CPUFIRST-NOT: kiln.partition
func.func @priority(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = onnx.Constant() {value = dense<1.0> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %0 = onnx.MatMul(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %1 = onnx.Relu(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// An op cuda does not take (control flow) in the middle of a chain falls
// back to the CPU and splits the chain into two cuda partitions.
// CHECK-LABEL: func.func @fallback_in_chain
// CPUFIRST-LABEL: func.func @fallback_in_chain
// CHECK: kiln.partition "cuda_0" provider("cuda")
// CHECK: onnx.Relu
// CHECK: kiln.partition "cpu_0" provider("cpu")
// CHECK: onnx.If
// CHECK: kiln.partition "cuda_1" provider("cuda")
// CHECK: onnx.Tanh
func.func @fallback_in_chain(%c: tensor<i1>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = onnx.Relu(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = onnx.If(%c) {
    onnx.Yield %0 : tensor<8xf32>
  }, {
    %n = onnx.Neg(%0) : (tensor<8xf32>) -> tensor<8xf32>
    onnx.Yield %n : tensor<8xf32>
  } : (tensor<i1>) -> tensor<8xf32>
  %2 = onnx.Tanh(%1) : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}

// -----

// A tensor consumed by two device partitions crosses once; the device
// result used by the host crosses back once.
// Each partition records the bytes crossing into and out of it (16 KiB per
// tensor): x into cuda_0 (Add's result stays on the device for the If
// on the CPU: it crosses out), cuda_1 reads x and the If's result, and
// returns its own.
// CHECK-LABEL: func.func @shared_transfer
// BYTES-LABEL: sym_name = "shared_transfer"
// BYTES: kiln.bytes_in = 16384 : i64, kiln.bytes_out = 16384 : i64
// BYTES: kiln.bytes_in = 16384 : i64, kiln.bytes_out = 16384 : i64
// BYTES: kiln.bytes_in = 32768 : i64, kiln.bytes_out = 16384 : i64
// CHECK: %[[T:.*]] = kiln.transfer %arg1 from("cpu") to("cuda")
// CHECK-NOT: kiln.transfer %arg1
// CHECK: kiln.partition "cuda_0" provider("cuda")
// CHECK: onnx.Add({{.*}}%[[T]]
// CHECK: kiln.partition "cpu_0"
// CHECK: kiln.partition "cuda_1" provider("cuda")
// CHECK: onnx.Mul({{.*}}%[[T]]
func.func @shared_transfer(%c: tensor<i1>, %x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = onnx.Add(%x, %x) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = onnx.If(%c) {
    onnx.Yield %0 : tensor<64x64xf32>
  }, {
    onnx.Yield %0 : tensor<64x64xf32>
  } : (tensor<i1>) -> tensor<64x64xf32>
  %2 = onnx.Mul(%1, %x) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}

// -----

// Strings are host pointers: an Equal of strings stays on the CPU.
// CHECK-LABEL: func.func @strings
// CHECK: kiln.partition "cpu_0" provider("cpu")
// CHECK: onnx.Equal
// CHECK-NOT: provider("cuda")
func.func @strings(%a: tensor<300x!onnx.String>, %b: tensor<300x!onnx.String>) -> tensor<300xi1> {
  %0 = onnx.Equal(%a, %b) : (tensor<300x!onnx.String>, tensor<300x!onnx.String>) -> tensor<300xi1>
  return %0 : tensor<300xi1>
}
