// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s

// A sequence argument is the slot of a runtime object's handle; the code
// works on the handle and returns the new sequence's handle in a slot.
// CHECK-LABEL: func.func @insert_at
// CHECK-SAME: (%[[S:[^:]*]]: tensor<i64> {{.*}}, %[[T:[^:]*]]: tensor<3xi64> {{.*}}, %[[P:[^:]*]]: tensor<1xi64> {{.*}}) -> tensor<i64>
// CHECK: %[[H:.*]] = tensor.extract %[[S]][] : tensor<i64>
// CHECK: memref.get_global @__kiln_const : memref<1xi64>
// CHECK: %[[POS:.*]] = tensor.extract %[[P]][%{{.*}}] : tensor<1xi64>
// CHECK: memref.get_global @__kiln_str
// CHECK: %[[NEW:.*]] = kiln.runtime_call @kilnSeqInsert(%[[H]], %[[T]], %c7_i32, %c1_i32, %{{.*}}, %[[POS]], %c1_i32{{.*}}, %{{.*}}) {{.*}}: (i64, tensor<3xi64>, i32, i32, i64, i64, i32, i64) -> i64
// CHECK: %[[OUT:.*]] = tensor.from_elements %[[NEW]] : tensor<i64>
// CHECK: return %[[OUT]]
func.func @insert_at(%s: !onnx.seq<tensor<*xi64>>, %t: tensor<3xi64>, %p: tensor<1xi64>) -> !onnx.seq<tensor<*xi64>> {
  %0 = onnx.SequenceInsert(%s, %t, %p) : (!onnx.seq<tensor<*xi64>>, tensor<3xi64>, tensor<1xi64>) -> !onnx.seq<tensor<*xi64>>
  return %0 : !onnx.seq<tensor<*xi64>>
}

// -----

// A tensor taken out of a sequence is filled by the runtime, which checks
// that it has the compiled shape.
// CHECK-LABEL: func.func @construct_at
// CHECK: %[[NEW:.*]] = kiln.runtime_call @kilnSeqNew(%c1_i32, %c0_i32) {{.*}}: (i32, i32) -> i64
// CHECK: %[[ONE:.*]] = kiln.runtime_call @kilnSeqInsert(%[[NEW]], %arg0,
// CHECK: %[[TWO:.*]] = kiln.runtime_call @kilnSeqInsert(%[[ONE]], %arg1,
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: kiln.runtime_call @kilnSeqAt(%[[TWO]], %{{.*}}, %c1_i32{{.*}}, %c2_i32{{.*}}, %{{.*}}, %{{.*}}) outs(%[[INIT]] : tensor<2x3xf32>)
// CHECK-SAME: -> tensor<2x3xf32>
func.func @construct_at(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<i64>) -> tensor<2x3xf32> {
  %0 = onnx.SequenceConstruct(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> !onnx.seq<tensor<2x3xf32>>
  %1 = onnx.SequenceAt(%0, %i) : (!onnx.seq<tensor<2x3xf32>>, tensor<i64>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// An empty optional is a runtime object marked none; whether an optional
// has a value is asked at run time, and a plain tensor always has one.
// CHECK-LABEL: func.func @optionals
// CHECK: %[[NONE:.*]] = kiln.runtime_call @kilnSeqNew(%c1_i32, %c1_i32{{.*}})
// CHECK: %[[HAS:.*]] = kiln.runtime_call @kilnSeqHasValue(%[[NONE]], %{{.*}}) {{.*}} -> i32
// CHECK: arith.trunci %[[HAS]] : i32 to i1
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: tensor.from_elements %[[TRUE]] : tensor<i1>
func.func @optionals(%x: tensor<4xf32>) -> (tensor<i1>, tensor<i1>) {
  %0 = onnx.NoValue
  %1 = onnx.Optional(%0) {type = !onnx.seq<tensor<5xf32>>} : (none) -> !onnx.opt<!onnx.seq<tensor<5xf32>>>
  %2 = onnx.OptionalHasElement(%1) : (!onnx.opt<!onnx.seq<tensor<5xf32>>>) -> tensor<i1>
  %3 = onnx.OptionalHasElement(%x) : (tensor<4xf32>) -> tensor<i1>
  return %2, %3 : tensor<i1>, tensor<i1>
}

// -----

// A Loop whose trip count is an input runs as an scf.while; a slice by
// its counter has a run-time shape, so the runtime boxes a copy of it
// for SequenceInsert. A body that calls the runtime also stops the loop
// once a call has failed the run.
// CHECK-LABEL: func.func @loop_runtime_trip
// CHECK: %[[TRIP:.*]] = tensor.extract %arg0[] : tensor<i64>
// CHECK: %[[R:.*]]:3 = scf.while (%[[S:.*]] = %{{.*}}, %[[I:.*]] = %c0_i64, %[[C:.*]] = %true) : (i64, i64, i1) -> (i64, i64, i1) {
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[TRIP]] : i64
// CHECK: %[[GO:.*]] = arith.andi %[[C]], %[[LT]] : i1
// CHECK: %[[OK:.*]] = kiln.runtime_call @kilnRunOk() : () -> i32
// CHECK: %[[OK1:.*]] = arith.trunci %[[OK]] : i32 to i1
// CHECK: %[[GO2:.*]] = arith.andi %[[GO]], %[[OK1]] : i1
// CHECK: scf.condition(%[[GO2]]) %[[S]], %[[I]], %[[C]] : i64, i64, i1
// CHECK: } do {
// CHECK: ^bb0(%[[S2:.*]]: i64, %[[I2:.*]]: i64, %[[C2:.*]]: i1):
// CHECK: %[[BOX:.*]] = kiln.runtime_call @kilnSeqSlice(
// CHECK: %[[NEXT:.*]] = kiln.runtime_call @kilnSeqInsertBox(%[[S2]], %[[BOX]],
// CHECK: %[[I3:.*]] = arith.addi %[[I2]], %c1_i64{{.*}} : i64
// CHECK: scf.yield %[[NEXT]], %[[I3]], %[[C2]] : i64, i64, i1
// CHECK: tensor.from_elements %[[R]]#0 : tensor<i64>
func.func @loop_runtime_trip(%trip: tensor<i64>, %s0: !onnx.seq<tensor<*xf32>>) -> !onnx.seq<tensor<*xf32>> {
  %none = onnx.NoValue
  %0 = onnx.Loop(%trip, %none, %s0) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %s: !onnx.seq<tensor<*xf32>>):
    %x = onnx.Constant() {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : () -> tensor<5xf32>
    %zero = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
    %end = onnx.Unsqueeze(%i, %zero) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %slice = onnx.Slice(%x, %zero, %end, %none, %none) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<?xf32>
    %next = onnx.SequenceInsert(%s, %slice, %none) : (!onnx.seq<tensor<*xf32>>, tensor<?xf32>, none) -> !onnx.seq<tensor<*xf32>>
    onnx.Yield %c, %next : tensor<i1>, !onnx.seq<tensor<*xf32>>
  } : (tensor<i64>, none, !onnx.seq<tensor<*xf32>>) -> !onnx.seq<tensor<*xf32>>
  return %0 : !onnx.seq<tensor<*xf32>>
}

// -----

// A carried tensor is copied back into its iteration argument each time,
// so bufferization keeps one buffer for it; the body computes whether to
// go on. The caller's inputs are read-only for bufferization.
// CHECK-LABEL: func.func @while_carried_tensor
// CHECK-SAME: {bufferization.writable = false}
// CHECK: scf.while (%[[X:.*]] = %arg0, %{{.*}} = %c0_i64, %{{.*}} = %{{.*}}) : (tensor<2xf32>, i64, i1)
// CHECK: ^bb0(%[[X2:.*]]: tensor<2xf32>, %{{.*}}: i64, %{{.*}}: i1):
// CHECK: %[[NEW:.*]] = linalg.generic
// CHECK: %[[BACK:.*]] = linalg.copy ins(%[[NEW]] : tensor<2xf32>) outs(%[[X2]] : tensor<2xf32>)
// CHECK: scf.yield %[[BACK]],
func.func @while_carried_tensor(%x: tensor<2xf32>, %go: tensor<i1>) -> tensor<2xf32> {
  %none = onnx.NoValue
  %0 = onnx.Loop(%none, %go, %x) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>):
    %d = onnx.Add(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %s = onnx.ReduceSum(%d, %none) {keepdims = 0 : i64} : (tensor<2xf32>, none) -> tensor<f32>
    %l = onnx.Constant() {value = dense<1.0e+02> : tensor<f32>} : () -> tensor<f32>
    %more = onnx.Less(%s, %l) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    onnx.Yield %more, %d : tensor<i1>, tensor<2xf32>
  } : (none, tensor<i1>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Carried values that swap: each is read (into a fresh tensor) before
// either is written back into its iteration argument.
// CHECK-LABEL: func.func @while_swap
// CHECK: ^bb0(%[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>, %{{.*}}: i64, %{{.*}}: i1):
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: %[[SB:.*]] = linalg.copy ins(%[[B]] : tensor<2xf32>) outs(%[[E0]] : tensor<2xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: %[[SA:.*]] = linalg.copy ins(%[[A]] : tensor<2xf32>) outs(%[[E1]] : tensor<2xf32>)
// CHECK: %[[NA:.*]] = linalg.copy ins(%[[SB]] : tensor<2xf32>) outs(%[[A]] : tensor<2xf32>)
// CHECK: %[[NB:.*]] = linalg.copy ins(%[[SA]] : tensor<2xf32>) outs(%[[B]] : tensor<2xf32>)
// CHECK: scf.yield %[[NA]], %[[NB]],
func.func @while_swap(%trip: tensor<i64>, %x: tensor<2xf32>, %z: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %none = onnx.NoValue
  %0:2 = onnx.Loop(%trip, %none, %x, %z) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>):
    onnx.Yield %c, %b, %a : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  } : (tensor<i64>, none, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// A carried output written one row per iteration (a recurrent op's steps,
// ScatterND at the iteration index): the row goes into the carried buffer
// in place and the result is yielded as is, no copy of the whole output per
// iteration.
// CHECK-LABEL: func.func @while_row_in_place
// CHECK: scf.while
// CHECK: ^bb0(%[[Y:.*]]: tensor<8x2xf32>, %{{.*}}: i64, %{{.*}}: i1):
// CHECK: %[[NY:.*]] = tensor.insert_slice %{{.*}} into %[[Y]]
// CHECK-NOT: linalg.copy
// CHECK: scf.yield %[[NY]],
func.func @while_row_in_place(%trip: tensor<i64>, %y0: tensor<8x2xf32>, %row: tensor<1x2xf32>) -> tensor<8x2xf32> {
  %none = onnx.NoValue
  %shape = onnx.Constant() {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Loop(%trip, %none, %y0) {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %y: tensor<8x2xf32>):
    %at = onnx.Reshape(%i, %shape) : (tensor<i64>, tensor<2xi64>) -> tensor<1x1xi64>
    %1 = onnx.ScatterND(%y, %at, %row) : (tensor<8x2xf32>, tensor<1x1xi64>, tensor<1x2xf32>) -> tensor<8x2xf32>
    onnx.Yield %c, %1 : tensor<i1>, tensor<8x2xf32>
  } : (tensor<i64>, none, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}
