// RUN: kiln-opt %s -split-input-file --kiln-plan-memory | FileCheck %s

// A profiled kernel becomes calls of kilnProfileBegin/End under one branch
// each on the context the function reads once from the arena's bytes 8-15;
// buffers start after the 64-byte header. A pair around a view only (a
// Reshape) is dropped.
// CHECK: module attributes {kiln.arena_size = 128 : i64
// CHECK-SAME: kiln.profile_hooks
// CHECK-DAG: func.func private @kilnProfileBegin(i64, i64)
// CHECK-DAG: func.func private @kilnProfileEnd(i64, i64)
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[ARENA:[^:]*]]: memref<128xi8>)
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK: %[[SLOT:.*]] = memref.view %[[ARENA]][%[[EIGHT]]][] : memref<128xi8> to memref<1xi64>
// CHECK: %[[CTX:.*]] = memref.load %[[SLOT]]
// CHECK: %[[ON:.*]] = arith.cmpi ne, %[[CTX]]
// CHECK: arith.constant 64 : index
// CHECK: scf.if %[[ON]] {
// CHECK:   func.call @kilnProfileBegin(%[[CTX]], %{{.*}}) : (i64, i64) -> ()
// CHECK: linalg.copy
// CHECK: scf.if %[[ON]] {
// CHECK:   func.call @kilnProfileEnd(%[[CTX]], %{{.*}}) : (i64, i64) -> ()
// CHECK-NOT: kilnProfile
// CHECK-NOT: kiln.profile
// CHECK: return
func.func @main(%in: memref<16xf32>) -> memref<4x4xf32> {
  %a = memref.alloc() : memref<16xf32>
  kiln.profile_begin "copy\1fIdentity\1fcpu\1f"
  linalg.copy ins(%in : memref<16xf32>) outs(%a : memref<16xf32>)
  kiln.profile_end "copy\1fIdentity\1fcpu\1f"
  kiln.profile_begin "r\1fReshape\1fcpu\1f"
  %r = memref.expand_shape %a [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  kiln.profile_end "r\1fReshape\1fcpu\1f"
  return %r : memref<4x4xf32>
}
