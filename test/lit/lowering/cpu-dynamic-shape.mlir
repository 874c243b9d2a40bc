// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// A result whose shape only the data decides comes back from the runtime
// in a box; as an output of the model it stays one (an i64 slot).
// CHECK-LABEL: func.func @nonzero_box
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32> {{.*}}) -> tensor<i64>
// CHECK: %[[BOX:.*]] = kiln.runtime_call @kilnNonZero(%[[X]], %c1_i32, %c2_i32, %{{.*}}, %{{.*}}) : (tensor<2x3xf32>, i32, i32, i64, i64) -> i64
// CHECK: %[[SLOT:.*]] = tensor.from_elements %[[BOX]] : tensor<i64>
// CHECK: return %[[SLOT]]
func.func @nonzero_box(%x: tensor<2x3xf32>) -> tensor<2x?xi64> {
  %0 = onnx.NonZero(%x) : (tensor<2x3xf32>) -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// -----

// Where the model declares the result's shape, the box is unpacked into a
// tensor of that shape (the runtime checks that the data agrees).
// CHECK-LABEL: func.func @compress_declared
// CHECK: %[[BOX:.*]] = kiln.runtime_call @kilnCompress(%arg0, %c1_i32, %c2_i32, %{{.*}}, %arg1, %c3_i64, %c0_i64, %c1_i32{{.*}}, %{{.*}})
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: kiln.runtime_call @kilnSeqAt(%[[BOX]], %c0_i64{{.*}}, %c1_i32{{.*}}, %c1_i32{{.*}}, %c2_i32{{.*}}, %{{.*}}, %{{.*}}) outs(%[[INIT]] : tensor<2x2xf32>)
func.func @compress_declared(%x: tensor<3x2xf32>, %c: tensor<3xi1>) -> tensor<2x2xf32> {
  %0 = onnx.Compress(%x, %c) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Unique asks the runtime once per output it uses.
// CHECK-LABEL: func.func @unique_outputs
// CHECK: kiln.runtime_call @kilnUnique(%arg0, %c1_i32, %c1_i32{{.*}}, %{{.*}}, %c0_i64, %c0_i32, %c1_i32{{.*}}, %c0_i32{{.*}}, %{{.*}})
// CHECK: kiln.runtime_call @kilnUnique(%arg0, %c1_i32{{.*}}, %c1_i32{{.*}}, %{{.*}}, %c0_i64{{.*}}, %c0_i32{{.*}}, %c1_i32{{.*}}, %c3_i32, %{{.*}})
// CHECK-NOT: kilnUnique
func.func @unique_outputs(%x: tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>) {
  %y, %i, %inv, %n = onnx.Unique(%x) : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
  return %y, %n : tensor<?xf32>, tensor<?xi64>
}
