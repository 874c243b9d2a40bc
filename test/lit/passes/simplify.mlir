// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-simplify)' | FileCheck %s

// CHECK-LABEL: func.func @identity
// CHECK-NEXT: %[[R:.*]] = onnx.Relu(%arg0)
// CHECK-NEXT: return %[[R]]
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = onnx.Identity(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = onnx.Relu(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = onnx.Identity(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Inference Dropout goes, and so does training mode with a constant zero
// ratio (PyTorch exports that); a run-time training mode or a used mask
// keep it.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>
// CHECK: %[[T:[a-z0-9_]+]], %{{[a-z0-9_]+}} = onnx.Dropout(%[[X]], %{{.*}}, %{{.*}}) {{.*}}tensor<i1>
// CHECK: %[[M:[a-z0-9_]+]], %[[MASK:[a-z0-9_]+]] = onnx.Dropout(%[[X]], %{{.*}}, %{{.*}}) {{.*}}-> (tensor<3xf32>, tensor<3xi1>)
// CHECK-NOT: onnx.Dropout
// CHECK: return %[[X]], %[[X]], %[[T]], %[[M]], %[[MASK]], %[[X]]
func.func @dropout(%x: tensor<3xf32>, %t: tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3xf32>) {
  %n = onnx.NoValue
  %r = onnx.Constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %z = onnx.Constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %f = onnx.Constant() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %a, %am = onnx.Dropout(%x, %n, %n) : (tensor<3xf32>, none, none) -> (tensor<3xf32>, none)
  %b, %bm = onnx.Dropout(%x, %r, %f) : (tensor<3xf32>, tensor<f32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xi1>)
  %c, %cm = onnx.Dropout(%x, %r, %t) : (tensor<3xf32>, tensor<f32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xi1>)
  %d, %dm = onnx.Dropout(%x, %n, %n) : (tensor<3xf32>, none, none) -> (tensor<3xf32>, tensor<3xi1>)
  %e, %em = onnx.Dropout(%x, %z, %t) : (tensor<3xf32>, tensor<f32>, tensor<i1>) -> (tensor<3xf32>, none)
  return %a, %b, %c, %d, %dm, %e : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @noops
// CHECK-NOT: onnx.Cast
// CHECK-NOT: onnx.Reshape
// CHECK-NOT: onnx.Expand
// CHECK-NOT: onnx.Squeeze
// CHECK-NOT: onnx.Flatten
// CHECK: return %arg0, %arg0, %arg0, %arg0, %arg1
func.func @noops(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %s = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Cast(%x) {to = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = onnx.Reshape(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %2 = onnx.Expand(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %3 = onnx.Flatten(%x) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = onnx.NoValue
  %4 = onnx.Squeeze(%y, %n) : (tensor<2x3xf32>, none) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Negative: a Cast that converts, a Reshape with dynamic types, a
// full-size Slice that reverses.
// CHECK-LABEL: func.func @not_noops
// CHECK: onnx.Cast
// CHECK: onnx.Reshape
// CHECK: onnx.Slice
func.func @not_noops(%x: tensor<2x3xf32>, %d: tensor<?x3xf32>) -> (tensor<2x3xf16>, tensor<?x3xf32>, tensor<2x3xf32>) {
  %0 = onnx.Cast(%x) {to = 10 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %s = onnx.Constant() {value = dense<[-1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = onnx.Reshape(%d, %s) : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  %st = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = onnx.Constant() {value = dense<[-100]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %sp = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %2 = onnx.Slice(%x, %st, %e, %a, %sp) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf16>, tensor<?x3xf32>, tensor<2x3xf32>
}

// -----

// A full-size forward Slice is a no-op.
// CHECK-LABEL: func.func @slice_noop
// CHECK-NOT: onnx.Slice
// CHECK: return %arg0
func.func @slice_noop(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %st = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = onnx.Constant() {value = dense<[100]> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = onnx.NoValue
  %0 = onnx.Slice(%x, %st, %e, %n, %n) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Transposes compose; the identity composition disappears.
// CHECK-LABEL: func.func @transposes
// CHECK-NEXT: %[[T:.*]] = onnx.Transpose(%arg0) {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: return %arg0, %[[T]]
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %0 = onnx.Transpose(%x) {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = onnx.Transpose(%0) {perm = [2, 0, 1]} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %2 = onnx.Transpose(%x) {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %3 = onnx.Transpose(%2) : (tensor<2x4x3xf32>) -> tensor<3x4x2xf32>
  %4 = onnx.Transpose(%3) {perm = [1, 2, 0]} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  return %1, %4 : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----

// Negative: one non-identity Transpose stays.
// CHECK-LABEL: func.func @transpose_one
// CHECK: onnx.Transpose(%arg0) {perm = [1, 0]}
func.func @transpose_one(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = onnx.Transpose(%x) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Reshape of Reshape reshapes the input; a 0 in the outer shape is resolved
// from the static result.
// CHECK-LABEL: func.func @reshapes
// CHECK-DAG: %[[S2:.*]] = onnx.Constant() {value = dense<[6, 4]> : tensor<2xi64>}
// CHECK-DAG: %[[S3:.*]] = onnx.Constant() {value = dense<{{\[?}}24{{\]?}}> : tensor<1xi64>}
// CHECK-DAG: %[[A:.*]] = onnx.Reshape(%arg0, %[[S2]]) {{.*}} -> tensor<6x4xf32>
// CHECK-DAG: %[[B:.*]] = onnx.Reshape(%arg0, %[[S3]]) {{.*}} -> tensor<24xf32>
// CHECK: return %[[A]], %[[B]]
func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<24xf32>) {
  %s1 = onnx.Constant() {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s2 = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %s3 = onnx.Constant() {value = dense<[24]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a0 = onnx.Reshape(%x, %s3) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  %a = onnx.Reshape(%a0, %s1) : (tensor<24xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %b0 = onnx.Reshape(%x, %s1) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %b1 = onnx.Reshape(%b0, %s3) : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  %c = onnx.Reshape(%b1, %s2) : (tensor<24xf32>, tensor<1xi64>) -> tensor<24xf32>
  return %a, %c : tensor<6x4xf32>, tensor<24xf32>
}

// -----

// A shape computed at run time is checked against the compiled one when
// the model runs: such a Reshape stays, even when it changes nothing, and
// a Reshape of it is not composed away.
// CHECK-LABEL: func.func @runtime_shape
// CHECK: %[[A:.*]] = onnx.Reshape(%arg0, %arg1)
// CHECK: %[[B:.*]] = onnx.Reshape(%[[A]], %arg1)
// CHECK: return %[[B]]
func.func @runtime_shape(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %a = onnx.Reshape(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %b = onnx.Reshape(%a, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// -----

// Dead pure ops are erased, and the counters recorded.
// CHECK: "kiln.report.simplify.noop-identity" = 1 : i64
// CHECK-LABEL: func.func @dead
// CHECK-NOT: onnx.Exp
func.func @dead(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = onnx.Exp(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = onnx.Identity(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// An If whose condition is a constant is its taken branch; the other branch
// (here of another shape) goes.
// CHECK-LABEL: func.func @constant_if
// CHECK-NOT: onnx.If
// CHECK: %[[N:.*]] = onnx.Neg(%arg0)
// CHECK-NOT: onnx.Relu
// CHECK: return %[[N]]
func.func @constant_if(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = onnx.If(%c) {
    %1 = onnx.Relu(%x) : (tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %1 : tensor<3xf32>
  }, {
    %1 = onnx.Neg(%x) : (tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %1 : tensor<3xf32>
  } : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A linear layer as addmm exports it (flatten, Gemm, unflatten) becomes a
// MatMul of the 3-D input plus the bias; transB transposes the weights. The
// input of the second Gemm is [1,4,2,3] ([B, S, heads, dim]) flattened to
// [4, 6]: it is reshaped to [1, 4, 6] first.
// CHECK-LABEL: func.func @unflatten_gemm
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x6xf32>, %[[H:.*]]: tensor<1x4x2x3xf32>
// CHECK: %[[M:.*]] = onnx.MatMul(%[[X]], %{{.*}}) : (tensor<1x4x6xf32>, tensor<6x5xf32>) -> tensor<1x4x5xf32>
// CHECK: %[[Y:.*]] = onnx.Add(%[[M]], %{{.*}}) : (tensor<1x4x5xf32>, tensor<5xf32>) -> tensor<1x4x5xf32>
// CHECK: %[[R:.*]] = onnx.Reshape(%[[H]], %{{.*}}) {{.*}} -> tensor<1x4x6xf32>
// CHECK: %[[T:.*]] = onnx.Transpose(%{{.*}}) {perm = [1, 0]} : (tensor<5x6xf32>) -> tensor<6x5xf32>
// CHECK: %[[Z:.*]] = onnx.MatMul(%[[R]], %[[T]])
// CHECK-NOT: onnx.Gemm
// CHECK: return %[[Y]], %[[Z]]
func.func @unflatten_gemm(%x: tensor<1x4x6xf32>, %h: tensor<1x4x2x3xf32>) -> (tensor<1x4x5xf32>, tensor<1x4x5xf32>) {
  %w = onnx.Constant() {value = dense<0.5> : tensor<6x5xf32>} : () -> tensor<6x5xf32>
  %wt = onnx.Constant() {value = dense<0.5> : tensor<5x6xf32>} : () -> tensor<5x6xf32>
  %b = onnx.Constant() {value = dense<1.0> : tensor<5xf32>} : () -> tensor<5xf32>
  %none = onnx.NoValue
  %flat = onnx.Constant() {value = dense<[4, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %back = onnx.Constant() {value = dense<[1, 4, 5]> : tensor<3xi64>} : () -> tensor<3xi64>
  %a = onnx.Reshape(%x, %flat) : (tensor<1x4x6xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %g = onnx.Gemm(%a, %w, %b) : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %y = onnx.Reshape(%g, %back) : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<1x4x5xf32>
  %c = onnx.Reshape(%h, %flat) : (tensor<1x4x2x3xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %gt = onnx.Gemm(%c, %wt, %none) {transB = 1 : i64} : (tensor<4x6xf32>, tensor<5x6xf32>, none) -> tensor<4x5xf32>
  %z = onnx.Reshape(%gt, %back) : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<1x4x5xf32>
  return %y, %z : tensor<1x4x5xf32>, tensor<1x4x5xf32>
}

// -----

// Left alone: alpha scales the product, and a result whose leading dims
// are not the input's ([2, 2, 5] from rows of [1, 4, 6]).
// CHECK-LABEL: func.func @unflatten_gemm_no
// CHECK-COUNT-2: onnx.Gemm
// CHECK-NOT: onnx.MatMul
func.func @unflatten_gemm_no(%x: tensor<1x4x6xf32>) -> (tensor<1x4x5xf32>, tensor<2x2x5xf32>) {
  %w = onnx.Constant() {value = dense<0.5> : tensor<6x5xf32>} : () -> tensor<6x5xf32>
  %none = onnx.NoValue
  %flat = onnx.Constant() {value = dense<[4, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %back = onnx.Constant() {value = dense<[1, 4, 5]> : tensor<3xi64>} : () -> tensor<3xi64>
  %other = onnx.Constant() {value = dense<[2, 2, 5]> : tensor<3xi64>} : () -> tensor<3xi64>
  %a = onnx.Reshape(%x, %flat) : (tensor<1x4x6xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %g = onnx.Gemm(%a, %w, %none) {alpha = 2.0 : f32} : (tensor<4x6xf32>, tensor<6x5xf32>, none) -> tensor<4x5xf32>
  %y = onnx.Reshape(%g, %back) : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<1x4x5xf32>
  %g2 = onnx.Gemm(%a, %w, %none) : (tensor<4x6xf32>, tensor<6x5xf32>, none) -> tensor<4x5xf32>
  %z = onnx.Reshape(%g2, %other) : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<2x2x5xf32>
  return %y, %z : tensor<1x4x5xf32>, tensor<2x2x5xf32>
}

// -----

// A Transpose that only moves dims of size 1 keeps the data's order and
// becomes a Reshape; one that reorders two real dims stays.
// CHECK-LABEL: func.func @transpose_unit_dims
// CHECK: %[[S:.*]] = onnx.Constant() {value = dense<[1, 5, 8]> : tensor<3xi64>}
// CHECK: %[[R:.*]] = onnx.Reshape(%arg0, %[[S]]) : (tensor<5x1x8xf32>, tensor<3xi64>) -> tensor<1x5x8xf32>
// CHECK: %[[T:.*]] = onnx.Transpose(%arg0) {perm = [2, 1, 0]}
// CHECK: return %[[R]], %[[T]]
func.func @transpose_unit_dims(%x: tensor<5x1x8xf32>) -> (tensor<1x5x8xf32>, tensor<8x1x5xf32>) {
  %a = onnx.Transpose(%x) {perm = [1, 0, 2]} : (tensor<5x1x8xf32>) -> tensor<1x5x8xf32>
  %b = onnx.Transpose(%x) {perm = [2, 1, 0]} : (tensor<5x1x8xf32>) -> tensor<8x1x5xf32>
  return %a, %b : tensor<1x5x8xf32>, tensor<8x1x5xf32>
}
