// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// MatMul: one generic over m, n and k (k the one reduction, in whichever
// loop order the lowering picks), on a zero-filled init; A is indexed
// (m, k), B (k, n), the output (m, n).
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d[[K:[12]]])>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d[[K]], d[[N:[12]]])>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2) -> (d0, d[[N]])>
// CHECK-LABEL: func.func @matmul
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[O]]], iterator_types = ["parallel", "{{parallel|reduction}}", "{{parallel|reduction}}"]}
// CHECK-SAME: outs(%[[Z]] : tensor<2x3xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NOT: onnx.
func.func @matmul(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %0 = onnx.MatMul(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Batched MatMul: a broadcast batch dimension of size 1 reads index 0.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d[[K:[34]]])>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d[[K]], d[[N:[34]]])>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d[[N]])>
// CHECK-LABEL: func.func @matmul_batch
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "{{parallel|reduction}}", "{{parallel|reduction}}"]}
func.func @matmul_batch(%a: tensor<5x1x2x3xf32>, %b: tensor<4x3x6xf32>) -> tensor<5x4x2x6xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<5x1x2x3xf32>, tensor<4x3x6xf32>) -> tensor<5x4x2x6xf32>
  return %0 : tensor<5x4x2x6xf32>
}

// -----

// Gemm with transB, alpha and beta: the init is beta * C broadcast along
// rows; B is read transposed; the product is scaled by alpha.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d[[K:[12]]])>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d[[N:[12]]], d[[K]])>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2) -> (d0, d[[N]])>
// CHECK-LABEL: func.func @gemm
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ID2]]]{{.*}} ins(%{{.*}} : tensor<5xf32>)
// CHECK: arith.constant 5.000000e-01
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[BT]], #[[O]]], iterator_types = ["parallel", "{{parallel|reduction}}", "{{parallel|reduction}}"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<4x5xf32>)
// CHECK: arith.constant 2.000000e+00
func.func @gemm(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>, %c: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = onnx.Gemm(%a, %b, %c) {transB = 1 : i64, alpha = 2.0 : f32, beta = 0.5 : f32} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Conv: the input is zero-padded by insert_slice (only as much as the
// windows need), the init holds the bias per output channel, and the
// window map carries the strides.
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d[[C:[0-9]]], d[[OH:[0-9]]] * 2 + d[[KH:[0-9]]], d[[OW:[0-9]]] * 2 + d[[KW:[0-9]]])>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d[[C]], d[[KH]], d[[KW]])>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d[[OH]], d[[OW]])>
// CHECK-LABEL: func.func @conv
// CHECK: %[[PAD:.*]] = tensor.insert_slice %arg0 into %{{.*}}[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<1x3x8x8xf32> into tensor<1x3x9x9xf32>
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[BIAS]], {{.*}}]{{.*}} ins(%arg2 : tensor<4xf32>)
// Three reductions (c, kh, kw), four parallel loops, in any order.
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[O]]], iterator_types = ["{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}"]}
// CHECK-SAME: ins(%[[PAD]], %arg1 : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x4x4xf32>)
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = onnx.Conv(%x, %w, %b) {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// A Conv of run-time size: per image and block of output rows, the
// patches of the block's rows gathered from a slice of the padded input,
// then one GEMM accumulating into the block's columns of the image's
// [m, oh * ow] output and the fused Relu in place; the rows per block are
// computed at run time (at least 192 columns). Threads take images and
// blocks (kiln.parallel).
// CHECK-LABEL: func.func @conv_runtime
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<4xf32>) outs(%{{.*}} : tensor<?x4x?xf32>)
// CHECK: %[[IMAGES:.*]] = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC2:.*]] = %[[ACC]])
// CHECK: %[[XS:.*]] = tensor.extract_slice %{{.*}}[%[[N]], 0, %{{.*}}, 0] [1, 3, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<?x3x?x?xf32> to tensor<3x?x?xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[XS]] : tensor<3x?x?xf32>) outs(%{{.*}} : tensor<3x3x3x?x?xf32>)
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1, 2], [3, 4]] : tensor<3x3x3x?x?xf32> into tensor<27x?xf32>
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[ACC2]][%[[N]], 0, %{{.*}}] [1, 4, %{{.*}}] [1, 1, 1] : tensor<?x4x?xf32> to tensor<4x?xf32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[COLS]] : tensor<4x27xf32>, tensor<27x?xf32>) outs(%[[BLOCK]] : tensor<4x?xf32>)
// CHECK: %[[RELU:.*]] = linalg.generic {{.*}} outs(%[[G]] : tensor<4x?xf32>)
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: tensor.insert_slice %[[RELU]] into %[[ACC2]][%[[N]], 0, %{{.*}}] [1, 4, %{{.*}}] [1, 1, 1]
// CHECK: } {kiln.parallel = 1 : i64}
// CHECK: } {kiln.parallel = 1 : i64}
// CHECK: tensor.reshape %[[IMAGES]](%{{.*}}) : (tensor<?x4x?xf32>, tensor<4xi64>) -> tensor<?x4x?x?xf32>
// CHECK-NOT: linalg.transpose
module attributes {kiln.runtime_sizes = {}} {
func.func @conv_runtime(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x?x?xf32> {
  %0 = onnx.Conv(%x, %w, %b) {pads = [1, 1, 1, 1], strides = [2, 2], kiln.activation = "Relu"} : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}
}

// -----

// A 1x1 stride-1 Conv of run-time size reads the block's input rows as
// they lie: the slice, collapsed, is the GEMM's patch matrix (no gather).
// CHECK-LABEL: func.func @conv1x1_runtime
// CHECK: %[[XS:.*]] = tensor.extract_slice %arg0[%{{.*}}, 0, %{{.*}}, 0] [1, 8, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<?x8x?x?xf32> to tensor<8x?x?xf32>
// CHECK-NEXT: %[[COLS:.*]] = tensor.collapse_shape %[[XS]] {{\[\[}}0], [1, 2]] : tensor<8x?x?xf32> into tensor<8x?xf32>
// CHECK-NEXT: tensor.extract_slice
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}}, %[[COLS]] : tensor<16x8xf32>, tensor<8x?xf32>)
module attributes {kiln.runtime_sizes = {}} {
func.func @conv1x1_runtime(%x: tensor<?x8x?x?xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<?x16x?x?xf32> {
  %none = onnx.NoValue
  %0 = onnx.Conv(%x, %w, %none) : (tensor<?x8x?x?xf32>, tensor<16x8x1x1xf32>, none) -> tensor<?x16x?x?xf32>
  return %0 : tensor<?x16x?x?xf32>
}
}

// -----

// Only the batch of run-time size, on an AVX-512 target (kiln.vector_bits),
// 32 output channels, constant weights: the conv's seven loops as for
// static shapes, over the run-time images (kiln-cpu-vectorize-contractions
// runs it as direct tiles), with the fused Relu after it.
// CHECK-LABEL: func.func @conv_runtime_batch_avx512
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}}iterator_types = ["{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}", "{{parallel|reduction}}"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x8x10x10xf32>, tensor<32x8x3x3xf32>) outs(%{{.*}} : tensor<?x32x8x8xf32>)
// CHECK: arith.cmpf olt
// CHECK: arith.select
module attributes {kiln.runtime_sizes = {}, kiln.vector_bits = 512 : i64} {
func.func @conv_runtime_batch_avx512(%x: tensor<?x8x8x8xf32>, %b: tensor<32xf32>) -> tensor<?x32x8x8xf32> {
  %w = onnx.Constant() {value = dense<0.5> : tensor<32x8x3x3xf32>} : () -> tensor<32x8x3x3xf32>
  %0 = onnx.Conv(%x, %w, %b) {pads = [1, 1, 1, 1], kiln.activation = "Relu"} : (tensor<?x8x8x8xf32>, tensor<32x8x3x3xf32>, tensor<32xf32>) -> tensor<?x32x8x8xf32>
  return %0 : tensor<?x32x8x8xf32>
}
}

// -----

// Weights known only at run time (a graph input) keep the GEMMs on
// AVX-512 too: the direct tiles read weights packed at compile time.
// CHECK-LABEL: func.func @conv_runtime_batch_runtime_weights
// CHECK: scf.for
// CHECK: tensor.collapse_shape %{{.*}} : tensor<8x3x3x?x?xf32> into tensor<72x?xf32>
module attributes {kiln.runtime_sizes = {}, kiln.vector_bits = 512 : i64} {
func.func @conv_runtime_batch_runtime_weights(%x: tensor<?x8x8x8xf32>, %w: tensor<32x8x3x3xf32>, %b: tensor<32xf32>) -> tensor<?x32x8x8xf32> {
  %0 = onnx.Conv(%x, %w, %b) {pads = [1, 1, 1, 1], kiln.activation = "Relu"} : (tensor<?x8x8x8xf32>, tensor<32x8x3x3xf32>, tensor<32xf32>) -> tensor<?x32x8x8xf32>
  return %0 : tensor<?x32x8x8xf32>
}
}

// -----

// The same conv for AVX2 (or no target width known): GEMMs per image and
// block of output rows.
// CHECK-LABEL: func.func @conv_runtime_batch_avx2
// CHECK: scf.for
// CHECK: tensor.collapse_shape %{{.*}} : tensor<8x3x3x?x?xf32> into tensor<72x?xf32>
module attributes {kiln.runtime_sizes = {}, kiln.vector_bits = 256 : i64} {
func.func @conv_runtime_batch_avx2(%x: tensor<?x8x8x8xf32>, %w: tensor<32x8x3x3xf32>, %b: tensor<32xf32>) -> tensor<?x32x8x8xf32> {
  %0 = onnx.Conv(%x, %w, %b) {pads = [1, 1, 1, 1], kiln.activation = "Relu"} : (tensor<?x8x8x8xf32>, tensor<32x8x3x3xf32>, tensor<32xf32>) -> tensor<?x32x8x8xf32>
  return %0 : tensor<?x32x8x8xf32>
}
}
