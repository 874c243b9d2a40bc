// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-parallel-loops))' | FileCheck %s

// A large transpose: one iteration of its outer loop per tile; it only
// moves data, so threads take at least 16384 / 256 = 64 rows each (what
// another core wrote costs more to read than a dispatch).
// CHECK-LABEL: func.func @transpose
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c512 step %c1{{.*}} {
// CHECK: linalg.transpose ins(%{{.*}} : memref<256x1xf32, strided<[512, 1], offset: ?>>)
// CHECK: } {kiln.parallel = 64 : i64}
func.func @transpose(%a: memref<256x512xf32>, %b: memref<512x256xf32>) {
  linalg.transpose ins(%a : memref<256x512xf32>) outs(%b : memref<512x256xf32>) permutation = [1, 0]
  return
}

// -----

// A reduction over the outer dim: the parallel loop after it is split in
// runs of 16 columns; each column still sums its rows in order. (Its
// contiguous columns vectorize: a grain of 4 runs, not 1.)
// CHECK-LABEL: func.func @outer_reduction
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c1024 step %c16{{.*}} {
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK-SAME: memref<256x16xf32
// CHECK: } {kiln.parallel = 4 : i64}
#in = affine_map<(r, p) -> (r, p)>
#out = affine_map<(r, p) -> (p)>
func.func @outer_reduction(%a: memref<256x1024xf32>, %s: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<256x1024xf32>) outs(%s : memref<1024xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %acc, %x : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Small ops stay whole; so do bodies that write.
// CHECK-LABEL: func.func @small_or_writing
// CHECK-NOT: scf.for
// CHECK-NOT: kiln.parallel
#id = affine_map<(i, j) -> (i, j)>
func.func @small_or_writing(%a: memref<64x64xi64>, %b: memref<64x64xi64>,
                            %c: memref<512x512xf32>, %d: memref<512x512xf32>, %log: memref<1xf32>) {
  linalg.transpose ins(%a : memref<64x64xi64>) outs(%b : memref<64x64xi64>) permutation = [1, 0]
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<512x512xf32>) outs(%d : memref<512x512xf32>) {
  ^bb0(%x: f32, %y: f32):
    %c0 = arith.constant 0 : index
    memref.store %x, %log[%c0] : memref<1xf32>
    linalg.yield %x : f32
  }
  return
}

// -----

// Run-time sizes: split, the task count decided at run time from the grain
// (sizes unknown here count as 1).
// CHECK-LABEL: func.func @runtime_rows
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %dim step %c1{{.*}} {
// CHECK: } {kiln.parallel = 64 : i64}
#id = affine_map<(i, j) -> (i, j)>
func.func @runtime_rows(%a: memref<?x1024xi64>, %b: memref<?x1024xi64>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x1024xi64>) outs(%b : memref<?x1024xi64>) {
  ^bb0(%x: i64, %y: i64):
    %t = arith.addi %x, %x : i64
    linalg.yield %t : i64
  }
  return
}

// -----

// Already inside a parallel loop, or in device code: left alone.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: linalg.transpose ins(%{{.*}} : memref<256x512xf32>)
func.func @nested(%a: memref<256x512xf32>, %b: memref<512x256xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.transpose ins(%a : memref<256x512xf32>) outs(%b : memref<512x256xf32>) permutation = [1, 0]
  } {kiln.parallel = 1 : i64}
  return
}

// -----

// The work counts the body's cost: 2048 scalar iterations of one op stay on
// one thread, of an exp (16 ops) are split.
// CHECK-LABEL: func.func @costly_body
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<32x64xf32>)
// CHECK-NOT: kiln.parallel
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64 step %c1{{.*}} {
// CHECK: math.exp
// CHECK: } {kiln.parallel = 16 : i64}
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @costly_body(%a: memref<32x64xf32>, %b: memref<64x32xf32>,
                       %c: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<32x64xf32>) outs(%b : memref<64x32xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<64x32xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// An LSTM step's gate math reads its gates at fixed offsets along the
// contiguous loop: LLVM vectorizes it, so its iterations count as lanes
// and the grain (98 tiles of 16) keeps its 256 columns on one thread. A
// scalar count (grain 13) split it, and two threads took four times one's
// time.
// CHECK-LABEL: func.func @gate_gathers
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c256 step %c16{{.*}} {
// CHECK: memref.load %{{.*}} : memref<1x1024xf32>
// CHECK: } {kiln.parallel = 98 : i64}
func.func @gate_gathers(%g: memref<1x1024xf32>, %c: memref<1x256xf32>,
                        %h: memref<1x256xf32>) {
  %c768 = arith.constant 768 : index
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<1x256xf32>) outs(%h : memref<1x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %j = arith.addi %i1, %c768 : index
    %a = memref.load %g[%i0, %j] : memref<1x1024xf32>
    %b = memref.load %g[%i0, %i1] : memref<1x1024xf32>
    %t = math.tanh %a : f32
    %n = arith.negf %b : f32
    %e = math.exp %n : f32
    %s = arith.addf %e, %one : f32
    %r = arith.divf %one, %s : f32
    %m = arith.mulf %r, %t : f32
    %o = arith.mulf %m, %in : f32
    linalg.yield %o : f32
  }
  return
}

// -----

// The same loads along the outer dim (a stride of a row per lane): scalar.
// CHECK-LABEL: func.func @strided_gathers
// CHECK: } {kiln.parallel = 13 : i64}
func.func @strided_gathers(%g: memref<1024x1xf32>, %c: memref<1x256xf32>,
                           %h: memref<1x256xf32>) {
  %c768 = arith.constant 768 : index
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<1x256xf32>) outs(%h : memref<1x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %j = arith.addi %i1, %c768 : index
    %a = memref.load %g[%j, %i0] : memref<1024x1xf32>
    %b = memref.load %g[%i1, %i0] : memref<1024x1xf32>
    %t = math.tanh %a : f32
    %n = arith.negf %b : f32
    %e = math.exp %n : f32
    %s = arith.addf %e, %one : f32
    %r = arith.divf %one, %s : f32
    %m = arith.mulf %r, %t : f32
    %o = arith.mulf %m, %in : f32
    linalg.yield %o : f32
  }
  return
}

// -----

// A gather whose column is read from an operand along the loop: its loads
// go anywhere, so its iterations stay scalar (a grain of 1 row, not 4).
// CHECK-LABEL: func.func @column_gather
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64 step %c1{{.*}} {
// CHECK: } {kiln.parallel = 1 : i64}
func.func @column_gather(%data: memref<64x4096xf32>, %idx: memref<1024xi64>,
                         %out: memref<64x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%idx : memref<1024xi64>) outs(%out : memref<64x1024xf32>) {
  ^bb0(%i: i64, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %i : i64 to index
    %v = memref.load %data[%r, %c] : memref<64x4096xf32>
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// An outer parallel loop of fewer than 8 trips takes the parallel loops
// inside it, short of the innermost: a fill of 3 channels (grain 2 per
// channel: one range) becomes one loop over their 675 rows, 73 rows per
// thread at least (16384 elements: a fill moves data).
// CHECK-LABEL: func.func @few_channels
// CHECK: %[[N:.*]] = arith.muli %c3, %c225
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %[[N]] step
// CHECK-DAG: %[[H:.*]] = arith.remsi %[[R]], %c225
// CHECK-DAG: %[[C:.*]] = arith.divsi %[[R]], %c225
// CHECK: memref.subview %arg0[0, %[[C]], %[[H]], 0] [1, 1, 1, 225]
// CHECK: linalg.fill
// CHECK-NEXT: } {kiln.parallel = 73 : i64}
func.func @few_channels(%a: memref<1x3x225x225xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%a : memref<1x3x225x225xf32>)
  return
}
