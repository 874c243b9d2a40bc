// RUN: kiln-opt %s --split-input-file --kiln-cpu-vectorize-contractions | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-vectorize-contractions=vector-bits=256 | FileCheck %s --check-prefix=AVX2

// MatMul as the CPU provider emits it, loops (m, k, n); shapes divide the
// register tile: no peeling, the C tile stays in registers across k.
// CHECK-LABEL: func.func @divisible
// With AVX2's 16 registers the C tile is 6 x 16 (12 of them), not 8 x 32.
// AVX2-LABEL: func.func @divisible
// AVX2: scf.for %{{.*}} = %c0 to %c24 step %c6
// AVX2: scf.for {{.*}} iter_args({{.*}}) -> (vector<6x16xf32>)
// AVX2: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT: vector<32xf32>
// AVX2: return
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read %arg2{{.*}} vector<32xf32>
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.transfer_read %arg1{{.*}} vector<32xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write {{.*}}, %arg2
// CHECK-NOT: linalg.
// CHECK: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @divisible(%a: memref<24x64xf32>, %b: memref<64x64xf32>, %c: memref<24x64xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<24x64xf32>, memref<64x64xf32>) outs(%c : memref<24x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 30x70 with k = 100: the m and n loops have remainders and are peeled, so
// the edge tiles are vectorized with static (smaller) vector shapes.
// CHECK-LABEL: func.func @non_divisible
// CHECK-NOT: linalg.generic
// CHECK-DAG: vector.fma {{.*}} : vector<32xf32>
// CHECK-DAG: vector.fma {{.*}} : vector<6xf32>
// CHECK-NOT: linalg.
// CHECK: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @non_divisible(%a: memref<30x100xf32>, %b: memref<100x70xf32>, %c: memref<30x70xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<30x100xf32>, memref<100x70xf32>) outs(%c : memref<30x70xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Gemm with transB = 1 and M = 1 (a batch-1 linear layer).
// CHECK-LABEL: func.func @transposed_b
// CHECK-NOT: linalg.generic
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (n, k)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @transposed_b(%a: memref<1x64xf32>, %b: memref<10x64xf32>, %c: memref<1x10xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x64xf32>, memref<10x64xf32>) outs(%c : memref<1x10xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Batched, B broadcast over the batch: the batch folds into m (A and C
// collapsed to 24 rows), one matmul that reads B once.
// CHECK-LABEL: func.func @batch_broadcast
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[A:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<3x8x16xf32> into memref<24x16xf32>
// CHECK-DAG: %[[C:.*]] = memref.collapse_shape %arg2 {{\[}}[0, 1], [2]] : memref<3x8x32xf32> into memref<24x32xf32>
// CHECK: scf.for %[[M:.*]] = %c0 to %c24 step %c8
// CHECK: vector.transfer_read %[[C]][%[[M]], %c0]
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
#mA = affine_map<(b, m, k, n) -> (b, m, k)>
#mB = affine_map<(b, m, k, n) -> (k, n)>
#mC = affine_map<(b, m, k, n) -> (b, m, n)>
func.func @batch_broadcast(%a: memref<3x8x16xf32>, %b: memref<16x32xf32>, %c: memref<3x8x32xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<3x8x16xf32>, memref<16x32xf32>) outs(%c : memref<3x8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Batched A and B (no shared operand): one scf.for over the batch and a
// rank-reduced view of each operand per batch element (folded into the
// transfers' indices).
// CHECK-LABEL: func.func @batch_both
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[B:.*]] = %c0 to %c3
// CHECK: vector.transfer_read %arg2[%[[B]], %c0, %c0]
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
#mA = affine_map<(b, m, k, n) -> (b, m, k)>
#mB = affine_map<(b, m, k, n) -> (b, k, n)>
#mC = affine_map<(b, m, k, n) -> (b, m, n)>
func.func @batch_both(%a: memref<3x8x16xf32>, %b: memref<3x16x32xf32>, %c: memref<3x8x32xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<3x8x16xf32>, memref<3x16x32xf32>) outs(%c : memref<3x8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Conv (n, m, c, kh, kw, oh, ow), 3x3 stride 1 on a padded input: im2col
// into a new buffer, one vector load and store per output row (of 16
// lanes, masked past the row's 6: LLVM would split a 6-lane vector), then
// a matmul.
// CHECK-LABEL: func.func @conv
// CHECK: %[[COL:.*]] = memref.alloc() : memref<1x4x3x3x6x6xf32>
// CHECK: memref.collapse_shape %[[COL]]
// CHECK: %[[M:.*]] = vector.constant_mask [6] : vector<16xi1>
// CHECK: %[[ROW:.*]] = vector.maskedload %arg0[%c0, %{{.*}}, %{{.*}}, %{{.*}}], %[[M]], %{{.*}} : memref<1x4x8x8xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-NEXT: vector.maskedstore %[[COL]][%c0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0], %[[M]], %[[ROW]] : memref<1x4x3x3x6x6xf32>, vector<16xi1>, vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv(%x: memref<1x4x8x8xf32>, %w: memref<8x4x3x3xf32>, %o: memref<1x8x6x6xf32>) {
  linalg.generic {indexing_maps = [#mX, #mW, #mO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%o : memref<1x8x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Stride 2: each row of 7 columns is a load of the 13 it spans (16 lanes,
// masked) and a shuffle of every other lane (no gathers).
// CHECK-LABEL: func.func @conv_stride2
// CHECK: %[[COL:.*]] = memref.alloc() : memref<1x2x3x3x7x7xf32>
// CHECK-DAG: %[[M13:.*]] = vector.constant_mask [13] : vector<16xi1>
// CHECK-DAG: %[[M7:.*]] = vector.constant_mask [7] : vector<16xi1>
// CHECK: %[[WIDE:.*]] = vector.maskedload %arg0[{{.*}}], %[[M13]], %{{.*}} : memref<1x2x16x16xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-NEXT: %[[ROW:.*]] = vector.shuffle %[[WIDE]], %[[WIDE]] [0, 2, 4, 6, 8, 10, 12, 14, 15, 15, 15, 15, 15, 15, 15, 15] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: vector.maskedstore %[[COL]][{{.*}}], %[[M7]], %[[ROW]] : memref<1x2x3x3x7x7xf32>, vector<16xi1>, vector<16xf32>
// CHECK: vector.fma
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_stride2(%x: memref<1x2x16x16xf32>, %w: memref<8x2x3x3xf32>, %o: memref<1x8x7x7xf32>) {
  linalg.generic {indexing_maps = [#mX, #mW, #mO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x2x16x16xf32>, memref<8x2x3x3xf32>) outs(%o : memref<1x8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Grouped conv (2 groups of 4 channels, 4 outputs each), as the CPU
// provider emits it: x's channel is (m floordiv 4) * 4 + c. One im2col and
// one matmul per group, on channel slices of x, w and the output.
// CHECK-LABEL: func.func @conv_grouped
// CHECK: scf.for %[[G:.*]] = %c0 to %c2
// CHECK: vector.maskedload %arg0[%c0, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<1x8x8x8xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: memref.subview %arg1[%{{.*}}, 0, 0, 0] [4, 4, 3, 3] [1, 1, 1, 1]
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
// CHECK: return
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, (m floordiv 4) * 4 + c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_grouped(%x: memref<1x8x8x8xf32>, %w: memref<8x4x3x3xf32>, %o: memref<1x8x6x6xf32>) {
  linalg.generic {indexing_maps = [#mX, #mW, #mO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x8x8x8xf32>, memref<8x4x3x3xf32>) outs(%o : memref<1x8x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Negative: the body is not a multiply-add (max-plus).
// CHECK-LABEL: func.func @not_mul_add
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-NOT: vector.
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @not_mul_add(%a: memref<16x64xf32>, %b: memref<64x64xf32>, %c: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<16x64xf32>, memref<64x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Negative: integer matmul.
// CHECK-LABEL: func.func @integer
// CHECK: linalg.generic
// CHECK: arith.muli
// CHECK-NOT: vector.
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @integer(%a: memref<16x64xi32>, %b: memref<64x64xi32>, %c: memref<16x64xi32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<16x64xi32>, memref<64x64xi32>) outs(%c : memref<16x64xi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %p = arith.muli %x, %y : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Attention scores with the heads split in the maps: A[b, i, h, d] and
// K[b, j, h, d] hold their matrix dims apart. One loop per head and a
// strided 2-D view of each operand (rows H*D apart, folded into the
// transfers' indices) give a matmul with B transposed.
// CHECK-LABEL: func.func @heads_in_maps
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[H:.*]] = %c0 to %c2
// CHECK: vector.transfer_read %arg0[%c0, %c0, %[[H]], %{{.*}}], {{.*}} : memref<1x8x2x4xf32>
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
#mQ = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#mK = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#mS = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
func.func @heads_in_maps(%q: memref<1x8x2x4xf32>, %k: memref<1x8x2x4xf32>, %s: memref<1x2x8x8xf32>) {
  linalg.generic {indexing_maps = [#mQ, #mK, #mS], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<1x8x2x4xf32>, memref<1x8x2x4xf32>) outs(%s : memref<1x2x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same with 32 query rows: each head's K (its rows H*D apart) is
// copied transposed into a [D, T] buffer first, and the product reads
// that as a plain B (a transposed B's columns were read a lane at a time).
// Eight rows (above) read K as it lies.
// CHECK-LABEL: func.func @scores_transposed_copy
// CHECK: scf.for %[[H:.*]] = %c0 to %c2
// CHECK: %[[KT:.*]] = memref.alloc() : memref<16x32xf32>
// CHECK: linalg.transpose ins(%{{.*}} : memref<32x16xf32, strided<[32, 1], offset: ?>>) outs(%[[KT]] : memref<16x32xf32>) permutation = [1, 0]
// CHECK: vector.transfer_read %[[KT]]
// CHECK: vector.fma
// CHECK: return
#sQ = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#sK = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#sS = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
func.func @scores_transposed_copy(%q: memref<1x32x2x16xf32>, %k: memref<1x32x2x16xf32>, %s: memref<1x2x32x32xf32>) {
  linalg.generic {indexing_maps = [#sQ, #sK, #sS], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<1x32x2x16xf32>, memref<1x32x2x16xf32>) outs(%s : memref<1x2x32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Negative: the output holds (n, m), which no named matmul writes.
// CHECK-LABEL: func.func @transposed_output
// CHECK: linalg.generic
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (n, m)>
func.func @transposed_output(%a: memref<4x8xf32>, %b: memref<8x6xf32>, %c: memref<6x4xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x6xf32>) outs(%c : memref<6x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A fused activation that runs in place right after the matmul is applied
// to each C tile in registers before it is stored: no loop over C is left.
// CHECK-LABEL: func.func @relu_epilogue
// CHECK-NOT: linalg.generic
// CHECK: vector.fma
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.generic
// CHECK: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @relu_epilogue(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The epilogue writes its own buffer, allocated between the matmul and the
// epilogue (as bufferization places it): the allocation moves above the
// matmul, whose tile stores now go to it.
// CHECK-LABEL: func.func @epilogue_own_buffer
// CHECK: %[[D:.*]] = memref.alloc() : memref<8x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[D]]
// CHECK: return %[[D]]
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @epilogue_own_buffer(%a: memref<8x16xf32>, %b: memref<16x32xf32>) -> memref<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %d = memref.alloc() : memref<8x32xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<8x32xf32>) outs(%d : memref<8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %d : memref<8x32xf32>
}

// -----

// Depthwise conv (stride 2) as the CPU provider emits it, loops
// (n, m, oh, kh, kw, ow), then a Relu into its own buffer. Per channel, the
// input plane is first split into two phases (even and odd columns) in a
// scratch buffer, a shuffle of a 32-wide row load each; then 20-wide rows
// are two 16-lane chunks (the second masked), four rows per block, eight
// accumulators across the taps, each tap a contiguous load from the phase
// of its column; the Relu is applied to every chunk before its store.
// CHECK-LABEL: func.func @depthwise_stride2_relu
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %c0 to %c4
// CHECK: %[[PLANE:[a-z0-9_]+]] = memref.alloc() : memref<2x41x48xf32>
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %c0 to %c41
// CHECK: vector.transfer_read %arg0[%c0, %[[M]], %[[I]], %c0]{{.*}} vector<32xf32>
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.transfer_write {{.*}}, %[[PLANE]][%c0, %[[I]], %c0]
// CHECK: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK: vector.transfer_write {{.*}}, %[[PLANE]][%c1, %[[I]], %c0]
// CHECK: scf.for {{.*}} to %c20 step %c4
// CHECK-COUNT-8: vector.transfer_read %arg2
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for %[[KW:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK: memref.load %arg1
// CHECK: %[[PH:[a-z0-9_]+]] = arith.remui %[[KW]], %c2
// CHECK: vector.transfer_read %[[PLANE]][%[[PH]], {{.*}}]{{.*}} vector<16xf32>
// CHECK-NOT: vector.shuffle
// CHECK: vector.fma
// CHECK: arith.maximumf
// CHECK: vector.transfer_write {{.*}}, %arg3[%c0, %arg4, %arg5, %c0] {in_bounds = [true]}
// CHECK: arith.maximumf
// CHECK: vector.transfer_write {{.*}}, %arg3[%c0, %arg4, %arg5, %c16] :
// CHECK-NOT: vector.transfer_write {{.*}}, %arg2
// CHECK-NOT: linalg.
// CHECK: return
#mX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh * 2 + kh, ow * 2 + kw)>
#mW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#mO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @depthwise_stride2_relu(%x: memref<1x4x41x41xf32>, %w: memref<4x1x3x3xf32>, %o: memref<1x4x20x20xf32>, %y: memref<1x4x20x20xf32>) {
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<1x4x41x41xf32>, memref<4x1x3x3xf32>) outs(%o : memref<1x4x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o : memref<1x4x20x20xf32>) outs(%y : memref<1x4x20x20xf32>) {
  ^bb0(%a: f32, %b: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A depthwise conv of run-time size: the rows x chunks in registers are
// picked at run time from the width (16, 32, 64 or wider, in column blocks
// of 128); the rows are blocked, then the last ones one at a time.
// CHECK-LABEL: func.func @depthwise_runtime
// CHECK-NOT: linalg.generic
// CHECK: memref.dim %arg2, %c3
// CHECK: arith.cmpi ule, %{{.*}}, %c16
// CHECK: scf.if
// CHECK: vector.fma
// CHECK: arith.cmpi ule, %{{.*}}, %c32
// CHECK: arith.cmpi ule, %{{.*}}, %c64
// CHECK: scf.for {{.*}} step %c128
// CHECK-NOT: linalg.
// CHECK: return
#dX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#dW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#dO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
func.func @depthwise_runtime(%x: memref<?x4x?x?xf32>, %w: memref<4x1x3x3xf32>, %o: memref<?x4x?x?xf32>) {
  linalg.generic {indexing_maps = [#dX, #dW, #dO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<?x4x?x?xf32>, memref<4x1x3x3xf32>) outs(%o : memref<?x4x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same with the conv's bias and a fused Relu: the accumulators start
// from the bias (its pass over the output goes) and the Relu is applied
// to them before they are stored (its own pass goes), with 64 channels of
// 16 x 16 planes or more (counted for run-time rows and columns) split
// across threads.
// CHECK-LABEL: func.func @depthwise_runtime_bias_relu
// CHECK-NOT: linalg.generic
// CHECK: memref.load %arg1[%{{.*}}] : memref<64xf32>
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: kiln.parallel
// CHECK-NOT: linalg.
// CHECK: return
#dbI = affine_map<(n, c, h, w) -> (c)>
#dbO = affine_map<(n, c, h, w) -> (n, c, h, w)>
#dX2 = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#dW2 = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#dO2 = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
func.func @depthwise_runtime_bias_relu(%x: memref<?x64x?x?xf32>, %bias: memref<64xf32>, %w: memref<64x1x3x3xf32>, %o: memref<?x64x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#dbI, #dbO], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<64xf32>) outs(%o : memref<?x64x?x?xf32>) {
  ^bb0(%b: f32, %out: f32):
    linalg.yield %b : f32
  }
  linalg.generic {indexing_maps = [#dX2, #dW2, #dO2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<?x64x?x?xf32>, memref<64x1x3x3xf32>) outs(%o : memref<?x64x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#dbO, #dbO], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o : memref<?x64x?x?xf32>) outs(%o : memref<?x64x?x?xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A max pool (3x3, stride 2; loops n, c, kh, kw, oh, ow) takes the same
// vector loops: unpadded, each tap reads 32 lanes of a source row in place
// and keeps every other one (no phases written first), 28-wide rows are
// two chunks, four rows per block, a max per tap and no weight:
// x > acc ? x : acc, or x where x is NaN (NaNs propagate, in fewer
// instructions than maximumf).
// CHECK-LABEL: func.func @max_pool
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.alloc
// CHECK: scf.for {{.*}} to %c28 step %c4
// CHECK-COUNT-8: vector.transfer_read %arg2
// CHECK-NOT: memref.load
// CHECK: %[[W:.*]] = vector.transfer_read %arg0{{.*}} : memref<1x4x57x57xf32>, vector<32xf32>
// CHECK-NEXT: %[[X:.*]] = vector.shuffle %[[W]], %[[W]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[ACC:.*]] : vector<16xf32>
// CHECK-NEXT: %[[MAX:.*]] = arith.select %[[GT]], %[[X]], %[[ACC]]
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<16xf32>
// CHECK-NEXT: arith.select %[[NAN]], %[[X]], %[[MAX]]
// CHECK-NOT: arith.maximumf
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.
// CHECK: return
#pX = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#pK = affine_map<(n, c, kh, kw, oh, ow) -> (kh, kw)>
#pO = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh, ow)>
func.func @max_pool(%x: memref<1x4x57x57xf32>, %k: memref<3x3xf32>, %o: memref<1x4x28x28xf32>) {
  linalg.generic {indexing_maps = [#pX, #pK, #pO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %k : memref<1x4x57x57xf32>, memref<3x3xf32>) outs(%o : memref<1x4x28x28xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// An average pool's sums (2x2, stride 2, DenseNet's transitions) take the
// same loops: an add per tap, no weight; the divisor is an op of its own.
// CHECK-LABEL: func.func @average_pool_sums
// CHECK-NOT: linalg.generic
// CHECK: vector.transfer_read
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK-NOT: arith.cmpf
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.
// CHECK: return
#aX = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#aK = affine_map<(n, c, kh, kw, oh, ow) -> (kh, kw)>
#aO = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh, ow)>
func.func @average_pool_sums(%x: memref<1x8x32x32xf32>, %k: memref<2x2xf32>, %o: memref<1x8x16x16xf32>) {
  linalg.generic {indexing_maps = [#aX, #aK, #aO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %k : memref<1x8x32x32xf32>, memref<2x2xf32>) outs(%o : memref<1x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A u8 max pool with pads (resnet's, on 8-bit data after the quantized
// conv): the same loops on 64-byte chunks, the body's unsigned max. The
// zero-padded copy goes; each plane row is two 128-byte loads shuffled by
// the left pad into the two phases; the accumulators start from the
// output's fill (0, u8's lowest) in registers.
// CHECK-LABEL: func.func @max_pool_u8
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK: %[[PLANE:[a-z0-9_]+]] = memref.alloc() : memref<2x22x128xi8>
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %c0 to %c20
// CHECK: %[[X0:[a-z0-9_]+]] = vector.transfer_read %arg0[%c0, %{{.*}}, %[[I]], %c0], {{.*}} vector<128xi8>
// CHECK: vector.shuffle %{{.*}}, %[[X0]] [127, 129, 131,
// CHECK: vector.shuffle %{{.*}}, %[[X0]] [128, 130, 132,
// CHECK: scf.for
// CHECK: arith.maxui {{.*}} : vector<64xi8>
// CHECK-NOT: arith.maximumf
// CHECK: vector.transfer_write {{.*}} : vector<64xi8>, memref<1x2x10x10xi8>
// CHECK-NOT: linalg.
// CHECK: return
#uX = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#uK = affine_map<(n, c, kh, kw, oh, ow) -> (kh, kw)>
#uO = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh, ow)>
func.func @max_pool_u8(%x: memref<1x2x20x20xi8>, %k: memref<3x3xi8>, %o: memref<1x2x10x10xi8>) {
  %zero = arith.constant 0 : i8
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x22x22xi8>
  linalg.fill ins(%zero : i8) outs(%p : memref<1x2x22x22xi8>)
  %in = memref.subview %p[0, 0, 1, 1] [1, 2, 20, 20] [1, 1, 1, 1] : memref<1x2x22x22xi8> to memref<1x2x20x20xi8, strided<[968, 484, 22, 1], offset: 23>>
  memref.copy %x, %in : memref<1x2x20x20xi8> to memref<1x2x20x20xi8, strided<[968, 484, 22, 1], offset: 23>>
  linalg.fill ins(%zero : i8) outs(%o : memref<1x2x10x10xi8>)
  linalg.generic {indexing_maps = [#uX, #uK, #uO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%p, %k : memref<1x2x22x22xi8>, memref<3x3xi8>) outs(%o : memref<1x2x10x10xi8>) {
  ^bb0(%a: i8, %b: i8, %acc: i8):
    %m = arith.maxui %acc, %a : i8
    linalg.yield %m : i8
  }
  memref.dealloc %p : memref<1x2x22x22xi8>
  return
}

// -----

// An f32 max pool stepping 2 columns (3x3/2, pads of 1: ResNet's after
// the stem), its output filled first: the padded copy goes and the source
// is read as it lies. Each source row is one 32-wide load per 16 outputs,
// its even and odd columns two shuffles; tap 0 (column 2 * ow - 1) is the
// odd phase shifted in a lane of the pad. The row's max over its 3 taps
// is taken once: an output row takes two new rows' and the one carried
// from the row before (iter_args); rows outside the source are the pad.
// CHECK-LABEL: func.func @max_pool_strided_padded
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK: scf.for %{{.*}} = %c0 to %c10 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// CHECK: arith.cmpi ult
// CHECK: scf.if {{.*}} -> (vector<16xf32>)
// CHECK: %[[W:.*]] = vector.transfer_read %arg0{{.*}} : memref<1x2x20x20xf32>, vector<32xf32>
// CHECK-DAG: vector.shuffle %[[W]], %[[W]] [0, 2, 4,
// CHECK-DAG: %[[ODD:.*]] = vector.shuffle %[[W]], %[[W]] [1, 3, 5,
// CHECK: vector.shuffle %{{.*}}, %[[ODD]] [15, 16, 17,
// CHECK: arith.cmpf uno
// CHECK: } else {
// CHECK: vector.transfer_write %{{.*}}, %arg2{{.*}} : vector<16xf32>, memref<1x2x10x10xf32>
// CHECK-NOT: linalg.
// CHECK: return
#fX = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#fK = affine_map<(n, c, kh, kw, oh, ow) -> (kh, kw)>
#fO = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh, ow)>
func.func @max_pool_strided_padded(%x: memref<1x2x20x20xf32>, %k: memref<3x3xf32>, %o: memref<1x2x10x10xf32>) {
  %low = arith.constant 0xFF800000 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x22x22xf32>
  linalg.fill ins(%low : f32) outs(%p : memref<1x2x22x22xf32>)
  %in = memref.subview %p[0, 0, 1, 1] [1, 2, 20, 20] [1, 1, 1, 1] : memref<1x2x22x22xf32> to memref<1x2x20x20xf32, strided<[968, 484, 22, 1], offset: 23>>
  memref.copy %x, %in : memref<1x2x20x20xf32> to memref<1x2x20x20xf32, strided<[968, 484, 22, 1], offset: 23>>
  linalg.fill ins(%low : f32) outs(%o : memref<1x2x10x10xf32>)
  linalg.generic {indexing_maps = [#fX, #fK, #fO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%p, %k : memref<1x2x22x22xf32>, memref<3x3xf32>) outs(%o : memref<1x2x10x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %p : memref<1x2x22x22xf32>
  return
}

// -----

// n = 49 (a 7x7 feature map): 16-wide register tiles leave a remainder of
// 1 where 32-wide ones would leave 17.
// CHECK-LABEL: func.func @n49
// CHECK-DAG: vector.fma {{.*}} : vector<16xf32>
// CHECK-DAG: vector.fma {{.*}} : vector<1xf32>
// CHECK-NOT: vector<32xf32>
// CHECK-NOT: vector<17xf32>
// CHECK: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @n49(%a: memref<16x64xf32>, %b: memref<64x49xf32>, %c: memref<16x49xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<16x64xf32>, memref<64x49xf32>) outs(%c : memref<16x49xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 1x1 conv with stride 1 reads the input as the matrix itself: no
// im2col buffer, only a collapse_shape of x.
// CHECK-LABEL: func.func @conv1x1
// CHECK-NOT: memref.alloc
// CHECK: memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<1x16x8x8xf32> into memref<1x16x64xf32>
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv1x1(%x: memref<1x16x8x8xf32>, %w: memref<32x16x1x1xf32>, %o: memref<1x32x8x8xf32>) {
  linalg.generic {indexing_maps = [#mX, #mW, #mO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x16x8x8xf32>, memref<32x16x1x1xf32>) outs(%o : memref<1x32x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// One row (a classifier's GEMV): 128-wide register tiles, so that several
// FMA chains are in flight.
// CHECK-LABEL: func.func @gemv
// AVX2-LABEL: func.func @gemv
// AVX2: vector.fma {{.*}} : vector<64xf32>
// CHECK: vector.fma {{.*}} : vector<128xf32>
// CHECK-NOT: vector<32xf32>
// CHECK: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @gemv(%a: memref<1x64xf32>, %b: memref<64x256xf32>, %c: memref<1x256xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x64xf32>, memref<64x256xf32>) outs(%c : memref<1x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A conv whose im2col matrix would be megabytes (3x3, 64 channels, 56x56
// output: 576 x 3136) works on blocks of 2 output rows: im2col of the block
// (half of L2), then its matmul over the whole k (no cache tiles), so the Relu
// epilogue stays in registers. Threads take the blocks (kiln.parallel),
// each im2col-ing into a buffer allocated in the loop (per thread, by
// kiln-plan-memory).
// CHECK-LABEL: func.func @conv_blocks
// CHECK: scf.for %{{.*}} = %c0 to %c28 step %c1 {
// CHECK: %[[COL:.*]] = memref.alloc() : memref<1x64x3x3x2x56xf32>
// CHECK: vector.store %{{.*}}, %[[COL]]
// CHECK: scf.for %{{.*}} = %c0 to %c576 step %c1 iter_args(%{{.*}}) -> (vector<8x16xf32>)
// CHECK: arith.maximumf %{{.*}} : vector<16xf32>
// CHECK: } {kiln.parallel}
// CHECK-NOT: linalg.
// CHECK: return
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @conv_blocks(%x: memref<1x64x58x58xf32>, %w: memref<64x64x3x3xf32>, %o: memref<1x64x56x56xf32>) {
  %c = memref.alloc() : memref<1x64x56x56xf32>
  linalg.generic {indexing_maps = [#mX, #mW, #mO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x64x58x58xf32>, memref<64x64x3x3xf32>) outs(%c : memref<1x64x56x56xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x64x56x56xf32>) outs(%o : memref<1x64x56x56xf32>) {
  ^bb0(%a: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Elementwise ops are vectorized along their innermost loop, a broadcast
// operand splatted; a transposed read stays a loop nest (it would be a
// gather). Short trailing loops that every operand reads contiguously (or
// broadcasts over) are folded into one first: 3 x 20 is one loop of 60
// (16 lanes, the remainder of 12 peeled), the per-channel operand a vector
// of 4.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : memref<4x3x20xf32> into memref<4x60xf32>
// CHECK-DAG: %[[S:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1, 2]] : memref<4x1x1xf32> into memref<4xf32>
// CHECK-DAG: %[[O:.*]] = memref.collapse_shape %arg2 {{\[\[}}0], [1, 2]] : memref<4x3x20xf32> into memref<4x60xf32>
// CHECK: scf.for
// CHECK: memref.load %[[S]]
// CHECK: vector.transfer_read %[[X]][{{.*}}]{{.*}} : memref<4x60xf32>, vector<16xf32>
// CHECK: vector.splat
// CHECK: arith.mulf {{.*}} : vector<1x16xf32>
// CHECK: vector.transfer_write {{.*}}, %[[O]][{{.*}}]{{.*}} : vector<16xf32>, memref<4x60xf32>
// CHECK: vector.transfer_read %[[X]][{{.*}}, %c48]{{.*}} : memref<4x60xf32>, vector<12xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg3 : memref<4x20x3xf32>)
#full = affine_map<(c, h, w) -> (c, h, w)>
#chan = affine_map<(c, h, w) -> (c, 0, 0)>
#tr = affine_map<(c, h, w) -> (c, w, h)>
func.func @elementwise(%x: memref<4x3x20xf32>, %s: memref<4x1x1xf32>, %o: memref<4x3x20xf32>,
                       %t: memref<4x20x3xf32>, %p: memref<4x3x20xf32>) {
  linalg.generic {indexing_maps = [#full, #chan, #full], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : memref<4x3x20xf32>, memref<4x1x1xf32>) outs(%o : memref<4x3x20xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#tr, #full], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t : memref<4x20x3xf32>) outs(%p : memref<4x3x20xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A long body (erf and a rounding: cost 24 and more) takes 128 lanes a
// step (8 registers: 8 independent chains in flight), 32 on AVX2; a short
// one 16, and so does a long one with an operand whose last index is a
// constant ([i, 0]: its lanes are inserted one by one).
// CHECK-LABEL: func.func @long_chain
// CHECK: vector.transfer_read %arg0[{{.*}}]{{.*}} : memref<2x256xf32>, vector<128xf32>
// CHECK: math.erf {{.*}} : vector<1x128xf32>
// CHECK: vector.transfer_read %arg0[{{.*}}]{{.*}} : memref<2x256xf32>, vector<16xf32>
// CHECK-NOT: math.erf {{.*}}128
// CHECK: math.erf {{.*}} : vector<1x16xf32>
// AVX2-LABEL: func.func @long_chain
// AVX2: math.erf {{.*}} : vector<1x32xf32>
#lc = affine_map<(i, j) -> (i, j)>
#lz = affine_map<(i, j) -> (i, 0)>
func.func @long_chain(%x: memref<2x256xf32>, %o: memref<2x256xf32>, %p: memref<2x256xf32>,
                      %z: memref<2x1xf32>, %v: memref<2x256xf32>) {
  %h = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [#lc, #lc], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x256xf32>) outs(%o : memref<2x256xf32>) {
  ^bb0(%a: f32, %out: f32):
    %d = arith.divf %a, %h : f32
    %e = math.erf %d : f32
    %r = math.roundeven %e : f32
    %m = arith.maximumf %r, %h : f32
    %n = arith.minimumf %m, %a : f32
    %q = arith.mulf %n, %h : f32
    %s = arith.subf %q, %a : f32
    %t = arith.addf %s, %h : f32
    %u = arith.mulf %t, %d : f32
    linalg.yield %u : f32
  }
  linalg.generic {indexing_maps = [#lc, #lc], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<2x256xf32>) outs(%p : memref<2x256xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %h : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#lc, #lz, #lc], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : memref<2x256xf32>, memref<2x1xf32>) outs(%v : memref<2x256xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.divf %a, %b : f32
    %e = math.erf %d : f32
    %r = math.roundeven %e : f32
    %m = arith.maximumf %r, %h : f32
    %n = arith.minimumf %m, %a : f32
    %t = arith.addf %n, %h : f32
    %u = arith.mulf %t, %d : f32
    linalg.yield %u : f32
  }
  return
}

// -----

// An embedding lookup fused with an Add (Gather's generic: linalg.index
// and a load): per row, the token id read and clamped once as scalars,
// then 16-lane vectors of the table row and of the other operand, the
// add on vectors. The outer loop is not split (too little work).
// CHECK-LABEL: func.func @row_gather
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %{{.*}} to %c2
// CHECK: scf.for %[[J:[a-z0-9_]+]] = %{{.*}} to %c16
// CHECK: %[[ID:[a-z0-9_]+]] = memref.load %arg0[%[[I]], %[[J]]] : memref<2x16xi64>
// CHECK: arith.index_cast %[[ID]]
// CHECK: %[[ROW:[a-z0-9_]+]] = arith.maxsi
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %{{.*}} to %c32 step %c16
// CHECK: %[[P:[a-z0-9_]+]] = vector.transfer_read %arg2[%[[I]], %[[J]], %[[K]]]{{.*}} vector<16xf32>
// CHECK: %[[E:[a-z0-9_]+]] = vector.transfer_read %arg1[%[[ROW]], %[[K]]]{{.*}} vector<16xf32>
// CHECK: %[[S:[a-z0-9_]+]] = arith.addf %[[E]], %[[P]] : vector<16xf32>
// CHECK: vector.transfer_write %[[S]], %arg3[%[[I]], %[[J]], %[[K]]]
// CHECK-NOT: kiln.parallel
#gi = affine_map<(i, j, k) -> (i, j)>
#gf = affine_map<(i, j, k) -> (i, j, k)>
func.func @row_gather(%ids: memref<2x16xi64>, %table: memref<100x32xf32>, %pos: memref<2x16x32xf32>, %o: memref<2x16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c99 = arith.constant 99 : index
  %c100 = arith.constant 100 : index
  linalg.generic {indexing_maps = [#gi, #gf, #gf], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids, %pos : memref<2x16xi64>, memref<2x16x32xf32>) outs(%o : memref<2x16x32xf32>) {
  ^bb0(%id: i64, %p: f32, %out: f32):
    %k = linalg.index 2 : index
    %i = arith.index_cast %id : i64 to index
    %neg = arith.cmpi slt, %i, %c0 : index
    %w = arith.addi %i, %c100 : index
    %s = arith.select %neg, %w, %i : index
    %lo = arith.minsi %s, %c99 : index
    %row = arith.maxsi %lo, %c0 : index
    %e = memref.load %table[%row, %k] : memref<100x32xf32>
    %sum = arith.addf %e, %p : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A sum over the last dims (ReduceSum over H, W) is vectorized the same
// way: a 16-lane read and reduction per row, the sum kept in a register
// across the rows.
// CHECK-LABEL: func.func @reduction
// CHECK: memref.load %arg1
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.transfer_read %arg0[{{.*}}]{{.*}} : memref<4x16x16xf32>, vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: memref.store {{.*}}, %arg1
// CHECK-NOT: linalg.generic
#in = affine_map<(c, h, w) -> (c, h, w)>
#out = affine_map<(c, h, w) -> (c)>
func.func @reduction(%x: memref<4x16x16xf32>, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<4x16x16xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sum over the last dim of rows whose number is known only at run time
// (LayerNorm's mean over a run-time batch): one loop over the rows around a
// static block of one row, vectorized as above (the row's views fold into
// the transfers). The chunks of a row add up lane by lane in a vector of
// partial sums, reduced across its lanes once, after the row's loop.
// CHECK-LABEL: func.func @reduction_runtime_rows
// CHECK: %[[N:.*]] = memref.dim %arg0, %c0
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %c0 to %[[N]] step %c1
// CHECK: vector.transfer_read %arg1[%[[I]], {{.*}} : memref<?x16xf32>, vector<1xf32>
// CHECK: %[[ROW:[a-z0-9_]+]]:2 = scf.for {{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.*}}, %[[PART:[a-z0-9_]+]] = %{{.*}}) -> (vector<1x1xf32>, vector<16xf32>)
// CHECK: %[[X:.*]] = vector.transfer_read %arg0[%[[I]], {{.*}} : memref<?x16x64xf32>, vector<16xf32>
// CHECK-NOT: vector.reduction
// CHECK: %[[NEXT:.*]] = arith.addf %[[PART]], %[[X]] : vector<16xf32>
// CHECK: scf.yield %[[ACC]], %[[NEXT]]
// CHECK: %[[A:.*]] = vector.extract %[[ROW]]#0[0, 0]
// CHECK: vector.reduction <add>, %[[ROW]]#1, %[[A]]
// CHECK-NOT: linalg.generic
#rin = affine_map<(n, s, d) -> (n, s, d)>
#rout = affine_map<(n, s, d) -> (n, s)>
func.func @reduction_runtime_rows(%x: memref<?x16x64xf32>, %o: memref<?x16xf32>) {
  linalg.generic {indexing_maps = [#rin, #rout], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x16x64xf32>) outs(%o : memref<?x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The minimum of a whole tensor (DynamicQuantizeLinear's range): 8 chunks
// of 4096, each into a partial of its own started from the output's value
// (threads take chunks), then the partials into the output: a min is the
// same in any order. In a chunk, a vector of partial minima from +inf
// across the rows, reduced across its lanes once after them.
// CHECK-LABEL: func.func @reduction_min_all
// CHECK: memref.expand_shape {{.*}} output_shape [8, 4096]
// CHECK: %[[PARTS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK: %[[INIT:.*]] = memref.load %arg1[] : memref<f32>
// CHECK: linalg.fill ins(%[[INIT]] : f32) outs(%[[PARTS]] : memref<8xf32>)
// CHECK: scf.for %[[C:[a-z0-9_]+]] =
// CHECK: %[[INF:[a-z0-9_]+]] = arith.constant dense<0x7F800000> : vector<256xf32>
// CHECK: %[[R:[a-z0-9_]+]]:2 = scf.for {{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.*}}, %[[PART:[a-z0-9_]+]] = %[[INF]])
// CHECK-NOT: vector.reduction
// CHECK: arith.minimumf %[[PART]], %{{.*}} : vector<256xf32>
// CHECK: scf.yield %[[ACC]],
// CHECK: vector.reduction <minimumf>, %[[R]]#1
// CHECK: memref.store %{{.*}}, %[[PARTS]][%[[C]]]
// CHECK: } {kiln.parallel}
// CHECK: vector.load %[[PARTS]][%{{.*}}] : memref<8xf32>, vector<8xf32>
// CHECK: vector.reduction <minimumf>
// CHECK: memref.store %{{.*}}, %arg1[] : memref<f32>
#zin = affine_map<(b, n, d) -> (b, n, d)>
#zout = affine_map<(b, n, d) -> ()>
func.func @reduction_min_all(%x: memref<1x128x256xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [#zin, #zout], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%x : memref<1x128x256xf32>) outs(%o : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.minimumf %a, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A body that computes its term first (a max of -x): the chunks run the
// whole body, the partials are combined by the max alone (negated again,
// the result would be wrong).
// CHECK-LABEL: func.func @reduction_max_of_term
// CHECK: arith.negf
// CHECK: } {kiln.parallel}
// CHECK-NOT: arith.negf
// CHECK: vector.reduction <maximumf>
// CHECK: memref.store %{{.*}}, %arg1[] : memref<f32>
#tin = affine_map<(b, n, d) -> (b, n, d)>
#tout = affine_map<(b, n, d) -> ()>
func.func @reduction_max_of_term(%x: memref<1x128x256xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [#tin, #tout], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%x : memref<1x128x256xf32>) outs(%o : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.negf %a : f32
    %m = arith.maximumf %acc, %n : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A run-time size in the innermost loop (Softmax over a run-time sequence)
// stays on the naive loops.
// CHECK-LABEL: func.func @reduction_runtime_inner
// CHECK-NOT: scf.for
// CHECK: linalg.generic
#qin = affine_map<(n, d) -> (n, d)>
#qout = affine_map<(n, d) -> (n)>
func.func @reduction_runtime_inner(%x: memref<16x?xf32>, %o: memref<16xf32>) {
  linalg.generic {indexing_maps = [#qin, #qout], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x?xf32>) outs(%o : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Only k is split into cache blocks (384 = 3 x 128): threads split the
// register tile rows inside each k block, never the k blocks.
// AVX2-LABEL: func.func @k_blocks_only
// AVX2: scf.for {{.*}} to %c384 step %c128 {
// AVX2: } {kiln.parallel}
// AVX2-NEXT: }
// AVX2-NEXT: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @k_blocks_only(%a: memref<48x384xf32>, %b: memref<384x196xf32>, %c: memref<48x196xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<48x384xf32>, memref<384x196xf32>) outs(%c : memref<48x196xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Neither n nor k is blocked: blocks of rows would keep nothing in cache
// and cost a dispatch each, so the 48 register tile rows are one loop that
// threads split once.
// AVX2-LABEL: func.func @three_row_blocks
// AVX2-NOT: step %c64
// AVX2: scf.for {{.*}} = %c0 to %c192 step %c6 {
// AVX2: } {kiln.parallel}
// AVX2-NEXT: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @three_row_blocks(%a: memref<192x32xf32>, %b: memref<32x392xf32>, %c: memref<192x392xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<192x32xf32>, memref<32x392xf32>) outs(%c : memref<192x392xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 28x28 map's 784 columns in cache blocks of 112, whole 16-wide tiles:
// a row of register tiles reads a 128 x 112 block of B, not 128 x 784.
// AVX2-LABEL: func.func @column_blocks
// AVX2: scf.for {{.*}} = %c0 to %c784 step %c112 {
// AVX2: scf.for {{.*}} = %c0 to %c256 step %c128 {
// AVX2: vector<6x16xf32>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @column_blocks(%a: memref<48x256xf32>, %b: memref<256x784xf32>, %c: memref<48x784xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<48x256xf32>, memref<256x784xf32>) outs(%c : memref<48x784xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Threads split the register tile rows, and 32 rows in tiles of 6 would
// leave 2 peeled rows to run after the split on one thread: 4-row tiles
// split evenly instead (as a mobilenet_v2 192 -> 32 projection).
// AVX2-LABEL: func.func @leftover_rows
// AVX2-NOT: step %c6 {
// AVX2: scf.for {{.*}} = %c0 to %c32 step %c4 {
// AVX2: vector<4x16xf32>
// AVX2: } {kiln.parallel}
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @leftover_rows(%a: memref<32x192xf32>, %b: memref<192x392xf32>, %c: memref<32x392xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<32x192xf32>, memref<192x392xf32>) outs(%c : memref<32x392xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two 1x1 convs into one reused buffer (as bufferization shares it): the
// second finds it already collapsed and gets its Relu in registers too.
// CHECK-LABEL: func.func @epilogue_reused_buffer
// CHECK: arith.maximumf {{.*}} : vector<32xf32>
// CHECK: memref.copy
// CHECK: arith.maximumf {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
#cx = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#cw = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#co = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
#e4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @epilogue_reused_buffer(%x: memref<1x8x4x8xf32>, %x2: memref<1x8x4x8xf32>, %w: memref<16x8x1x1xf32>, %keep: memref<1x16x4x8xf32>) -> memref<1x16x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %o = memref.alloc() {alignment = 64 : i64} : memref<1x16x4x8xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x16x4x8xf32>)
  linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x8x4x8xf32>, memref<16x8x1x1xf32>) outs(%o : memref<1x16x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#e4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o : memref<1x16x4x8xf32>) outs(%o : memref<1x16x4x8xf32>) {
  ^bb0(%v: f32, %u: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %o, %keep : memref<1x16x4x8xf32> to memref<1x16x4x8xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x16x4x8xf32>)
  linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x2, %w : memref<1x8x4x8xf32>, memref<16x8x1x1xf32>) outs(%o : memref<1x16x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#e4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o : memref<1x16x4x8xf32>) outs(%o : memref<1x16x4x8xf32>) {
  ^bb0(%v: f32, %u: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return %o : memref<1x16x4x8xf32>
}

// -----

// A depthwise conv with padding 1 and a bias, as bufferization leaves it:
// the input copied into a zero-filled padded buffer, the output filled
// with the bias per channel, on rows wider than 32 columns. Each channel's plane is padded in a scratch
// buffer instead (the padded copy and its fill are gone; a row's chunks
// are shuffles of two loads, shifted by the pad), and the accumulators
// start from the channel's bias in registers (no pass over the output
// before the conv).
// CHECK-LABEL: func.func @depthwise_padded_bias
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK-NOT: memref<1x4x50x50xf32>
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %c0 to %c4
// CHECK: %[[BIAS:[a-z0-9_]+]] = memref.load %arg2[%[[M]]]
// CHECK: %[[INIT:[a-z0-9_]+]] = vector.broadcast %[[BIAS]] : f32 to vector<16xf32>
// CHECK: %[[PLANE:[a-z0-9_]+]] = memref.alloc() : memref<1x50x64xf32>
// CHECK: vector.transfer_write %cst, %[[PLANE]][%c0, %c0, %c0]
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %c0 to %c48
// CHECK: %[[R:[a-z0-9_]+]] = arith.addi %[[I]], %c1
// CHECK: %[[X0:[a-z0-9_]+]] = vector.transfer_read %arg0[%c0, %[[M]], %[[I]], %c0]
// CHECK: %[[S0:[a-z0-9_]+]] = vector.shuffle %cst{{.*}}, %[[X0]] [15, 16, 17,
// CHECK: vector.transfer_write %[[S0]], %[[PLANE]][%c0, %[[R]], %c0]
// CHECK: %[[X1:[a-z0-9_]+]] = vector.transfer_read %arg0[%c0, %[[M]], %[[I]], %c16]
// CHECK: vector.shuffle %[[X0]], %[[X1]] [15, 16, 17,
// CHECK: vector.transfer_write %cst, %[[PLANE]][%c0, %c49, %c0]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]], %{{.*}} = %[[INIT]]
// CHECK: vector.transfer_read %[[PLANE]]
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
#qX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#qW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#qO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
#qB = affine_map<(n, c, h, w) -> (c)>
#qI = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @depthwise_padded_bias(%x: memref<1x4x48x48xf32>, %w: memref<4x1x3x3xf32>, %b: memref<4xf32>, %o: memref<1x4x48x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x4x50x50xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x4x50x50xf32>)
  %in = memref.subview %p[0, 0, 1, 1] [1, 4, 48, 48] [1, 1, 1, 1] : memref<1x4x50x50xf32> to memref<1x4x48x48xf32, strided<[10000, 2500, 50, 1], offset: 51>>
  memref.copy %x, %in : memref<1x4x48x48xf32> to memref<1x4x48x48xf32, strided<[10000, 2500, 50, 1], offset: 51>>
  linalg.generic {indexing_maps = [#qB, #qI], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<4xf32>) outs(%o : memref<1x4x48x48xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#qX, #qW, #qO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%p, %w : memref<1x4x50x50xf32>, memref<4x1x3x3xf32>) outs(%o : memref<1x4x48x48xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<1x4x50x50xf32>
  return
}

// -----

// The same stepping 2 (stride 2, AVX-512): no plane and no padded copy.
// Each source row a block of output rows needs is read once as it lies,
// a 32-wide load per 16 outputs, its odd and even columns two shuffles;
// tap 0 (column 2 * ow - 1) is the odd phase shifted in a lane of the pad.
// 24-wide rows are two chunks, four rows per block (eight accumulators,
// from the bias); a row above or below the source is the pad (scf.if, its
// results the accumulators of the rows that read it: the block's first
// source row, only its first output row's); each output takes its taps in
// (kh, kw) order.
// CHECK-LABEL: func.func @depthwise_stride2_padded_bias
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %c0 to %c4
// CHECK: memref.load %arg2[%[[M]]]
// CHECK: scf.for %{{.*}} = %c0 to %c24 step %c4
// CHECK: arith.cmpi ult
// CHECK: scf.if {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: %[[W:.*]] = vector.transfer_read %arg0{{.*}} : memref<1x4x48x48xf32>, vector<32xf32>
// CHECK: %[[ODD:.*]] = vector.shuffle %[[W]], %[[W]] [1, 3, 5,
// CHECK: vector.shuffle %{{.*}}, %[[ODD]] [15, 16, 17,
// CHECK: vector.shuffle %[[W]], %[[W]] [0, 2, 4,
// CHECK: vector.fma
// CHECK: } else {
// CHECK: vector.fma
// CHECK: vector.transfer_write {{.*}}, %arg3{{.*}} : vector<16xf32>, memref<1x4x24x24xf32>
// CHECK-NOT: linalg.
// CHECK: return
#tX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh * 2 + kh, ow * 2 + kw)>
#tW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#tO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
#tB = affine_map<(n, c, h, w) -> (c)>
#tI = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @depthwise_stride2_padded_bias(%x: memref<1x4x48x48xf32>, %w: memref<4x1x3x3xf32>, %b: memref<4xf32>, %o: memref<1x4x24x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x4x50x50xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x4x50x50xf32>)
  %in = memref.subview %p[0, 0, 1, 1] [1, 4, 48, 48] [1, 1, 1, 1] : memref<1x4x50x50xf32> to memref<1x4x48x48xf32, strided<[10000, 2500, 50, 1], offset: 51>>
  memref.copy %x, %in : memref<1x4x48x48xf32> to memref<1x4x48x48xf32, strided<[10000, 2500, 50, 1], offset: 51>>
  linalg.generic {indexing_maps = [#tB, #tI], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<4xf32>) outs(%o : memref<1x4x24x24xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#tX, #tW, #tO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%p, %w : memref<1x4x50x50xf32>, memref<4x1x3x3xf32>) outs(%o : memref<1x4x24x24xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<1x4x50x50xf32>
  return
}

// -----

// The same on rows of 32 columns: no plane either. Each block loads each
// source row it needs once, two chunks (pad rows outside the source), and
// a tap's vector is a shift of two neighbouring chunks (the pad beyond the
// row's ends): left for kw = 0, none for kw = 1, right for kw = 2.
// CHECK-LABEL: func.func @depthwise_shifted_taps
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK-NOT: memref.alloc
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %c0 to %c4
// CHECK: %[[INIT:[a-z0-9_]+]] = vector.broadcast {{.*}} : f32 to vector<16xf32>
// CHECK: scf.for %[[OH:[a-z0-9_]+]] = %c0 to %c32 step %c4
// CHECK: %[[UP:[a-z0-9_]+]] = arith.addi %[[OH]], %c-1
// CHECK: %[[IN:[a-z0-9_]+]] = arith.andi
// CHECK: %[[ROW:[a-z0-9_]+]]:2 = scf.if %[[IN]] -> (vector<16xf32>, vector<16xf32>)
// CHECK: vector.transfer_read %arg0[%c0, %[[M]], %[[UP]], %c0]
// CHECK: vector.transfer_read %arg0[%c0, %[[M]], %[[UP]], %c16]
// CHECK: } else {
// CHECK: scf.yield %[[PAD:[a-z0-9_]+]], %[[PAD]]
// CHECK: %[[L:[a-z0-9_]+]] = vector.shuffle %[[PAD]], %[[ROW]]#0 [15, 16, 17,
// CHECK: vector.fma %[[L]], %{{.*}}, %[[INIT]]
// CHECK: vector.shuffle %[[ROW]]#0, %[[ROW]]#1 [15, 16, 17,
// CHECK: vector.fma %[[ROW]]#0
// CHECK: vector.shuffle %[[ROW]]#0, %[[ROW]]#1 [1, 2, 3,
// CHECK: vector.shuffle %[[ROW]]#1, %[[PAD]] [1, 2, 3,
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.
// CHECK: return
#tX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#tW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#tO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
#tB = affine_map<(n, c, h, w) -> (c)>
#tI = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @depthwise_shifted_taps(%x: memref<1x4x32x32xf32>, %w: memref<4x1x3x3xf32>, %b: memref<4xf32>, %o: memref<1x4x32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x4x34x34xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x4x34x34xf32>)
  %in = memref.subview %p[0, 0, 1, 1] [1, 4, 32, 32] [1, 1, 1, 1] : memref<1x4x34x34xf32> to memref<1x4x32x32xf32, strided<[4624, 1156, 34, 1], offset: 35>>
  memref.copy %x, %in : memref<1x4x32x32xf32> to memref<1x4x32x32xf32, strided<[4624, 1156, 34, 1], offset: 35>>
  linalg.generic {indexing_maps = [#tB, #tI], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<4xf32>) outs(%o : memref<1x4x32x32xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#tX, #tW, #tO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%p, %w : memref<1x4x34x34xf32>, memref<4x1x3x3xf32>) outs(%o : memref<1x4x32x32xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<1x4x34x34xf32>
  return
}

// -----

// Seven blocks of 4 output rows (64 to 128 channels, 28x28) would leave one
// of two threads idle for a block: the last block's matmul runs as two
// tasks, on 64 output channels each, both im2col-ing that block.
// CHECK-LABEL: func.func @conv_odd_blocks
// CHECK: scf.for %[[T:.*]] = %c0 to %c8 step %c1 {
// CHECK: %[[B:.*]] = arith.minui %[[T]], %c6
// CHECK: memref.alloc() : memref<1x64x3x3x4x28xf32>
// CHECK: %[[WHOLE:.*]] = arith.cmpi ult, %[[T]], %c6
// CHECK: scf.if %[[WHOLE]] {
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c{{4|8}}
// CHECK: } else {
// CHECK: %[[H:.*]] = arith.subi %[[T]], %c6
// CHECK: arith.muli %[[H]], %c64
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c{{4|8}}
// CHECK: } {kiln.parallel = 1 : i64}
// CHECK-NEXT: return
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_odd_blocks(%x: memref<1x64x30x30xf32>, %w: memref<128x64x3x3xf32>, %o: memref<1x128x28x28xf32>) {
  linalg.generic {indexing_maps = [#mX, #mW, #mO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x64x30x30xf32>, memref<128x64x3x3xf32>) outs(%o : memref<1x128x28x28xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 1x1 conv whose output is first filled with its bias per channel: the
// accumulator rows start from the bias in registers (C read as a view of the
// bias with zero strides off the channel dim), and the pass that wrote the
// bias over the whole output goes.
// CHECK-LABEL: func.func @conv_bias_in_registers
// CHECK: %[[B:.*]] = memref.reinterpret_cast %arg2 to offset: [0], sizes: [1, 16, 32], strides: [0, 1, 0]
// CHECK-NOT: vector.transfer_write
// CHECK: scf.for %[[M:.*]] = %c0 to %c16 step %c8 {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[B]][%c0, %[[M]], %c0]
// CHECK-NEXT: vector.broadcast %[[V]] : f32 to vector<32xf32>
// CHECK-NOT: vector.transfer_read %alloc
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: linalg.generic
// CHECK: return
#cx = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#cw = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#co = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
#bc = affine_map<(n, c, h, w) -> (c)>
#e4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @conv_bias_in_registers(%x: memref<1x8x4x8xf32>, %w: memref<16x8x1x1xf32>, %bias: memref<16xf32>) -> memref<1x16x4x8xf32> {
  %o = memref.alloc() {alignment = 64 : i64} : memref<1x16x4x8xf32>
  linalg.generic {indexing_maps = [#bc, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<16xf32>) outs(%o : memref<1x16x4x8xf32>) {
  ^bb0(%b: f32, %u: f32):
    linalg.yield %b : f32
  }
  linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x8x4x8xf32>, memref<16x8x1x1xf32>) outs(%o : memref<1x16x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %o : memref<1x16x4x8xf32>
}

// -----

// Two depthwise convs as bufferization leaves mobilenet_v2's: one
// zero-filled padded buffer shared by both, copied whole for the first, the
// second padding into it in place; each conv's output (and bias) written
// over its own input. On a 48x48 plane each thread pads the channel's plane
// in scratch instead: no copy is left, nor the shared fill.
// CHECK-LABEL: func.func @depthwise_shared_pad_in_place
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK-NOT: memref<1x2x50x50xf32>
// CHECK: memref.alloc() : memref<1x50x64xf32>
// CHECK: vector.fma
// CHECK: memref.alloc() : memref<1x50x64xf32>
// CHECK: vector.fma
// CHECK-NOT: memref.copy
// CHECK: return
#sX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#sW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#sO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
#sB = affine_map<(n, c, h, w) -> (c)>
#sI = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @depthwise_shared_pad_in_place(%x: memref<1x2x48x48xf32>, %y: memref<1x2x48x48xf32>, %w: memref<2x1x3x3xf32>, %b: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x50x50xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x2x50x50xf32>)
  %q = memref.alloc() {alignment = 64 : i64} : memref<1x2x50x50xf32>
  memref.copy %p, %q : memref<1x2x50x50xf32> to memref<1x2x50x50xf32>
  %in = memref.subview %q[0, 0, 1, 1] [1, 2, 48, 48] [1, 1, 1, 1] : memref<1x2x50x50xf32> to memref<1x2x48x48xf32, strided<[5000, 2500, 50, 1], offset: 51>>
  memref.copy %x, %in : memref<1x2x48x48xf32> to memref<1x2x48x48xf32, strided<[5000, 2500, 50, 1], offset: 51>>
  linalg.generic {indexing_maps = [#sB, #sI], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<2xf32>) outs(%x : memref<1x2x48x48xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#sX, #sW, #sO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%q, %w : memref<1x2x50x50xf32>, memref<2x1x3x3xf32>) outs(%x : memref<1x2x48x48xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %in2 = memref.subview %p[0, 0, 1, 1] [1, 2, 48, 48] [1, 1, 1, 1] : memref<1x2x50x50xf32> to memref<1x2x48x48xf32, strided<[5000, 2500, 50, 1], offset: 51>>
  memref.copy %y, %in2 : memref<1x2x48x48xf32> to memref<1x2x48x48xf32, strided<[5000, 2500, 50, 1], offset: 51>>
  linalg.generic {indexing_maps = [#sB, #sI], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<2xf32>) outs(%y : memref<1x2x48x48xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#sX, #sW, #sO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%p, %w : memref<1x2x50x50xf32>, memref<2x1x3x3xf32>) outs(%y : memref<1x2x48x48xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %q : memref<1x2x50x50xf32>
  memref.dealloc %p : memref<1x2x50x50xf32>
  return
}

// -----

// The same on a 28x28 plane, its output in the source's buffer: each
// channel's plane is copied before its first output row overwrites the
// source (taps shifted in registers would read rows already stored over),
// and no padded copy is made.
// CHECK-LABEL: func.func @depthwise_shared_pad_small
// CHECK-NOT: memref.copy
// CHECK: memref.alloc() : memref<1x30x48xf32>
// CHECK-NOT: memref.copy
// CHECK: vector.fma
// CHECK: return
#sX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#sW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#sO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
#sB = affine_map<(n, c, h, w) -> (c)>
#sI = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @depthwise_shared_pad_small(%x: memref<1x2x28x28xf32>, %w: memref<2x1x3x3xf32>, %b: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x30x30xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x2x30x30xf32>)
  %q = memref.alloc() {alignment = 64 : i64} : memref<1x2x30x30xf32>
  memref.copy %p, %q : memref<1x2x30x30xf32> to memref<1x2x30x30xf32>
  %in = memref.subview %q[0, 0, 1, 1] [1, 2, 28, 28] [1, 1, 1, 1] : memref<1x2x30x30xf32> to memref<1x2x28x28xf32, strided<[1800, 900, 30, 1], offset: 31>>
  memref.copy %x, %in : memref<1x2x28x28xf32> to memref<1x2x28x28xf32, strided<[1800, 900, 30, 1], offset: 31>>
  linalg.generic {indexing_maps = [#sB, #sI], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : memref<2xf32>) outs(%x : memref<1x2x28x28xf32>) {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#sX, #sW, #sO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%q, %w : memref<1x2x30x30xf32>, memref<2x1x3x3xf32>) outs(%x : memref<1x2x28x28xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %q : memref<1x2x30x30xf32>
  memref.dealloc %p : memref<1x2x30x30xf32>
  return
}

// -----

// 192 rows in cache blocks of 64 would be 3 blocks, and no loop inside
// has the ranges for the threads (784 columns in 7 blocks of 112): the
// threads would run the blocks 2:1. 4 blocks of 48 rows instead (a
// mobilenet_v2 32 -> 192 1x1 conv on a 28x28 map).
// CHECK-LABEL: func.func @row_blocks_odd
// CHECK: scf.for {{.*}} = %c0 to %c192 step %c48 {
// CHECK: scf.for {{.*}} = %c0 to %c784 step %c112 {
// CHECK: scf.for {{.*}} = %c0 to %c48 step %c8 {
// CHECK: } {kiln.parallel}
// CHECK-NEXT: return
// AVX2-LABEL: func.func @row_blocks_odd
// AVX2: scf.for {{.*}} = %c0 to %c192 step %c48 {
// AVX2: scf.for {{.*}} = %c0 to %c48 step %c6 {
// AVX2: } {kiln.parallel}
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @row_blocks_odd(%a: memref<192x32xf32>, %b: memref<32x784xf32>, %c: memref<192x784xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<192x32xf32>, memref<32x784xf32>) outs(%c : memref<192x784xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows in 2 cache blocks of 64 around 3 k blocks (a BERT-base projection's
// shape): the register tile rows inside split as before, and the row
// blocks carry the even-shares grain (-1): with 2 (or 1) threads the
// runtime splits them instead, one dispatch in all; with 3 or 4 the rows.
// The k blocks never split.
// (A block's 64 rows are 10 tiles of 6 and a peeled tile of 4, which runs
// after them on the thread that has the block.)
// AVX2-LABEL: func.func @row_blocks_even
// AVX2: scf.for {{.*}} = %c0 to %c128 step %c64 {
// AVX2: scf.for {{.*}} = %c0 to %c768 step %c{{[0-9]+}} {
// AVX2: scf.for {{.*}} = %c0 to %c60 step %c6 {
// AVX2: } {kiln.parallel}
// AVX2: vector<4x16xf32>
// AVX2: } {kiln.parallel = -1 : i64}
// AVX2-NEXT: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @row_blocks_even(%a: memref<128x768xf32>, %b: memref<768x96xf32>, %c: memref<128x96xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<128x768xf32>, memref<768x96xf32>) outs(%c : memref<128x96xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Constant weights (a MatMul's B) are packed at compile time into panels
// as wide as the register tile, [N / 16][K][16] for AVX2; each panel's rows
// follow one another, and one matmul per panel reads it (threads take the
// panels). Element (k, n) = 100 k + n: panel 0 holds columns 0-15 of row 0
// (0.0 = 00000000, 1.0 = 0000803F, ..., 15.0 = 00007041), then of row 1
// (100.0 = 0000C842). With AVX-512 (32-wide panels) 64 columns are too few.
// On panels the tile keeps 4 rows (6 measured slower there).
// AVX2-LABEL: memref.global "private" constant @w_panels16 : memref<4x2x16xf32> = dense<"0x000000000000803F{{[0-9A-F]*}}000070410000C842
// AVX2-LABEL: func.func @packed_b
// AVX2: memref.get_global @w_panels16 : memref<4x2x16xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// AVX2: scf.for %{{.*}} = %c0 to %c8 step %c4 {
// AVX2: vector.fma {{.*}} : vector<16xf32>
// CHECK-LABEL: func.func @packed_b
// CHECK-NOT: _panels
// CHECK: return
memref.global "private" constant @w : memref<2x64xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0, 129.0, 130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0, 138.0, 139.0, 140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0, 148.0, 149.0, 150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0, 158.0, 159.0, 160.0, 161.0, 162.0, 163.0]]>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @packed_b(%a: memref<8x2xf32>, %c: memref<8x64xf32>) {
  %b = memref.get_global @w : memref<2x64xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x2xf32>, memref<2x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same with B transposed (Gemm's transB = 1: B is [N, K], element
// (n, k) = 100 k + n): the panels hold the same values in the same order.
// AVX2-LABEL: memref.global "private" constant @wt_panels16 : memref<4x2x16xf32> = dense<"0x000000000000803F{{[0-9A-F]*}}000070410000C842
// AVX2-LABEL: func.func @packed_transposed_b
// AVX2: memref.get_global @wt_panels16 : memref<4x2x16xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// AVX2: vector.fma {{.*}} : vector<16xf32>
memref.global "private" constant @wt : memref<64x2xf32> = dense<[
    [0.0, 100.0],
    [1.0, 101.0],
    [2.0, 102.0],
    [3.0, 103.0],
    [4.0, 104.0],
    [5.0, 105.0],
    [6.0, 106.0],
    [7.0, 107.0],
    [8.0, 108.0],
    [9.0, 109.0],
    [10.0, 110.0],
    [11.0, 111.0],
    [12.0, 112.0],
    [13.0, 113.0],
    [14.0, 114.0],
    [15.0, 115.0],
    [16.0, 116.0],
    [17.0, 117.0],
    [18.0, 118.0],
    [19.0, 119.0],
    [20.0, 120.0],
    [21.0, 121.0],
    [22.0, 122.0],
    [23.0, 123.0],
    [24.0, 124.0],
    [25.0, 125.0],
    [26.0, 126.0],
    [27.0, 127.0],
    [28.0, 128.0],
    [29.0, 129.0],
    [30.0, 130.0],
    [31.0, 131.0],
    [32.0, 132.0],
    [33.0, 133.0],
    [34.0, 134.0],
    [35.0, 135.0],
    [36.0, 136.0],
    [37.0, 137.0],
    [38.0, 138.0],
    [39.0, 139.0],
    [40.0, 140.0],
    [41.0, 141.0],
    [42.0, 142.0],
    [43.0, 143.0],
    [44.0, 144.0],
    [45.0, 145.0],
    [46.0, 146.0],
    [47.0, 147.0],
    [48.0, 148.0],
    [49.0, 149.0],
    [50.0, 150.0],
    [51.0, 151.0],
    [52.0, 152.0],
    [53.0, 153.0],
    [54.0, 154.0],
    [55.0, 155.0],
    [56.0, 156.0],
    [57.0, 157.0],
    [58.0, 158.0],
    [59.0, 159.0],
    [60.0, 160.0],
    [61.0, 161.0],
    [62.0, 162.0],
    [63.0, 163.0]]>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (n, k)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @packed_transposed_b(%a: memref<8x2xf32>, %c: memref<8x64xf32>) {
  %b = memref.get_global @wt : memref<64x2xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x2xf32>, memref<64x2xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Weights that a one-row matmul also reads (the last rows of a run-time
// row count) stay as they lie for both: panels would be a second copy.
// AVX2-LABEL: func.func @shared_weights_not_packed
// AVX2-NOT: _panels
// AVX2: return
memref.global "private" constant @ws : memref<2x64xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @shared_weights_not_packed(%a: memref<8x2xf32>, %c: memref<8x64xf32>, %a1: memref<1x2xf32>, %c1: memref<1x64xf32>) {
  %b = memref.get_global @ws : memref<2x64xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x2xf32>, memref<2x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a1, %b : memref<1x2xf32>, memref<2x64xf32>) outs(%c1 : memref<1x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A GEMV (one or two rows) gets panels as wide as its 8-vector tile:
// [N / 64][K][64] with AVX2, each tile one stream through its panel with
// its accumulators in registers for the whole k loop. With AVX-512
// (128-wide panels) 256 columns are too few.
// AVX2-LABEL: memref.global "private" constant @wg_panels64 : memref<4x2x64xf32>
// AVX2-LABEL: func.func @gemv_packed_b
// AVX2: memref.get_global @wg_panels64 : memref<4x2x64xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// AVX2: scf.for {{.*}} iter_args({{.*}}) -> (vector<1x64xf32>)
// AVX2: vector.fma {{.*}} : vector<64xf32>
// CHECK-LABEL: func.func @gemv_packed_b
// CHECK-NOT: _panels
// CHECK: return
memref.global "private" constant @wg : memref<2x256xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @gemv_packed_b(%a: memref<1x2xf32>, %c: memref<1x256xf32>) {
  %b = memref.get_global @wg : memref<2x256xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x2xf32>, memref<2x256xf32>) outs(%c : memref<1x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A GEMV on B as it lies (not constant here; GPT-2's logits, whose 50257
// columns are not whole panels): k blocks of 4 rows around tiles that read
// those rows whole, a few streams along rows, not a short read from
// another page at every k step; no column blocks. Threads split each
// block's tiles.
// AVX2-LABEL: func.func @gemv_row_blocks
// AVX2: scf.for %{{.*}} = %c0 to %c128 step %c4 {
// AVX2-NEXT: scf.for %{{.*}} = %c0 to %c16384 step %c64 {
// AVX2: scf.for {{.*}} = %c0 to %c4 step %c1 iter_args({{.*}}) -> (vector<1x64xf32>)
// AVX2: } {kiln.parallel}
// CHECK-LABEL: func.func @gemv_row_blocks
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c4 {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c16384 step %c128 {
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @gemv_row_blocks(%a: memref<1x128xf32>, %b: memref<128x16400xf32>, %c: memref<1x16400xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x128xf32>, memref<128x16400xf32>) outs(%c : memref<1x16400xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two rows: with AVX2, tiles (and panels) 32 wide, two rows of 4 vectors
// (two of 8 would take all 16 registers and spill).
// AVX2-LABEL: memref.global "private" constant @wg2_panels32 : memref<8x2x32xf32>
// AVX2-LABEL: func.func @gemv_two_rows
// AVX2: scf.for {{.*}} iter_args({{.*}}) -> (vector<2x32xf32>)
// AVX2-NOT: vector<2x64xf32>
// AVX2: return
memref.global "private" constant @wg2 : memref<2x256xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @gemv_two_rows(%a: memref<2x2xf32>, %c: memref<2x256xf32>) {
  %b = memref.get_global @wg2 : memref<2x256xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<2x2xf32>, memref<2x256xf32>) outs(%c : memref<2x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Columns that do not fill the last panel (72 = 4 x 16 + 8): it is
// zero-padded, and one more matmul after the panel loop reads its first 8
// columns (a classifier's 1000 outputs, GPT-2's 50257).
// AVX2-LABEL: memref.global "private" constant @wp_panels16 : memref<5x2x16xf32>
// AVX2-LABEL: func.func @padded_last_panel
// AVX2: memref.get_global @wp_panels16 : memref<5x2x16xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// AVX2: vector.transfer_read %arg1[%{{.*}}, %c64]{{.*}} vector<8xf32>
// AVX2: vector.transfer_read %{{.*}}[%c4, %{{.*}}, %c0]{{.*}} : memref<5x2x16xf32>, vector<8xf32>
// AVX2: return
memref.global "private" constant @wp : memref<2x72xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @padded_last_panel(%a: memref<8x2xf32>, %c: memref<8x72xf32>) {
  %b = memref.get_global @wp : memref<2x72xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x2xf32>, memref<2x72xf32>) outs(%c : memref<8x72xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Columns past the last whole vector split off before tiling (28 = 16 + 8
// + 4 on AVX2): the remainders are whole vectors, then one 4-wide tile,
// never a 12-lane vector, which LLVM lowers about ten times slower.
// AVX2-LABEL: func.func @narrow_columns_split
// AVX2-NOT: vector<12xf32>
// AVX2-DAG: vector<16xf32>
// AVX2-DAG: vector<8xf32>
// AVX2-DAG: vector<4xf32>
// AVX2-NOT: vector<12xf32>
// AVX2: return
#nA = affine_map<(m, k, n) -> (m, k)>
#nB = affine_map<(m, k, n) -> (k, n)>
#nC = affine_map<(m, k, n) -> (m, n)>
func.func @narrow_columns_split(%a: memref<48x128xf32>, %b: memref<128x28xf32>, %c: memref<48x28xf32>) {
  linalg.generic {indexing_maps = [#nA, #nB, #nC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<48x128xf32>, memref<128x28xf32>) outs(%c : memref<48x28xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 12 columns, between one and two of AVX2's vectors: an 8-wide tile and a
// peeled 4-wide one.
// AVX2-LABEL: func.func @twelve_columns
// AVX2-NOT: vector<12xf32>
// AVX2-DAG: vector<8xf32>
// AVX2-DAG: vector<4xf32>
// AVX2-NOT: vector<12xf32>
// AVX2: return
#nA = affine_map<(m, k, n) -> (m, k)>
#nB = affine_map<(m, k, n) -> (k, n)>
#nC = affine_map<(m, k, n) -> (m, n)>
func.func @twelve_columns(%a: memref<48x128xf32>, %b: memref<128x12xf32>, %c: memref<48x12xf32>) {
  linalg.generic {indexing_maps = [#nA, #nB, #nC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<48x128xf32>, memref<128x12xf32>) outs(%c : memref<48x12xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 7x7 plane (49 = 7 x 7 positions) of whole vectors of channels.
// On AVX-512 a direct conv: tiles of 7 positions x 32 channels (8 would
// leave the 49th position a tile of its own, at half a tile's speed), 7
// per panel of channels: 16 x 7 tasks that threads take, each panel's in
// a row, each k step a row of the weights' panels (packed at compile
// time) and 7 broadcasts read from the input in place, the accumulators
// from the bias, through the fused Relu (on the accumulators, 16
// channels a vector), transposed in registers (the 8 x 16 transpose, its
// last row repeated) and stored per channel, 7 positions.
// CHECK-LABEL: func.func @conv_small_plane
// CHECK: %[[PANELS:.*]] = memref.get_global @cw_kxm_panels32 : memref<16x576x32xf32>
// CHECK: %[[X:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [5184], strides: [1]
// CHECK: %[[OUT:.*]] = memref.collapse_shape %arg2 {{.*}} into memref<1x512x49xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c112 step %c1{{.*}} {
// CHECK-NOT: scf.if
// CHECK: vector.load %arg1[%{{.*}}] : memref<512xf32>, vector<16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64
// Each tile prefetches its share of the next panel: 3 lines an input
// channel (576 x 32 floats over 7 tiles and 64 channels).
// CHECK-COUNT-3: memref.prefetch %{{.*}}[%{{.*}}], read, locality<2>, data : memref<294912xf32>
// CHECK-NOT: memref.prefetch
// CHECK: vector.load %[[PANELS]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<16x576x32xf32>, vector<16xf32>
// CHECK: memref.load %[[X]][%{{.*}}] : memref<5184xf32>
// CHECK: vector.fma
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: vector.shuffle
// CHECK-NOT: arith.maximumf
// CHECK: vector.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x512x49xf32>, vector<7xf32>
// CHECK-NOT: vector<1xf32>
// CHECK: } {kiln.parallel
// CHECK-NOT: linalg.generic
// CHECK: return
// With 256-bit vectors, patches^T x weights^T: the patches copied
// k-major a row of 7 at a time, a tile's positions one load per k, each
// broadcast, into a [positions, channels] buffer whose tiles start from
// the bias in registers (no pass writes it into the buffer first: a
// matmul's C init), the weights transposed and packed into panels at
// compile time (4-row tiles, bound by their loads, prefetch nothing),
// then the output written transposed through the fused Relu.
// AVX2-LABEL: func.func @conv_small_plane
// AVX2: %[[COL:.*]] = memref.alloc() : memref<64x3x3x1x7x7xf32>
// AVX2: %[[CT:.*]] = memref.alloc() : memref<49x512xf32>
// AVX2: %[[BIAS:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [49, 512], strides: [0, 1]
// AVX2: memref.get_global @cw_kxm_panels16 : memref<32x576x16xf32>
// AVX2-NOT: memref.prefetch
// AVX2: vector.transfer_read %[[BIAS]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<49x512xf32, strided<[0, 1]>>, vector<16xf32>
// AVX2: vector.fma
// AVX2: vector.transfer_write %{{.*}}, %[[CT]]
// AVX2: linalg.generic
// AVX2-SAME: ins(%{{.*}} : memref<1x7x7x512xf32>) outs(%arg2 : memref<1x512x7x7xf32>)
// AVX2: arith.maximumf
// AVX2-NOT: linalg.generic
// AVX2: return
memref.global "private" constant @cw : memref<512x64x3x3xf32> = dense<0.5>
#bI = affine_map<(n, c, h, w) -> (c)>
#bO = affine_map<(n, c, h, w) -> (n, c, h, w)>
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_small_plane(%x: memref<1x64x9x9xf32>, %bias: memref<512xf32>, %o: memref<1x512x7x7xf32>) {
  %w = memref.get_global @cw : memref<512x64x3x3xf32>
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#bI, #bO], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<512xf32>) outs(%o : memref<1x512x7x7xf32>) {
  ^bb0(%b: f32, %out: f32):
    linalg.yield %b : f32
  }
  linalg.generic {indexing_maps = [#mX, #mW, #mO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x64x9x9xf32>, memref<512x64x3x3xf32>) outs(%o : memref<1x512x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#bO, #bO], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o : memref<1x512x7x7xf32>) outs(%o : memref<1x512x7x7xf32>) {
  ^bb0(%v: f32, %out: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A direct conv on a zero-padded copy (6 source rows in rows 1..6 of 8):
// a tile skips the kernel rows that read only padding for all its
// positions. Each tile's first output row r0 and last r1 (tiles of 8
// positions across rows of 16) bound its kernel rows [yLo, yHi); inner
// tiles (all 3 rows) keep the unrolled taps, border tiles loop over the
// rows they need.
// CHECK-LABEL: func.func @conv_skips_pad_rows
// CHECK: %[[LO:.*]] = arith.subi %c1{{.*}}, %{{.*}} : index
// CHECK: arith.maxsi %[[LO]], %c0{{.*}} : index
// CHECK: %[[YLO:.*]] = arith.divui
// CHECK: %[[HI:.*]] = arith.subi %c7{{.*}}, %{{.*}} : index
// CHECK: arith.maxsi %[[HI]], %c0{{.*}} : index
// CHECK: %[[YHI:.*]] = arith.minsi %{{.*}}, %c3{{.*}} : index
// CHECK: %[[INNER:.*]] = arith.andi
// CHECK: scf.if %[[INNER]] -> (vector<16xf32>,
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step
// CHECK-NOT: scf.for
// CHECK-COUNT-18: vector.load %{{.*}} : memref<2x288x32xf32>, vector<16xf32>
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step
// CHECK: scf.for %{{.*}} = %[[YLO]] to %[[YHI]] step
// CHECK-COUNT-6: vector.load %{{.*}} : memref<2x288x32xf32>, vector<16xf32>
// CHECK-NOT: vector.load %{{.*}} : memref<2x288x32xf32>
// CHECK: } {kiln.parallel
memref.global "private" constant @cw6 : memref<64x32x3x3xf32> = dense<0.5>
#pI = affine_map<(n, c, h, w) -> (c)>
#pO = affine_map<(n, c, h, w) -> (n, c, h, w)>
#pX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#pW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#pOut = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_skips_pad_rows(%x: memref<1x32x6x16xf32>, %bias: memref<64xf32>, %o: memref<1x64x6x16xf32>) {
  %w = memref.get_global @cw6 : memref<64x32x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x32x8x18xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<1x32x8x18xf32>)
  %in = memref.subview %p[0, 0, 1, 1] [1, 32, 6, 16] [1, 1, 1, 1] : memref<1x32x8x18xf32> to memref<1x32x6x16xf32, strided<[4608, 144, 18, 1], offset: 19>>
  memref.copy %x, %in : memref<1x32x6x16xf32> to memref<1x32x6x16xf32, strided<[4608, 144, 18, 1], offset: 19>>
  linalg.generic {indexing_maps = [#pI, #pO], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<64xf32>) outs(%o : memref<1x64x6x16xf32>) {
  ^bb0(%b: f32, %out: f32):
    linalg.yield %b : f32
  }
  linalg.generic {indexing_maps = [#pX, #pW, #pOut],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%p, %w : memref<1x32x8x18xf32>, memref<64x32x3x3xf32>) outs(%o : memref<1x64x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<1x32x8x18xf32>
  return
}

// -----

// A 1x1 conv stepping 2 rows and columns: its input compacted first into
// a plane of the output's size (every other row and column), then the
// stride-1 direct tiles read the compact buffer.
// CHECK-DAG: #[[EVERY2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2, d3 * 2)>
// CHECK-LABEL: func.func @conv1x1_stride2_compacted
// CHECK: %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x32x4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[EVERY2]], #{{.*}}]{{.*}} ins(%arg0 : memref<1x32x8x8xf32>) outs(%[[C]] : memref<1x32x4x4xf32>)
// CHECK: memref.reinterpret_cast %[[C]] to offset: [0], sizes: [512], strides: [1]
// CHECK: vector.fma
memref.global "private" constant @cw2 : memref<64x32x1x1xf32> = dense<0.5>
#sI = affine_map<(n, c, h, w) -> (c)>
#sO = affine_map<(n, c, h, w) -> (n, c, h, w)>
#sX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#sW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#sOut = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv1x1_stride2_compacted(%x: memref<1x32x8x8xf32>, %bias: memref<64xf32>, %o: memref<1x64x4x4xf32>) {
  %w = memref.get_global @cw2 : memref<64x32x1x1xf32>
  linalg.generic {indexing_maps = [#sI, #sO], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<64xf32>) outs(%o : memref<1x64x4x4xf32>) {
  ^bb0(%b: f32, %out: f32):
    linalg.yield %b : f32
  }
  linalg.generic {indexing_maps = [#sX, #sW, #sOut],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x32x8x8xf32>, memref<64x32x1x1xf32>) outs(%o : memref<1x64x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Channel planes 4 KiB apart (32x32): all 32 channel lines of a tile fall
// in one L1 set, so tiles go in pairs: the first one's channel vectors
// wait in a thread scratch, the second's complete them, and each channel's
// 16 positions are stored as one line (64 pair tasks).
// CHECK-LABEL: func.func @conv_plane_lines
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1
// CHECK: %[[HALVES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x8xf32>
// CHECK: vector.fma
// CHECK: vector.store %{{.*}}, %[[HALVES]][%{{.*}}, %c0{{.*}}] : memref<32x8xf32>, vector<8xf32>
// CHECK: vector.fma
// CHECK: %[[LOW:.*]] = vector.load %[[HALVES]][%{{.*}}, %c0{{.*}}] : memref<32x8xf32>, vector<8xf32>
// CHECK: %[[LINE:.*]] = vector.shuffle %[[LOW]], %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK: vector.store %[[LINE]], %{{.*}} : memref<1x32x1024xf32>, vector<16xf32>
// CHECK: } {kiln.parallel
memref.global "private" constant @lw : memref<32x3x3x3xf32> = dense<0.5>
#lX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#lW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#lO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_plane_lines(%x: memref<1x3x34x34xf32>, %o: memref<1x32x32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @lw : memref<32x3x3x3xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x32x32x32xf32>)
  linalg.generic {indexing_maps = [#lX, #lW, #lO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x3x34x34xf32>, memref<32x3x3x3xf32>) outs(%o : memref<1x32x32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 16 output channels (not whole panels of 32): panels of 16, one vector a
// position, tiles of 16 positions (256 = 16 tasks), each channel's 16
// positions joined from two 8 x 16 transposes and stored as one vector.
// CHECK-LABEL: func.func @conv_panels16
// CHECK: memref.get_global @pw16_kxm_panels16 : memref<1x72x16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1
// CHECK: vector.load %[[PANEL:.*]][%{{.*}}, %{{.*}}, %c0{{.*}}] : memref<1x72x16xf32>, vector<16xf32>
// CHECK-NOT: memref<1x72x16xf32>, vector<16xf32>
// CHECK: vector.fma
// CHECK: %[[LINE:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK: vector.store %[[LINE]], %{{.*}} : memref<1x16x256xf32>, vector<16xf32>
// CHECK: } {kiln.parallel
memref.global "private" constant @pw16 : memref<16x8x3x3xf32> = dense<0.5>
#qX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#qW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#qO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_panels16(%x: memref<1x8x18x18xf32>, %o: memref<1x16x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @pw16 : memref<16x8x3x3xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x16x16x16xf32>)
  linalg.generic {indexing_maps = [#qX, #qW, #qO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x8x18x18xf32>, memref<16x8x3x3xf32>) outs(%o : memref<1x16x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 1x1 stride-1 convs: on a 7x7 plane (49 positions, past whole vectors)
// the direct tiles of 7 positions x 32 channels (the matmul on x as it
// lies took the last column a lane at a time); on an 8x8 plane (whole
// vectors) the matmul on x as it lies. Weights this small (8 KiB) stay in
// L2: the 14 tasks (7 tiles per panel) go tile by tile (a task's tile is
// its index over the 2 panels), each tile's panels in a row.
// CHECK-LABEL: func.func @conv_pointwise_planes
// CHECK: memref.get_global @pw7_kxm_panels32 : memref<2x32x32xf32>
// CHECK: scf.for %[[T:.*]] = %c0 to %c14 step %c1
// CHECK: %[[REST:.*]] = arith.remui %[[T]], %c14 : index
// CHECK-NEXT: arith.divui %[[REST]], %c2 : index
// CHECK: vector.fma
// CHECK: vector.store %{{.*}} : memref<1x64x7x7xf32>, vector<7xf32>
// CHECK-NOT: pw8_kxm
// CHECK: return
// AVX2-LABEL: func.func @conv_pointwise_planes
// AVX2-NOT: _kxm_panels32
// AVX2: return
memref.global "private" constant @pw7 : memref<64x32x1x1xf32> = dense<0.5>
memref.global "private" constant @pw8 : memref<64x32x1x1xf32> = dense<0.25>
#pX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#pW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#pO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_pointwise_planes(%x7: memref<1x32x7x7xf32>, %o7: memref<1x64x7x7xf32>,
                                 %x8: memref<1x32x8x8xf32>, %o8: memref<1x64x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %w7 = memref.get_global @pw7 : memref<64x32x1x1xf32>
  %w8 = memref.get_global @pw8 : memref<64x32x1x1xf32>
  linalg.fill ins(%zero : f32) outs(%o7 : memref<1x64x7x7xf32>)
  linalg.generic {indexing_maps = [#pX, #pW, #pO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x7, %w7 : memref<1x32x7x7xf32>, memref<64x32x1x1xf32>) outs(%o7 : memref<1x64x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%o8 : memref<1x64x8x8xf32>)
  linalg.generic {indexing_maps = [#pX, #pW, #pO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x8, %w8 : memref<1x32x8x8xf32>, memref<64x32x1x1xf32>) outs(%o8 : memref<1x64x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 1x1 conv on a plane whose one column past whole vectors (25 x 41 =
// 1025 = 64 x 16 + 1) is at most a 64th of its vectors: the matmul on x
// as it lies, not the direct tiles (whose stores write each output line
// in two halves, two planes of 32 channels at a time).
// CHECK-LABEL: func.func @conv_pointwise_large_plane
// CHECK-NOT: _kxm_panels
// CHECK: vector.fma
// CHECK: return
memref.global "private" constant @pwl : memref<64x16x1x1xf32> = dense<0.5>
#lX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#lW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#lO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_pointwise_large_plane(%x: memref<1x16x25x41xf32>, %o: memref<1x64x25x41xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @pwl : memref<64x16x1x1xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x64x25x41xf32>)
  linalg.generic {indexing_maps = [#lX, #lW, #lO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x16x25x41xf32>, memref<64x16x1x1xf32>) outs(%o : memref<1x64x25x41xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 1x1 stride-1 convs on planes of whole vectors with 64 input channels:
// on 12x12 (planes 576 bytes apart, over many L1 sets) the direct tiles;
// on 16x16 (planes 1 KiB apart, 16 of any 64 in one set) the matmul.
// CHECK-LABEL: func.func @conv_pointwise_deep
// CHECK: memref.get_global @dp12_kxm_panels32 : memref<1x64x32xf32>
// CHECK: vector.fma
// CHECK-NOT: dp16_kxm
// CHECK: return
memref.global "private" constant @dp12 : memref<32x64x1x1xf32> = dense<0.5>
memref.global "private" constant @dp16 : memref<32x64x1x1xf32> = dense<0.25>
#dX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#dW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#dO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_pointwise_deep(%x12: memref<1x64x12x12xf32>, %o12: memref<1x32x12x12xf32>,
                               %x16: memref<1x64x16x16xf32>, %o16: memref<1x32x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w12 = memref.get_global @dp12 : memref<32x64x1x1xf32>
  %w16 = memref.get_global @dp16 : memref<32x64x1x1xf32>
  linalg.fill ins(%zero : f32) outs(%o12 : memref<1x32x12x12xf32>)
  linalg.generic {indexing_maps = [#dX, #dW, #dO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x12, %w12 : memref<1x64x12x12xf32>, memref<32x64x1x1xf32>) outs(%o12 : memref<1x32x12x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%o16 : memref<1x32x16x16xf32>)
  linalg.generic {indexing_maps = [#dX, #dW, #dO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x16, %w16 : memref<1x64x16x16xf32>, memref<32x64x1x1xf32>) outs(%o16 : memref<1x32x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two images on 5x5 planes (25 = 3 x 8 + 1 positions: neither 7 nor 6
// fills them): the task's image is its index over the 8 tasks an image
// has (4 tiles, the last one position, x 2 panels), in both the whole
// tiles and the narrow last one.
// CHECK-LABEL: func.func @conv_pointwise_two_images
// CHECK: scf.for %[[T:.*]] = %c0 to %c16 step %c1
// CHECK: %[[IMG:.*]] = arith.divui %[[T]], %c8 : index
// CHECK: %[[REST:.*]] = arith.remui %[[T]], %c8{{.*}} : index
// CHECK: %[[TILE:.*]] = arith.divui %[[REST]], %c2{{.*}} : index
// CHECK: arith.cmpi ult, %[[TILE]], %c3 : index
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[IMG]], %{{.*}}, %{{.*}}] : memref<2x64x25xf32>, vector<8xf32>
// CHECK: } else {
// CHECK: arith.muli %[[IMG]], %c800 : index
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[IMG]], %{{.*}}, %c24] : memref<2x64x25xf32>, vector<1xf32>
// CHECK: } {kiln.parallel
memref.global "private" constant @pwb : memref<64x32x1x1xf32> = dense<0.5>
#pX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#pW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#pO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_pointwise_two_images(%x: memref<2x32x5x5xf32>, %o: memref<2x64x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @pwb : memref<64x32x1x1xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<2x64x5x5xf32>)
  linalg.generic {indexing_maps = [#pX, #pW, #pO],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<2x32x5x5xf32>, memref<64x32x1x1xf32>) outs(%o : memref<2x64x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A matmul by constant weights packed into panels, read panel by panel
// (A transposed: no row blocks): each k step of the 14 x 32 register tile
// (64 rows) prefetches into L2, a 64-byte line at a time, the panel slice
// the next pass of its k loop reads (256 k steps x 32 floats on: the next
// panel). The distance is worked out before the k loop: 8192, less what
// the last step would fetch past the last element (room: 32768 - 32 + 15
// - that step's index). The prefetches come after the multiply-adds.
// CHECK-LABEL: func.func @panel_prefetch
// CHECK: %[[PANELS:.*]] = memref.get_global @pw_panels32 : memref<4x256x32xf32>
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[PANELS]] to offset: [0], sizes: [32768], strides: [1]
// CHECK: %[[ROOM:.*]] = arith.subi %c32751{{.*}}, %{{.*}} : index
// CHECK: %[[MIN:.*]] = arith.minsi %c8192{{.*}}, %[[ROOM]] : index
// CHECK: %[[DIST:.*]] = arith.maxsi %c0{{.*}}, %[[MIN]] : index
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}}) -> (vector<14x32xf32>)
// CHECK-NOT: memref.prefetch
// CHECK: vector.fma
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[DIST]] : index
// CHECK-NEXT: memref.prefetch %[[FLAT]][%[[AT]]], read, locality<2>, data
// CHECK: %[[AT16:.*]] = arith.addi %[[AT]], %c16 : index
// CHECK-NEXT: memref.prefetch %[[FLAT]][%[[AT16]]]
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// CHECK-NOT: arith.minui
// AVX2-LABEL: func.func @panel_prefetch
// AVX2-NOT: memref.prefetch
// AVX2: return
memref.global "private" constant @pw : memref<256x128xf32> = dense<0.5>
#nA = affine_map<(m, k, n) -> (k, m)>
#nB = affine_map<(m, k, n) -> (k, n)>
#nC = affine_map<(m, k, n) -> (m, n)>
func.func @panel_prefetch(%a: memref<256x64xf32>, %c: memref<64x128xf32>) {
  %b = memref.get_global @pw : memref<256x128xf32>
  linalg.generic {indexing_maps = [#nA, #nB, #nC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<256x64xf32>, memref<256x128xf32>) outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Four rows (a small batch's decode step): one 4 x 32 tile holds all of
// A, so each panel is streamed once from memory, a k loop of 512 steps:
// each step prefetches the panel 64 steps ahead (16 per row of the tile,
// 2048 floats), not the next pass (the next panel).
// CHECK-LABEL: func.func @panel_stream_prefetch
// CHECK: %[[PANELS:.*]] = memref.get_global @ps_panels32 : memref<4x512x32xf32>
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[PANELS]] to offset: [0], sizes: [65536], strides: [1]
// CHECK: %[[MIN:.*]] = arith.minsi %c2048{{.*}}, %{{.*}} : index
// CHECK: %[[DIST:.*]] = arith.maxsi %c0{{.*}}, %[[MIN]] : index
// CHECK: scf.for %{{.*}} = %c0 to %c512 step %c1
// CHECK: vector.fma
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[DIST]] : index
// CHECK-NEXT: memref.prefetch %[[FLAT]][%[[AT]]], read, locality<2>, data
// CHECK: arith.addi %[[AT]], %c16 : index
// CHECK-NEXT: memref.prefetch %[[FLAT]]
// CHECK-NOT: memref.prefetch
// CHECK: scf.yield
memref.global "private" constant @ps : memref<512x128xf32> = dense<0.5>
#nA = affine_map<(m, k, n) -> (m, k)>
#nB = affine_map<(m, k, n) -> (k, n)>
#nC = affine_map<(m, k, n) -> (m, n)>
func.func @panel_stream_prefetch(%a: memref<4x512xf32>, %c: memref<4x128xf32>) {
  %b = memref.get_global @ps : memref<512x128xf32>
  linalg.generic {indexing_maps = [#nA, #nB, #nC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<4x512xf32>, memref<512x128xf32>) outs(%c : memref<4x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An 8-bit depthwise conv as kiln-decompose-ops leaves QLinearConv with a
// group per channel: u8 data padded with its zero point (a node of its
// own: the profiler's markers sit between the pad and the conv), i32 sums
// started as a copy of a zero buffer filled further back (bufferization
// shares one between convs), then the requantizing generic (per-channel
// zero-point term and scale) into u8. Each channel's plane is padded and
// converted to f32 once; the taps are f32 FMAs (exact); each chunk is
// converted back to i32 and requantized in registers, then stored as
// bytes: the i32 buffers, the zero fill and copy and the padded copy are
// gone.
// CHECK-LABEL: func.func @depthwise_u8_requantized
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
// CHECK-NOT: memref<1x4x18x18xi32>
// CHECK-NOT: memref<1x4x20x20xi8>
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %c0 to %c4
// CHECK: %[[PLANE:[a-z0-9_]+]] = memref.alloc() : memref<1x20x48xf32>
// CHECK: %[[X0:[a-z0-9_]+]] = vector.transfer_read %arg0[%c0, %[[M]], %{{.*}}, %c0], %c7_i8
// CHECK: %[[S0:[a-z0-9_]+]] = vector.shuffle %{{.*}}, %[[X0]]
// CHECK: %[[F0:[a-z0-9_]+]] = arith.uitofp %[[S0]] : vector<16xi8> to vector<16xf32>
// CHECK: vector.transfer_write %[[F0]], %[[PLANE]]
// CHECK: scf.for
// CHECK: memref.load %arg1[%[[M]], %c0, %{{.*}}, %{{.*}}] : memref<4x1x3x3xi8>
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: vector.transfer_read %[[PLANE]]
// CHECK: vector.fma
// CHECK: %[[SUM:[a-z0-9_]+]] = arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: memref.load %arg2[%c0, %[[M]], %c0, %c0] : memref<1x4x1x1xi32>
// CHECK: arith.addi %[[SUM]]
// CHECK: math.roundeven
// CHECK: %[[Q:[a-z0-9_]+]] = arith.trunci %{{.*}} : vector<16xi32> to vector<16xi8>
// CHECK: vector.transfer_write %[[Q]], %arg4[%c0, %[[M]],
// CHECK-NOT: linalg.
// CHECK: return
#uX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#uW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#uO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
#uI = affine_map<(n, c, h, w) -> (n, c, h, w)>
#uC = affine_map<(n, c, h, w) -> (0, c, 0, 0)>
#uS = affine_map<(n, c, h, w) -> (c, 0, 0)>
func.func @depthwise_u8_requantized(%x: memref<1x4x18x18xi8>, %w: memref<4x1x3x3xi8>, %corr: memref<1x4x1x1xi32>, %scale: memref<4x1x1xf32>, %y: memref<1x4x18x18xi8>) {
  %zero = arith.constant 0 : i32
  %zx = arith.constant 7 : i8
  %z = memref.alloc() {alignment = 64 : i64} : memref<1x4x18x18xi32>
  linalg.fill ins(%zero : i32) outs(%z : memref<1x4x18x18xi32>)
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x4x20x20xi8>
  linalg.fill ins(%zx : i8) outs(%p : memref<1x4x20x20xi8>)
  %in = memref.subview %p[0, 0, 1, 1] [1, 4, 18, 18] [1, 1, 1, 1] : memref<1x4x20x20xi8> to memref<1x4x18x18xi8, strided<[1600, 400, 20, 1], offset: 21>>
  memref.copy %x, %in : memref<1x4x18x18xi8> to memref<1x4x18x18xi8, strided<[1600, 400, 20, 1], offset: 21>>
  kiln.profile_end "pad"
  kiln.profile_begin "conv"
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x4x18x18xi32>
  memref.copy %z, %c : memref<1x4x18x18xi32> to memref<1x4x18x18xi32>
  linalg.generic {indexing_maps = [#uX, #uW, #uO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%p, %w : memref<1x4x20x20xi8>, memref<4x1x3x3xi8>) outs(%c : memref<1x4x18x18xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %m = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %m : i32
    linalg.yield %s : i32
  }
  linalg.generic {indexing_maps = [#uI, #uC, #uS, #uI], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %corr, %scale : memref<1x4x18x18xi32>, memref<1x4x1x1xi32>, memref<4x1x1xf32>) outs(%y : memref<1x4x18x18xi8>) {
  ^bb0(%v: i32, %k: i32, %f: f32, %o: i8):
    %t = arith.addi %v, %k : i32
    %fl = arith.sitofp %t : i32 to f32
    %sc = arith.mulf %fl, %f : f32
    %r = math.roundeven %sc : f32
    %lo = arith.constant 0.0 : f32
    %hi = arith.constant 255.0 : f32
    %cl = arith.maxnumf %r, %lo : f32
    %ch = arith.minnumf %cl, %hi : f32
    %i = arith.fptosi %ch : f32 to i32
    %b8 = arith.trunci %i : i32 to i8
    linalg.yield %b8 : i8
  }
  memref.dealloc %p : memref<1x4x20x20xi8>
  memref.dealloc %c : memref<1x4x18x18xi32>
  memref.dealloc %z : memref<1x4x18x18xi32>
  return
}

// -----

// A conv's GEMM over output positions of run-time count (weights x
// patches): blocks of 256 down to 16 columns, then the columns past the
// last whole 16 as one static 16-wide block (register tiles 8x16) on
// padded copies of their patches (zero past the end) and output, copied
// back; skipped when none are left. No blocks of 8, 4 or 1 columns (the
// last one ran scalar).
// CHECK-LABEL: func.func @runtime_columns
// CHECK: %[[REST:.*]] = arith.subi
// CHECK: step %c256
// CHECK: step %c16
// CHECK: vector<8x16xf32>
// CHECK: %[[ANY:.*]] = arith.cmpi ugt, %[[REST]], %c0
// CHECK: scf.if %[[ANY]] {
// CHECK: %[[B:.*]] = memref.alloc() : memref<72x16xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[B]] : memref<72x16xf32>)
// CHECK: %[[BV:.*]] = memref.subview %[[B]][0, 0] [72, %[[REST]]] [1, 1]
// CHECK: memref.copy %{{.*}}, %[[BV]]
// CHECK: %[[C:.*]] = memref.alloc() : memref<64x16xf32>
// CHECK: %[[CV:.*]] = memref.subview %[[C]][0, 0] [64, %[[REST]]] [1, 1]
// CHECK: memref.copy %[[OUT:.*]], %[[CV]]
// CHECK: vector<8x16xf32>
// CHECK: memref.copy %[[CV]], %[[OUT]]
// CHECK-NOT: memref<64x1xf32
// CHECK-NOT: vector<8x4xf32>
// CHECK: return
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @runtime_columns(%w: memref<64x72xf32>, %p: memref<72x?xf32>, %c: memref<64x?xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %p : memref<64x72xf32>, memref<72x?xf32>) outs(%c : memref<64x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An 8-bit depthwise conv by constant weights: the weights are converted to
// f32 at compile time (one global), so each tap broadcasts a loaded float
// instead of converting a byte at run time.
// CHECK: memref.global "private" constant @dw_f32 : memref<4x1x3x3xf32> = dense<{{\[\[\[\[}}1.000000e+00, -2.000000e+00
// CHECK-LABEL: func.func @depthwise_u8_constant_weights
// CHECK: %[[WF:.*]] = memref.get_global @dw_f32 : memref<4x1x3x3xf32>
// CHECK: memref.load %[[WF]]
// CHECK-NOT: arith.sitofp %{{.*}} : i8 to f32
// CHECK: return
memref.global "private" constant @dw : memref<4x1x3x3xi8> = dense<[[[[1, -2, 3], [4, 5, 6], [7, 8, 9]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[-1, 0, 1], [0, 0, 0], [1, 0, -1]]], [[[2, 2, 2], [2, 2, 2], [2, 2, 2]]]]>
#cX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#cW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#cO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
func.func @depthwise_u8_constant_weights(%x: memref<1x4x10x10xi8>, %o: memref<1x4x8x8xi32>) {
  %zero = arith.constant 0 : i32
  %w = memref.get_global @dw : memref<4x1x3x3xi8>
  linalg.fill ins(%zero : i32) outs(%o : memref<1x4x8x8xi32>)
  linalg.generic {indexing_maps = [#cX, #cW, #cO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%x, %w : memref<1x4x10x10xi8>, memref<4x1x3x3xi8>) outs(%o : memref<1x4x8x8xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %m = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %m : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Weights that stay in each core's L2 (here 128 KiB): threads take blocks
// of rows (whole 8-row tiles, about eight blocks), each every panel, so
// that a thread reads the rows of A its producer wrote and writes the
// rows of C its consumer reads. Nine blocks of 8 rows (262144
// multiply-adds each: grain 1), then the 3 rows left over, one 3-row tile
// per panel, after the loop.
// CHECK-LABEL: func.func @panels_by_rows
// CHECK: memref.get_global @wr_panels32 : memref<8x128x32xf32>
// CHECK: scf.for %[[R:.*]] = %c0 to %c9 step %c1 {
// CHECK: %[[ROW:.*]] = arith.muli %[[R]], %c8
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK: vector.transfer_read %arg1[%[[ROW]], %{{.*}}]
// CHECK: vector.transfer_read %arg0[%[[ROW]], %{{.*}}]
// CHECK: vector<8x32xf32>
// CHECK: } {kiln.parallel = 1 : i64}
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK: vector.transfer_read %arg1[%c72,
// CHECK: vector<3x32xf32>
// CHECK-NOT: kiln.parallel
// CHECK: return
memref.global "private" constant @wr : memref<128x256xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @panels_by_rows(%a: memref<75x128xf32>, %c: memref<75x256xf32>) {
  %b = memref.get_global @wr : memref<128x256xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<75x128xf32>, memref<128x256xf32>) outs(%c : memref<75x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Weights past that (here 512 KiB) and 128 rows or more: threads still
// take blocks of rows, now as many as stay in L2 while every panel passes
// them (kRowBlockABytes: two blocks of 128 rows, 512 KiB each), with no cache
// tiles inside (k is 1024: no k blocks), register tiles of 14 rows (the 2
// rows left a tile of their own) and no prefetches (the panels come from
// L2 or, the first time, from the last-level cache).
// CHECK-LABEL: func.func @large_panels_by_rows
// CHECK: memref.get_global @wc_panels32 : memref<4x1024x32xf32>
// CHECK: scf.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK: %[[ROW:.*]] = arith.muli %[[R]], %c128
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c126 step %c14 {
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1 {{.*}} -> (vector<14x32xf32>)
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1 {{.*}} -> (vector<2x32xf32>)
// CHECK-NOT: memref.prefetch
// CHECK: } {kiln.parallel = 1 : i64}
// CHECK-NOT: memref.prefetch
// CHECK: return
memref.global "private" constant @wc : memref<1024x128xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @large_panels_by_rows(%a: memref<256x1024xf32>, %c: memref<256x128xf32>) {
  %b = memref.get_global @wc : memref<1024x128xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<256x1024xf32>, memref<1024x128xf32>) outs(%c : memref<256x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// B computed at run time and an A past L2 (1 MiB): B is copied into
// panels first (a panel per task), then the products run in row blocks
// as for constant weights.
// CHECK-LABEL: func.func @run_time_panels
// CHECK: %[[P:.*]] = memref.alloc() {{.*}}: memref<4x1024x32xf32>
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK: %[[COL:.*]] = arith.muli %[[I]], %c32
// CHECK: %[[FROM:.*]] = memref.subview %arg1[0, %[[COL]]] [1024, 32] [1, 1]
// CHECK: %[[TO:.*]] = memref.subview %[[P]][%[[I]], 0, 0] [1, 1024, 32]
// CHECK: memref.copy %[[FROM]], %[[TO]]
// CHECK: } {kiln.parallel = 1 : i64}
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK: vector.transfer_read %[[P]]
// CHECK: } {kiln.parallel = 1 : i64}
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @run_time_panels(%a: memref<256x1024xf32>, %b: memref<1024x128xf32>, %c: memref<256x128xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<256x1024xf32>, memref<1024x128xf32>) outs(%c : memref<256x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A k past kRowBlockK (here 2048): the row blocks' matmuls take k in
// blocks of 1024, 128 KiB of a 32-wide panel.
// CHECK-LABEL: func.func @large_panels_k_blocks
// CHECK: scf.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK: arith.muli %[[R]], %c64
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c2048 step %c1024 {
// CHECK: scf.for %{{.*}} = %c0 to %c56 step %c14 {
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1
// CHECK: } {kiln.parallel = 1 : i64}
memref.global "private" constant @wkb : memref<2048x1024xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @large_panels_k_blocks(%a: memref<128x2048xf32>, %c: memref<128x1024xf32>) {
  %b = memref.get_global @wkb : memref<2048x1024xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<128x2048xf32>, memref<2048x1024xf32>) outs(%c : memref<128x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Weights past 256 KiB (here 576) and as large an A, but rows that no
// block of whole tiles divides (vit's 197): two blocks of 98 (7 tiles of
// 14 rows), so that each thread reads the rows its producer wrote, then
// the one row over on its own, every panel.
// CHECK-LABEL: func.func @large_panels_rows_over
// CHECK: memref.get_global @wv_panels32 : memref<6x768x32xf32>
// CHECK: scf.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK: arith.muli %[[R]], %c98
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c98 step %c14 {
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c1 {{.*}} -> (vector<14x32xf32>)
// CHECK: } {kiln.parallel = 1 : i64}
// CHECK: scf.for %{{.*}} = %c0 to %c6 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c1 {{.*}} -> (vector<1x32xf32>)
// CHECK: return
// (AVX2, not measured there: panel by panel.)
// AVX2-LABEL: func.func @large_panels_rows_over(
// AVX2-NOT: %c98
// AVX2: return
memref.global "private" constant @wv : memref<768x192xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @large_panels_rows_over(%a: memref<197x768xf32>, %c: memref<197x192xf32>) {
  %b = memref.get_global @wv : memref<768x192xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<197x768xf32>, memref<768x192xf32>) outs(%c : memref<197x192xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Weights (2.25 MiB) outweighing A (225 KiB), 150 rows: no row blocks
// (the 10 rows over would read the weights once more); threads take
// panels, each in 14-row tiles (10 of 140 rows, then a 10-row tile)
// whose k steps prefetch the next panel.
// CHECK-LABEL: func.func @large_panels_by_columns_rows_over
// CHECK: memref.get_global @ww_panels32 : memref<48x384x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c48 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c140 step %c14 {
// CHECK: scf.for %{{.*}} = %c0 to %c384 step %c1 {{.*}} -> (vector<14x32xf32>)
// CHECK: memref.prefetch
// CHECK: scf.for %{{.*}} = %c0 to %c384 step %c1 {{.*}} -> (vector<10x32xf32>)
// CHECK: memref.prefetch
// CHECK: } {kiln.parallel = 1 : i64}
memref.global "private" constant @ww : memref<384x1536xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @large_panels_by_columns_rows_over(%a: memref<150x384xf32>, %c: memref<150x1536xf32>) {
  %b = memref.get_global @ww : memref<384x1536xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<150x384xf32>, memref<384x1536xf32>) outs(%c : memref<150x1536xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Weights past 256 KiB (here 320) and too few rows for two blocks of 64
// (here 12): threads take panels (six each at least: 262144 multiply-adds),
// each reading half of the weights and all of A, and prefetching the next
// panel's slice.
// CHECK-LABEL: func.func @panels_by_columns
// CHECK: memref.get_global @wk_panels32 : memref<20x128x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c20 step %c1 {
// CHECK: memref.prefetch
// CHECK: } {kiln.parallel = 6 : i64}
memref.global "private" constant @wk : memref<128x640xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @panels_by_columns(%a: memref<12x128xf32>, %c: memref<12x640xf32>) {
  %b = memref.get_global @wk : memref<128x640xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<12x128xf32>, memref<128x640xf32>) outs(%c : memref<12x640xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A matmul whose C starts as a bias broadcast along its columns (a Gemm's
// bias): the tiles start from the bias's own vectors in registers, and
// the pass that wrote it into C goes (BERT's 128 x 512 FFN: 5 us on one
// thread, and on two the rows one thread wrote were the other's C).
// CHECK-LABEL: func.func @matmul_from_bias
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK: %[[BIAS:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [64, 128], strides: [0, 1]
// CHECK: scf.for
// CHECK: vector.transfer_read %[[BIAS]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<64x128xf32, strided<[0, 1]>>, vector<32xf32>
// CHECK: vector.fma
// CHECK: vector.transfer_write %{{.*}}, %[[C]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
memref.global "private" constant @wb : memref<128x128xf32> = dense<1.0>
#bI = affine_map<(m, n) -> (n)>
#bO = affine_map<(m, n) -> (m, n)>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @matmul_from_bias(%a: memref<64x128xf32>, %bias: memref<128xf32>) -> memref<64x128xf32> {
  %b = memref.get_global @wb : memref<128x128xf32>
  %c = memref.alloc() : memref<64x128xf32>
  linalg.generic {indexing_maps = [#bI, #bO], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<128xf32>) outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x128xf32>, memref<128x128xf32>) outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %c : memref<64x128xf32>
}

// -----

// One whose C is a copy of a zero-filled buffer (bufferization shares one
// zero fill between matmuls): the tiles start from zeros, the copy goes,
// and so does the shared buffer, which nothing reads any more.
// CHECK-LABEL: func.func @matmul_from_zeros
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.copy
// CHECK: %[[C:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[Z:.*]] = vector.broadcast %{{.*}} : f32 to vector<32xf32>
// CHECK: vector.insert %[[Z]]
// CHECK: vector.fma
// CHECK: vector.transfer_write %{{.*}}, %[[C]]
// CHECK: return %[[C]]
memref.global "private" constant @wz : memref<128x128xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @matmul_from_zeros(%a: memref<64x128xf32>) -> memref<64x128xf32> {
  %b = memref.get_global @wz : memref<128x128xf32>
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<64x128xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<64x128xf32>)
  %c = memref.alloc() : memref<64x128xf32>
  memref.copy %z, %c : memref<64x128xf32> to memref<64x128xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x128xf32>, memref<128x128xf32>) outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %c : memref<64x128xf32>
}

// -----

// The shared zero buffer itself as a later matmul's C (bufferization
// reuses it for a later layer's scores): both matmuls start from zeros
// in registers; the copy goes, the fill stays (the buffer is written).
// CHECK-LABEL: func.func @matmuls_from_shared_zeros
// CHECK: %[[Z:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[Z]]
// CHECK-NOT: memref.copy
// CHECK: %[[D:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: vector.transfer_read %[[D]]
// CHECK: vector.broadcast %{{.*}} : f32 to vector<32xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[D]]
// CHECK-NOT: vector.transfer_read %[[Z]]
// CHECK: vector.broadcast %{{.*}} : f32 to vector<32xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[Z]]
// CHECK: return %[[D]], %[[Z]]
memref.global "private" constant @wz2 : memref<128x128xf32> = dense<1.0>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @matmuls_from_shared_zeros(%a: memref<64x128xf32>) -> (memref<64x128xf32>, memref<64x128xf32>) {
  %b = memref.get_global @wz2 : memref<128x128xf32>
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<64x128xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<64x128xf32>)
  %d = memref.alloc() : memref<64x128xf32>
  memref.copy %z, %d : memref<64x128xf32> to memref<64x128xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x128xf32>, memref<128x128xf32>) outs(%d : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<64x128xf32>, memref<128x128xf32>) outs(%z : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %d, %z : memref<64x128xf32>, memref<64x128xf32>
}
