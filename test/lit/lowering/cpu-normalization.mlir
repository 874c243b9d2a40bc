// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// BatchNormalization (inference): one elementwise generic; scale, bias,
// mean and var are indexed by the channel.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batchnorm
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[CH]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK: ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %[[B:.*]]: f32, %[[M:.*]]: f32, %[[V:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK: arith.addf %[[V]], %[[EPS]]
// CHECK: arith.subf %[[X]], %[[M]]
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
func.func @batchnorm(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %y, %rm, %rv = onnx.BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 1.0e-03 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %y : tensor<1x2x3x3xf32>
}

// -----

// Softmax over the last axis: max-reduce, subtract, exp, sum-reduce, divide.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.maximumf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = onnx.Softmax(%x) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Softmax-11 (onnx.version < 13) normalizes over all dims from `axis` on.
// CHECK-LABEL: func.func @softmax_v11
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]
func.func @softmax_v11(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = onnx.Softmax(%x) {axis = 1 : i64, onnx.version = 11 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// ArgMax is one reduction generic with two accumulators (best value, its
// index); select_last_index also takes ties. The first element always wins
// its row, so an all -inf row still gives index 0.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmax_last
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.index 1
// CHECK: %[[GT:.*]] = arith.cmpf ogt
// CHECK: %[[EQ:.*]] = arith.cmpf oeq
// CHECK: arith.ori %[[GT]], %[[EQ]]
// CHECK: linalg.yield {{.*}} : f32, i64
// CHECK: tensor.expand_shape %[[R]]#1
func.func @argmax_last(%x: tensor<2x3xf32>) -> tensor<2x1xi64> {
  %0 = onnx.ArgMax(%x) {axis = 1 : i64, select_last_index = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

// TopK with constant k: a rank per element (how many come before it, ties
// by lower index) over an extra loop dim along the axis, then output slot r
// picks the element whose rank is r.
// CHECK-DAG: #[[OWN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OTHER:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @topk
// CHECK: %[[RANK:.*]] = linalg.generic {indexing_maps = [#[[OWN]], #[[OTHER]], #[[OWN]]], iterator_types = ["parallel", "parallel", "reduction"]} {{.*}} outs({{.*}} : tensor<2x5xi64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.extui
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[OTHER]], #[[OTHER]], #[[OWN]], #[[OWN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %[[RANK]] : {{.*}}) outs({{.*}} : tensor<2x2xf32>, tensor<2x2xi64>)
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @topk(%x: tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>) {
  %k = onnx.Constant() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %v, %i = onnx.TopK(%x, %k) : (tensor<2x5xf32>, tensor<1xi64>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  return %v, %i : tensor<2x2xf32>, tensor<2x2xi64>
}

// -----

// Integer ReduceMax starts from the type's signed minimum and compares signed.
// CHECK-LABEL: func.func @reduce_max_int
// CHECK: arith.constant -2147483648 : i32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxsi
func.func @reduce_max_int(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  %a = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = onnx.ReduceMax(%x, %a) {keepdims = 0 : i64} : (tensor<2x3xi32>, tensor<1xi64>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// LayerNormalization's Mean and InvStdDev outputs are the reduced statistics
// reshaped to keep the normalized dims as 1.
// CHECK-LABEL: func.func @layernorm_stats
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK: arith.divf
// CHECK: %[[INV:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK: math.sqrt
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: %[[M:.*]] = tensor.expand_shape %[[MEAN]] {{.*}} into tensor<2x1xf32>
// CHECK: %[[I:.*]] = tensor.expand_shape %[[INV]] {{.*}} into tensor<2x1xf32>
// CHECK: return %[[Y]], %[[M]], %[[I]]
func.func @layernorm_stats(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %n = onnx.NoValue
  %y, %m, %r = onnx.LayerNormalization(%x, %s, %n) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, none) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y, %m, %r : tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

// GroupNormalization: x viewed as [N, G, C/G, spatial], statistics reduced
// over the last two dims; a per-channel scale is read at g * C/G + c, a
// per-group bias (opset 18) at g.
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 * 2 + d2)>
// CHECK-DAG: #[[GR:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @group_norm
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 2, 2, 3]
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: math.sqrt
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[CH]], #[[GR]], {{.*}}]{{.*}} ins({{.*}}, %arg1, %arg2 :
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 4, 3]
func.func @group_norm(%x: tensor<1x4x3xf32>, %s: tensor<4xf32>, %b: tensor<2xf32>) -> tensor<1x4x3xf32> {
  %0 = onnx.GroupNormalization(%x, %s, %b) {num_groups = 2 : i64} : (tensor<1x4x3xf32>, tensor<4xf32>, tensor<2xf32>) -> tensor<1x4x3xf32>
  return %0 : tensor<1x4x3xf32>
}

// -----

// LRN with an even size 4: squares padded by 1 channel below and 2 above,
// summed over a window dim, then x / (bias + alpha / size * sum)^beta.
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
// CHECK-LABEL: func.func @lrn
// CHECK: tensor.insert_slice {{.*}}[0, 1, 0, 0] [1, 5, 2, 2] [1, 1, 1, 1] : tensor<1x5x2x2xf32> into tensor<1x8x2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[WIN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: math.powf
func.func @lrn(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  %0 = onnx.LRN(%x) {size = 4 : i64, alpha = 0.01 : f32, beta = 0.5 : f32, bias = 2.0 : f32} : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// -----

// A LayerNorm marked as a skip LayerNorm (kiln-fuse-subgraphs) sums the
// residual Add's operands inside its reduction and its centering; the
// Add's own generic is then dead.
// CHECK-LABEL: func.func @skip_layer_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 :
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %{{.*}} :
// CHECK: arith.addf
// CHECK: arith.subf
func.func @skip_layer_norm(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %s: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = onnx.Add(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y, %m, %i = onnx.LayerNormalization(%0, %s, %c) {axis = -1 : i64, epsilon = 1.0e-5 : f32, kiln.skip_layer_norm} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, none, none)
  return %y : tensor<4x8xf32>
}

// -----

// RMSNormalization (as kiln-fuse-subgraphs leaves it): the sum of squares
// over the trailing axis in one reduction, then x * 1/sqrt(mean + eps) *
// scale in one elementwise generic; no mean is subtracted.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @rms_norm
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK: %[[SQ:.*]] = arith.mulf %[[IN:.*]], %[[IN]] : f32
// CHECK: arith.addf %{{.*}}, %[[SQ]] : f32
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK: math.sqrt
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NOT: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: linalg.yield
func.func @rms_norm(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = onnx.RMSNormalization(%x, %g) {axis = -1 : i64, epsilon = 1.0e-06 : f32, kiln.fused} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// LayerNormalization over a dim of run-time size: the count it divides by
// is computed at run time from the dim.
// CHECK-LABEL: func.func @layer_norm_runtime
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %[[D]] : index
// CHECK: %[[I:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: linalg.generic
// CHECK: arith.divf %{{.*}}, %[[F]] : f32
module attributes {kiln.runtime_sizes = {}} {
func.func @layer_norm_runtime(%x: tensor<2x?xf32>, %s: tensor<?xf32>) -> tensor<2x?xf32> {
  %n = onnx.NoValue
  %y, %m, %i = onnx.LayerNormalization(%x, %s, %n) {axis = -1 : i64} : (tensor<2x?xf32>, tensor<?xf32>, none) -> (tensor<2x?xf32>, none, none)
  return %y : tensor<2x?xf32>
}
}
