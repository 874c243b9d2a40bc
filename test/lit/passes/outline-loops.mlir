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
