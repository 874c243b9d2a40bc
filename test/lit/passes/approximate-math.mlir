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

// -----

// f32 erf is one rational function of the input clamped to [-4, 4]:
// x P(x^2) / Q(x^2), seven and five coefficients, no interval selects.
// CHECK-LABEL: func.func @erf_rational
// CHECK: %[[LO:.*]] = arith.maximumf %{{.*}}, %cst{{.*}} : vector<16xf32>
// CHECK: %[[X:.*]] = arith.minimumf %[[LO]], %cst{{.*}} : vector<16xf32>
// CHECK: %[[X2:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-COUNT-6: math.fma %{{.*}}, %[[X2]], %{{.*}}
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %[[X]]
// CHECK-COUNT-3: math.fma %{{.*}}, %[[X2]], %{{.*}}
// CHECK: %[[Q:.*]] = math.fma %{{.*}}, %[[X2]], %{{.*}}
// CHECK-NEXT: %[[E:.*]] = arith.divf %[[P]], %[[Q]] : vector<16xf32>
// CHECK-NOT: arith.select
// CHECK: return %[[E]]
func.func @erf_rational(%v: vector<16xf32>) -> vector<16xf32> {
  %0 = math.erf %v : vector<16xf32>
  return %0 : vector<16xf32>
}
