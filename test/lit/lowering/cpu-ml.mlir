// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// TreeEnsemble: one tree (x0 <= 1.5 ? leaf 0 : (x1 < 2.5 ? leaf 1 : leaf 2))
// as nested selects per output element, compared in f64, each leaf's
// weight kept where its target is this output's, summed over the trees.
// CHECK-LABEL: func.func @tree_ensemble
// CHECK: linalg.generic
// CHECK: arith.cmpf ole, %{{.*}}, %cst
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.addf
func.func @tree_ensemble(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = onnx.TreeEnsemble(%x) {aggregate_function = 1 : i64, leaf_targetids = [0, 1, 0], leaf_weights = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>, n_targets = 2 : i64, nodes_falseleafs = [0, 1], nodes_falsenodeids = [1, 2], nodes_featureids = [0, 1], nodes_modes = dense<[0, 1]> : tensor<2xui8>, nodes_splits = dense<[1.5, 2.5]> : tensor<2xf32>, nodes_trueleafs = [1, 1], nodes_truenodeids = [0, 1], post_transform = 0 : i64, tree_roots = [0]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
