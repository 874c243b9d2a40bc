// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// The runtime matches each string (a `const char *` once lowered) against
// the pattern, passed as a constant C string.
// CHECK-LABEL: func.func @regex
// CHECK: %[[P:.*]] = memref.get_global @__kiln_str : memref<7xi8>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<3xi1>
// CHECK: kiln.runtime_call @kilnRegexFullMatch(%arg0, %c3_i64, %{{.*}}, %{{.*}}) outs(%[[INIT]] : tensor<3xi1>) : (tensor<3xi64>, i64, i64, i64) -> tensor<3xi1>
func.func @regex(%x: tensor<3x!onnx.String>) -> tensor<3xi1> {
  %0 = onnx.RegexFullMatch(%x) {pattern = "a[bc]+"} : (tensor<3x!onnx.String>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Token ids with the n-gram tables as constant arrays; the runtime fills
// the [batch, max index + 1] counts.
// CHECK-DAG: memref.global "private" constant @__kiln_const{{.*}} : memref<2xi64> = dense<[0, 4]>
// CHECK-DAG: memref.global "private" constant @__kiln_const{{.*}} : memref<10xi64> = dense<[2, 3, 5, 4, 5, 6, 7, 8, 6, 7]>
// CHECK-LABEL: func.func @tfidf
// CHECK: kiln.runtime_call @kilnTfIdfVectorizer(%arg0, %c6_i32, %c2_i64, %c6_i64, %c0_i32, %c2_i64{{.*}}, %c2_i64{{.*}}, %c0_i64, {{.*}}) outs(%{{.*}} : tensor<2x7xf32>)
func.func @tfidf(%x: tensor<2x6xi32>) -> tensor<2x7xf32> {
  %0 = onnx.TfIdfVectorizer(%x) {max_gram_length = 2 : i64, max_skip_count = 0 : i64, min_gram_length = 2 : i64, mode = "TF", ngram_counts = [0, 4], ngram_indexes = [0, 1, 2, 3, 4, 5, 6], pool_int64s = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7]} : (tensor<2x6xi32>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// -----

// StringConcat calls the runtime per (broadcast) pair of strings.
// CHECK-LABEL: func.func @concat
// CHECK: %[[NODE:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[S:.*]] = func.call @kilnStringConcat(%[[A]], %[[B]], %[[NODE]]) : (i64, i64, i64) -> i64
// CHECK: linalg.yield %[[S]] : i64
// CHECK: func.func private @kilnStringConcat(i64, i64, i64) -> i64
func.func @concat(%a: tensor<2x!onnx.String>, %b: tensor<1x!onnx.String>) -> tensor<2x!onnx.String> {
  %0 = onnx.StringConcat(%a, %b) : (tensor<2x!onnx.String>, tensor<1x!onnx.String>) -> tensor<2x!onnx.String>
  return %0 : tensor<2x!onnx.String>
}
