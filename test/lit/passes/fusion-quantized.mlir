// RUN: kiln-opt %s -split-input-file --kiln-fuse-quantized | FileCheck %s

// QDQ MatMul, weights per output column: the integer product of the 8-bit
// operands (zero points kept for kiln-decompose-ops), cast and scaled by
// sa * sw. The activation's 8-bit tensor exists for the product: the
// Relu reads it through its DequantizeLinear (bytes, not an f32 copy).
// CHECK: module attributes {kiln.report.fuse_quantized_matmul = 1 : i64}
// CHECK-LABEL: func.func @matmul_per_column
// CHECK: %[[Q:.*]] = onnx.QuantizeLinear(%arg0, %[[SA:[0-9]+]], %[[ZA:[0-9]+]])
// CHECK: %[[A:.*]] = onnx.DequantizeLinear(%[[Q]], %[[SA]], %[[ZA]])
// CHECK: %[[P:.*]] = onnx.MatMulInteger(%[[Q]], %{{.*}}, %[[ZA]], %{{.*}}) : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<ui8>, tensor<3xi8>) -> tensor<4x3xi32>
// CHECK-DAG: %[[S:.*]] = onnx.Mul(%[[SA]], %{{.*}}) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-DAG: %[[F:.*]] = onnx.Cast(%[[P]]) {to = 1 : i64}
// CHECK: %[[Y:.*]] = onnx.Mul(%[[F]], %[[S]]) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: onnx.Relu(%[[A]])
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: return %[[Y]]
func.func @matmul_per_column(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x8xf32>) {
  %sa = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<3> : tensor<8x3xi8>} : () -> tensor<8x3xi8>
  %sw = onnx.Constant() {value = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>} : () -> tensor<3xf32>
  %zw = onnx.Constant() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
  %q = onnx.QuantizeLinear(%x, %sa, %za) : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xui8>
  %a = onnx.DequantizeLinear(%q, %sa, %za) : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  %wd = onnx.DequantizeLinear(%w, %sw, %zw) {axis = 1 : i64} : (tensor<8x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<8x3xf32>
  %y = onnx.MatMul(%a, %wd) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = onnx.Relu(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %r : tensor<4x3xf32>, tensor<4x8xf32>
}

// -----

// A quantize-dequantize pair read by float ops only becomes the same
// rounding in f32: round(x / s) + z, clamped to [0, 255], minus z, times s.
// CHECK: module attributes {kiln.report.fuse_quantize_dequantize = 1 : i64}
// CHECK-LABEL: func.func @pair
// CHECK-NOT: onnx.QuantizeLinear
// CHECK: onnx.Div(%arg0, %[[SA:[0-9]+]])
// CHECK: onnx.Round
// CHECK: onnx.Clip
// CHECK: onnx.Sub
// CHECK: %[[R:.*]] = onnx.Mul({{.*}}, %[[SA]])
// CHECK: onnx.Relu(%[[R]])
// CHECK-NOT: onnx.DequantizeLinear
func.func @pair(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sa = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %q = onnx.QuantizeLinear(%x, %sa, %za) : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xui8>
  %a = onnx.DequantizeLinear(%q, %sa, %za) : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  %r = onnx.Relu(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Gemm with transB (torch's Linear): the weights transposed to [K, N]
// (folded later), the bias added after the scaling.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK: %[[T:.*]] = onnx.Transpose(%{{.*}}) {perm = [1, 0]} : (tensor<3x8xi8>) -> tensor<8x3xi8>
// CHECK: onnx.MatMulInteger(%arg0, %[[T]]
// CHECK: %[[Y:.*]] = onnx.Mul(%{{.*}}, %{{.*}}) : (tensor<4x3xf32>
// CHECK: %[[B:.*]] = onnx.Add(%[[Y]], %arg1)
// CHECK-NOT: onnx.Gemm
// CHECK: return %[[B]]
func.func @gemm_trans_b(%q: tensor<4x8xui8>, %bias: tensor<3xf32>) -> tensor<4x3xf32> {
  %none = onnx.NoValue
  %sa = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<3> : tensor<3x8xi8>} : () -> tensor<3x8xi8>
  %sw = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %a = onnx.DequantizeLinear(%q, %sa, %za) : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  %wd = onnx.DequantizeLinear(%w, %sw, %none) : (tensor<3x8xi8>, tensor<f32>, none) -> tensor<3x8xf32>
  %y = onnx.Gemm(%a, %wd, %bias) {transB = 1 : i64} : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Left alone: weights that are not constant (attention's Q x K^T), and
// weights quantized per row (axis 0 of a [K, N] MatMul operand).
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-2: onnx.MatMul(
// CHECK-NOT: onnx.MatMulInteger
func.func @not_fused(%q: tensor<4x8xui8>, %k: tensor<8x4xui8>) -> (tensor<4x4xf32>, tensor<4x3xf32>) {
  %none = onnx.NoValue
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %a = onnx.DequantizeLinear(%q, %s, %z) : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  %b = onnx.DequantizeLinear(%k, %s, %z) : (tensor<8x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<8x4xf32>
  %y = onnx.MatMul(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %w = onnx.Constant() {value = dense<3> : tensor<8x3xi8>} : () -> tensor<8x3xi8>
  %sw = onnx.Constant() {value = dense<0.5> : tensor<8xf32>} : () -> tensor<8xf32>
  %wd = onnx.DequantizeLinear(%w, %sw, %none) {axis = 0 : i64} : (tensor<8x3xi8>, tensor<8xf32>, none) -> tensor<8x3xf32>
  %y2 = onnx.MatMul(%a, %wd) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %y, %y2 : tensor<4x4xf32>, tensor<4x3xf32>
}

// -----

// A max pool between a dequantize and a quantize alike runs on the u8
// data; with another scale on the quantize it stays float.
// CHECK: module attributes {kiln.report.fuse_quantized_maxpool = 1 : i64}
// CHECK-LABEL: func.func @maxpool
// CHECK: %[[F:.*]], %{{.*}} = onnx.MaxPool(%{{.*}}) {{.*}} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, none)
// CHECK: %[[P:.*]], %{{.*}} = onnx.MaxPool(%arg0) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xui8>) -> (tensor<1x2x2x2xui8>, none)
// CHECK: %[[Q:.*]] = onnx.QuantizeLinear(%[[F]],
// CHECK: return %[[P]], %[[Q]]
func.func @maxpool(%x: tensor<1x2x4x4xui8>) -> (tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>) {
  %s = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %s2 = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
  %d = onnx.DequantizeLinear(%x, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %p:2 = onnx.MaxPool(%d) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, none)
  %q = onnx.QuantizeLinear(%p#0, %s, %z) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  %q2 = onnx.QuantizeLinear(%p#0, %s2, %z) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x2x2xui8>
  return %q, %q2 : tensor<1x2x2x2xui8>, tensor<1x2x2x2xui8>
}

// -----

// QDQ depthwise conv (one channel a group, mobilenet's), weights per
// channel: ConvInteger with the groups (kiln-decompose-ops gives it the
// 8-bit depthwise kernels' form), cast, scaled per channel, plus the bias.
// A window of 23 x 23 taps stays float: 255 * 128 * 529 sums past f32's
// exact integers, which the kernels sum in.
// CHECK: kiln.report.fuse_quantized_conv = 1 : i64
// CHECK-LABEL: func.func @depthwise_conv
// CHECK: %[[Q:.*]] = onnx.QuantizeLinear(%arg0
// CHECK: %[[C:.*]] = onnx.ConvInteger(%[[Q]], %{{.*}}, %{{.*}}, %{{.*}}) {group = 4 : i64, pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xui8>, tensor<4x1x3x3xi8>, tensor<ui8>, none) -> tensor<1x4x8x8xi32>
// CHECK: %[[F:.*]] = onnx.Cast(%[[C]]) {to = 1 : i64}
// CHECK: %[[S:.*]] = onnx.Mul(%[[F]], %{{.*}}) : (tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>)
// CHECK: onnx.Add(%[[S]], %{{.*}}) : (tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>)
// CHECK-NOT: onnx.Conv(
// CHECK-LABEL: func.func @depthwise_wide_window
// CHECK-NOT: onnx.ConvInteger
// CHECK: onnx.Conv(
func.func @depthwise_conv(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %sa = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant() {value = dense<9> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<3> : tensor<4x1x3x3xi8>} : () -> tensor<4x1x3x3xi8>
  %sw = onnx.Constant() {value = dense<[0.5, 0.25, 0.125, 1.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %zw = onnx.Constant() {value = dense<0> : tensor<4xi8>} : () -> tensor<4xi8>
  %b = onnx.Constant() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %q = onnx.QuantizeLinear(%x, %sa, %za) : (tensor<1x4x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xui8>
  %a = onnx.DequantizeLinear(%q, %sa, %za) : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %wd = onnx.DequantizeLinear(%w, %sw, %zw) {axis = 0 : i64} : (tensor<4x1x3x3xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x1x3x3xf32>
  %y = onnx.Conv(%a, %wd, %b) {group = 4 : i64, pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

func.func @depthwise_wide_window(%x: tensor<1x2x30x30xf32>) -> tensor<1x2x8x8xf32> {
  %sa = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant() {value = dense<9> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<3> : tensor<2x1x23x23xi8>} : () -> tensor<2x1x23x23xi8>
  %sw = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %q = onnx.QuantizeLinear(%x, %sa, %za) : (tensor<1x2x30x30xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x30x30xui8>
  %a = onnx.DequantizeLinear(%q, %sa, %za) : (tensor<1x2x30x30xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x30x30xf32>
  %zw = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %wd = onnx.DequantizeLinear(%w, %sw, %zw) : (tensor<2x1x23x23xi8>, tensor<f32>, tensor<i8>) -> tensor<2x1x23x23xf32>
  %none = onnx.NoValue
  %y = onnx.Conv(%a, %wd, %none) {group = 2 : i64} : (tensor<1x2x30x30xf32>, tensor<2x1x23x23xf32>, none) -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

// A QDQ SiLU: Q(DQ(x) * DQ(Q(Sigmoid(DQ(x))))) is a function of the 8-bit
// x alone: the same ops on x's 256 values (an arange constant, for
// kiln-fold-constants to compute) make a table, which a Gather reads at
// x (no range check: 8-bit indices), cast back to 8 bits. A requantized
// Relu (no sigmoid, tanh, exp or erf) stays.
// CHECK: kiln.report.fuse_quantized_lookup = 1
// CHECK-LABEL: func.func @silu
// CHECK: %[[X:.*]] = onnx.QuantizeLinear(%arg0,
// CHECK: %[[V:.*]] = onnx.Constant() {value = dense<"0x000102{{.*}}FDFEFF"> : tensor<256xui8>}
// CHECK: onnx.DequantizeLinear(%[[V]], {{.*}}) : {{.*}} -> tensor<256xf32>
// CHECK: onnx.Sigmoid({{.*}}) : (tensor<256xf32>) -> tensor<256xf32>
// CHECK: %[[T:.*]] = onnx.QuantizeLinear({{.*}}) : {{.*}} -> tensor<256xui8>
// CHECK: %[[T32:.*]] = onnx.Cast(%[[T]]) {to = 6 : i64} : (tensor<256xui8>) -> tensor<256xi32>
// CHECK: %[[I:.*]] = onnx.Cast(%[[X]]) {to = 6 : i64} : (tensor<1x4x5x5xui8>) -> tensor<1x4x5x5xi32>
// CHECK: %[[G:.*]] = onnx.Gather(%[[T32]], %[[I]]) {kiln.indices_in_range}
// CHECK: %[[Y:.*]] = onnx.Cast(%[[G]]) {to = 2 : i64} : (tensor<1x4x5x5xi32>) -> tensor<1x4x5x5xui8>
// CHECK-NOT: onnx.Sigmoid
// CHECK: onnx.Relu
// CHECK: onnx.QuantizeLinear
// CHECK: return %[[Y]]
func.func @silu(%x: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xui8>, tensor<1x4x5x5xui8>) {
  %s = onnx.Constant() {value = dense<0.05> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<100> : tensor<ui8>} : () -> tensor<ui8>
  %ss = onnx.Constant() {value = dense<0.0039> : tensor<f32>} : () -> tensor<f32>
  %zs = onnx.Constant() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
  %so = onnx.Constant() {value = dense<0.03> : tensor<f32>} : () -> tensor<f32>
  %zo = onnx.Constant() {value = dense<10> : tensor<ui8>} : () -> tensor<ui8>
  %q = onnx.QuantizeLinear(%x, %s, %z) : (tensor<1x4x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xui8>
  %d = onnx.DequantizeLinear(%q, %s, %z) : (tensor<1x4x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xf32>
  %sg = onnx.Sigmoid(%d) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %qs = onnx.QuantizeLinear(%sg, %ss, %zs) : (tensor<1x4x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xui8>
  %ds = onnx.DequantizeLinear(%qs, %ss, %zs) : (tensor<1x4x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xf32>
  %m = onnx.Mul(%ds, %d) : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %y = onnx.QuantizeLinear(%m, %so, %zo) : (tensor<1x4x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xui8>
  %r = onnx.Relu(%d) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %yr = onnx.QuantizeLinear(%r, %so, %zo) : (tensor<1x4x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xui8>
  return %y, %yr : tensor<1x4x5x5xui8>, tensor<1x4x5x5xui8>
}

// -----

// A residual join of two quantized convs (resnet's downsample and the
// block's last 1x1 conv): the later conv's store will run the Add, so the
// earlier one's quantize-dequantize pair stays 8-bit (its quantize then
// fuses into that conv's own store); the later one's pair becomes f32.
// CHECK: kiln.report.fuse_quantize_dequantize = 1
// CHECK-LABEL: func.func @residual_join
// CHECK: %[[EARLY:.*]] = onnx.ConvInteger
// CHECK: %[[F:.*]] = onnx.Cast(%[[EARLY]])
// CHECK: %[[E:.*]] = onnx.Mul(%[[F]],
// CHECK: onnx.ConvInteger
// CHECK: %[[Q:.*]] = onnx.QuantizeLinear(%[[E]], %[[S1:.*]], %[[Z1:.*]]) : (tensor<1x64x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x64x4x4xui8>
// CHECK: %[[D:.*]] = onnx.DequantizeLinear(%[[Q]], %[[S1]], %[[Z1]])
// CHECK: onnx.Round
// CHECK: onnx.Clip
// CHECK: onnx.Add(%{{.*}}, %[[D]])
// CHECK-NOT: onnx.QuantizeLinear
func.func @residual_join(%x: tensor<1x16x4x4xf32>) -> tensor<1x64x4x4xf32> {
  %sa = onnx.Constant() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %za = onnx.Constant() {value = dense<9> : tensor<ui8>} : () -> tensor<ui8>
  %s1 = onnx.Constant() {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %z1 = onnx.Constant() {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
  %s2 = onnx.Constant() {value = dense<0.3> : tensor<f32>} : () -> tensor<f32>
  %z2 = onnx.Constant() {value = dense<5> : tensor<ui8>} : () -> tensor<ui8>
  %w = onnx.Constant() {value = dense<3> : tensor<64x16x1x1xi8>} : () -> tensor<64x16x1x1xi8>
  %sw = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %zw = onnx.Constant() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
  %none = onnx.NoValue
  %q = onnx.QuantizeLinear(%x, %sa, %za) : (tensor<1x16x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x16x4x4xui8>
  %a = onnx.DequantizeLinear(%q, %sa, %za) : (tensor<1x16x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x16x4x4xf32>
  %wd = onnx.DequantizeLinear(%w, %sw, %zw) : (tensor<64x16x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<64x16x1x1xf32>
  %early = onnx.Conv(%a, %wd, %none) : (tensor<1x16x4x4xf32>, tensor<64x16x1x1xf32>, none) -> tensor<1x64x4x4xf32>
  %later = onnx.Conv(%a, %wd, %none) : (tensor<1x16x4x4xf32>, tensor<64x16x1x1xf32>, none) -> tensor<1x64x4x4xf32>
  %q1 = onnx.QuantizeLinear(%early, %s1, %z1) : (tensor<1x64x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x64x4x4xui8>
  %d1 = onnx.DequantizeLinear(%q1, %s1, %z1) : (tensor<1x64x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x64x4x4xf32>
  %q2 = onnx.QuantizeLinear(%later, %s2, %z2) : (tensor<1x64x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x64x4x4xui8>
  %d2 = onnx.DequantizeLinear(%q2, %s2, %z2) : (tensor<1x64x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x64x4x4xf32>
  %y = onnx.Add(%d2, %d1) : (tensor<1x64x4x4xf32>, tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  return %y : tensor<1x64x4x4xf32>
}
