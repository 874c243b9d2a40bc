// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(kiln-symbolic-shapes))" -verify-diagnostics | FileCheck %s

// Inputs naming the same dim_param share its symbol; an unnamed dim gets
// a fresh one. A Reshape whose shape comes from Shape/Gather/Concat keeps
// the batch and folds the rest; MatMul and Concat combine sizes.
// CHECK-LABEL: func.func @bind_and_size
// CHECK-SAME: %{{.*}}: tensor<?x?x8xf32> {kiln.dim_symbols = array<i32: 0, 1, -1>
// CHECK-SAME: %{{.*}}: tensor<?x?x8xf32> {kiln.dim_symbols = array<i32: 0, 2, -1>
// CHECK-SAME: -> (tensor<?x?xf32> {kiln.dim_sizes = array<i64: {{.*}}>, kiln.dim_text = ["batch", "8*sequence"]}, tensor<?x?x8xf32> {kiln.dim_sizes = array<i64: {{.*}}>, kiln.dim_text = ["batch", "sequence + past", ""]})
// CHECK-SAME: attributes {kiln.dim_symbols = ["batch", "sequence", "past"]}
func.func @bind_and_size(%x: tensor<?x?x8xf32> {onnx.dim_params = ["batch", "sequence", ""], onnx.name = "x"},
                         %p: tensor<?x?x8xf32> {onnx.dim_params = ["batch", "past", ""], onnx.name = "p"})
    -> (tensor<?x?xf32>, tensor<?x?x8xf32>) {
  %s = onnx.Shape(%x) : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %i0 = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %m1 = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = onnx.Gather(%s, %i0) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %shape = onnx.Concat(%b, %m1) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %flat = onnx.Reshape(%x, %shape) : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %kv = onnx.Concat(%p, %x) {axis = 1 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %flat, %kv : tensor<?x?xf32>, tensor<?x?x8xf32>
}

// -----

// A dim the sizes prove constant becomes static: the Reshape to
// [batch, -1] of a [batch, 4, 8] tensor is [batch, 32].
// CHECK-LABEL: func.func @refine
// CHECK: onnx.Reshape{{.*}} -> tensor<?x32xf32>
// CHECK: return {{.*}} : tensor<?x32xf32>
func.func @refine(%x: tensor<?x4x8xf32> {onnx.dim_params = ["n", "", ""], onnx.name = "x"})
    -> tensor<?x?xf32> {
  %s = onnx.Shape(%x) : (tensor<?x4x8xf32>) -> tensor<3xi64>
  %i0 = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %m1 = onnx.Constant() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = onnx.Gather(%s, %i0) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %shape = onnx.Concat(%b, %m1) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %flat = onnx.Reshape(%x, %shape) : (tensor<?x4x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %flat : tensor<?x?xf32>
}

// -----

// An output whose size depends on data is refused, naming it and its node.
// expected-error @+1 {{output "y" dimension 0 (computed by node "rs" (Reshape)): kiln cannot express its size in terms of the input dimensions}}
func.func @data_dependent(%x: tensor<?xf32> {onnx.dim_params = ["n"], onnx.name = "x"},
                          %shape: tensor<1xi64> {onnx.name = "shape"})
    -> (tensor<?xf32> {onnx.name = "y"}) {
  %r = onnx.Reshape(%x, %shape) : (tensor<?xf32>, tensor<1xi64>) -> tensor<?xf32> loc("rs")
  return %r : tensor<?xf32>
}

// -----

// ArgMax drops its axis; CumSum and Trilu keep the shape (shape
// inference's op families); a Resize by constant integer scales
// multiplies the sizes.
// CHECK-LABEL: func.func @families
// CHECK-SAME: kiln.dim_text = ["b"]
// CHECK-SAME: kiln.dim_text = ["b", "s"]
// CHECK-SAME: kiln.dim_text = ["", "", "2*h", "2*w"]
func.func @families(%x: tensor<?x?xf32> {onnx.dim_params = ["b", "s"], onnx.name = "x"},
                    %img: tensor<1x3x?x?xf32> {onnx.dim_params = ["", "", "h", "w"], onnx.name = "img"})
    -> (tensor<?xi64>, tensor<?x?xf32>, tensor<1x3x?x?xf32>) {
  %axis = onnx.Constant() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %am = onnx.ArgMax(%x) {axis = 1 : i64, keepdims = 0 : i64} : (tensor<?x?xf32>) -> tensor<?xi64>
  %cs = onnx.CumSum(%x, %axis) : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  %none = onnx.NoValue
  %tr = onnx.Trilu(%cs, %none) {upper = 0 : i64} : (tensor<?x?xf32>, none) -> tensor<?x?xf32>
  %sc = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %rs = onnx.Resize(%img, %none, %sc, %none) {mode = "nearest"} : (tensor<1x3x?x?xf32>, none, tensor<4xf32>, none) -> tensor<1x3x?x?xf32>
  return %am, %tr, %rs : tensor<?xi64>, tensor<?x?xf32>, tensor<1x3x?x?xf32>
}

// -----

// QLinearConv and QLinearMatMul size their outputs from the data and the
// weights (operand 3): the batch and rows keep their symbols.
// CHECK-LABEL: func.func @qlinear
// CHECK-SAME: kiln.dim_text = ["n", "", "", ""]
// CHECK-SAME: kiln.dim_text = ["r", ""]
func.func @qlinear(%x: tensor<?x3x4x4xui8> {onnx.dim_params = ["n", "", "", ""], onnx.name = "x"},
                   %a: tensor<?x8xui8> {onnx.dim_params = ["r", ""], onnx.name = "a"})
    -> (tensor<?x2x2x2xui8>, tensor<?x4xui8>) {
  %s = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<1> : tensor<2x3x3x3xi8>} : () -> tensor<2x3x3x3xi8>
  %b = onnx.Constant() {value = dense<1> : tensor<8x4xi8>} : () -> tensor<8x4xi8>
  %zw = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %none = onnx.NoValue
  %c = onnx.QLinearConv(%x, %s, %z, %w, %s, %zw, %s, %z, %none) : (tensor<?x3x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<2x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>, none) -> tensor<?x2x2x2xui8>
  %m = onnx.QLinearMatMul(%a, %s, %z, %b, %s, %zw, %s, %z) : (tensor<?x8xui8>, tensor<f32>, tensor<ui8>, tensor<8x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<?x4xui8>
  return %c, %m : tensor<?x2x2x2xui8>, tensor<?x4xui8>
}
