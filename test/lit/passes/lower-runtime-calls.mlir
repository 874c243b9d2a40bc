// RUN: kiln-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --kiln-lower-runtime-calls | FileCheck %s

// A tensor read by the runtime passes as its buffer's address; a filled
// tensor is a buffer the call writes in place, passed after the scalars.
// CHECK-LABEL: func.func @read_and_fill
// CHECK-SAME: (%[[X:.*]]: memref<3xf32>, %[[H:.*]]: i64)
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[XA:.*]] = arith.index_cast %[[XP]] : index to i64
// CHECK: %[[NEW:.*]] = call @kilnTestPut(%[[H]], %[[XA]]) : (i64, i64) -> i64
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}}: memref<2x2xf32>
// CHECK: %[[OP:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[OA:.*]] = arith.index_cast %[[OP]] : index to i64
// CHECK: call @kilnTestGet(%[[NEW]], %[[OA]]) : (i64, i64) -> ()
// CHECK: return %[[OUT]]
// CHECK-DAG: func.func private @kilnTestPut(i64, i64) -> i64
// CHECK-DAG: func.func private @kilnTestGet(i64, i64)
func.func @read_and_fill(%x: tensor<3xf32>, %h: i64) -> tensor<2x2xf32> {
  %new = kiln.runtime_call @kilnTestPut(%h, %x) : (i64, tensor<3xf32>) -> i64
  %init = tensor.empty() : tensor<2x2xf32>
  %t = kiln.runtime_call @kilnTestGet(%new) outs(%init : tensor<2x2xf32>) : (i64) -> tensor<2x2xf32>
  return %t : tensor<2x2xf32>
}

// -----

// A strided view is copied to a dense buffer before the runtime reads it.
// CHECK-LABEL: func.func @strided
// CHECK: %[[V:.*]] = memref.subview
// CHECK: %[[D:.*]] = memref.alloc() : memref<2xf32>
// CHECK: memref.copy %[[V]], %[[D]]
// CHECK: memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: call @kilnTestPut
func.func @strided(%x: tensor<4xf32>, %h: i64) -> i64 {
  %v = tensor.extract_slice %x[0] [2] [2] : tensor<4xf32> to tensor<2xf32>
  %new = kiln.runtime_call @kilnTestPut(%h, %v) : (i64, tensor<2xf32>) -> i64
  return %new : i64
}
