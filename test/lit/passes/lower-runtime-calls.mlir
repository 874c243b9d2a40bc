// RUN: kiln-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --kiln-lower-runtime-calls | FileCheck %s

// A tensor read by the runtime passes as its buffer's address; a filled
// tensor is a buffer the call writes in place, passed after the scalars.
// CHECK-LABEL: func.func @read_and_fill
// CHECK-SAME: (%[[X:.*]]: memref<3xf32>, %[[H:.*]]: i64)
// CHECK: %[[XB:[^,]*]], %[[XO:[^,]*]], %{{.*}} = memref.extract_strided_metadata %[[X]]
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[XB]]
// CHECK: %[[XS:.*]] = arith.muli %[[XO]], %c4
// CHECK: %[[XD:.*]] = arith.addi %[[XP]], %[[XS]]
// CHECK: %[[XA:.*]] = arith.index_cast %[[XD]] : index to i64
// CHECK: %[[NEW:.*]] = call @kilnTestPut(%[[H]], %[[XA]]) : (i64, i64) -> i64
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}}: memref<2x2xf32>
// CHECK: memref.extract_strided_metadata %[[OUT]]
// CHECK: %[[OA:.*]] = arith.index_cast %{{.*}} : index to i64
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
// CHECK: memref.extract_strided_metadata %[[D]]
// CHECK: call @kilnTestPut
func.func @strided(%x: tensor<4xf32>, %h: i64) -> i64 {
  %v = tensor.extract_slice %x[0] [2] [2] : tensor<4xf32> to tensor<2xf32>
  %new = kiln.runtime_call @kilnTestPut(%h, %v) : (i64, tensor<2xf32>) -> i64
  return %new : i64
}

// -----

// A view into the arena passes the arena's address plus the view's byte
// shift (MLIR would fold the view's aligned pointer to the arena's).
// CHECK-LABEL: func.func @arena_view
// CHECK: %[[B:[^,]*]], %{{.*}} = memref.extract_strided_metadata %arg0
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: %[[A:.*]] = arith.addi %[[P]], %{{.*}} : index
// CHECK: %[[V:.*]] = arith.addi %[[A]], %c64 : index
// CHECK: %[[I:.*]] = arith.index_cast %[[V]] : index to i64
// CHECK: call @kilnTestGet(%arg1, %[[I]]) : (i64, i64) -> ()
func.func @arena_view(%arena: memref<256xi8>, %h: i64) {
  %c64 = arith.constant 64 : index
  %v = memref.view %arena[%c64][] : memref<256xi8> to memref<4xf32>
  kiln.runtime_call @kilnTestGet(%h) outs(%v : memref<4xf32>) : (i64) -> ()
  return
}
