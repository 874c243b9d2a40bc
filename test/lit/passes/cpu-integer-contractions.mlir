// RUN: kiln-opt %s --split-input-file --kiln-cpu-integer-contractions | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-integer-contractions=vnni=0 | FileCheck %s --check-prefix=NOVNNI

// MatMulInteger as the CPU provider lowers it (u8 A widened unsigned, s8 B
// signed): B packed at compile time into [N/16][K/4][64] bytes, tiles of 6
// rows x 4 panels across threads with 24 accumulators in registers, the
// 2 rows left as single rows; the 8 columns past 64 in one masked panel.
// CHECK-LABEL: memref.global "private" constant @w_vnni : memref<5x8x64xi8> = dense<
// CHECK-LABEL: func.func @batch_of_rows
// CHECK-NOT: linalg.generic
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<2x7x32xi8> into memref<14x32xi8>
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
// Without VNNI the generic stays (exact i32 loops).
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

// Left alone: B not a constant (it would need packing at run time), K not
// a multiple of 4, and signed A (decomposition shifts it to u8 first).
// CHECK-LABEL: func.func @not_taken
// CHECK-COUNT-3: linalg.generic
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
