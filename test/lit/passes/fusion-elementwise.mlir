// RUN: kiln-opt %s -split-input-file --kiln-lower-partitions --kiln-fuse-elementwise | FileCheck %s
// A chain of 600 Relus (a compare and a select each) fuses into five
// generics of at most 256 body ops (unbounded, each fusion would copy a
// body of up to 1200: quadratic).
// RUN: %python %inputs/make_chain_mlir.py 600 | kiln-opt --kiln-lower-partitions --kiln-fuse-elementwise | FileCheck %s --check-prefix=LONG
// LONG: kiln.report.fuse_elementwise = 595
// LONG-COUNT-5: linalg.generic
// LONG-NOT: linalg.generic

// A chain of elementwise ops becomes one generic; the MatMul's epilogue
// (its Relu) merges with the Add and Sigmoid after it, while the
// contraction itself stays a separate (reduction) generic.
// CHECK: kiln.report.fuse_elementwise = 2 : i64
// CHECK-LABEL: func.func @chain
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}"reduction"
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[MM]], %arg2 : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.addf
// CHECK: math.exp
// CHECK: return %[[F]]
func.func @chain(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %r: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<2x3xf32> {
    %1 = onnx.MatMul(%a, %b) {kiln.activation = "Relu", kiln.activation_params = []} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %2 = onnx.Add(%1, %r) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %3 = onnx.Sigmoid(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    kiln.yield %3 : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

// Negative: a producer with two consumers is not duplicated into them, and
// a producer read through a broadcast map is not recomputed per element.
// CHECK-NOT: kiln.report.fuse_elementwise
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]] :
// CHECK: linalg.generic {{.*}} ins(%arg1, %[[E]] :
func.func @shared(%x: tensor<4xf32>, %y: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>) {
  %0:2 = kiln.partition "cpu_0" provider("cpu") -> tensor<4xf32>, tensor<3x4xf32> {
    %1 = onnx.Exp(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = onnx.Neg(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = onnx.Add(%y, %1) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
    kiln.yield %2, %3 : tensor<4xf32>, tensor<3x4xf32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<3x4xf32>
}

// -----

// Negative: a nearest 2x upsampling (a copy through floordiv maps on the
// innermost dim) stays apart from the Add that reads it: fused, the Add
// would load it an element at a time; apart, the copy runs as shuffled
// rows and the Add on whole vectors.
// CHECK-NOT: kiln.report.fuse_elementwise
// CHECK-LABEL: func.func @upsample_add
// CHECK: %[[UP:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}]
// CHECK-SAME: ins(%arg1 : tensor<1x2x4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[UP]] : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>)
// CHECK: arith.addf
func.func @upsample_add(%a: tensor<1x2x8x8xf32>, %x: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<1x2x8x8xf32> {
    %n = onnx.NoValue
    %s = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %u = onnx.Resize(%x, %n, %s, %n) {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x2x4x4xf32>, none, tensor<4xf32>, none) -> tensor<1x2x8x8xf32>
    %1 = onnx.Add(%a, %u) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
    kiln.yield %1 : tensor<1x2x8x8xf32>
  }
  return %0 : tensor<1x2x8x8xf32>
}

// -----

// Two contractions' chains joined by an Add: only the later MatMul can run
// the join in its store, so the earlier chain's narrowing op (a cast to
// f16, as a requantization to 8 bits) stays its own generic, and the join
// reads its f16 result instead of the earlier f32 sums; the later chain
// fuses whole.
// CHECK: kiln.report.fuse_elementwise = 3 : i64
// CHECK-LABEL: func.func @narrow_join
// CHECK: %[[EARLY:.*]] = linalg.generic {{.*}}"reduction"
// CHECK: %[[NARROW:.*]] = linalg.generic {{.*}} ins(%[[EARLY]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK: %[[LATER:.*]] = linalg.generic {{.*}}"reduction"
// CHECK: linalg.generic {{.*}} ins(%[[LATER]], %[[NARROW]] : tensor<2x3xf32>, tensor<2x3xf16>)
// CHECK: arith.truncf
// CHECK: arith.addf
func.func @narrow_join(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<2x3xf32> {
    %1 = onnx.MatMul(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %2 = onnx.Cast(%1) {to = 10 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
    %3 = onnx.Cast(%2) {to = 1 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf32>
    %4 = onnx.MatMul(%a, %c) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    %5 = onnx.Cast(%4) {to = 10 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
    %6 = onnx.Cast(%5) {to = 1 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf32>
    %7 = onnx.Add(%6, %3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    kiln.yield %7 : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}
