// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// Inference Dropout forwards its input; a requested mask is all true.
// CHECK-LABEL: func.func @dropout_mask
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: %[[M:.*]] = linalg.fill ins(%[[T]] : i1) {{.*}} -> tensor<3xi1>
// CHECK: return %arg0, %[[M]]
func.func @dropout_mask(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi1>) {
  %n = onnx.NoValue
  %y, %m = onnx.Dropout(%x, %n, %n) : (tensor<3xf32>, none, none) -> (tensor<3xf32>, tensor<3xi1>)
  return %y, %m : tensor<3xf32>, tensor<3xi1>
}

// -----

// Training mode and ratio at run time: the draws are numpy's for seed 0
// (np.random.seed(0); np.random.uniform(0, 1, (2, 3)), rounded down to f32);
// keep = !training || draw >= ratio, y = x * (keep ? 1 / (1 - ratio) : 0).
// CHECK-LABEL: func.func @dropout_training_runtime
// CHECK-DAG: %[[R:.*]] = tensor.extract %arg1[] : tensor<f32>
// CHECK-DAG: %[[T:.*]] = tensor.extract %arg2[] : tensor<i1>
// CHECK: %[[INV:.*]] = arith.divf
// CHECK: %[[SCALE:.*]] = arith.select %[[T]], %[[INV]]
// CHECK: %[[OFF:.*]] = arith.xori %[[T]]
// CHECK: %[[U:.*]] = arith.constant dense<{{\[}}[0.548813462, 0.715189338, 0.602763355], [0.544883132, 0.423654795, 0.64589411]]> : tensor<2x3xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%arg0, %[[U]] :
// CHECK: arith.cmpf oge, %{{.*}}, %[[R]]
// CHECK: arith.ori %[[OFF]]
// CHECK: arith.select %{{.*}}, %[[SCALE]]
// CHECK: arith.mulf
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[U]] :
// CHECK: return %[[Y]], %[[M]]
func.func @dropout_training_runtime(%x: tensor<2x3xf32>, %r: tensor<f32>, %t: tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  %y, %m = onnx.Dropout(%x, %r, %t) {seed = 0 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %y, %m : tensor<2x3xf32>, tensor<2x3xi1>
}

// -----

// Another seed gives other draws (numpy: seed 7 starts 0.0763083, 0.7799188).
// CHECK-LABEL: func.func @dropout_training_seed
// CHECK: arith.constant dense<[0.0763082877, 0.779918789]> : tensor<2xf32>
func.func @dropout_training_seed(%x: tensor<2xf32>) -> tensor<2xf32> {
  %n = onnx.NoValue
  %t = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %y, %m = onnx.Dropout(%x, %n, %t) {seed = 7 : i64} : (tensor<2xf32>, none, tensor<i1>) -> (tensor<2xf32>, none)
  return %y : tensor<2xf32>
}
