// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @onnx_ops
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
func.func @onnx_ops(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x256xf32> {
  // CHECK: %[[NONE:.*]] = onnx.NoValue
  %none = onnx.NoValue
  // CHECK: %[[C:.*]] = onnx.Conv(%[[X]], %[[W]], %[[NONE]]) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  %c = onnx.Conv(%x, %w, %none) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  // CHECK: %[[R:.*]] = onnx.Relu(%[[C]])
  %r = onnx.Relu(%c) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: %[[K:.*]] = onnx.Constant() {value = dense<[1, 256]> : tensor<2xi64>} : () -> tensor<2xi64>
  %k = onnx.Constant() {value = dense<[1, 256]> : tensor<2xi64>} : () -> tensor<2xi64>
  // CHECK: %[[F:.*]] = onnx.Reshape(%[[R]], %[[K]]) : (tensor<1x4x8x8xf32>, tensor<2xi64>) -> tensor<1x256xf32>
  %f = onnx.Reshape(%r, %k) : (tensor<1x4x8x8xf32>, tensor<2xi64>) -> tensor<1x256xf32>
  // Non-default attributes survive; the default one is elided.
  // CHECK: onnx.Softmax(%[[F]]) {axis = 0 : i64}
  %s = onnx.Softmax(%f) {axis = 0 : i64} : (tensor<1x256xf32>) -> tensor<1x256xf32>
  // CHECK: onnx.Softmax(%[[F]]) :
  %s2 = onnx.Softmax(%f) {axis = -1 : i64} : (tensor<1x256xf32>) -> tensor<1x256xf32>
  // Unranked and dynamic shapes are fine before shape inference.
  // CHECK: onnx.Sigmoid(%{{.*}}) : (tensor<1x256xf32>) -> tensor<*xf32>
  %u = onnx.Sigmoid(%s2) : (tensor<1x256xf32>) -> tensor<*xf32>
  return %s : tensor<1x256xf32>
}

// CHECK-LABEL: func.func @kiln_ops
func.func @kiln_ops(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // CHECK: %[[P:.*]]:2 = kiln.partition "cpu_0" provider("cpu") -> tensor<2xf32>, tensor<2xf32> {
  // CHECK-NEXT: %[[R:.*]] = onnx.Relu
  // CHECK-NEXT: %[[T:.*]] = onnx.Tanh(%[[R]])
  // CHECK-NEXT: kiln.yield %[[R]], %[[T]] : tensor<2xf32>, tensor<2xf32>
  // CHECK-NEXT: }
  %p:2 = kiln.partition "cpu_0" provider("cpu") -> tensor<2xf32>, tensor<2xf32> {
    %r = onnx.Relu(%a) : (tensor<2xf32>) -> tensor<2xf32>
    %t = onnx.Tanh(%r) : (tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %r, %t : tensor<2xf32>, tensor<2xf32>
  }
  // CHECK: %[[X:.*]] = kiln.transfer %[[P]]#1 from("cpu") to("gpu") : tensor<2xf32>
  %x = kiln.transfer %p#1 from("cpu") to("gpu") : tensor<2xf32>
  // A partition without results has no arrow; its empty yield is implicit.
  // CHECK: kiln.partition "gpu_0" provider("gpu") {
  // CHECK-NEXT: onnx.Neg(%[[X]])
  // CHECK-NEXT: }
  kiln.partition "gpu_0" provider("gpu") {
    %n = onnx.Neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
    kiln.yield
  }
  // CHECK: return %[[P]]#0, %[[X]]
  return %p#0, %x : tensor<2xf32>, tensor<2xf32>
}

// Sequences and optionals are types of the onnx dialect; kiln.runtime_call
// reads tensors and fills `outs`.
// CHECK-LABEL: func.func @sequence_types
// CHECK-SAME: (%{{.*}}: !onnx.seq<tensor<*xf32>>, %{{.*}}: !onnx.opt<!onnx.seq<tensor<5xf32>>>, %[[H:.*]]: i64, %[[X:.*]]: tensor<3xf32>)
func.func @sequence_types(%s: !onnx.seq<tensor<*xf32>>, %o: !onnx.opt<!onnx.seq<tensor<5xf32>>>,
                          %h: i64, %x: tensor<3xf32>) -> (tensor<i1>, tensor<3xf32>) {
  // CHECK: onnx.OptionalHasElement(%{{.*}}) : (!onnx.opt<!onnx.seq<tensor<5xf32>>>) -> tensor<i1>
  %has = onnx.OptionalHasElement(%o) : (!onnx.opt<!onnx.seq<tensor<5xf32>>>) -> tensor<i1>
  // CHECK: %[[N:.*]] = kiln.runtime_call @kilnSeqPut(%[[H]], %[[X]]) : (i64, tensor<3xf32>) -> i64
  %n = kiln.runtime_call @kilnSeqPut(%h, %x) : (i64, tensor<3xf32>) -> i64
  // CHECK: kiln.runtime_call @kilnSeqGet(%[[N]]) outs(%[[X]] : tensor<3xf32>) : (i64) -> tensor<3xf32>
  %t = kiln.runtime_call @kilnSeqGet(%n) outs(%x : tensor<3xf32>) : (i64) -> tensor<3xf32>
  return %has, %t : tensor<i1>, tensor<3xf32>
}

// A run-time check; values replace the `{}`s of its message in order.
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[OK:.*]]: i1, %[[I:.*]]: i64, %[[N:.*]]: i64)
func.func @checks(%ok: i1, %i: i64, %n: i64) {
  // CHECK: kiln.check %[[OK]], "sizes differ" fatal : i1
  kiln.check %ok, "sizes differ" fatal : i1
  // CHECK: kiln.check %[[OK]], "index {} is outside [-{}, {})"(%[[I]], %[[N]], %[[N]] : i64, i64, i64) : i1
  kiln.check %ok, "index {} is outside [-{}, {})"(%i, %n, %n : i64, i64, i64) : i1
  return
}
