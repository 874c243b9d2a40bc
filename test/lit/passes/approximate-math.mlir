// RUN: kiln-opt %s --split-input-file --kiln-approximate-math | FileCheck %s

// f32 erf, tanh and exp, scalar or vector, become polynomials (none left
// for libm); other element types and other functions stay.
// CHECK-LABEL: func.func @gelu_parts
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: return
func.func @gelu_parts(%x: f32, %v: vector<16xf32>, %y: f32) -> (f32, vector<16xf32>, f32) {
  %0 = math.erf %x : f32
  %1 = math.tanh %v : vector<16xf32>
  %2 = math.exp %y : f32
  return %0, %1, %2 : f32, vector<16xf32>, f32
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK: math.erf %{{.*}} : f64
// CHECK: math.log
func.func @left_alone(%x: f64, %y: f32) -> (f64, f32) {
  %0 = math.erf %x : f64
  %1 = math.log %y : f32
  return %0, %1 : f64, f32
}
