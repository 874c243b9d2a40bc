// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-shape-inference))' | FileCheck %s

// Multidirectional broadcasting: 2x1x4 + 3x1 -> 2x3x4. The function type follows.
// CHECK-LABEL: func.func @add
// CHECK-SAME: -> tensor<2x3x4xf32>
// CHECK: onnx.Add{{.*}} -> tensor<2x3x4xf32>
func.func @add(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> tensor<*xf32> {
  %0 = onnx.Add(%a, %b) : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// Batch dimensions broadcast: [5,1] x [4] -> [5,4].
// CHECK-LABEL: func.func @matmul
// CHECK: onnx.MatMul{{.*}} -> tensor<5x4x2x6xf32>
func.func @matmul(%a: tensor<5x1x2x3xf32>, %b: tensor<4x3x6xf32>) -> tensor<*xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<5x1x2x3xf32>, tensor<4x3x6xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// A 1-D right operand drops the n dimension.
// CHECK-LABEL: func.func @matvec
// CHECK: onnx.MatMul{{.*}} -> tensor<2xf32>
func.func @matvec(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<*xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// (32 + 2 - 3) / 2 + 1 = 16.
// CHECK-LABEL: func.func @conv
// CHECK: onnx.Conv{{.*}} -> tensor<1x8x16x16xf32>
func.func @conv(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<*xf32> {
  %n = onnx.NoValue
  %0 = onnx.Conv(%x, %w, %n) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// ceil_mode rounds the window count up: 7 -> 4 with it, 3 without.
// CHECK-LABEL: func.func @maxpool
// CHECK: onnx.MaxPool{{.*}}ceil_mode = 1{{.*}} -> (tensor<1x2x4x4xf32>, none)
// CHECK: onnx.MaxPool{{.*}} -> (tensor<1x2x3x3xf32>, none)
func.func @maxpool(%x: tensor<1x2x7x7xf32>) -> tensor<*xf32> {
  %0, %i = onnx.MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1 : i64} : (tensor<1x2x7x7xf32>) -> (tensor<*xf32>, none)
  %1, %j = onnx.MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x7x7xf32>) -> (tensor<*xf32>, none)
  return %0 : tensor<*xf32>
}

// 0 copies the input dimension, -1 takes the rest.
// CHECK-LABEL: func.func @reshape
// CHECK: onnx.Reshape{{.*}} -> tensor<2x12xf32>
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %s = onnx.Constant() {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Reshape(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// CHECK-LABEL: func.func @flatten
// CHECK: onnx.Flatten{{.*}} -> tensor<6x20xf32>
func.func @flatten(%x: tensor<2x3x4x5xf32>) -> tensor<*xf32> {
  %0 = onnx.Flatten(%x) {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// Without perm the dimensions are reversed.
// CHECK-LABEL: func.func @transpose
// CHECK: onnx.Transpose{{.*}}perm = [1, 2, 0]{{.*}} -> tensor<3x4x2xf32>
// CHECK: onnx.Transpose(%{{.*}}) : {{.*}} -> tensor<4x3x2xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %0 = onnx.Transpose(%x) {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  %1 = onnx.Transpose(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// Negative axis; three inputs.
// CHECK-LABEL: func.func @concat
// CHECK: onnx.Concat{{.*}} -> tensor<2x11xf32>
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<*xf32> {
  %0 = onnx.Concat(%a, %b, %a) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// transB: B is 5x3, used as 3x5.
// CHECK-LABEL: func.func @gemm
// CHECK: onnx.Gemm{{.*}} -> tensor<4x5xf32>
func.func @gemm(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>, %c: tensor<5xf32>) -> tensor<*xf32> {
  %0 = onnx.Gemm(%a, %b, %c) {transB = 1 : i64} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// Constant axes, negative ones included; Unsqueeze sees the squeezed shape.
// CHECK-LABEL: func.func @squeeze
// CHECK-SAME: -> tensor<3x1x4x1xf32>
// CHECK: onnx.Squeeze{{.*}} -> tensor<3x4xf32>
// CHECK: onnx.Unsqueeze{{.*}} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x1x4x1xf32>
// CHECK: return {{.*}} : tensor<3x1x4x1xf32>
func.func @squeeze(%x: tensor<1x3x1x4xf32>) -> tensor<*xf32> {
  %ax = onnx.Constant() {value = dense<[0, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Squeeze(%x, %ax) : (tensor<1x3x1x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  %u = onnx.Constant() {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = onnx.Unsqueeze(%0, %u) : (tensor<*xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// Unknown input dimensions stay dynamic.
// CHECK-LABEL: func.func @dyn
// CHECK-SAME: -> tensor<?x4xf32>
// CHECK: onnx.Add{{.*}} -> tensor<?x4xf32>
func.func @dyn(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
  %0 = onnx.Add(%x, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Reshape copying (0) an unknown dimension keeps it unknown.
// CHECK-LABEL: func.func @reshape_copies_dynamic_dim
// CHECK: onnx.Reshape{{.*}} -> tensor<?x2x2xf32>
func.func @reshape_copies_dynamic_dim(%x: tensor<?x4xf32>) -> tensor<*xf32> {
  %s = onnx.Constant() {value = dense<[0, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = onnx.Reshape(%x, %s) : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A -1 beside copied unknown dims: they cancel the same input dims, so the
// -1 is the product of the rest (a bidirectional layer's [s, b, 2, 8]
// output flattened to [s, b, 16] for the next layer).
// CHECK-LABEL: func.func @reshape_infers_beside_copied_dims
// CHECK: onnx.Reshape{{.*}} -> tensor<?x?x16xf32>
func.func @reshape_infers_beside_copied_dims(%x: tensor<?x?x2x8xf32>) -> tensor<*xf32> {
  %s = onnx.Constant() {value = dense<[0, 0, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = onnx.Reshape(%x, %s) : (tensor<?x?x2x8xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// A shape known only after a shape-keeping op (the declared output of a
// Sqrt) flows back to the ReduceSum whose axes are a run-time input.
// CHECK-LABEL: func.func @backwards
// CHECK: onnx.ReduceSum(%arg0, %arg1) {{.*}} -> tensor<3x1x2xf32>
// CHECK: onnx.Sqrt(%{{.*}}) : (tensor<3x1x2xf32>) -> tensor<3x1x2xf32>
func.func @backwards(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x1x2xf32> {
  %0 = onnx.ReduceSum(%x, %axes) : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<*xf32>
  %1 = onnx.Sqrt(%0) : (tensor<*xf32>) -> tensor<3x1x2xf32>
  return %1 : tensor<3x1x2xf32>
}

// Integer and quantized Conv/MatMul: the Conv/MatMul shape; int32 for the
// *Integer ops, y_zero_point's type for the QLinear ones.
// CHECK-LABEL: func.func @quantized
// CHECK: onnx.ConvInteger{{.*}} -> tensor<1x4x4x4xi32>
// CHECK: onnx.QLinearConv{{.*}} -> tensor<1x4x4x4xui8>
// CHECK: onnx.MatMulInteger{{.*}} -> tensor<2x5xi32>
// CHECK: onnx.QLinearMatMul{{.*}} -> tensor<2x5xi8>
func.func @quantized(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %s: tensor<f32>, %zx: tensor<ui8>, %zw: tensor<i8>,
                     %a: tensor<2x3xi8>, %b: tensor<3x5xi8>) -> (tensor<*xi32>, tensor<*xui8>, tensor<*xi32>, tensor<*xi8>) {
  %n = onnx.NoValue
  %0 = onnx.ConvInteger(%x, %w, %zx, %zw) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<*xi32>
  %1 = onnx.QLinearConv(%x, %s, %zx, %w, %s, %zw, %s, %zx, %n) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xui8>, tensor<f32>, tensor<ui8>, tensor<4x3x3x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>, none) -> tensor<*xui8>
  %2 = onnx.MatMulInteger(%a, %b, %n, %n) : (tensor<2x3xi8>, tensor<3x5xi8>, none, none) -> tensor<*xi32>
  %3 = onnx.QLinearMatMul(%a, %s, %zw, %b, %s, %zw, %s, %zw) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<3x5xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<*xi8>
  return %0, %1, %2, %3 : tensor<*xi32>, tensor<*xui8>, tensor<*xi32>, tensor<*xi8>
}

// Expand of an unknown dim: a requested size above 1 is the result's.
// CHECK-LABEL: func.func @expand_unknown_dim
// CHECK: onnx.Expand{{.*}} -> tensor<?x4x3xf32>
func.func @expand_unknown_dim(%x: tensor<?x?x1xf32>) -> tensor<*xf32> {
  %s = onnx.Constant() {value = dense<[1, 4, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = onnx.Expand(%x, %s) : (tensor<?x?x1xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// (De)quantization keeps x's shape: DequantizeLinear takes the scale's type
// (an int32 bias with a 1-element scale, as ORT's QDQ quantizer writes it),
// QuantizeLinear the zero point's, or uint8 without one.
// CHECK-LABEL: func.func @quantization
// CHECK: onnx.DequantizeLinear{{.*}} -> tensor<1000xf32>
// CHECK: onnx.QuantizeLinear{{.*}} -> tensor<1000xi8>
// CHECK: onnx.QuantizeLinear{{.*}} -> tensor<1000xui8>
func.func @quantization(%q: tensor<1000xi32>, %s: tensor<1xf32>, %z: tensor<i32>, %z8: tensor<i8>) -> (tensor<*xf32>, tensor<*xi8>, tensor<*xui8>) {
  %none = onnx.NoValue
  %0 = onnx.DequantizeLinear(%q, %s, %z) : (tensor<1000xi32>, tensor<1xf32>, tensor<i32>) -> tensor<*xf32>
  %1 = onnx.QuantizeLinear(%0, %s, %z8) : (tensor<*xf32>, tensor<1xf32>, tensor<i8>) -> tensor<*xi8>
  %2 = onnx.QuantizeLinear(%0, %s, %none) : (tensor<*xf32>, tensor<1xf32>, none) -> tensor<*xui8>
  return %0, %1, %2 : tensor<*xf32>, tensor<*xi8>, tensor<*xui8>
}

// Resize-10 takes (X, scales), as Upsample does (Resize-11 put roi second).
// CHECK-LABEL: func.func @resize_v10
// CHECK: onnx.Resize{{.*}} -> tensor<1x2x6x8xf32>
func.func @resize_v10(%x: tensor<1x2x3x4xf32>) -> tensor<*xf32> {
  %none = onnx.NoValue
  %s = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = onnx.Resize(%x, %s, %none, %none) {mode = "linear", onnx.version = 10 : i64} : (tensor<1x2x3x4xf32>, tensor<4xf32>, none, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// Sequence elements join what is put in them: an empty sequence takes the
// first tensor's type; SequenceAt gives the elements' type; a slice by a
// run-time end keeps its rank.
// CHECK-LABEL: func.func @sequences
// CHECK: onnx.SequenceEmpty() {{.*}} -> !onnx.seq<tensor<*xi64>>
// CHECK: onnx.SequenceInsert({{.*}}) -> !onnx.seq<tensor<2x3xi64>>
// CHECK: onnx.SequenceInsert({{.*}}) -> !onnx.seq<tensor<?x3xi64>>
// CHECK: onnx.SequenceAt({{.*}}) -> tensor<?x3xi64>
// CHECK: onnx.Slice({{.*}}) -> tensor<?xf32>
// CHECK: onnx.Optional({{.*}}) -> !onnx.opt<tensor<?xf32>>
// CHECK: onnx.OptionalGetElement({{.*}}) -> tensor<?xf32>
func.func @sequences(%a: tensor<2x3xi64>, %b: tensor<4x3xi64>, %i: tensor<i64>, %x: tensor<5xf32>, %e: tensor<1xi64>) -> tensor<*xi64> {
  %none = onnx.NoValue
  %0 = onnx.SequenceEmpty() {dtype = 7 : i64} : () -> tensor<*xf32>
  %1 = onnx.SequenceInsert(%0, %a, %none) : (tensor<*xf32>, tensor<2x3xi64>, none) -> tensor<*xf32>
  %2 = onnx.SequenceInsert(%1, %b, %none) : (tensor<*xf32>, tensor<4x3xi64>, none) -> tensor<*xf32>
  %3 = onnx.SequenceAt(%2, %i) : (tensor<*xf32>, tensor<i64>) -> tensor<*xi64>
  %z = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %4 = onnx.Slice(%x, %z, %e, %none, %none) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<*xf32>
  %5 = onnx.Optional(%4) : (tensor<*xf32>) -> tensor<*xf32>
  %6 = onnx.OptionalGetElement(%5) : (tensor<*xf32>) -> tensor<*xf32>
  return %3 : tensor<*xi64>
}

// A Loop-carried value that grows per iteration (a Concat of one row):
// the body input, typed from the initial [0, 4], becomes the join [?, 4]
// and the body is inferred again from it.
// CHECK-LABEL: func.func @loop_growing
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<?x4xf32>):
// CHECK: onnx.Concat{{.*}} -> tensor<?x4xf32>
// CHECK: -> tensor<?x4xf32>
func.func @loop_growing(%x: tensor<1x4xf32>, %y0: tensor<0x4xf32>) -> tensor<*xf32> {
  %n = onnx.Constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %none = onnx.NoValue
  %r = onnx.Loop(%n, %none, %y0) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %y: tensor<0x4xf32>):
    %grown = onnx.Concat(%y, %x) {axis = 0 : i64} : (tensor<0x4xf32>, tensor<1x4xf32>) -> tensor<*xf32>
    onnx.Yield %c, %grown : tensor<i1>, tensor<*xf32>
  } : (tensor<i64>, none, tensor<0x4xf32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}
