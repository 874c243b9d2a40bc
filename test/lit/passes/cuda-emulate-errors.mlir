// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-cuda-emulate

// A barrier in a loop whose bounds differ between threads has no host
// equivalent (and is undefined behaviour in CUDA).
func.func @divergent_barrier(%m: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{a barrier must be at the kernel's top level or in a loop with bounds shared by all threads}}
    scf.for %i = %tx to %c16 step %c1 {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A thread's loaded value cannot be recomputed after a barrier.
func.func @value_across_barrier(%m: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %m[%tx] : memref<16xf32>
    gpu.barrier
    // expected-error @+1 {{a thread's value that is not pure arithmetic is used across a barrier}}
    memref.store %v, %m[%tx] : memref<16xf32>
    gpu.terminator
  }
  return
}
