// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-decompose-ops))' | FileCheck %s

// With run-time sizes, a Loop whose trip count is known only at run time
// keeps its scan output (static [4] per iteration) as a carried buffer of
// [trip, 4] zeros, each iteration writing its row with ScatterND.
// CHECK-LABEL: func.func @loop_scan_carried
// CHECK: %[[ACC:.*]] = onnx.ConstantOfShape({{.*}} -> tensor<?x4xf32>
// CHECK: onnx.Loop(%arg0, %{{.*}}, %arg1, %[[ACC]])
// CHECK: ^bb0(%[[I:.*]]: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<4xf32>, %[[A:.*]]: tensor<?x4xf32>):
// CHECK: %[[AT:.*]] = onnx.Reshape(%[[I]]
// CHECK: onnx.ScatterND(%[[A]], %[[AT]]
// CHECK: } {{.*}}-> (tensor<4xf32>, tensor<?x4xf32>)
module attributes {kiln.runtime_sizes = {}} {
  func.func @loop_scan_carried(%m: tensor<i64>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) {
    %none = onnx.NoValue
    %0:2 = onnx.Loop(%m, %none, %y) {
    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %yi: tensor<4xf32>):
      %next = onnx.Add(%yi, %yi) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      onnx.Yield %ci, %next, %next : tensor<i1>, tensor<4xf32>, tensor<4xf32>
    } : (tensor<i64>, none, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>)
    return %0#0, %0#1 : tensor<4xf32>, tensor<?x4xf32>
  }
}
// -----

// A QLinearConv over a run-time batch: the exact conv of the centered
// operands (f32: 255 * 255 * 27 taps is exact there), cast to i32, the
// requantization in f32; no integer kernel form (it wants static sizes).
// CHECK-LABEL: func.func @qlinear_conv_runtime_batch
// CHECK-NOT: onnx.QLinearConv
// CHECK-NOT: onnx.ConvInteger
// CHECK: onnx.Conv({{.*}}) {{.*}}: (tensor<?x3x4x4xf32>, tensor<2x3x3x3xf32>, none) -> tensor<?x2x2x2xf32>
// CHECK: onnx.Round
// CHECK: -> tensor<?x2x2x2xui8>
module attributes {kiln.runtime_sizes = {}} {
  func.func @qlinear_conv_runtime_batch(%x: tensor<?x3x4x4xui8>) -> tensor<?x2x2x2xui8> {
    %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %zx = onnx.Constant() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
    %w = onnx.Constant() {value = dense<1> : tensor<2x3x3x3xi8>} : () -> tensor<2x3x3x3xi8>
    %zw = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
    %none = onnx.NoValue
    %0 = onnx.QLinearConv(%x, %s, %zx, %w, %s, %zw, %s, %zx, %none) : (tensor<?x3x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>, none) -> tensor<?x2x2x2xui8>
    return %0 : tensor<?x2x2x2xui8>
  }
}


// -----

// A QLinearMatMul over a run-time row count: the u8 x s8 MatMulInteger
// (zero-point terms aside) and the requantization.
// CHECK-LABEL: func.func @qlinear_matmul_runtime_rows
// CHECK-NOT: onnx.QLinearMatMul
// CHECK: onnx.MatMulInteger({{.*}}) : (tensor<?x8xui8>, tensor<8x4xi8>
// CHECK: -> tensor<?x4xui8>
module attributes {kiln.runtime_sizes = {}} {
  func.func @qlinear_matmul_runtime_rows(%a: tensor<?x8xui8>) -> tensor<?x4xui8> {
    %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %za = onnx.Constant() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
    %b = onnx.Constant() {value = dense<1> : tensor<8x4xi8>} : () -> tensor<8x4xi8>
    %zb = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
    %0 = onnx.QLinearMatMul(%a, %s, %za, %b, %s, %zb, %s, %za) : (tensor<?x8xui8>, tensor<f32>, tensor<ui8>, tensor<8x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<?x4xui8>
    return %0 : tensor<?x4xui8>
  }
}
