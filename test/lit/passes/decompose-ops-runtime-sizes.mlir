// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-decompose-ops))' | FileCheck %s

// With run-time sizes, a Loop whose trip count is known only at run time
// keeps its scan output (static [4] per iteration) as a carried buffer of
// [trip, 4] zeros, each iteration writing its row with ScatterND.
// CHECK-LABEL: func.func @loop_scan_carried
// CHECK: %[[ACC:.*]] = onnx.ConstantOfShape({{.*}} -> tensor<?x4xf32>
// CHECK: onnx.Loop(%arg0, %{{.*}}, %arg1, %[[ACC]])
// CHECK: ^bb0(%[[I:.*]]: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<4xf32>, %[[A:.*]]: tensor<?x4xf32>):
// CHECK: %[[AT:.*]] = onnx.Reshape(%[[I]]
// CHECK: onnx.ScatterND(%[[A]], %[[AT]]
// CHECK: } {{.*}}-> (tensor<4xf32>, tensor<?x4xf32>)
module attributes {kiln.runtime_sizes = {}} {
  func.func @loop_scan_carried(%m: tensor<i64>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) {
    %none = onnx.NoValue
    %0:2 = onnx.Loop(%m, %none, %y) {
    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %yi: tensor<4xf32>):
      %next = onnx.Add(%yi, %yi) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      onnx.Yield %ci, %next, %next : tensor<i1>, tensor<4xf32>, tensor<4xf32>
    } : (tensor<i64>, none, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>)
    return %0#0, %0#1 : tensor<4xf32>, tensor<?x4xf32>
  }
}
