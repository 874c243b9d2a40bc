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
