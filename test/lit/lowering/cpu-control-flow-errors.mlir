// RUN: not kiln-opt %s --kiln-partition 2>&1 | FileCheck %s --check-prefix=ERR

// A branch op without a CPU lowering makes the whole If unsupported.
// ERR: node "{{.*}}" (If): not supported by provider cpu: subgraph node "{{.*}}" (Det)
func.func @if_unsupported_branch(%c: tensor<i1>, %x: tensor<2x2xf32>) -> tensor<f32> {
  %0 = onnx.If(%c) {
    %1 = onnx.Det(%x) : (tensor<2x2xf32>) -> tensor<f32>
    onnx.Yield %1 : tensor<f32>
  }, {
    %1 = onnx.Det(%x) : (tensor<2x2xf32>) -> tensor<f32>
    onnx.Yield %1 : tensor<f32>
  } : (tensor<i1>) -> tensor<f32>
  return %0 : tensor<f32>
}
