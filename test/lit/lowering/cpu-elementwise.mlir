// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// A broadcast operand gets a map that drops the broadcast dimension.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @chain
// CHECK: %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<3xf32>)
// CHECK: arith.addf
// Relu is max(x, 0), a NaN x kept: x < 0 ? 0 : x.
// CHECK: %[[RELU:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[ADD]] :
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[NEG]], %{{.*}}, %{{.*}} : f32
// Sigmoid is 1 / (1 + exp(-x)).
// CHECK: %[[SIG:.*]] = linalg.generic {{.*}} ins(%[[RELU]] :
// CHECK: arith.negf
// CHECK-NEXT: math.exp
// CHECK: arith.divf
// CHECK: %[[TANH:.*]] = linalg.generic {{.*}} ins(%[[SIG]] :
// CHECK: math.tanh
// CHECK: return %[[TANH]]
func.func @chain(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = onnx.Add(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = onnx.Relu(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = onnx.Sigmoid(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = onnx.Tanh(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// Size-1 dimensions broadcast with constant-0 indices; both operands broadcast.
// CHECK-DAG: #[[L:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[R:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @outer
// CHECK: linalg.generic {indexing_maps = [#[[L]], #[[R]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x1xf32>, tensor<1x5xf32>) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: arith.mulf
func.func @outer(%a: tensor<4x1xf32>, %b: tensor<1x5xf32>) -> tensor<4x5xf32> {
  %0 = onnx.Mul(%a, %b) : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Integer Add uses arith.addi.
// CHECK-LABEL: func.func @int_add
// CHECK: arith.addi %{{.*}}, %{{.*}} : i64
func.func @int_add(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  %0 = onnx.Add(%a, %b) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Integer Mod with fmod=0 is Python's %: a nonzero remainder whose sign
// differs from the divisor's gets the divisor added.
// CHECK-LABEL: func.func @mod_int
// CHECK: %[[R:.*]] = arith.remsi %[[A:.*]], %[[B:.*]] : i32
// CHECK: arith.xori
// CHECK: %[[FIX:.*]] = arith.andi
// CHECK: %[[ADJ:.*]] = arith.addi %[[R]], %[[B]]
// CHECK: arith.select %[[FIX]], %[[ADJ]], %[[R]]
func.func @mod_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = onnx.Mod(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Integer Pow goes through f64 and truncates back; integer Div truncates.
// CHECK-LABEL: func.func @pow_div_int
// CHECK: arith.sitofp {{.*}} : i64 to f64
// CHECK: math.powf {{.*}} : f64
// CHECK: arith.fptosi {{.*}} : f64 to i64
// CHECK: arith.divsi
func.func @pow_div_int(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = onnx.Pow(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = onnx.Div(%0, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %1 : tensor<4xi64>
}

// -----

// BitShift on signed integers: an amount outside [0, width) (negative ones
// compare as large unsigned) gives 0, or -1 for a right shift of a negative
// value; right shifts are arithmetic.
// CHECK-LABEL: func.func @shift_right
// CHECK: %[[OOR:.*]] = arith.cmpi uge, {{.*}}, %c32_i32
// CHECK: %[[FILL:.*]] = arith.select {{.*}}, %c-1_i32
// CHECK: %[[SH:.*]] = arith.shrsi
// CHECK: arith.select %[[OOR]], %[[FILL]], %[[SH]]
func.func @shift_right(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = onnx.BitShift(%a, %b) {direction = "RIGHT"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// An Add carrying a fused activation (kiln-fuse-epilogues) applies it in
// its body.
// CHECK-LABEL: func.func @add_relu_epilogue
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.cmpf olt
// CHECK: arith.select
func.func @add_relu_epilogue(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = onnx.Add(%x, %y) {kiln.activation = "Relu", kiln.activation_params = []} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// LabelEncoder from strings: each key a constant global, compared with
// strcmp, the first equal key's value selected, else the default (42).
// CHECK-DAG: memref.global "private" constant @__kiln_str{{(_[0-9]+)?}} : memref<2xi8> = dense<[97, 0]>
// CHECK-DAG: memref.global "private" constant @__kiln_str{{(_[0-9]+)?}} : memref<2xi8> = dense<[98, 0]>
// CHECK-LABEL: func.func @label_encoder
// CHECK: linalg.generic
// CHECK: arith.constant 42 : i64
// CHECK-COUNT-2: call @strcmp
func.func @label_encoder(%x: tensor<5x!onnx.String>) -> tensor<5xi64> {
  %0 = onnx.LabelEncoder(%x) {keys_strings = ["a", "b"], values_int64s = [7, 9], default_int64 = 42 : i64} : (tensor<5x!onnx.String>) -> tensor<5xi64>
  return %0 : tensor<5xi64>
}
