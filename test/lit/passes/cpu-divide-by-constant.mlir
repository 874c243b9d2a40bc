// RUN: kiln-opt %s --split-input-file --kiln-cpu-divide-by-constant | FileCheck %s

// An f32 division by a splat or scalar constant: a product by the rounded
// reciprocal (1 / 0.25 = 4, 1 / 3 rounded), then the remainder and the
// correction as two FMAs (q0 where that is NaN: an infinite a).
// CHECK-LABEL: func.func @by_constant
// CHECK-DAG: %[[B:.*]] = arith.constant dense<2.500000e-01> : vector<16xf32>
// CHECK-DAG: %[[Y:.*]] = arith.constant dense<4.000000e+00> : vector<16xf32>
// CHECK: %[[Q0:.*]] = arith.mulf %arg0, %[[Y]]
// CHECK: %[[NB:.*]] = arith.negf %[[B]]
// CHECK: %[[R:.*]] = math.fma %[[NB]], %[[Q0]], %arg0
// CHECK: %[[F:.*]] = math.fma %[[R]], %[[Y]], %[[Q0]]
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[F]], %[[F]]
// CHECK: %[[Q:.*]] = arith.select %[[NAN]], %[[Q0]], %[[F]]
// CHECK: arith.constant 0.333333343 : f32
// CHECK-NOT: arith.divf
// CHECK: return %[[Q]]
func.func @by_constant(%a: vector<16xf32>, %s: f32) -> (vector<16xf32>, f32) {
  %b = arith.constant dense<0.25> : vector<16xf32>
  %0 = arith.divf %a, %b : vector<16xf32>
  %c = arith.constant 3.0 : f32
  %1 = arith.divf %s, %c : f32
  return %0, %1 : vector<16xf32>, f32
}

// -----

// Left as divisions: a run-time divisor, zero, a denormal (its reciprocal
// overflows), f64.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: arith.divf
// CHECK-NOT: math.fma
func.func @left_alone(%a: f32, %d: f32, %e: f64) -> (f32, f32, f32, f64) {
  %0 = arith.divf %a, %d : f32
  %z = arith.constant 0.0 : f32
  %1 = arith.divf %a, %z : f32
  %t = arith.constant 1.0e-39 : f32
  %2 = arith.divf %a, %t : f32
  %c = arith.constant 3.0 : f64
  %3 = arith.divf %e, %c : f64
  return %0, %1, %2, %3 : f32, f32, f32, f64
}

// -----

// A dividend bounded well inside the range by construction (an i32
// converted, scaled by a constant: an 8-bit epilogue's value) cannot be
// infinite or NaN: no NaN check.
// CHECK-LABEL: func.func @bounded
// CHECK: math.fma
// CHECK: %[[Q:.*]] = math.fma
// CHECK-NOT: arith.cmpf
// CHECK: return %[[Q]]
func.func @bounded(%acc: vector<16xi32>) -> vector<16xf32> {
  %s = arith.constant dense<0.0123> : vector<16xf32>
  %b = arith.constant dense<0.0371> : vector<16xf32>
  %f = arith.sitofp %acc : vector<16xi32> to vector<16xf32>
  %x = arith.mulf %f, %s : vector<16xf32>
  %0 = arith.divf %x, %b : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// A product on the way may overflow to infinity (2^31 x 1e30) before a
// later factor scales it back: the NaN check stays.
// CHECK-LABEL: func.func @overflow_on_the_way
// CHECK: arith.cmpf uno
func.func @overflow_on_the_way(%acc: vector<16xi32>) -> vector<16xf32> {
  %big = arith.constant dense<1.0e30> : vector<16xf32>
  %small = arith.constant dense<1.0e-30> : vector<16xf32>
  %b = arith.constant dense<0.0371> : vector<16xf32>
  %f = arith.sitofp %acc : vector<16xi32> to vector<16xf32>
  %x = arith.mulf %f, %big : vector<16xf32>
  %y = arith.mulf %x, %small : vector<16xf32>
  %0 = arith.divf %y, %b : vector<16xf32>
  return %0 : vector<16xf32>
}
