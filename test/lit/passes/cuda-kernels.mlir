// RUN: kiln-opt %s --split-input-file --kiln-partition="providers=cuda,cpu min-device-elements=0" --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload | FileCheck %s

// A MatMul: 64x64 output tiles of 16x16 threads (4x4 outputs each), both
// operands staged through shared memory 16 steps at a time, barriers
// around each use of the tiles.
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.*}} = %c16{{.*}}, %{{.*}} = %c16{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%[[A:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>) private(%[[ACC:.*]] : memref<4x4xf32, #gpu.address_space<private>>)
// CHECK: scf.for
// CHECK-COUNT-4: memref.store %{{.*}}, %[[A]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} iter_args
// CHECK-COUNT-4: memref.load %[[A]]
// CHECK-COUNT-16: arith.mulf
// CHECK: gpu.barrier
// CHECK: memref.load %[[ACC]]
// CHECK: gpu.terminator
func.func @matmul(%a: tensor<100x96xf32>, %b: tensor<96x80xf32>) -> tensor<100x80xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<100x96xf32>, tensor<96x80xf32>) -> tensor<100x80xf32>
  return %0 : tensor<100x80xf32>
}

// -----

// A Conv is an implicit GEMM: rows are (n, oh, ow), columns the output
// channels, the reduction (c, kh, kw); the input tile is read through the
// Conv's own indexing (oh + kh).
// CHECK-LABEL: func.func @conv
// CHECK: gpu.launch {{.*}} private(%{{.*}} : memref<4x4xf32, #gpu.address_space<private>>)
// CHECK: affine.apply
// CHECK: gpu.barrier
func.func @conv(%x: tensor<1x16x20x20xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x18x18xf32> {
  %none = onnx.NoValue
  %0 = onnx.Conv(%x, %w, %none) {kernel_shape = [3, 3]} : (tensor<1x16x20x20xf32>, tensor<32x16x3x3xf32>, none) -> tensor<1x32x18x18xf32>
  return %0 : tensor<1x32x18x18xf32>
}

// -----

// Softmax's max and sum: one block per row, 256 threads with strided
// partial results, then a tree in shared memory (8 halvings, a barrier
// after each); thread 0 combines with the initial value.
// CHECK-LABEL: func.func @softmax
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}) workgroup(%[[P:.*]] : memref<256x1xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK-COUNT-8: gpu.barrier
// CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<256x1xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.addf
func.func @softmax(%x: tensor<4x300xf32>) -> tensor<4x300xf32> {
  %0 = onnx.Softmax(%x) {axis = -1 : i64} : (tensor<4x300xf32>) -> tensor<4x300xf32>
  return %0 : tensor<4x300xf32>
}

// -----

// A matrix-vector product has one row: too few for a tile, so each output
// is a parallel reduction over the 300 products. With the weights [N, K]
// (nn.Linear's layout: k innermost), 256 threads reduce each output; with
// [K, N], a block takes 32 adjacent outputs (a warp reads adjacent
// weights), 8 threads each, the tree along the 8.
// CHECK-LABEL: func.func @gemv
// CHECK-NOT: private(
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256{{.*}}) workgroup(%{{.*}} : memref<256x1xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-LABEL: func.func @gemv_k_outer
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c8{{.*}}, {{.*}}) workgroup(%{{.*}} : memref<8x32xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.minui
// CHECK-COUNT-3: gpu.barrier
// CHECK: return
func.func @gemv(%a: tensor<1x300xf32>, %b: tensor<64x300xf32>) -> tensor<1x64xf32> {
  %none = onnx.NoValue
  %0 = onnx.Gemm(%a, %b, %none) {transB = 1 : i64} : (tensor<1x300xf32>, tensor<64x300xf32>, none) -> tensor<1x64xf32>
  return %0 : tensor<1x64xf32>
}
func.func @gemv_k_outer(%a: tensor<1x300xf32>, %b: tensor<300x64xf32>) -> tensor<1x64xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<1x300xf32>, tensor<300x64xf32>) -> tensor<1x64xf32>
  return %0 : tensor<1x64xf32>
}

// -----

// Negative: an 8x8x8 MatMul is too small for either kernel and stays one
// thread per output element.
// CHECK-LABEL: func.func @small
// CHECK-NOT: gpu.launch
// CHECK: scf.parallel
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @small(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// A short full reduction has no parallel dimension: one thread runs it.
// CHECK-LABEL: func.func @scalar
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}}) step (%c1{{.*}})
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: kiln.device_loop
func.func @scalar(%x: tensor<8xf32>) -> tensor<f32> {
  %none = onnx.NoValue
  %0 = onnx.ReduceSum(%x, %none) {keepdims = 0 : i64} : (tensor<8xf32>, none) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// The copy into the Conv's padded input (a memref.copy after bufferization)
// runs on the device: Relu, pad and Conv never leave it; x and w cross in
// and the result crosses out, nothing else.
// CHECK-LABEL: func.func @padded_conv
// CHECK-NOT: memref.copy
// CHECK: gpu.memcpy {{.*}}, %arg0
// CHECK-NOT: memref.copy
// CHECK: gpu.memcpy {{.*}}, %arg1
// CHECK-NOT: memref.copy
// CHECK: gpu.memcpy %[[OUT:[a-z0-9_]+]], %
// CHECK-NOT: memref.copy
// CHECK: return %[[OUT]]
func.func @padded_conv(%x: tensor<1x4x30x30xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x30x30xf32> {
  %0 = onnx.Relu(%x) : (tensor<1x4x30x30xf32>) -> tensor<1x4x30x30xf32>
  %none = onnx.NoValue
  %1 = onnx.Conv(%0, %w, %none) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x4x30x30xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x30x30xf32>
  return %1 : tensor<1x8x30x30xf32>
}

// -----

// Rows known only at run time: the grid's y (64-row tiles) is computed on
// the host before the launch, and the kernel bounds its rows by the same
// size.
// CHECK-LABEL: func.func @matmul_runtime_rows
// CHECK: %[[M:.*]] = memref.dim %memref_{{[0-9]+}}, %{{.*}} : memref<?x96xf32>
// CHECK: %[[UP:.*]] = arith.addi %[[M]], %c63
// CHECK: %[[GY:.*]] = arith.divui %[[UP]], %c64
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, %{{.*}} = %[[GY]], %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c16{{.*}}, %{{.*}} = %c16{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK: arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK: gpu.terminator
module attributes {kiln.runtime_sizes = {}} {
func.func @matmul_runtime_rows(%a: tensor<?x96xf32>, %b: tensor<96x80xf32>) -> tensor<?x80xf32> {
  %0 = onnx.MatMul(%a, %b) : (tensor<?x96xf32>, tensor<96x80xf32>) -> tensor<?x80xf32>
  return %0 : tensor<?x80xf32>
}
}

// -----

// A reduction whose length is known only at run time gets 256 lanes; a lane
// past the end loads nothing, the tree combines only lanes that hold a
// partial, and over no steps the output keeps its initial value.
// CHECK-LABEL: func.func @sum_runtime_steps
// CHECK: %[[N:.*]] = memref.dim %memref, %{{.*}} : memref<4x?xf32>
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[LANE:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) workgroup(%{{.*}} : memref<256x1xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[HAS:.*]] = arith.cmpi ult, %[[LANE]], %[[N]]
// CHECK: scf.if %[[HAS]] -> (f32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step %c256
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %[[LANE]], %c128
// CHECK: %[[OTHER:.*]] = arith.addi %[[LANE]], %c128
// CHECK: arith.cmpi ult, %[[OTHER]], %[[N]]
// CHECK: arith.cmpi ult, %c0{{.*}}, %[[N]]
// CHECK: gpu.terminator
module attributes {kiln.runtime_sizes = {}} {
func.func @sum_runtime_steps(%x: tensor<4x?xf32>) -> tensor<4x1xf32> {
  %axes = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = onnx.ReduceSum(%x, %axes) : (tensor<4x?xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}
}
