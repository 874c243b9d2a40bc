// RUN: kiln-opt %s --split-input-file --kiln-outline-loops | FileCheck %s

// Each top-level loop nest becomes a private noinline function: buffers
// are its arguments, the constants it uses (loop bounds) are cloned in,
// and a loop result is the function's result.
// CHECK-LABEL: func.func @main
// CHECK: call @main_loop0(%arg0, %arg1) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK: %[[S:.*]] = call @main_loop1(%arg1) : (memref<8xf32>) -> f32
// CHECK: return %[[S]]
// CHECK: func.func private @main_loop0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>) attributes {kiln.outlined, passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 8 : index
// CHECK: scf.for
// CHECK: func.func private @main_loop1(%{{.*}}: memref<8xf32>) -> f32
// CHECK: scf.for {{.*}} iter_args
func.func @main(%a: memref<8xf32>, %b: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (f32) {
    %x = memref.load %b[%i] : memref<8xf32>
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  return %s : f32
}

// -----

// A nest that reads a strided view stays: the bare-pointer calling
// convention cannot pass it.
// CHECK-LABEL: func.func @strided
// CHECK: scf.for
// CHECK-NOT: call
func.func @strided(%a: memref<8xf32, strided<[2]>>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32, strided<[2]>>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  return
}

// -----

// A buffer of run-time size travels as a one-element view of its pointer
// and its dynamic sizes; the function rebuilds the row-major view (the
// stride of dim 0 is the run-time size of dim 1).
// CHECK-LABEL: func.func @runtime_sizes
// CHECK: %[[P:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [1], strides: [1] : memref<?x?xf32> to memref<1xf32>
// CHECK: %[[D0:.*]] = memref.dim %arg0, %c0
// CHECK: %[[D1:.*]] = memref.dim %arg0, %c1
// CHECK: %[[Q:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [1], strides: [1] : memref<?x4xf32> to memref<1xf32>
// CHECK: %[[E0:.*]] = memref.dim %arg1, %c0
// CHECK: call @runtime_sizes_loop0(%{{.*}}, %[[P]], %[[D0]], %[[D1]], %[[Q]], %[[E0]]) : (index, memref<1xf32>, index, index, memref<1xf32>, index) -> ()
// CHECK: func.func private @runtime_sizes_loop0(%{{.*}}: index, %[[A:.*]]: memref<1xf32>, %[[S0:.*]]: index, %[[S1:.*]]: index, %[[B:.*]]: memref<1xf32>, %[[T0:.*]]: index)
// CHECK: memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%[[S0]], %[[S1]]], strides: [%[[S1]], 1] : memref<1xf32> to memref<?x?xf32>
// CHECK: memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[T0]], 4], strides: [4, 1] : memref<1xf32> to memref<?x4xf32>
// CHECK: scf.for
func.func @runtime_sizes(%a: memref<?x?xf32>, %b: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i, %c0] : memref<?x?xf32>
    memref.store %x, %b[%i, %c1] : memref<?x4xf32>
  }
  return
}

// -----

// A parallel loop (kiln.parallel) becomes a task function over a range of
// its iterations: called once over all of them, (0, trip count), it runs
// iterations lo..hi at lb + t * step; Emit turns the call into
// kilnParallelFor (the function's "kiln-parallel-task" attribute).
// CHECK-LABEL: func.func @parallel
// CHECK: %[[N:.*]] = arith.divui
// CHECK: call @parallel_loop0(%c0{{.*}}, %[[N]], %arg0, %arg1) : (index, index, memref<64xf32>, memref<64xf32>) -> ()
// CHECK: func.func private @parallel_loop0(%[[LO:.*]]: index, %[[HI:.*]]: index, %[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>) attributes {kiln.outlined, passthrough = ["noinline", ["kiln-parallel-task", "1"]]}
// CHECK: scf.for %[[T:.*]] = %[[LO]] to %[[HI]] step %c1
// CHECK: %[[OFF:.*]] = arith.muli %[[T]], %c16
// CHECK: %[[IV:.*]] = arith.addi %c0{{.*}}, %[[OFF]]
// CHECK: memref.subview %[[A]][%[[IV]]] [16] [1]
func.func @parallel(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c16 {
    %sa = memref.subview %a[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    %sb = memref.subview %b[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.copy %sa, %sb : memref<16xf32, strided<[1], offset: ?>> to memref<16xf32, strided<[1], offset: ?>>
  } {kiln.parallel}
  return
}

// -----

// A mask made above a parallel loop (vector.constant_mask: no function
// could take its vector<32xi1>) is cloned into the task function like a
// constant; the loop still becomes a task (before, it stayed a plain loop
// in the caller, on one thread).
// CHECK-LABEL: func.func @mask_above
// CHECK: call @mask_above_loop0
// CHECK: func.func private @mask_above_loop0({{.*}}) attributes {kiln.outlined, passthrough = ["noinline", ["kiln-parallel-task", "1"]]}
// CHECK: vector.constant_mask [31] : vector<32xi1>
// CHECK: vector.maskedload
func.func @mask_above(%a: memref<4x32xf32>, %b: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant dense<0.0> : vector<32xf32>
  %m = vector.constant_mask [31] : vector<32xi1>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = vector.maskedload %a[%i, %c0], %m, %z : memref<4x32xf32>, vector<32xi1>, vector<32xf32> into vector<32xf32>
    vector.store %v, %b[%i, %c0] : memref<4x32xf32>, vector<32xf32>
  } {kiln.parallel = 1 : i64}
  return
}

// -----

// A vector built above a parallel loop from constants (a 14-row matmul
// tile's start, a vector.insert per row) is rebuilt in the task function
// as views are; the loop still becomes a task (before, it stayed a plain
// loop in the caller: bert_tiny_fp16's FFN row blocks ran on one thread).
// CHECK-LABEL: func.func @vector_above
// CHECK: call @vector_above_loop0
// CHECK: func.func private @vector_above_loop0({{.*}}) attributes {kiln.outlined, passthrough = ["noinline", ["kiln-parallel-task", "1"]]}
// CHECK: %[[T0:.*]] = vector.insert %{{.*}}, %{{.*}} [0] : vector<32xf32> into vector<2x32xf32>
// CHECK: %[[T1:.*]] = vector.insert %{{.*}}, %[[T0]] [1] : vector<32xf32> into vector<2x32xf32>
// CHECK: scf.for
// CHECK: vector.extract %[[T1]][1]
func.func @vector_above(%b: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %row = arith.constant dense<1.0> : vector<32xf32>
  %u = arith.constant dense<0.0> : vector<2x32xf32>
  %t0 = vector.insert %row, %u [0] : vector<32xf32> into vector<2x32xf32>
  %t1 = vector.insert %row, %t0 [1] : vector<32xf32> into vector<2x32xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = vector.extract %t1[1] : vector<32xf32> from vector<2x32xf32>
    vector.store %v, %b[%i, %c0] : memref<4x32xf32>, vector<32xf32>
  } {kiln.parallel = 1 : i64}
  return
}
