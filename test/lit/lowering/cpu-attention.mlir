// RUN: not kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions 2>&1 | FileCheck %s
// RUN: not kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions 2>&1 | FileCheck %s --check-prefix=ERR

// Fused multi-head attention: the head split is an expand_shape and the
// indexing maps (no transposed copies); scores (b, h, i, j) reduce d, are
// scaled and masked, go through the Softmax lowering (max, exp, sum,
// divide), and the output (b, i, h, e) reduces j straight into the
// [B, S, H, D] layout, reshaped back to [B, S, H*D] (views).
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
// CHECK-LABEL: func.func @attention
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 4, 2, 4]
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: } -> tensor<1x2x4x4xf32>
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[V]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: } -> tensor<1x4x2x4xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 4, 8]
// CHECK-NOT: onnx.
func.func @attention(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %v: tensor<1x4x8xf32>, %mask: tensor<1x1x1x4xf32>) -> tensor<1x4x8xf32> {
  %none = onnx.NoValue
  %y, %pk, %pv, %qk = onnx.Attention(%q, %k, %v, %mask, %none, %none, %none) {kiln.fused, kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x1x1x4xf32>, none, none, none) -> (tensor<1x4x8xf32>, none, none, none)
  return %y : tensor<1x4x8xf32>
}

// -----

// Sequence-first ([S, B, E]): the same two products with Q read as
// Q[i, b, h, d] and the output written as Y[i, b, h, e].
// CHECK-DAG: #[[QS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d0, d1, d4)>
// CHECK-DAG: #[[YS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @attention_seq_first
// CHECK: linalg.generic {indexing_maps = [#[[QS]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: linalg.generic {indexing_maps = [{{.*}}, {{.*}}, #[[YS]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: } -> tensor<4x3x2x4xf32>
func.func @attention_seq_first(%q: tensor<4x3x8xf32>, %k: tensor<4x3x8xf32>, %v: tensor<4x3x8xf32>) -> tensor<4x3x8xf32> {
  %none = onnx.NoValue
  %y, %pk, %pv, %qk = onnx.Attention(%q, %k, %v, %none, %none, %none, %none) {kiln.fused, kiln.layout = "seq_first", kv_num_heads = 2 : i64, q_num_heads = 2 : i64} : (tensor<4x3x8xf32>, tensor<4x3x8xf32>, tensor<4x3x8xf32>, none, none, none, none) -> (tensor<4x3x8xf32>, none, none, none)
  return %y : tensor<4x3x8xf32>
}

// -----

// Split into heads already (`kiln.layout = "heads"`, [B, H, S, D]): no
// reshapes; Q, K, V and Y are read and written in place by (b, h, i, d).
// CHECK-DAG: #[[HQ:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[HK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[HP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG: #[[HV:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4, d3)>
// CHECK-DAG: #[[HY:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @attention_heads
// CHECK-NOT: expand_shape
// CHECK: linalg.generic {indexing_maps = [#[[HQ]], #[[HK]], {{.*}}]{{.*}} ins(%arg0, %arg1 :
// CHECK: } -> tensor<1x2x4x6xf32>
// CHECK: math.exp
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[HP]], #[[HV]], #[[HY]]]
// CHECK: } -> tensor<1x2x4x3xf32>
// CHECK: return %[[Y]]
func.func @attention_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>) -> tensor<1x2x4x3xf32> {
  %n = onnx.NoValue
  %y, %pk, %pv, %qk = onnx.Attention(%q, %k, %v, %n, %n, %n, %n) {kiln.fused, kiln.layout = "heads", kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 0.5 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x3xf32>, none, none, none, none) -> (tensor<1x2x4x3xf32>, none, none, none)
  return %y : tensor<1x2x4x3xf32>
}

// -----

// Other forms (here causal) are not lowered directly: kiln-decompose-ops
// expands them before partitioning, so they never get here.
// ERR: node "causal_attention" (Attention): not supported by provider cpu: only the fused multi-head form
func.func @causal(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %v: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %none = onnx.NoValue
  %y, %pk, %pv, %qk = onnx.Attention(%q, %k, %v, %none, %none, %none, %none) {is_causal = 1 : i64, kv_num_heads = 2 : i64, q_num_heads = 2 : i64} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, none, none, none, none) -> (tensor<1x4x8xf32>, none, none, none) loc("causal_attention")
  return %y : tensor<1x4x8xf32>
}
