// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// MaxPool: a max reduction over the window loops, from -inf.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d[[OH:[0-9]]] * 2 + d[[KH:[0-9]]], d[[OW:[0-9]]] * 2 + d[[KW:[0-9]]])>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d[[KH]], d[[KW]])>
// CHECK-LABEL: func.func @maxpool
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[K]], #{{.*}}], iterator_types = ["{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}"]}
// CHECK-SAME: ins(%arg0, %[[WIN]] : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<1x2x2x2xf32>)
// CHECK: arith.maximumf
func.func @maxpool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %0, %i = onnx.MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, none)
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// AveragePool with pads: a sum, then a multiply by the reciprocal tap
// count of each output position (pads excluded): 4 taps in the corners,
// 6 on the edges, 9 in the middle.
// CHECK-LABEL: func.func @avgpool
// CHECK: tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [1, 1, 3, 3] [1, 1, 1, 1] : tensor<1x1x3x3xf32> into tensor<1x1x5x5xf32>
// CHECK: linalg.generic {{.*}}iterator_types = [{{[^]]*}}"reduction"{{[^]]*}}]
// CHECK: arith.addf
// CHECK: arith.constant dense<{{\[\[}}2.500000e-01, 0.166666672, 2.500000e-01], [0.166666672, 0.111111112, 0.166666672], [2.500000e-01, 0.166666672, 2.500000e-01]]> : tensor<3x3xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: arith.mulf
func.func @avgpool(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %0 = onnx.AveragePool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// count_include_pad divides by the full window everywhere.
// CHECK-LABEL: func.func @avgpool_include_pad
// CHECK: arith.constant dense<0.111111112> : tensor<3x3xf32>
func.func @avgpool_include_pad(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %0 = onnx.AveragePool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], count_include_pad = 1 : i64} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// GlobalAveragePool: reduce the spatial dims, scale by 1/16, reshape to NCx1x1.
// CHECK-LABEL: func.func @gap
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<1x2xf32>)
// CHECK: arith.constant 6.250000e-02 : f32
// CHECK: tensor.expand_shape {{.*}} into tensor<1x2x1x1xf32>
func.func @gap(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
  %0 = onnx.GlobalAveragePool(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// -----

// MaxPool's indices: one generic carries (max, flat input index), the
// index taken where a strictly greater value arrives.
// CHECK-LABEL: func.func @maxpool_indices
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.index
// CHECK: arith.select
// CHECK: arith.select
func.func @maxpool_indices(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  %0:2 = onnx.MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %0#0, %0#1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}

// -----

// Integer MaxPool pads with the type's minimum and takes a signed max.
// CHECK-LABEL: func.func @maxpool_int8
// CHECK: arith.maxsi
func.func @maxpool_int8(%x: tensor<1x1x4x4xi8>) -> tensor<1x1x2x2xi8> {
  %0:2 = onnx.MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x1x4x4xi8>) -> (tensor<1x1x2x2xi8>, none)
  return %0#0 : tensor<1x1x2x2xi8>
}
