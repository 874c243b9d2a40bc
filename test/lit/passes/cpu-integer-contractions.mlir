// RUN: kiln-opt %s --split-input-file --kiln-cpu-integer-contractions | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-integer-contractions=vnni=0 | FileCheck %s --check-prefix=NOVNNI
// RUN: kiln-opt %s --split-input-file --kiln-cpu-integer-contractions=amx=1 | FileCheck %s --check-prefix=AMX
// RUN: kiln-opt %s --split-input-file --kiln-cpu-integer-contractions="vnni=0 avx2=1" | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --split-input-file --kiln-cpu-integer-contractions=vbmi=1 | FileCheck %s --check-prefix=DW

// MatMulInteger as the CPU provider lowers it (u8 A widened unsigned, s8 B
// signed): B packed at compile time into [N/16][K/4][64] bytes, tiles of 6
// rows x 4 panels across threads with 24 accumulators in registers, the
// 2 rows left as single rows; the 8 columns past 64 in one masked panel.
// CHECK-LABEL: memref.global "private" constant @w_vnni : memref<5x8x64xi8> = dense<
// CHECK-LABEL: func.func @batch_of_rows
// CHECK-NOT: linalg.generic
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [14, 32], strides: [32, 1] : memref<2x7x32xi8> to memref<14x32xi8, strided<[32, 1]>>
// CHECK: memref.get_global @w_vnni : memref<5x8x64xi8>
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %c6
// CHECK-COUNT-24: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: scf.for {{.*}} step %c1
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: } {kiln.parallel = {{[0-9]+}} : i64}
// CHECK: vector.create_mask
// CHECK: vector.maskedload
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.maskedstore
// With AVX2 and no VNNI: B widened to s16 pairs at compile time
// [N/8][K/2][16], tiles of 6 rows x 2 panels of 8 columns, each tile's rows
// of A widened to s16 (whole 16-byte loads), then per k pair 12 vpmaddwd
// (each row's pair broadcast as one i32) summed into i32 accumulators.
// AVX2-LABEL: memref.global "private" constant @w_pmaddwd : memref<9x16x16xi16> = dense<
// AVX2-LABEL: func.func @batch_of_rows
// AVX2: memref.alloc() {alignment = 64 : i64} : memref<6x32xi16>
// AVX2: scf.for {{.*}} step %c6
// AVX2: vector.load {{.*}} : memref<14x32xi8, strided<[32, 1]>>, vector<16xi8>
// AVX2: arith.extui {{.*}} : vector<16xi8> to vector<16xi16>
// AVX2-COUNT-12: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// AVX2-NOT: vpdpbusd
// Without VNNI nor AVX2 the generic stays (exact i32 loops).
// NOVNNI-LABEL: func.func @batch_of_rows
// NOVNNI: linalg.generic
// NOVNNI-NOT: vpdpbusd
memref.global "private" constant @w : memref<32x72xi8> = dense<3>
#mA = affine_map<(b, m, k, n) -> (b, m, k)>
#mB = affine_map<(b, m, k, n) -> (k, n)>
#mC = affine_map<(b, m, k, n) -> (b, m, n)>
func.func @batch_of_rows(%a: memref<2x7x32xi8>, %c: memref<2x7x72xi32>) {
  %w = memref.get_global @w : memref<32x72xi8>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %w : memref<2x7x32xi8>, memref<32x72xi8>) outs(%c : memref<2x7x72xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Left alone: K not a multiple of 4 and signed A (decomposition shifts it
// to u8 first). (A B at run time is packed per batch: @runtime_b below.)
// CHECK-LABEL: func.func @not_taken
// CHECK: vpdpbusd
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: vpdpbusd
memref.global "private" constant @w30 : memref<30x16xi8> = dense<1>
memref.global "private" constant @w32 : memref<32x16xi8> = dense<1>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @not_taken(%a: memref<4x32xi8>, %b: memref<32x16xi8>, %a30: memref<4x30xi8>,
                     %c: memref<4x16xi32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<4x32xi8>, memref<32x16xi8>) outs(%c : memref<4x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  %w = memref.get_global @w30 : memref<30x16xi8>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a30, %w : memref<4x30xi8>, memref<30x16xi8>) outs(%c : memref<4x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  %w32 = memref.get_global @w32 : memref<32x16xi8>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %w32 : memref<4x32xi8>, memref<32x16xi8>) outs(%c : memref<4x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extsi %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Rows known only at run time: tiles of 6 rows up to the last multiple of
// 6, then single rows.
// CHECK-LABEL: func.func @runtime_rows
// CHECK: memref.dim %arg0, %c0 : memref<?x64xi8>
// CHECK: arith.divui
// CHECK: scf.for {{.*}} step %c6
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: scf.for {{.*}} step %c1
memref.global "private" constant @w64 : memref<64x32xi8> = dense<-2>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @runtime_rows(%a: memref<?x64xi8>, %c: memref<?x32xi32>) {
  %w = memref.get_global @w64 : memref<64x32xi8>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %w : memref<?x64xi8>, memref<64x32xi8>) outs(%c : memref<?x32xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// ConvInteger as the CPU lowers it (loops n, m, c, kh, kw, oh, ow; u8 data
// already padded): weights as rows of k = 8 * 3 * 3 = 72 bytes, a table of
// each tap's and each position's input offset (stride 2: rows 2 * 15 = 30
// apart), per column tile the patches packed into thread scratch, then the
// weights broadcast against them; 7 x 7 = 49 positions: one tile of 3
// whole panels, and the last position (a panel of 1 lane would waste 15) as
// a dot product of each weight row with its patch, gathered through the tap
// table, 4 rows at a time, 64 bytes a step, summed across the lanes. A
// panel's 16 positions are 3 runs on rows of 7 (lanes 0, 7, 14): per tap 3
// loads of 32 bytes, their even bytes merged by lane (run 1 at 30 - 7 * 2 =
// 16); every whole panel takes runs (no gathers).
// CHECK-DAG: memref.global "private" constant @cw_vnni_rows : memref<16x72xi8>
// CHECK-DAG: memref.global "private" constant @kiln_conv_taps_8x15x15_k3x3_s2x2_d1x1 : memref<72xi32>
// CHECK-DAG: memref.global "private" constant @kiln_conv_positions_8x15x15_k3x3_s2x2_d1x1_o7x7 : memref<64xi32> = dense<[0, 2, 4, 6, 8, 10, 12, 30,
// CHECK-DAG: memref.global "private" constant @kiln_conv_runs_8x15x15_k3x3_s2x2_d1x1_o7x7 : memref<4xi8> = dense<[3, 3, 3, 0]>
// CHECK-DAG: memref.global "private" constant @kiln_conv_run_lanes_8x15x15_k3x3_s2x2_d1x1_o7x7 : memref<12xi32> = dense<[0, 7, 14, 0, 5, 12, 0, 3, 10, 16, 16, 16]>
// CHECK-DAG: memref.global "private" constant @kiln_conv_run_bases_8x15x15_k3x3_s2x2_d1x1_o7x7 : memref<12xi32> = dense<[0, 16, 32,
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.generic
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [3600], strides: [1]
// CHECK: memref.view {{.*}} : memref<3600xi8> to memref<900xi32>
// CHECK: scf.for
// CHECK: memref.alloc() : memref<3x18x64xi8>
// CHECK-NOT: vector.gather
// CHECK: vector.load {{.*}} : memref<3600xi8>, vector<32xi8>
// CHECK-NEXT: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: arith.select
// CHECK: arith.select
// CHECK: vector.store {{.*}} : memref<3x18x64xi8>, vector<64xi8>
// CHECK-NOT: vector.gather
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: vector.maskedstore
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x128xi8>
// CHECK: memref.load %{{.*}} : memref<72xi32>
// CHECK: vector.maskedload {{.*}} vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.reduction <add>
// CHECK: memref.store {{.*}}, %{{.*}}[%{{.*}}, %c48{{.*}}] : memref<16x49xi32
memref.global "private" constant @cw : memref<16x8x3x3xi8> = dense<1>
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv(%x: memref<2x8x15x15xi8>, %out: memref<2x16x7x7xi32>) {
  %w = memref.get_global @cw : memref<16x8x3x3xi8>
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<2x8x15x15xi8>, memref<16x8x3x3xi8>) outs(%out : memref<2x16x7x7xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Stride 1 on rows of 16 positions: every panel is one row's run, each tap
// a 16-byte load; the four taps of a step interleaved into dwords by one
// byte permutation; 4 panels a tile across threads.
// CHECK-LABEL: func.func @conv_rows
// CHECK-NOT: vector.gather
// CHECK: vector.load {{.*}} : memref<{{[0-9]+}}xi8>, vector<16xi8>
// CHECK-NOT: vector.gather
// CHECK: vector.shuffle {{.*}} [0, 16, 32, 48, 1, 17, 33, 49, {{.*}}] : vector<64xi8>, vector<64xi8>
// CHECK: vector.store {{.*}} : memref<4x{{[0-9]+}}x64xi8>, vector<64xi8>
// CHECK-NOT: vector.gather
// CHECK: } {kiln.parallel
// CHECK-NOT: vector.gather
// CHECK: return
memref.global "private" constant @cw1 : memref<8x4x3x3xi8> = dense<2>
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
func.func @conv_rows(%x: memref<1x4x10x18xi8>, %out: memref<1x8x8x16xi32>) {
  %w = memref.get_global @cw1 : memref<8x4x3x3xi8>
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x4x10x18xi8>, memref<8x4x3x3xi8>) outs(%out : memref<1x8x8x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// The requantization right after a conv (zero fill before it, the profiler's
// markers between) is applied to each accumulator vector before it is
// stored: the per-channel scale loaded once per row, broadcast; the u8
// result stored into the epilogue's output, never the i32 C.
// CHECK: module attributes {kiln.report.int8_epilogues = 1 : i64, kiln.report.int8_kernels = 1 : i64}
// CHECK-LABEL: func.func @conv_epilogue
// CHECK-NOT: linalg.fill
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: memref.load %arg2
// CHECK: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: arith.fptoui {{.*}} : vector<16xf32> to vector<16xi8>
// CHECK: vector.store {{.*}} : memref<8x256xi8, strided<[256, 1], offset: ?>>, vector<16xi8>
// CHECK-NOT: memref.prefetch
// CHECK-NOT: linalg.generic
// CHECK: return
memref.global "private" constant @cw2 : memref<8x4x3x3xi8> = dense<2>
#mX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#mW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#mO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
#id = affine_map<(n, m, h, w) -> (n, m, h, w)>
#ch = affine_map<(n, m, h, w) -> (m, 0, 0)>
func.func @conv_epilogue(%x: memref<1x4x18x18xi8>, %y: memref<1x8x16x16xi8>, %s: memref<8x1x1xf32>) {
  %w = memref.get_global @cw2 : memref<8x4x3x3xi8>
  %c = memref.alloc() : memref<1x8x16x16xi32>
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<1x8x16x16xi32>)
  kiln.profile_begin "conv"
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x4x18x18xi8>, memref<8x4x3x3xi8>) outs(%c : memref<1x8x16x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %t = arith.addi %acc, %p : i32
    linalg.yield %t : i32
  }
  kiln.profile_end "conv"
  linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %s : memref<1x8x16x16xi32>, memref<8x1x1xf32>) outs(%y : memref<1x8x16x16xi8>) {
  ^bb0(%a: i32, %sc: f32, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %r = math.roundeven %m : f32
    %q = arith.fptoui %r : f32 to i8
    linalg.yield %q : i8
  }
  return
}

// -----

// An epilogue that reads a tensor of C's shape (a residual %r): each
// vector first prefetches the residual's line one tile (64 positions)
// further on in its channel, clamped to the plane's last position.
// CHECK-LABEL: func.func @conv_epilogue_residual
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: %[[AHEAD:.*]] = arith.minui %{{.*}}, %c255
// CHECK: memref.prefetch %{{.*}}[%{{.*}}, %[[AHEAD]]], read, locality<3>, data : memref<8x256xi8
// CHECK: arith.uitofp {{.*}} : vector<16xi8> to vector<16xf32>
// CHECK: vector.store {{.*}} : memref<8x256xi8, strided<[256, 1], offset: ?>>, vector<16xi8>
memref.global "private" constant @cw4 : memref<8x4x3x3xi8> = dense<2>
#rX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#rW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#rO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
#rId = affine_map<(n, m, h, w) -> (n, m, h, w)>
func.func @conv_epilogue_residual(%x: memref<1x4x18x18xi8>, %r: memref<1x8x16x16xi8>, %y: memref<1x8x16x16xi8>) {
  %w = memref.get_global @cw4 : memref<8x4x3x3xi8>
  %c = memref.alloc() : memref<1x8x16x16xi32>
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<1x8x16x16xi32>)
  linalg.generic {indexing_maps = [#rX, #rW, #rO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x4x18x18xi8>, memref<8x4x3x3xi8>) outs(%c : memref<1x8x16x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %t = arith.addi %acc, %p : i32
    linalg.yield %t : i32
  }
  linalg.generic {indexing_maps = [#rId, #rId, #rId], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %r : memref<1x8x16x16xi32>, memref<1x8x16x16xi8>) outs(%y : memref<1x8x16x16xi8>) {
  ^bb0(%a: i32, %res: i8, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %g = arith.uitofp %res : i8 to f32
    %s = arith.addf %f, %g : f32
    %q = arith.fptoui %s : f32 to i8
    linalg.yield %q : i8
  }
  return
}

// -----

// Both operands at run time (attention's products): B packed per batch
// into scratch, 4 rows of 16 columns a step interleaved by one byte
// permutation, then the same register tiles (threads take batches when
// the work pays: not this small one).
// CHECK-LABEL: func.func @runtime_b
// CHECK: scf.for %[[B:.*]] = %c0{{.*}} to %c3
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<2x16x64xi8>
// CHECK: vector.maskedload {{.*}} : memref<192x20xi8, strided<[20, 1]>>, vector<16xi1>, vector<16xi8> into vector<16xi8>
// CHECK: vector.shuffle {{.*}} [0, 16, 32, 48, 1, 17, 33, 49, {{.*}}] : vector<64xi8>, vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.maskedstore
// CHECK-NOT: linalg.generic
#mA = affine_map<(b, m, n, k) -> (b, m, k)>
#mB = affine_map<(b, m, n, k) -> (b, k, n)>
#mC = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @runtime_b(%a: memref<3x20x64xi8>, %bm: memref<3x64x20xi8>, %c: memref<3x20x20xi32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %bm : memref<3x20x64xi8>, memref<3x64x20xi8>) outs(%c : memref<3x20x20xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// With AMX (C zero-filled right before: the fill goes): 48 rows as a tile
// of 32 and one of 16, each 2 x 2 accumulator tiles per pair of panels
// (the 3rd panel alone: 2 x 1), 16 rows x 64 bytes every tile. K = 1088
// is 17 chunks: the first 8 from tile_zero (under an scf.if, out of reach
// of loop-invariant code motion), the next 8 in a loop through `acc`, the
// last alone; A u8 (zext lhs: tdpbusd). C's lines prefetched for writing,
// then each row's vectors stored from `acc`, the last panel masked (8 of
// 16 lanes).
// AMX-LABEL: func.func @amx_rows
// AMX-NOT: linalg.fill
// AMX: memref.alloc() {alignment = 64 : i64} : memref<32x32xi32>
// AMX: scf.for {{.*}} step %c32
// AMX: memref.prefetch {{.*}}, write
// AMX: scf.if
// AMX-COUNT-4: amx.tile_zero
// AMX: amx.tile_load {{.*}} into vector<16x64xi8>
// AMX: amx.tile_muli %{{[0-9]+}} zext, %{{[0-9]+}}, %{{[0-9]+}} : vector<16x64xi8>, vector<16x64xi8>, vector<16x16xi32>
// AMX-COUNT-4: amx.tile_store
// AMX: scf.for {{.*}} = %c128 to %c256 step %c128
// AMX-COUNT-4: amx.tile_load {{.*}} : memref<32x32xi32> into vector<16x16xi32>
// AMX-COUNT-32: amx.tile_muli
// AMX: vector.load {{.*}} : memref<32x32xi32>, vector<16xi32>
// AMX: vector.store
// AMX: scf.for {{.*}} step %c16
// AMX: vector.create_mask %c8
// AMX: vector.maskedstore
// AMX-NOT: vpdpbusd
memref.global "private" constant @wk : memref<1088x40xi8> = dense<5>
#mA = affine_map<(m, k, n) -> (m, k)>
#mB = affine_map<(m, k, n) -> (k, n)>
#mC = affine_map<(m, k, n) -> (m, n)>
func.func @amx_rows(%a: memref<48x1088xi8>, %c: memref<48x40xi32>) {
  %zero = arith.constant 0 : i32
  %w = memref.get_global @wk : memref<1088x40xi8>
  linalg.fill ins(%zero : i32) outs(%c : memref<48x40xi32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %w : memref<48x1088xi8>, memref<1088x40xi8>) outs(%c : memref<48x40xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xw = arith.extui %x : i8 to i32
    %yw = arith.extsi %y : i8 to i32
    %p = arith.muli %xw, %yw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// A conv on AMX tiles, K = 8 * 3 * 3 = 72 padded to 128 bytes (zero weights meet
// the patches' steps past K), the patches' scratch 32 steps deep; the
// weights (s8) are A: zext rhs (tdpbsud). Without the zero fill, or with
// K under a chunk, or channels not whole tiles of 16, the VNNI kernel.
// AMX-LABEL: memref.global "private" constant @cw_amx_rows : memref<16x128xi8>
// AMX-LABEL: func.func @amx_conv
// AMX: memref.alloc() : memref<4x32x64xi8>
// AMX: amx.tile_muli %{{[0-9]+}}, %{{[0-9]+}} zext, %{{[0-9]+}} : vector<16x64xi8>, vector<16x64xi8>, vector<16x16xi32>
// AMX-LABEL: func.func @amx_conv_no_fill
// AMX-NOT: amx.
// AMX: vpdpbusd
memref.global "private" constant @cw : memref<16x8x3x3xi8> = dense<3>
#mX = affine_map<(n, m, c, i, j, y, x) -> (n, c, y + i, x + j)>
#mW = affine_map<(n, m, c, i, j, y, x) -> (m, c, i, j)>
#mO = affine_map<(n, m, c, i, j, y, x) -> (n, m, y, x)>
func.func @amx_conv(%x: memref<1x8x18x18xi8>, %out: memref<1x16x16x16xi32>) {
  %zero = arith.constant 0 : i32
  %w = memref.get_global @cw : memref<16x8x3x3xi8>
  linalg.fill ins(%zero : i32) outs(%out : memref<1x16x16x16xi32>)
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x8x18x18xi8>, memref<16x8x3x3xi8>) outs(%out : memref<1x16x16x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}
func.func @amx_conv_no_fill(%x: memref<1x8x18x18xi8>, %out: memref<1x16x16x16xi32>) {
  %w = memref.get_global @cw : memref<16x8x3x3xi8>
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x8x18x18xi8>, memref<16x8x3x3xi8>) outs(%out : memref<1x16x16x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// 49 positions (7 x 7) with amx=1: the last panel of one position runs through
// the tiles like the others, its lanes past the plane dropped in the store;
// the VNNI kernel takes it as dot products of rows with its patch instead
// (one 16-lane panel for one position).
// AMX-LABEL: func.func @amx_conv_tail
// AMX: amx.tile_muli
// AMX-NOT: vector.reduction
// AMX: return
// CHECK-LABEL: func.func @amx_conv_tail
// CHECK: vpdpbusd
// CHECK: vector.reduction <add>
memref.global "private" constant @cw : memref<16x8x3x3xi8> = dense<3>
#mX = affine_map<(n, m, c, i, j, y, x) -> (n, c, y + i, x + j)>
#mW = affine_map<(n, m, c, i, j, y, x) -> (m, c, i, j)>
#mO = affine_map<(n, m, c, i, j, y, x) -> (n, m, y, x)>
func.func @amx_conv_tail(%x: memref<1x8x9x9xi8>, %out: memref<1x16x7x7xi32>) {
  %zero = arith.constant 0 : i32
  %w = memref.get_global @cw : memref<16x8x3x3xi8>
  linalg.fill ins(%zero : i32) outs(%out : memref<1x16x7x7xi32>)
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x8x9x9xi8>, memref<16x8x3x3xi8>) outs(%out : memref<1x16x7x7xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// A depthwise conv of u8 data (a copy padded with its zero point 3) by
// constant s8 weights, with VBMI (vbmi=1): the weights as one dword per
// channel and kernel row (4 taps, the 4th 0). Per channel, the first and
// last output rows (a kernel row on the pad rows: its taps the pad
// register's bytes) unrolled, the inner 18 in a loop of blocks of 8 and 2
// more, each row one vector of 12 positions: per kernel row one masked
// 64-byte load of the unpadded source row, one two-register permutation
// with the pad register (the pad columns: byte 64), one vpdpbusd. The
// padded copy goes. Without VBMI the generic stays for
// kiln-cpu-vectorize-contractions.
// DW-LABEL: memref.global "private" constant @dw_dw_vnni : memref<6xi32> = dense<[197121, 394500, 591879, 16645887, 16448508, 16251129]>
// DW-LABEL: func.func @depthwise
// DW-NOT: memref.copy
// DW: vector.broadcast %c3_i8 : i8 to vector<64xi8>
// DW: scf.for
// DW-COUNT-3: memref.load {{.*}} : memref<6xi32>
// DW: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// DW: vector.maskedload %arg0{{.*}} : memref<1x2x20x12xi8>, vector<64xi1>, vector<64xi8> into vector<64xi8>
// DW-NEXT: vector.shuffle {{.*}} [64, 0, 1, 64, 0, 1, 2, 64,
// DW-NEXT: vector.bitcast {{.*}} : vector<64xi8> to vector<16xi32>
// DW-NEXT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// DW: vector.maskedstore {{.*}} : memref<2x240xi32, strided<[240, 1], offset: ?>>, vector<16xi1>, vector<16xi32>
// DW: scf.for {{.*}} step %c8
// DW-COUNT-24: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// DW-COUNT-8: vector.maskedstore
// DW-NOT: linalg.generic
// CHECK-LABEL: func.func @depthwise
// CHECK: linalg.generic
// CHECK-NOT: vpdpbusd
memref.global "private" constant @dw : memref<2x1x3x3xi8> = dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]>
#mX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#mW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#mO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
func.func @depthwise(%x: memref<1x2x20x12xi8>, %out: memref<1x2x20x12xi32>) {
  %c3 = arith.constant 3 : i8
  %c0 = arith.constant 0 : i32
  %w = memref.get_global @dw : memref<2x1x3x3xi8>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x2x22x14xi8>
  linalg.fill ins(%c3 : i8) outs(%padded : memref<1x2x22x14xi8>)
  %in = memref.subview %padded[0, 0, 1, 1] [1, 2, 20, 12] [1, 1, 1, 1] : memref<1x2x22x14xi8> to memref<1x2x20x12xi8, strided<[616, 308, 14, 1], offset: 15>>
  memref.copy %x, %in : memref<1x2x20x12xi8> to memref<1x2x20x12xi8, strided<[616, 308, 14, 1], offset: 15>>
  linalg.fill ins(%c0 : i32) outs(%out : memref<1x2x20x12xi32>)
  linalg.generic {indexing_maps = [#mX, #mW, #mO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%padded, %w : memref<1x2x22x14xi8>, memref<2x1x3x3xi8>) outs(%out : memref<1x2x20x12xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// A direct AMX conv of a copy padded with its zero point 3: the relayout
// reads the source (the copy and its fill go), the pad value on rows and
// columns off it; threads take quads of channels, each row's last store
// masked to its own positions. The weights are whole A tiles (16 rows of
// one of the 9 k chunks, 1 KB each), loaded at column 0.
// AMX-LABEL: memref.global "private" constant @cw_direct_amx_tiles : memref<144x64xi8>
// AMX-LABEL: func.func @amx_direct_padded
// AMX-NOT: memref.copy
// AMX-NOT: linalg.fill
// AMX: memref.reinterpret_cast %arg0 to offset: [0], sizes: [2304]
// AMX: %[[PAD:.*]] = vector.broadcast %c3_i8 : i8 to vector<64xi8>
// AMX: scf.for %{{.*}} = %{{.*}} to %c16 step
// AMX: scf.for %[[ROW:[a-z0-9]+]] = %{{.*}} to %c8{{.*}} step
// AMX: arith.cmpi uge, %[[ROW]], %c1
// AMX: arith.cmpi ult, %[[ROW]], %c7
// AMX: scf.if
// AMX: vector.broadcast %c3_i8 : i8 to vector<16xi8>
// AMX-COUNT-4: vector.maskedload %reinterpret_cast
// AMX: vector.create_mask %c32 : vector<64xi1>
// AMX: vector.maskedstore
// AMX: } else {
// AMX: vector.maskedstore %{{.*}}, %{{.*}}, %[[PAD]]
// AMX: } {kiln.parallel = 256 : i64}
// AMX: amx.tile_load %{{.*}}[%{{.*}}, %c0{{.*}}] : memref<144x64xi8>
// AMX-NOT: linalg.
// (Each 8-wide plane row's 2 padding columns dropped in the store.)
// AMX: llvm.x86.avx512.permvar.si.512
// Without AMX, the VNNI kernel.
// CHECK-LABEL: func.func @amx_direct_padded
// CHECK: vpdpbusd
memref.global "private" constant @cw_direct : memref<16x64x3x3xi8> = dense<1> {alignment = 64 : i64}
func.func @amx_direct_padded(%arg0: memref<1x64x6x6xi8>) -> memref<1x16x6x6xi32> {
  %c0_i32 = arith.constant 0 : i32
  %c3_i8 = arith.constant 3 : i8
  %w = memref.get_global @cw_direct : memref<16x64x3x3xi8>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x64x8x8xi8>
  linalg.fill ins(%c3_i8 : i8) outs(%padded : memref<1x64x8x8xi8>)
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 64, 6, 6] [1, 1, 1, 1] : memref<1x64x8x8xi8> to memref<1x64x6x6xi8, strided<[4096, 64, 8, 1], offset: 9>>
  memref.copy %arg0, %inner : memref<1x64x6x6xi8> to memref<1x64x6x6xi8, strided<[4096, 64, 8, 1], offset: 9>>
  %out = memref.alloc() {alignment = 64 : i64} : memref<1x16x6x6xi32>
  linalg.fill ins(%c0_i32 : i32) outs(%out : memref<1x16x6x6xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%padded, %w : memref<1x64x8x8xi8>, memref<16x64x3x3xi8>) outs(%out : memref<1x16x6x6xi32>) {
  ^bb0(%in: i8, %wt: i8, %o: i32):
    %a = arith.extui %in : i8 to i32
    %b = arith.extsi %wt : i8 to i32
    %p = arith.muli %a, %b : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  return %out : memref<1x16x6x6xi32>
}

// -----

// A 1x1 conv of stride 2 reads one phase plane of the four: the relayout
// loads four channel rows per step (one phase), not sixteen.
// AMX-LABEL: func.func @amx_direct_1x1_stride2
// AMX: scf.for
// AMX: scf.for
// AMX-COUNT-4: vector.maskedload
// AMX-NOT: vector.maskedload
// AMX: } {kiln.parallel
// AMX: amx.tile_load
// CHECK-LABEL: func.func @amx_direct_1x1_stride2
memref.global "private" constant @cw_s2 : memref<16x64x1x1xi8> = dense<1> {alignment = 64 : i64}
func.func @amx_direct_1x1_stride2(%x: memref<1x64x8x8xi8>) -> memref<1x16x4x4xi32> {
  %c0_i32 = arith.constant 0 : i32
  %w = memref.get_global @cw_s2 : memref<16x64x1x1xi8>
  %out = memref.alloc() {alignment = 64 : i64} : memref<1x16x4x4xi32>
  linalg.fill ins(%c0_i32 : i32) outs(%out : memref<1x16x4x4xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 * 2 + d3, d6 * 2 + d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%x, %w : memref<1x64x8x8xi8>, memref<16x64x1x1xi8>) outs(%out : memref<1x16x4x4xi32>) {
  ^bb0(%in: i8, %wt: i8, %o: i32):
    %a = arith.extui %in : i8 to i32
    %b = arith.extsi %wt : i8 to i32
    %p = arith.muli %a, %b : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  return %out : memref<1x16x4x4xi32>
}

// -----

// A 1x1 direct AMX conv (4 tiles of positions x 2 blocks of 64 output
// channels) whose requantized output a depthwise conv reads through its
// padded copy: threads take the blocks first (the unit index divided by
// the 4 tiles), as the depthwise conv's threads take channels. Read by
// anything else, tiles come first (divided by the 2 blocks). A relaid
// quad's 196 positions are whole lines: 224 dwords.
// AMX-LABEL: func.func @amx_direct_into_depthwise
// AMX: memref.alloc() {alignment = 64 : i64} : memref<16x896xi8>
// AMX: scf.for %[[IT:[a-z0-9]+]] = %c0{{.*}} to %c8{{.*}} step
// AMX: arith.remui %[[IT]], %c4
// AMX: arith.divui %[[IT]], %c4
// AMX: amx.tile_load
// AMX-LABEL: func.func @amx_direct_into_add
// AMX: scf.for %[[IT:[a-z0-9]+]] = %c0{{.*}} to %c8{{.*}} step
// AMX: arith.divui %[[IT]], %c2
// AMX: arith.remui %[[IT]], %c2
// (No position dropped, 14 of 14 in each row: each panel stored as it
// lies, without a permutation.)
// AMX-NOT: permvar
// AMX: return
// (The elementwise add stays a generic.)
// DW-LABEL: func.func @amx_direct_into_add
memref.global "private" constant @cw_pw : memref<128x64x1x1xi8> = dense<1> {alignment = 64 : i64}
memref.global "private" constant @cw_dw : memref<128x1x3x3xi8> = dense<1> {alignment = 64 : i64}
#mIn = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>
#mWt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>
#mOut = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>
#mId = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#dX = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh + kh, ow + kw)>
#dW = affine_map<(n, m, oh, kh, kw, ow) -> (m, 0, kh, kw)>
#dO = affine_map<(n, m, oh, kh, kw, ow) -> (n, m, oh, ow)>
func.func @amx_direct_into_depthwise(%x: memref<1x64x14x14xi8>, %out: memref<1x128x14x14xi32>) {
  %c0_i32 = arith.constant 0 : i32
  %c0_i8 = arith.constant 0 : i8
  %w = memref.get_global @cw_pw : memref<128x64x1x1xi8>
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x128x14x14xi32>
  linalg.fill ins(%c0_i32 : i32) outs(%c : memref<1x128x14x14xi32>)
  linalg.generic {indexing_maps = [#mIn, #mWt, #mOut], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%x, %w : memref<1x64x14x14xi8>, memref<128x64x1x1xi8>) outs(%c : memref<1x128x14x14xi32>) {
  ^bb0(%in: i8, %wt: i8, %o: i32):
    %a = arith.extui %in : i8 to i32
    %b = arith.extsi %wt : i8 to i32
    %p = arith.muli %a, %b : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  %q = memref.alloc() {alignment = 64 : i64} : memref<1x128x14x14xi8>
  linalg.generic {indexing_maps = [#mId, #mId], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : memref<1x128x14x14xi32>) outs(%q : memref<1x128x14x14xi8>) {
  ^bb0(%a: i32, %o: i8):
    %t = arith.trunci %a : i32 to i8
    linalg.yield %t : i8
  }
  %dw = memref.get_global @cw_dw : memref<128x1x3x3xi8>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x128x16x16xi8>
  linalg.fill ins(%c0_i8 : i8) outs(%padded : memref<1x128x16x16xi8>)
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 128, 14, 14] [1, 1, 1, 1] : memref<1x128x16x16xi8> to memref<1x128x14x14xi8, strided<[32768, 256, 16, 1], offset: 17>>
  memref.copy %q, %inner : memref<1x128x14x14xi8> to memref<1x128x14x14xi8, strided<[32768, 256, 16, 1], offset: 17>>
  linalg.fill ins(%c0_i32 : i32) outs(%out : memref<1x128x14x14xi32>)
  linalg.generic {indexing_maps = [#dX, #dW, #dO], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%padded, %dw : memref<1x128x16x16xi8>, memref<128x1x3x3xi8>) outs(%out : memref<1x128x14x14xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  return
}
func.func @amx_direct_into_add(%x: memref<1x64x14x14xi8>, %y: memref<1x128x14x14xi8>, %out: memref<1x128x14x14xi8>) {
  %c0_i32 = arith.constant 0 : i32
  %w = memref.get_global @cw_pw : memref<128x64x1x1xi8>
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x128x14x14xi32>
  linalg.fill ins(%c0_i32 : i32) outs(%c : memref<1x128x14x14xi32>)
  linalg.generic {indexing_maps = [#mIn, #mWt, #mOut], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%x, %w : memref<1x64x14x14xi8>, memref<128x64x1x1xi8>) outs(%c : memref<1x128x14x14xi32>) {
  ^bb0(%in: i8, %wt: i8, %o: i32):
    %a = arith.extui %in : i8 to i32
    %b = arith.extsi %wt : i8 to i32
    %p = arith.muli %a, %b : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  %q = memref.alloc() {alignment = 64 : i64} : memref<1x128x14x14xi8>
  linalg.generic {indexing_maps = [#mId, #mId], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : memref<1x128x14x14xi32>) outs(%q : memref<1x128x14x14xi8>) {
  ^bb0(%a: i32, %o: i8):
    %t = arith.trunci %a : i32 to i8
    linalg.yield %t : i8
  }
  linalg.generic {indexing_maps = [#mId, #mId, #mId], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q, %y : memref<1x128x14x14xi8>, memref<1x128x14x14xi8>) outs(%out : memref<1x128x14x14xi8>) {
  ^bb0(%a: i8, %b: i8, %o: i8):
    %t = arith.addi %a, %b : i8
    linalg.yield %t : i8
  }
  return
}

// -----

// A requantization's end, fptosi(min(max(roundeven(x) + z, lo), hi)), on
// AVX-512 (the module's vector width): x clamped to [lo - z, hi - z], one
// vcvtps2dq rounding to nearest even (_MM_FROUND_TO_NEAREST_INT |
// _MM_FROUND_NO_EXC), plus z as integers.
// CHECK-LABEL: func.func @requantize
// CHECK: arith.maximumf {{.*}}, %cst{{.*}} : vector<16xf32>
// CHECK: arith.minimumf {{.*}}, %cst{{.*}} : vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.mask.cvtps2dq.512"(%{{.*}}, %{{.*}}, %c-1_i16, %c8_i32)
// CHECK: arith.addi {{.*}} : vector<16xi32>
// CHECK: arith.trunci {{.*}} : vector<16xi32> to vector<16xi8>
// (The body's own widened ops before it are left dead, for DCE.)
module attributes {kiln.vector_bits = 512 : i64} {
  memref.global "private" constant @cw3 : memref<8x4x3x3xi8> = dense<2>
  func.func @requantize(%x: memref<1x4x18x18xi8>, %y: memref<1x8x16x16xi8>, %s: memref<8x1x1xf32>) {
    %w = memref.get_global @cw3 : memref<8x4x3x3xi8>
    %c = memref.alloc() : memref<1x8x16x16xi32>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<1x8x16x16xi32>)
    linalg.generic {indexing_maps = [affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>, affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
        ins(%x, %w : memref<1x4x18x18xi8>, memref<8x4x3x3xi8>) outs(%c : memref<1x8x16x16xi32>) {
    ^bb0(%a: i8, %b: i8, %acc: i32):
      %aw = arith.extui %a : i8 to i32
      %bw = arith.extsi %b : i8 to i32
      %p = arith.muli %aw, %bw : i32
      %t = arith.addi %acc, %p : i32
      linalg.yield %t : i32
    }
    linalg.generic {indexing_maps = [affine_map<(n, m, h, w) -> (n, m, h, w)>, affine_map<(n, m, h, w) -> (m, 0, 0)>, affine_map<(n, m, h, w) -> (n, m, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c, %s : memref<1x8x16x16xi32>, memref<8x1x1xf32>) outs(%y : memref<1x8x16x16xi8>) {
    ^bb0(%a: i32, %sc: f32, %o: i8):
      %zp = arith.constant 3.0 : f32
      %lo = arith.constant 0.0 : f32
      %hi = arith.constant 255.0 : f32
      %f = arith.sitofp %a : i32 to f32
      %m = arith.mulf %f, %sc : f32
      %r = math.roundeven %m : f32
      %z = arith.addf %r, %zp : f32
      %l = arith.maximumf %z, %lo : f32
      %h = arith.minimumf %l, %hi : f32
      %i = arith.fptosi %h : f32 to i32
      %q = arith.trunci %i : i32 to i8
      linalg.yield %q : i8
    }
    return
  }
}

// -----

// A quantize and dequantize in the middle of the store (a conv's output
// requantized before a residual add): min(max(roundeven(x) + 124, 0), 255)
// - 124 as x rounded and clamped to [-124, 131], no add or subtract of
// the zero point.
// CHECK-LABEL: func.func @requantize_middle
// CHECK: %[[R:.*]] = math.roundeven {{.*}} : vector<16xf32>
// CHECK-NEXT: %[[LO:.*]] = arith.constant -1.240000e+02 : f32
// CHECK-NEXT: %[[HI:.*]] = arith.constant 1.310000e+02 : f32
// CHECK-NEXT: %[[LOV:.*]] = vector.broadcast %[[LO]]
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[R]], %[[LOV]] fastmath<nsz> : vector<16xf32>
// CHECK-NEXT: %[[HIV:.*]] = vector.broadcast %[[HI]]
// CHECK-NEXT: %[[MIN:.*]] = arith.minimumf %[[MAX]], %[[HIV]] fastmath<nsz> : vector<16xf32>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: arith.mulf %[[MIN]]
// An epilogue that yields floats adds +0.0 after the clamp: a rounded -0
// comes out +0, as (-0 + 124) - 124 does.
// CHECK-LABEL: func.func @requantize_middle_float
// CHECK: %[[R:.*]] = math.roundeven {{.*}} : vector<16xf32>
// CHECK: %[[MAX:.*]] = arith.maximumf %[[R]], %{{.*}} : vector<16xf32>
// CHECK: %[[MIN:.*]] = arith.minimumf %[[MAX]], %{{.*}} : vector<16xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ZEROV:.*]] = vector.broadcast %[[ZERO]]
// CHECK-NEXT: arith.addf %[[MIN]], %[[ZEROV]] : vector<16xf32>
module attributes {kiln.vector_bits = 512 : i64} {
  memref.global "private" constant @cw3 : memref<8x4x3x3xi8> = dense<2>
  func.func @requantize_middle(%x: memref<1x4x18x18xi8>, %res: memref<1x8x16x16xi8>, %y: memref<1x8x16x16xi8>, %s: memref<8x1x1xf32>) {
    %w = memref.get_global @cw3 : memref<8x4x3x3xi8>
    %c = memref.alloc() : memref<1x8x16x16xi32>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<1x8x16x16xi32>)
    linalg.generic {indexing_maps = [affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>, affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
        ins(%x, %w : memref<1x4x18x18xi8>, memref<8x4x3x3xi8>) outs(%c : memref<1x8x16x16xi32>) {
    ^bb0(%a: i8, %b: i8, %acc: i32):
      %aw = arith.extui %a : i8 to i32
      %bw = arith.extsi %b : i8 to i32
      %p = arith.muli %aw, %bw : i32
      %t = arith.addi %acc, %p : i32
      linalg.yield %t : i32
    }
    linalg.generic {indexing_maps = [affine_map<(n, m, h, w) -> (n, m, h, w)>, affine_map<(n, m, h, w) -> (m, 0, 0)>, affine_map<(n, m, h, w) -> (n, m, h, w)>, affine_map<(n, m, h, w) -> (n, m, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c, %s, %res : memref<1x8x16x16xi32>, memref<8x1x1xf32>, memref<1x8x16x16xi8>) outs(%y : memref<1x8x16x16xi8>) {
    ^bb0(%a: i32, %sc: f32, %rq: i8, %o: i8):
      %zp = arith.constant 124.0 : f32
      %lo = arith.constant 0.0 : f32
      %hi = arith.constant 255.0 : f32
      %s1 = arith.constant 0.02 : f32
      %f = arith.sitofp %a : i32 to f32
      %m = arith.mulf %f, %sc : f32
      %r = math.roundeven %m : f32
      %z = arith.addf %r, %zp : f32
      %l = arith.maximumf %z, %lo : f32
      %h = arith.minimumf %l, %hi : f32
      %d = arith.subf %h, %zp : f32
      %dq = arith.mulf %d, %s1 : f32
      %rf = arith.uitofp %rq : i8 to f32
      %sum = arith.addf %dq, %rf : f32
      %r2 = math.roundeven %sum : f32
      %l2 = arith.maximumf %r2, %lo : f32
      %h2 = arith.minimumf %l2, %hi : f32
      %i = arith.fptosi %h2 : f32 to i32
      %q = arith.trunci %i : i32 to i8
      linalg.yield %q : i8
    }
    return
  }
  func.func @requantize_middle_float(%x: memref<1x4x18x18xi8>, %res: memref<1x8x16x16xi8>, %y: memref<1x8x16x16xf32>, %s: memref<8x1x1xf32>) {
    %w = memref.get_global @cw3 : memref<8x4x3x3xi8>
    %c = memref.alloc() : memref<1x8x16x16xi32>
    %zero = arith.constant 0 : i32
    linalg.fill ins(%zero : i32) outs(%c : memref<1x8x16x16xi32>)
    linalg.generic {indexing_maps = [affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>, affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
        ins(%x, %w : memref<1x4x18x18xi8>, memref<8x4x3x3xi8>) outs(%c : memref<1x8x16x16xi32>) {
    ^bb0(%a: i8, %b: i8, %acc: i32):
      %aw = arith.extui %a : i8 to i32
      %bw = arith.extsi %b : i8 to i32
      %p = arith.muli %aw, %bw : i32
      %t = arith.addi %acc, %p : i32
      linalg.yield %t : i32
    }
    linalg.generic {indexing_maps = [affine_map<(n, m, h, w) -> (n, m, h, w)>, affine_map<(n, m, h, w) -> (m, 0, 0)>, affine_map<(n, m, h, w) -> (n, m, h, w)>, affine_map<(n, m, h, w) -> (n, m, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c, %s, %res : memref<1x8x16x16xi32>, memref<8x1x1xf32>, memref<1x8x16x16xi8>) outs(%y : memref<1x8x16x16xf32>) {
    ^bb0(%a: i32, %sc: f32, %rq: i8, %o: f32):
      %zp = arith.constant 124.0 : f32
      %lo = arith.constant 0.0 : f32
      %hi = arith.constant 255.0 : f32
      %s1 = arith.constant 0.02 : f32
      %f = arith.sitofp %a : i32 to f32
      %m = arith.mulf %f, %sc : f32
      %r = math.roundeven %m : f32
      %z = arith.addf %r, %zp : f32
      %l = arith.maximumf %z, %lo : f32
      %h = arith.minimumf %l, %hi : f32
      %d = arith.subf %h, %zp : f32
      %dq = arith.mulf %d, %s1 : f32
      %rf = arith.uitofp %rq : i8 to f32
      %sum = arith.addf %dq, %rf : f32
      linalg.yield %sum : f32
    }
    return
  }
}

// -----

// A conv of 3 input channels (a network's first: 7x7, stride 2) fills no
// k chunk with one tap's channels: the input is relaid as 16 shifted
// planes (one quad, 4 phases, 4 column shifts), a B tile's rows 16 taps of
// 16 positions; the 7 kernel rows' phase rows in 4 chunks of 64 bytes
// (weights [16][256], taps past the kernel and the fourth channel zero).
// Threads take the 4 planes of shift 0 (a table of 5 entries each); each
// row's vectors are made once (3 channel loads), carried to the next step,
// and stored at shifts 0 to 3 (dwords 1 .. 16 of a vector and the next at
// shift 1); rows off the source (the table's bounds) are the pad value.
// AMX-LABEL: memref.global "private" constant @cw_stem_amx_shifted : memref<16x256xi8>
// AMX-LABEL: func.func @amx_direct_shifted_planes
// AMX-NOT: memref.copy
// AMX: scf.for %{{.*}} = %{{.*}} to %c4 step
// AMX: memref.load %{{.*}}[%{{.*}}] : memref<20xi32>
// AMX: arith.cmpi uge
// AMX: arith.cmpi ult
// AMX: scf.if
// AMX-COUNT-3: vector.maskedload %reinterpret_cast
// AMX: scf.for {{.*}} iter_args
// AMX-COUNT-3: vector.maskedload %reinterpret_cast
// AMX-NOT: vector.maskedload
// AMX: vector.store
// AMX: vector.shuffle %{{.*}}, %{{.*}} [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16] : vector<16xi32>, vector<16xi32>
// AMX: } {kiln.parallel
// AMX: amx.tile_load
// AMX-NOT: linalg.generic
// CHECK-LABEL: func.func @amx_direct_shifted_planes
// CHECK: vpdpbusd
memref.global "private" constant @cw_stem : memref<16x3x7x7xi8> = dense<1> {alignment = 64 : i64}
func.func @amx_direct_shifted_planes(%arg0: memref<1x3x33x33xi8>) -> memref<1x16x17x17xi32> {
  %c0_i32 = arith.constant 0 : i32
  %c3_i8 = arith.constant 3 : i8
  %w = memref.get_global @cw_stem : memref<16x3x7x7xi8>
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x3x39x39xi8>
  linalg.fill ins(%c3_i8 : i8) outs(%padded : memref<1x3x39x39xi8>)
  %inner = memref.subview %padded[0, 0, 3, 3] [1, 3, 33, 33] [1, 1, 1, 1] : memref<1x3x39x39xi8> to memref<1x3x33x33xi8, strided<[4563, 1521, 39, 1], offset: 120>>
  memref.copy %arg0, %inner : memref<1x3x33x33xi8> to memref<1x3x33x33xi8, strided<[4563, 1521, 39, 1], offset: 120>>
  %out = memref.alloc() {alignment = 64 : i64} : memref<1x16x17x17xi32>
  linalg.fill ins(%c0_i32 : i32) outs(%out : memref<1x16x17x17xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 * 2 + d3, d6 * 2 + d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%padded, %w : memref<1x3x39x39xi8>, memref<16x3x7x7xi8>) outs(%out : memref<1x16x17x17xi32>) {
  ^bb0(%in: i8, %wt: i8, %o: i32):
    %a = arith.extui %in : i8 to i32
    %b = arith.extsi %wt : i8 to i32
    %p = arith.muli %a, %b : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  return %out : memref<1x16x17x17xi32>
}
// -----

// A direct AMX conv whose weights (192 x 576 bytes) outweigh its relaid
// input (16 quads x 160 dwords): threads take blocks of output channels
// first (the unit index modulo and divided by the 2 tiles; 3 blocks of
// 64), each reading a third of the weights, not a third of the input.
// AMX-LABEL: func.func @amx_direct_weight_bound
// AMX: scf.for %[[IT:[a-z0-9]+]] = %c0{{.*}} to %c6{{.*}} step
// AMX: arith.remui %[[IT]], %c2
// AMX: arith.divui %[[IT]], %c2
// AMX: amx.tile_load
memref.global "private" constant @cw_wb : memref<192x64x3x3xi8> = dense<1> {alignment = 64 : i64}
func.func @amx_direct_weight_bound(%x: memref<1x64x12x12xi8>) -> memref<1x192x10x10xi32> {
  %c0_i32 = arith.constant 0 : i32
  %w = memref.get_global @cw_wb : memref<192x64x3x3xi8>
  %out = memref.alloc() {alignment = 64 : i64} : memref<1x192x10x10xi32>
  linalg.fill ins(%c0_i32 : i32) outs(%out : memref<1x192x10x10xi32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%x, %w : memref<1x64x12x12xi8>, memref<192x64x3x3xi8>) outs(%out : memref<1x192x10x10xi32>) {
  ^bb0(%in: i8, %wt: i8, %o: i32):
    %a = arith.extui %in : i8 to i32
    %b = arith.extsi %wt : i8 to i32
    %p = arith.muli %a, %b : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  return %out : memref<1x192x10x10xi32>
}
// -----

// An epilogue whose results are integers: its float max and min take nsz
// (the sign of a zero they pick cannot reach the integer; a max against
// +0 is then one vmaxps). One that yields floats keeps them as they are.
// CHECK-LABEL: func.func @conv_epilogue_nsz
// CHECK: arith.maximumf {{.*}} fastmath<nsz> : vector<16xf32>
// CHECK: arith.minimumf {{.*}} fastmath<nsz> : vector<16xf32>
// CHECK-LABEL: func.func @conv_epilogue_float
// CHECK-NOT: fastmath<nsz>
// CHECK: return
memref.global "private" constant @cw5 : memref<16x4x3x3xi8> = dense<2>
#nX = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#nW = affine_map<(n, m, c, kh, kw, oh, ow) -> (m, c, kh, kw)>
#nO = affine_map<(n, m, c, kh, kw, oh, ow) -> (n, m, oh, ow)>
#nId = affine_map<(n, m, h, w) -> (n, m, h, w)>
func.func @conv_epilogue_nsz(%x: memref<1x4x18x18xi8>, %y: memref<1x16x16x16xi8>) {
  %w = memref.get_global @cw5 : memref<16x4x3x3xi8>
  %c = memref.alloc() : memref<1x16x16x16xi32>
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<1x16x16x16xi32>)
  linalg.generic {indexing_maps = [#nX, #nW, #nO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x4x18x18xi8>, memref<16x4x3x3xi8>) outs(%c : memref<1x16x16x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %t = arith.addi %acc, %p : i32
    linalg.yield %t : i32
  }
  linalg.generic {indexing_maps = [#nId, #nId], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x16x16x16xi32>) outs(%y : memref<1x16x16x16xi8>) {
  ^bb0(%a: i32, %o: i8):
    %lo = arith.constant 0.0 : f32
    %hi = arith.constant 255.0 : f32
    %sc = arith.constant 0.25 : f32
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %r = math.roundeven %m : f32
    %mx = arith.maximumf %r, %lo : f32
    %mn = arith.minimumf %mx, %hi : f32
    %q = arith.fptoui %mn : f32 to i8
    linalg.yield %q : i8
  }
  return
}
func.func @conv_epilogue_float(%x: memref<1x4x18x18xi8>, %y: memref<1x16x16x16xf32>) {
  %w = memref.get_global @cw5 : memref<16x4x3x3xi8>
  %c = memref.alloc() : memref<1x16x16x16xi32>
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<1x16x16x16xi32>)
  linalg.generic {indexing_maps = [#nX, #nW, #nO], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %w : memref<1x4x18x18xi8>, memref<16x4x3x3xi8>) outs(%c : memref<1x16x16x16xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %aw = arith.extui %a : i8 to i32
    %bw = arith.extsi %b : i8 to i32
    %p = arith.muli %aw, %bw : i32
    %t = arith.addi %acc, %p : i32
    linalg.yield %t : i32
  }
  linalg.generic {indexing_maps = [#nId, #nId], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x16x16x16xi32>) outs(%y : memref<1x16x16x16xf32>) {
  ^bb0(%a: i32, %o: f32):
    %lo = arith.constant 0.0 : f32
    %sc = arith.constant 0.25 : f32
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %mx = arith.maximumf %m, %lo : f32
    linalg.yield %mx : f32
  }
  return
}
