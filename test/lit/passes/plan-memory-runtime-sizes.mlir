// RUN: kiln-opt %s --split-input-file --kiln-plan-memory | FileCheck %s

// Buffers of run-time size: host ones come from the run's allocator (its
// handle in the arena), device ones from the running session's device
// allocator; each is given back after its last use, and a result's buffer
// is the caller's.
// CHECK-DAG: func.func private @kilnDeviceDynAlloc(i64) -> memref<0xi8>
// CHECK-DAG: func.func private @kilnDeviceDynFree(memref<0xi8>)
// CHECK-DAG: func.func private @kilnDynAlloc(i64, i64) -> memref<0xi8>
// CHECK-LABEL: func.func @device_rows
// CHECK-SAME: (%[[IN:.*]]: memref<0xi8>, %[[OUT:.*]]: memref<0xi8>, %[[ARENA:.*]]: memref<64xi8>)
// CHECK: %[[X:.*]] = memref.view %[[IN]]
// CHECK: %[[SLOT:.*]] = memref.view %[[ARENA]][%c16][]
// CHECK-NEXT: %[[ALLOCATOR:.*]] = memref.load %[[SLOT]]
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK: %[[B1:.*]] = arith.muli %c4{{.*}}, %[[N]]
// CHECK: %[[B2:.*]] = arith.muli %[[B1]], %c300
// CHECK: %[[BYTES:.*]] = arith.index_cast %[[B2]] : index to i64
// CHECK: %[[DP:.*]] = call @kilnDeviceDynAlloc(%[[BYTES]])
// CHECK: %[[D:.*]] = memref.view %[[DP]][%{{.*}}][%[[N]]] : memref<0xi8> to memref<?x300xf32>
// CHECK: gpu.memcpy %[[D]], %[[X]]
// CHECK: %[[HP:.*]] = call @kilnDynAlloc(%[[ALLOCATOR]], %{{.*}})
// CHECK: %[[H:.*]] = memref.view %[[HP]]
// CHECK: gpu.memcpy %[[H]], %[[D]]
// CHECK-NEXT: call @kilnDeviceDynFree(%[[DP]])
// CHECK-NOT: gpu.dealloc
// CHECK: memref.copy %[[H]], %{{.*}}
// CHECK-NEXT: call @kilnDynFree(%[[ALLOCATOR]], %[[HP]])
module attributes {kiln.runtime_sizes = {}} {
func.func @device_rows(%x: memref<?x300xf32>) -> memref<?x300xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x300xf32>
  %d = gpu.alloc (%n) : memref<?x300xf32>
  gpu.memcpy %d, %x : memref<?x300xf32>, memref<?x300xf32>
  %h = memref.alloc(%n) : memref<?x300xf32>
  gpu.memcpy %h, %d : memref<?x300xf32>, memref<?x300xf32>
  %h2 = memref.alloc(%n) : memref<?x300xf32>
  memref.copy %h, %h2 : memref<?x300xf32> to memref<?x300xf32>
  gpu.dealloc %d : memref<?x300xf32>
  return %h2 : memref<?x300xf32>
}
}

// -----

// A parallel loop whose body allocates at run-time size: each thread's
// scratch for the slot, of the size computed at run time (not the run's
// allocator, which threads do not share); the loop stays parallel.
// CHECK-LABEL: func.func @parallel_with_runtime_alloc
// CHECK: scf.for
// CHECK: %[[BYTES:.*]] = arith.muli %c4{{.*}}, %[[DIM:.*]] : index
// CHECK: %[[B64:.*]] = arith.index_cast %[[BYTES]] : index to i64
// CHECK: %[[BASE:.*]] = func.call @kilnThreadScratch(%{{.*}}, %[[B64]])
// CHECK: memref.view %[[BASE]][%{{.*}}][%[[DIM]]] : memref<0xi8> to memref<?xf32>
// CHECK-NOT: kilnDynAlloc
// CHECK: } {kiln.parallel}
// CHECK: return
module attributes {kiln.runtime_sizes = {}} {
func.func @parallel_with_runtime_alloc(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %t : memref<?xf32> to memref<?xf32>
    memref.dealloc %t : memref<?xf32>
  } {kiln.parallel}
  return
}
}
