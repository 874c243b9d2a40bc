// RUN: kiln-opt %s --kiln-partition="providers=cuda,cpu assignment=%inputs/assignment.json" --mlir-print-debuginfo | FileCheck %s
// RUN: not kiln-opt %s --kiln-partition="providers=cuda,cpu assignment=%inputs/no-such-file.json" 2>&1 | FileCheck %s --check-prefix=MISSING

// Pins by node name and by op type win over the priority order.
// CHECK-LABEL: func.func @pinned
// CHECK: kiln.partition "cuda_0" provider("cuda")
// CHECK: onnx.Add
// CHECK: kiln.partition "cpu_0" provider("cpu")
// CHECK: onnx.Relu{{.*}}loc(#[[KEEP:.*]])
// CHECK: onnx.Tanh
// CHECK: #[[KEEP]] = loc("keep_on_cpu")
// MISSING: cannot read provider assignment
func.func @pinned(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = onnx.Add(%x, %x) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("add_0")
  %1 = onnx.Relu(%0) : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("keep_on_cpu")
  %2 = onnx.Tanh(%1) : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("tanh_0")
  return %2 : tensor<64x64xf32>
}
