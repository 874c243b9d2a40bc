// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-cpu-fuse-rows))" | FileCheck %s

// A LayerNorm as bufferization leaves it: row sums, means, centring in
// place, sums of squares, reciprocal deviations (into the means' buffer),
// then the scaled output. One loop over the 128 rows, each op on its row;
// the sums' allocations and zero inits go before it. 1797 units of work
// per row (iterationCost): 37 rows per thread at least.
// CHECK-LABEL: func.func @layer_norm
// CHECK: memref.copy %arg0, %[[X:.*]] :
// CHECK: memref.copy %[[ZERO:.*]], %[[SUM:.*]] : memref<1x128xf32>
// CHECK: %[[SQ:.*]] = memref.alloc() {{.*}} : memref<1x128xf32>
// CHECK-NEXT: memref.copy %[[ZERO]], %[[SQ]]
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<1x128x128xf32>
// CHECK: scf.for %[[R:.*]] = %c0{{.*}} to %c128{{.*}} step %c1{{.*}} {
// CHECK: memref.subview %[[X]][0, %[[R]], 0] [1, 1, 128] [1, 1, 1]
// CHECK: memref.subview %[[SUM]][0, %[[R]]] [1, 1] [1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: memref.subview %[[SQ]][0, %[[R]]] [1, 1] [1, 1]
// CHECK: arith.mulf
// CHECK: math.sqrt
// CHECK: memref.subview %arg1[0] [128] [1]
// CHECK: memref.subview %[[OUT]][0, %[[R]], 0] [1, 1, 128] [1, 1, 1]
// CHECK: } {kiln.parallel = 37 : i64}
// CHECK-NOT: linalg.generic
// CHECK: return %[[OUT]]
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#r2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @layer_norm(%src: memref<1x128x128xf32>, %gamma: memref<128xf32>,
                      %zero: memref<1x128xf32>) -> memref<1x128x128xf32> {
  %x = memref.alloc() {alignment = 64 : i64} : memref<1x128x128xf32>
  memref.copy %src, %x : memref<1x128x128xf32> to memref<1x128x128xf32>
  %n = arith.constant 128.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %one = arith.constant 1.0 : f32
  %mean = memref.alloc() {alignment = 64 : i64} : memref<1x128xf32>
  %sum = memref.alloc() {alignment = 64 : i64} : memref<1x128xf32>
  memref.copy %zero, %sum : memref<1x128xf32> to memref<1x128xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<1x128x128xf32>) outs(%sum : memref<1x128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<1x128xf32>) outs(%mean : memref<1x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %n : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mean : memref<1x128x128xf32>, memref<1x128xf32>) outs(%x : memref<1x128x128xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %c = arith.subf %in, %m : f32
    linalg.yield %c : f32
  }
  %sq = memref.alloc() {alignment = 64 : i64} : memref<1x128xf32>
  memref.copy %zero, %sq : memref<1x128xf32> to memref<1x128xf32>
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<1x128x128xf32>) outs(%sq : memref<1x128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#r2, #r2], iterator_types = ["parallel", "parallel"]}
      ins(%sq : memref<1x128xf32>) outs(%mean : memref<1x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.divf %in, %n : f32
    %e = arith.addf %v, %eps : f32
    %d = math.sqrt %e : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  }
  %out = memref.alloc() {alignment = 64 : i64} : memref<1x128x128xf32>
  linalg.generic {indexing_maps = [#x, #row, #col, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mean, %gamma : memref<1x128x128xf32>, memref<1x128xf32>, memref<128xf32>) outs(%out : memref<1x128x128xf32>) {
  ^bb0(%in: f32, %r: f32, %g: f32, %o: f32):
    %a = arith.mulf %in, %r : f32
    %b = arith.mulf %a, %g : f32
    linalg.yield %b : f32
  }
  return %out : memref<1x128x128xf32>
}

// -----

// A reduction of a contraction's kind (a matmul: B is not read along all
// loops) starts no chain; nor does a row reduction whose next op reads
// its sums by column (another row's sum): a chain of one op stays as it
// was.
// CHECK-LABEL: func.func @not_row_local
// CHECK-NOT: scf.for
// CHECK: return
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @not_row_local(%a: memref<64x64xf32>, %b: memref<64x64xf32>) -> memref<64x64xf32> {
  %c = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %sums = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<64x64xf32>) outs(%sums : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  %o = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %sums : memref<64x64xf32>, memref<64xf32>) outs(%o : memref<64x64xf32>) {
  ^bb0(%x: f32, %s: f32, %y: f32):
    %q = arith.divf %x, %s : f32
    linalg.yield %q : f32
  }
  return %o : memref<64x64xf32>
}

// -----

// An op that writes a buffer an earlier op of the chain read across rows
// (here T, read by column) does not join: in one loop, row 0's write of T
// would reach row 1's read of it. The sums and the op after them fuse;
// the write of T runs after the loop.
// CHECK-LABEL: func.func @write_after_read_across
// CHECK: %[[T:.*]] = memref.alloc() : memref<64xf32>
// CHECK: scf.for
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%[[T]] : memref<64xf32>)
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
func.func @write_after_read_across(%src: memref<64x64xf32>) -> (memref<64x64xf32>, memref<64xf32>) {
  %a = memref.alloc() : memref<64x64xf32>
  memref.copy %src, %a : memref<64x64xf32> to memref<64x64xf32>
  %t = memref.alloc() : memref<64xf32>
  %cst = arith.constant 1.0 : f32
  linalg.fill ins(%cst : f32) outs(%t : memref<64xf32>)
  %s = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  }
  %o = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %s, %t : memref<64x64xf32>, memref<64xf32>, memref<64xf32>) outs(%o : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %w: f32):
    %q = arith.divf %x, %y : f32
    %p = arith.addf %q, %z : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%s : memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%x: f32, %w: f32):
    %d = arith.addf %x, %x : f32
    linalg.yield %d : f32
  }
  return %o, %t : memref<64x64xf32>, memref<64xf32>
}

// -----

// An init between the chain's ops does not move before it when an earlier
// op read its buffer (here through a view: bufferization reuses a dead
// buffer in place); the chain ends there, one op long, and nothing fuses.
// CHECK-LABEL: func.func @init_of_a_buffer_read_before
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @init_of_a_buffer_read_before(%src: memref<64x64xf32>) -> memref<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<64x64xf32>
  memref.copy %src, %t : memref<64x64xf32> to memref<64x64xf32>
  %v = memref.subview %t[0, 0] [64, 64] [1, 1] : memref<64x64xf32> to memref<64x64xf32, strided<[64, 1]>>
  %s = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%v : memref<64x64xf32, strided<[64, 1]>>) outs(%s : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<64x64xf32>)
  %o = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %s : memref<64x64xf32>, memref<64xf32>) outs(%o : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %w: f32):
    %q = arith.addf %x, %y : f32
    linalg.yield %q : f32
  }
  return %o : memref<64x64xf32>
}

// -----

// Attention's scale and mask, then the Softmax's row maxima and what
// follows: the elementwise op before the reduction joins the chain (it
// works row by row: the mask is the same for every row), the maxima's
// allocation and init between them move before it. One loop over the 4
// rows where there were two passes.
// CHECK-LABEL: func.func @scale_mask_softmax
// CHECK: %[[MAX:.*]] = memref.alloc() : memref<1x4xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[MAX]] : memref<1x4xf32>)
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %c4{{.*}} step
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: arith.subf
// CHECK-NOT: linalg.generic
// CHECK: return
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#m = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @scale_mask_softmax(%s: memref<1x4x64xf32>, %mask: memref<1x1x64xf32>) -> memref<1x4x64xf32> {
  %scale = arith.constant 0.125 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %x = memref.alloc() : memref<1x4x64xf32>
  linalg.generic {indexing_maps = [#x, #m, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : memref<1x4x64xf32>, memref<1x1x64xf32>) outs(%x : memref<1x4x64xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %a = arith.mulf %in, %scale : f32
    %b = arith.addf %a, %k : f32
    linalg.yield %b : f32
  }
  %max = memref.alloc() : memref<1x4xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<1x4xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<1x4x64xf32>) outs(%max : memref<1x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  %y = memref.alloc() : memref<1x4x64xf32>
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max : memref<1x4x64xf32>, memref<1x4xf32>) outs(%y : memref<1x4x64xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    linalg.yield %d : f32
  }
  return %y : memref<1x4x64xf32>
}

// -----

// The init between the op before the reduction and the reduction
// re-fills the buffer that op read: it cannot move before that op, which
// stays out of the chain; the chain starts at the reduction as before.
// CHECK-LABEL: func.func @producer_input_refilled
// CHECK: linalg.generic {{.*}}ins(%[[T:.*]] : memref<4x16xf32>) outs(%[[X:.*]] : memref<4x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: linalg.fill {{.*}} outs(%[[T]] : memref<4x16xf32>)
// CHECK: scf.for
// CHECK-NOT: arith.mulf
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (d0)>
func.func @producer_input_refilled(%s: memref<4x16xf32>) -> (memref<4x16xf32>, memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x16xf32>
  memref.copy %s, %t : memref<4x16xf32> to memref<4x16xf32>
  %x = memref.alloc() : memref<4x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4x16xf32>) outs(%x : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<4x16xf32>)
  %sum = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #r1], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x16xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  %y = memref.alloc() : memref<4x16xf32>
  linalg.generic {indexing_maps = [#id, #r1, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<4x16xf32>, memref<4xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %v: f32, %out: f32):
    %d = arith.divf %in, %v : f32
    linalg.yield %d : f32
  }
  return %y, %t : memref<4x16xf32>, memref<4x16xf32>
}

// -----

// An op before the reduction on lines of 49 elements stays out of the
// chain: on its own it is vectorized flat over the whole contiguous
// tensor, on a row's view a remainder element per line.
// CHECK-LABEL: func.func @producer_partial_vectors
// CHECK: linalg.generic {{.*}}ins(%arg0 : memref<4x49xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: scf.for
// CHECK-NOT: arith.mulf
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (d0)>
func.func @producer_partial_vectors(%s: memref<4x49xf32>) -> memref<4x49xf32> {
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<4x49xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<4x49xf32>) outs(%x : memref<4x49xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  }
  %sum = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #r1], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x49xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  %y = memref.alloc() : memref<4x49xf32>
  linalg.generic {indexing_maps = [#id, #r1, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<4x49xf32>, memref<4xf32>) outs(%y : memref<4x49xf32>) {
  ^bb0(%in: f32, %v: f32, %out: f32):
    %d = arith.divf %in, %v : f32
    linalg.yield %d : f32
  }
  return %y : memref<4x49xf32>
}
