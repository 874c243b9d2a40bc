// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-fold-constants)' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-fold-constants{max-rounds=4})' | FileCheck %s --check-prefix=FOUR

// A chain of constant ops becomes one constant, computed by the CPU codegen.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[C:.*]] = onnx.Constant() {value = dense<[3.000000e+00, 4.250000e+00]> : tensor<2xf32>}
// CHECK-NEXT: %[[R:.*]] = onnx.Add(%arg0, %[[C]])
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = onnx.Constant() {value = dense<[1.0, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = onnx.Add(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %m = onnx.Mul(%s, %s) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %d = onnx.Sub(%m, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = onnx.Add(%x, %d) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// The exporters' shape sub-graph: Shape folds from the static type, the
// rest in the JIT, and the Reshape gets a static type from shape inference.
// CHECK: "kiln.report.fold-constants.constants" = 1 : i64
// CHECK-LABEL: func.func @shape_chain
// CHECK-SAME: -> tensor<2x12xf32>
// CHECK-NOT: onnx.Shape
// CHECK-NOT: onnx.Gather
// CHECK-NOT: onnx.Concat
// CHECK: %[[S:.*]] = onnx.Constant() {value = dense<[2, -1]> : tensor<2xi64>}
// CHECK: onnx.Reshape(%arg0, %[[S]]) {{.*}} -> tensor<2x12xf32>
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %s = onnx.Shape(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %g = onnx.Gather(%s, %i) {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %ax = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = onnx.Unsqueeze(%g, %ax) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = onnx.Concat(%u, %m1) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = onnx.Reshape(%x, %c) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}



// -----

// Shape of a dynamic input folds only over its static dimensions; Size
// needs the whole shape.
// CHECK-LABEL: func.func @shape_partial
// CHECK-DAG: onnx.Constant() {value = dense<[3, 4]> : tensor<2xi64>}
// CHECK-DAG: onnx.Shape(%arg0) : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-DAG: onnx.Size(%arg0)
func.func @shape_partial(%x: tensor<?x3x4xf32>) -> (tensor<2xi64>, tensor<3xi64>, tensor<i64>) {
  %s = onnx.Shape(%x) {start = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %f = onnx.Shape(%x) : (tensor<?x3x4xf32>) -> tensor<3xi64>
  %n = onnx.Size(%x) : (tensor<?x3x4xf32>) -> tensor<i64>
  return %s, %f, %n : tensor<2xi64>, tensor<3xi64>, tensor<i64>
}

// -----

// Ops with a non-constant input stay, and so does a random op.
// CHECK-LABEL: func.func @negative
// CHECK: onnx.Add(%arg0
// CHECK: onnx.RandomNormal
// CHECK: onnx.Relu
func.func @negative(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %a = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %r = onnx.Add(%x, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %n = onnx.RandomNormal() {shape = [2]} : () -> tensor<2xf32>
  %q = onnx.Relu(%n) : (tensor<2xf32>) -> tensor<2xf32>
  return %r, %q : tensor<2xf32>, tensor<2xf32>
}

// -----

// Results above max-bytes stay computed at run time.
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-fold-constants{max-bytes=16})' | FileCheck %s --check-prefix=SMALL
// SMALL-LABEL: func.func @too_big
// SMALL: onnx.Expand
func.func @too_big() -> tensor<8xf32> {
  %a = onnx.Constant() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = onnx.Constant() {value = dense<[8]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = onnx.Expand(%a, %s) : (tensor<1xf32>, tensor<1xi64>) -> tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// Integer and bool results, and a multi-result op.
// CHECK-LABEL: func.func @types
// CHECK-DAG: onnx.Constant() {value = dense<[true, false]> : tensor<2xi1>}
// CHECK-DAG: onnx.Constant() {value = dense<[7, 9]> : tensor<2xi32>}
// CHECK-DAG: onnx.Constant() {value = dense<[1, 2]> : tensor<2xi64>}
// CHECK-DAG: onnx.Constant() {value = dense<[3, 4]> : tensor<2xi64>}
// CHECK-NOT: onnx.Split
func.func @types() -> (tensor<2xi1>, tensor<2xi32>, tensor<2xi64>, tensor<2xi64>) {
  %a = onnx.Constant() {value = dense<[3, 5]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = onnx.Constant() {value = dense<[4, 4]> : tensor<2xi32>} : () -> tensor<2xi32>
  %l = onnx.Less(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %s = onnx.Add(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %v = onnx.Constant() {value = dense<[1, 2, 3, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %n = onnx.NoValue
  %p:2 = onnx.Split(%v, %n) {num_outputs = 2 : i64} : (tensor<4xi64>, none) -> (tensor<2xi64>, tensor<2xi64>)
  return %l, %s, %p#0, %p#1 : tensor<2xi1>, tensor<2xi32>, tensor<2xi64>, tensor<2xi64>
}

// -----

// A shape chain through six blocks (as ShuffleNet's channel shuffles): each
// round folds one Gather, whose constant shapes the next Reshape; all six
// resolve (up to 32 rounds), so the last Reshape has a static type.
// With 4 rounds (the old limit) Gathers would stay (FOUR).
// CHECK-LABEL: func.func @deep_shape_chain
// CHECK-NOT: onnx.Gather
// CHECK-NOT: tensor<*x
// CHECK: return
// FOUR-LABEL: func.func @deep_shape_chain
// FOUR: onnx.Gather
func.func @deep_shape_chain(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %swap = onnx.Constant() {value = dense<[1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %s0 = onnx.Shape(%x) : (tensor<2x3xf32>) -> tensor<*xi64>
  %t0 = onnx.Gather(%s0, %swap) : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %r0 = onnx.Reshape(%x, %t0) : (tensor<2x3xf32>, tensor<*xi64>) -> tensor<*xf32>
  %s1 = onnx.Shape(%r0) : (tensor<*xf32>) -> tensor<*xi64>
  %t1 = onnx.Gather(%s1, %swap) : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %r1 = onnx.Reshape(%r0, %t1) : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %s2 = onnx.Shape(%r1) : (tensor<*xf32>) -> tensor<*xi64>
  %t2 = onnx.Gather(%s2, %swap) : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %r2 = onnx.Reshape(%r1, %t2) : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %s3 = onnx.Shape(%r2) : (tensor<*xf32>) -> tensor<*xi64>
  %t3 = onnx.Gather(%s3, %swap) : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %r3 = onnx.Reshape(%r2, %t3) : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %s4 = onnx.Shape(%r3) : (tensor<*xf32>) -> tensor<*xi64>
  %t4 = onnx.Gather(%s4, %swap) : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %r4 = onnx.Reshape(%r3, %t4) : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %s5 = onnx.Shape(%r4) : (tensor<*xf32>) -> tensor<*xi64>
  %t5 = onnx.Gather(%s5, %swap) : (tensor<*xi64>, tensor<2xi64>) -> tensor<*xi64>
  %r5 = onnx.Reshape(%r4, %t5) : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %y = onnx.Reshape(%r5, %t0) : (tensor<*xf32>, tensor<*xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// An identity Transpose (rank 1 here) of a strided Slice folds to the
// slice's values: the lowering forwards it (MLIR 19 erased an identity
// linalg.transpose on buffers, and the folded constant was garbage), and
// the strided copy runs without MLIR's runtime library.
// CHECK-LABEL: func.func @identity_transpose_of_strided_slice
// CHECK-NEXT: %[[C:.*]] = onnx.Constant() {value = dense<[0.000000e+00, 2.000000e+00, 4.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT: return %[[C]]
func.func @identity_transpose_of_strided_slice() -> tensor<3xf32> {
  %c = onnx.Constant() {value = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<6xf32>} : () -> tensor<6xf32>
  %s = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = onnx.Constant() {value = dense<[6]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = onnx.Constant() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st = onnx.Constant() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = onnx.Slice(%c, %s, %e, %a, %st) : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  %t = onnx.Transpose(%y) : (tensor<3xf32>) -> tensor<3xf32>
  return %t : tensor<3xf32>
}

// -----

// The same for a 2-D identity permutation.
// CHECK-LABEL: func.func @identity_transpose_2d
// CHECK-NEXT: %[[C:.*]] = onnx.Constant() {value = dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00, 5.000000e+00]]> : tensor<2x3xf32>}
// CHECK-NEXT: return %[[C]]
func.func @identity_transpose_2d() -> tensor<2x3xf32> {
  %c = onnx.Constant() {value = dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %t = onnx.Transpose(%c) {perm = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}

// -----

// Ops that the runtime computes are not folded (the folding JIT does not
// link libkiln_rt), and the rest of the module still folds.
// CHECK-LABEL: func.func @runtime_op_not_folded
// CHECK: onnx.TfIdfVectorizer
// CHECK-NOT: onnx.Neg
func.func @runtime_op_not_folded() -> (tensor<3xf32>, tensor<2xf32>) {
  %x = onnx.Constant() {value = dense<[5, 6, 7, 8, 6, 7]> : tensor<6xi32>} : () -> tensor<6xi32>
  %0 = onnx.TfIdfVectorizer(%x) {max_gram_length = 2 : i64, max_skip_count = 0 : i64, min_gram_length = 2 : i64, mode = "TF", ngram_counts = [0, 0], ngram_indexes = [0, 1, 2], pool_int64s = [5, 6, 7, 8, 6, 7]} : (tensor<6xi32>) -> tensor<3xf32>
  %c = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = onnx.Neg(%c) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<3xf32>, tensor<2xf32>
}

// -----

// Indices computed in the same fold job are checked by the folded code: a
// valid one folds; an index out of range leaves the ops to run (and fail
// the run with the node's name) instead of folding a clamped row.
// CHECK-LABEL: func.func @computed_index
// CHECK: %[[C:.*]] = onnx.Constant() {value = dense<3.000000e+00> : tensor<1xf32>}
// CHECK: return %[[C]]
func.func @computed_index() -> tensor<1xf32> {
  %d = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %i = onnx.Add(%a, %a) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %0 = onnx.Gather(%d, %i) {axis = 0 : i64} : (tensor<4xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// CHECK-LABEL: func.func @computed_bad_index
// CHECK: %[[I:.*]] = onnx.Add
// CHECK: %[[G:.*]] = onnx.Gather(%{{.*}}, %[[I]])
// CHECK-NOT: kiln.no_fold
// CHECK: return %[[G]]
func.func @computed_bad_index() -> tensor<1xf32> {
  %d = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = onnx.Constant() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %i = onnx.Add(%a, %a) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %0 = onnx.Gather(%d, %i) {axis = 0 : i64} : (tensor<4xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
