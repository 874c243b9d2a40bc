// RUN: kiln-opt %s --split-input-file --kiln-flatten-constants | FileCheck %s

// A 2x3 constant becomes a 6-element global; its reader sees the original
// type through an expand_shape. 1-D and mutable globals stay as they are.
// CHECK-DAG: memref.global "private" constant @w : memref<6xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]> {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" constant @v : memref<3xf32>
// CHECK-DAG: memref.global "private" @state : memref<2x2xf32>
// CHECK-LABEL: func.func @reads
// CHECK: %[[F:.*]] = memref.get_global @w : memref<6xf32>
// CHECK: %[[W:.*]] = memref.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [2, 3] : memref<6xf32> into memref<2x3xf32>
// CHECK: memref.get_global @v : memref<3xf32>
// CHECK: memref.get_global @state : memref<2x2xf32>
// CHECK: return %[[W]]
memref.global "private" constant @w : memref<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> {alignment = 64 : i64}
memref.global "private" constant @v : memref<3xf32> = dense<[1.0, 2.0, 3.0]>
memref.global "private" @state : memref<2x2xf32> = dense<0.0>
func.func @reads() -> (memref<2x3xf32>, memref<3xf32>, memref<2x2xf32>) {
  %0 = memref.get_global @w : memref<2x3xf32>
  %1 = memref.get_global @v : memref<3xf32>
  %2 = memref.get_global @state : memref<2x2xf32>
  return %0, %1, %2 : memref<2x3xf32>, memref<3xf32>, memref<2x2xf32>
}
