// RUN: kiln-opt %s -split-input-file --kiln-plan-memory | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-plan-memory=alignment=16 | FileCheck %s --check-prefix=ALIGN16

// %a (64 B) lives until its subview's last use; %b (32 B, padded to 64)
// overlaps it and goes above it; %c starts after %a died and reuses offset
// 0. The returned alloc becomes an output argument written in place; the
// returned input is copied into its output argument. The arena comes last.
// CHECK: module attributes {kiln.arena_size = 128 : i64, kiln.arena_size_unshared = 192 : i64}
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<16xf32>, %[[OUT0:.*]]: memref<16xf32>, %[[OUT1:.*]]: memref<16xf32>, %[[ARENA:.*]]: memref<128xi8>)
// CHECK-NOT: ->
// CHECK-NOT: memref.alloc
// CHECK: %[[O_A:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[O_A]]][] : memref<128xi8> to memref<16xf32>
// CHECK: linalg.copy ins(%[[IN]] : memref<16xf32>) outs(%[[A]] : memref<16xf32>)
// CHECK: %[[O_B:.*]] = arith.constant 64 : index
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%[[O_B]]][] : memref<128xi8> to memref<8xf32>
// CHECK: %[[O_C:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%[[O_C]]][] : memref<128xi8> to memref<8xf32>
// CHECK: linalg.copy ins(%[[B]] : memref<8xf32>) outs(%[[C]] : memref<8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT0]] : memref<16xf32>)
// CHECK: memref.copy %[[IN]], %[[OUT1]]
// CHECK-NEXT: return{{$}}

// With 16-byte alignment %b needs only 32 bytes.
// ALIGN16: module attributes {kiln.arena_size = 96 : i64, kiln.arena_size_unshared = 128 : i64}
// ALIGN16: memref<96xi8>
func.func @main(%in: memref<16xf32>) -> (memref<16xf32>, memref<16xf32>) {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = memref.alloc() : memref<8xf32>
  %av = memref.subview %a[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  linalg.copy ins(%av : memref<8xf32, strided<[1]>>) outs(%b : memref<8xf32>)
  %c = memref.alloc() : memref<8xf32>
  linalg.copy ins(%b : memref<8xf32>) outs(%c : memref<8xf32>)
  %out = memref.alloc() : memref<16xf32>
  linalg.fill ins(%cst : f32) outs(%out : memref<16xf32>)
  %cv = memref.subview %out[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  linalg.copy ins(%c : memref<8xf32>) outs(%cv : memref<8xf32, strided<[1]>>)
  return %out, %in : memref<16xf32>, memref<16xf32>
}

// -----

// Only results: no arena bytes, a one-byte placeholder argument.
// CHECK: module attributes {kiln.arena_size = 0 : i64, kiln.arena_size_unshared = 0 : i64}
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>, %{{.*}}: memref<1xi8>)
// CHECK-NEXT: linalg.copy ins(%[[IN]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT: return{{$}}
func.func @main(%in: memref<4xf32>) -> memref<4xf32> {
  %out = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%out : memref<4xf32>)
  return %out : memref<4xf32>
}

// -----

// Deallocs of planned buffers disappear.
// CHECK-LABEL: func.func @main
// CHECK: memref.view
// CHECK-NOT: memref.dealloc
func.func @main(%in: memref<4xf32>) -> memref<4xf32> {
  %t = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%t : memref<4xf32>)
  %out = memref.alloc() : memref<4xf32>
  linalg.copy ins(%t : memref<4xf32>) outs(%out : memref<4xf32>)
  memref.dealloc %t : memref<4xf32>
  return %out : memref<4xf32>
}

// -----

// Device buffers go to the device arena the runtime hands out
// (kilnDeviceArena), planned like the host arena: %d2 reuses %d0's bytes;
// the constant's copy overlaps everything and keeps its own. The address
// taken of a placed buffer is the arena's plus the offset. A device buffer
// returned from a device-I/O function becomes the output argument.
// CHECK: module attributes {{{.*}}kiln.device_arena_size = 192 : i64}
// CHECK: func.func private @kilnDeviceArena(i64) -> memref<192xi8>
// CHECK-LABEL: func.func @device
// CHECK-SAME: (%[[IN:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<16xf32>, %{{.*}}: memref<1xi8>)
// CHECK: %[[SIZE:.*]] = arith.constant 192 : i64
// CHECK: %[[DA:.*]] = call @kilnDeviceArena(%[[SIZE]])
// CHECK: %[[OW:.*]] = arith.constant 0 : index
// CHECK: %[[W:.*]] = memref.view %[[DA]][%[[OW]]][] : memref<192xi8> to memref<16xf32>
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[DA]]
// CHECK: %[[ADDR:.*]] = arith.addi %[[BASE]], %[[OW]] : index
// CHECK: arith.index_cast %[[ADDR]]
// CHECK: %[[O0:.*]] = arith.constant 64 : index
// CHECK: memref.view %[[DA]][%[[O0]]][]
// CHECK: %[[O1:.*]] = arith.constant 128 : index
// CHECK: memref.view %[[DA]][%[[O1]]][]
// CHECK: %[[O2:.*]] = arith.constant 64 : index
// CHECK: memref.view %[[DA]][%[[O2]]][]
// CHECK-NOT: gpu.alloc
// CHECK-NOT: gpu.dealloc
// CHECK: linalg.copy ins(%{{.*}} : memref<16xf32>) outs(%[[OUT]] : memref<16xf32>)
// CHECK-NEXT: return
func.func @device(%in: memref<16xf32>) -> memref<16xf32> attributes {kiln.device_io} {
  %w = gpu.alloc () {kiln.device_constant} : memref<16xf32>
  %p = memref.extract_aligned_pointer_as_index %w : memref<16xf32> -> index
  %pi = arith.index_cast %p : index to i64
  %d0 = gpu.alloc () : memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%d0 : memref<16xf32>)
  %d1 = gpu.alloc () : memref<8xf32>
  %sub = memref.subview %d0[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  linalg.copy ins(%sub : memref<8xf32, strided<[1]>>) outs(%d1 : memref<8xf32>)
  gpu.dealloc %d0 : memref<16xf32>
  %d2 = gpu.alloc () : memref<8xf32>
  linalg.copy ins(%d1 : memref<8xf32>) outs(%d2 : memref<8xf32>)
  %out = gpu.alloc () : memref<16xf32>
  linalg.copy ins(%w : memref<16xf32>) outs(%out : memref<16xf32>)
  return %out : memref<16xf32>
}

// -----

// A buffer made and used within one iteration of a loop keeps one offset
// for the whole loop: every iteration reuses it.
// CHECK-LABEL: func.func @loop_local
// CHECK: scf.for
// CHECK: %[[T:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<{{.*}}xi8> to memref<16xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<16xf32>) outs(%[[T]] : memref<16xf32>)
func.func @loop_local(%in: memref<16xf32>, %n: index) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<16xf32>
    linalg.copy ins(%in : memref<16xf32>) outs(%t : memref<16xf32>)
    linalg.copy ins(%t : memref<16xf32>) outs(%out : memref<16xf32>)
  }
  return %out : memref<16xf32>
}

// -----

// A buffer yielded out of a branch lives as long as the scf.if result:
// %b, made after the if, must not share its bytes (a 128-byte arena).
// CHECK-LABEL: func.func @if_result_alive
// CHECK-SAME: memref<128xi8>
func.func @if_result_alive(%c: i1, %x: memref<16xf32>) -> memref<16xf32> {
  %r = scf.if %c -> memref<16xf32> {
    %a = memref.alloc() : memref<16xf32>
    linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
    scf.yield %a : memref<16xf32>
  } else {
    scf.yield %x : memref<16xf32>
  }
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%b : memref<16xf32>)
  %out = memref.alloc() : memref<16xf32>
  linalg.add ins(%r, %b : memref<16xf32>, memref<16xf32>) outs(%out : memref<16xf32>)
  return %out : memref<16xf32>
}

// -----

// A buffer allocated in a parallel loop's body is the running thread's own
// (threads run the iterations at once): a slot of kilnThreadScratch, not
// arena bytes.
// CHECK-LABEL: func.func @parallel_scratch
// CHECK: scf.for
// CHECK: %[[P:.*]] = func.call @kilnThreadScratch(%c0_i64, %c256_i64) : (i64, i64) -> memref<0xi8>
// CHECK: %[[T:.*]] = memref.view %[[P]][%{{.*}}][] : memref<0xi8> to memref<64xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[T]]
// CHECK-NOT: memref.dealloc
// CHECK: } {kiln.parallel}
func.func @parallel_scratch(%a: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %c0 to %c256 step %c64 {
    %t = memref.alloc() : memref<64xf32>
    %sa = memref.subview %a[%i] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: ?>>
    memref.copy %sa, %t : memref<64xf32, strided<[1], offset: ?>> to memref<64xf32>
    memref.copy %t, %sa : memref<64xf32> to memref<64xf32, strided<[1], offset: ?>>
    memref.dealloc %t : memref<64xf32>
  } {kiln.parallel}
  return
}

// -----

// A large strided copy (a pad's interior) becomes row loops whose outermost
// loop of more than one iteration threads split, each at least 65536
// elements (here 64 x 32 x 32: the channel loop, grain 64); a small one
// stays on one thread.
// CHECK-LABEL: func.func @copy_split
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c64 step %c1{{.*}} {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c32 step %c1{{.*}} {
// CHECK: vector.transfer_read {{.*}} vector<32xf32>
// CHECK: } {kiln.parallel = 64 : i64}
// CHECK-NOT: kiln.parallel
// CHECK: return
// A split loop of fewer than 8 trips takes the loops inside it: a stem's 3
// channels of 224 rows are one loop of 672 rows (grain 293: 2 ranges where
// the channel loop, grain 2, made one).
// CHECK-LABEL: func.func @copy_few_channels
// CHECK: %[[N:.*]] = arith.muli %c3, %c224
// CHECK: scf.for %[[R:.*]] = %c0{{.*}} to %[[N]] step %c1{{.*}} {
// CHECK-DAG: %[[H:.*]] = arith.remsi %[[R]], %c224
// CHECK-DAG: %[[C:.*]] = arith.divsi %[[R]], %c224
// CHECK: vector.transfer_read %arg0[%{{.*}}, %[[C]], %[[H]], %{{.*}}]{{.*}} vector<224xf32>
// CHECK: } {kiln.parallel = 293 : i64}
func.func @copy_split(%a: memref<1x64x32x32xf32>, %b: memref<1x64x34x34xf32>,
                      %c: memref<1x4x8x8xf32>, %d: memref<1x4x10x10xf32>) {
  %bv = memref.subview %b[0, 0, 1, 1] [1, 64, 32, 32] [1, 1, 1, 1]
      : memref<1x64x34x34xf32> to memref<1x64x32x32xf32, strided<[73984, 1156, 34, 1], offset: 35>>
  memref.copy %a, %bv : memref<1x64x32x32xf32> to memref<1x64x32x32xf32, strided<[73984, 1156, 34, 1], offset: 35>>
  %dv = memref.subview %d[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1]
      : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  memref.copy %c, %dv : memref<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  return
}
func.func @copy_few_channels(%a: memref<1x3x224x224xf32>, %b: memref<1x3x225x225xf32>) {
  %bv = memref.subview %b[0, 0, 1, 1] [1, 3, 224, 224] [1, 1, 1, 1]
      : memref<1x3x225x225xf32> to memref<1x3x224x224xf32, strided<[151875, 50625, 225, 1], offset: 226>>
  memref.copy %a, %bv : memref<1x3x224x224xf32> to memref<1x3x224x224xf32, strided<[151875, 50625, 225, 1], offset: 226>>
  return
}

// -----

// A failed check stores its message's address in the arena's first 8
// bytes; a check with values stores the message kilnCheckMessage formats
// (unused value slots are 0); a fatal one then ends the run.
// CHECK: module attributes {kiln.arena_size = 64 : i64, kiln.arena_size_unshared = 64 : i64, kiln.checks}
// CHECK-LABEL: func.func @checks
// CHECK-SAME: %[[ARENA:[^ ]*]]: memref<64xi8>)
// CHECK: %[[FAILED:.*]] = arith.xori %arg0, %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: %[[FMT:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[MSG:.*]] = func.call @kilnCheckMessage(%[[FMT]], %arg1, %arg2, %c0_i64) : (i64, i64, i64, i64) -> i64
// CHECK: %[[SLOT:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<64xi8> to memref<1xi64>
// CHECK: memref.store %[[MSG]], %[[SLOT]]
// CHECK-NOT: kilnRunFailed
// CHECK: scf.if
// CHECK-NOT: kilnCheckMessage
// CHECK: memref.store
// CHECK-NEXT: func.call @kilnRunFailed() : () -> ()
func.func @checks(%ok: i1, %i: i64, %n: i64) {
  kiln.check %ok, "index {} is outside [0, {})"(%i, %n : i64, i64) : i1
  kiln.check %ok, "sizes differ" fatal : i1
  return
}
