// RUN: kiln-opt %s --split-input-file --kiln-approximate-math | FileCheck %s

// f32 erf and tanh, scalar or vector, become polynomials (no math.erf or
// math.tanh left for libm); other element types and other functions stay.
// CHECK-LABEL: func.func @gelu_parts
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK: return
func.func @gelu_parts(%x: f32, %v: vector<16xf32>) -> (f32, vector<16xf32>) {
  %0 = math.erf %x : f32
  %1 = math.tanh %v : vector<16xf32>
  return %0, %1 : f32, vector<16xf32>
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK: math.erf %{{.*}} : f64
// CHECK: math.exp
func.func @left_alone(%x: f64, %y: f32) -> (f64, f32) {
  %0 = math.erf %x : f64
  %1 = math.exp %y : f32
  return %0, %1 : f64, f32
}
