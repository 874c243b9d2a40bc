// RUN: kiln-opt %s --split-input-file --kiln-expand-bf16 | FileCheck %s

// f32 -> bf16 rounds to nearest-even in integer ops (no truncf for LLVM to
// turn into a libcall or a denormal-flushing instruction); bf16 -> f32 is
// a shift. Scalars and vectors alike.
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: return
func.func @round_trip(%x: f32, %v: vector<16xbf16>) -> (bf16, vector<16xf32>) {
  %0 = arith.truncf %x : f32 to bf16
  %1 = arith.extf %v : vector<16xbf16> to vector<16xf32>
  return %0, %1 : bf16, vector<16xf32>
}

// -----

// f64 goes through f32.
// CHECK-LABEL: func.func @via_f32
// CHECK: %[[N:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NOT: to bf16
// CHECK: arith.bitcast %[[N]] : f32 to i32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: return
func.func @via_f32(%x: f64, %y: bf16) -> (bf16, f64) {
  %0 = arith.truncf %x : f64 to bf16
  %1 = arith.extf %y : bf16 to f64
  return %0, %1 : bf16, f64
}

// -----

// f16 conversions and CUDA kernels are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-LABEL: gpu.func @kernel
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @left_alone(%x: f32) -> f16 {
  %0 = arith.truncf %x : f32 to f16
  return %0 : f16
}
gpu.module @kernels {
  gpu.func @kernel(%x: f32) kernel {
    %0 = arith.truncf %x : f32 to bf16
    gpu.return
  }
}
