// RUN: kiln-opt %s -split-input-file --kiln-partition --kiln-lower-partitions | FileCheck %s
// Ops that index data by a tensor's values check every index against
// [-n, n) before the (clamped) access: a min and a max reduction over the
// indices and a kiln.check that names the index and the bound when it fails.
// Constant indices are checked at compile time and cost nothing.

// CHECK-LABEL: func.func @gather_runtime
// CHECK: %[[EXT:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%arg1 : tensor<2xi64>)
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK-NOT: linalg.generic
// CHECK: %[[LO:.*]] = tensor.extract %[[EXT]]#0[]
// CHECK: %[[HI:.*]] = tensor.extract %[[EXT]]#1[]
// CHECK: %[[N:.*]] = arith.index_cast %c4 : index to i64
// CHECK: %[[ABOVE:.*]] = arith.cmpi sge, %[[HI]], %[[N]]
// CHECK: %[[BAD:.*]] = arith.select %[[ABOVE]], %[[HI]], %[[LO]]
// CHECK: kiln.check %{{.*}}, "node \22g\22 (Gather): index {} is outside [-{}, {})"(%[[BAD]], %[[N]], %[[N]] : i64, i64, i64) : i1
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
func.func @gather_runtime(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("g")
  return %0 : tensor<2x3xf32>
}

// -----

// i32 indices widen to i64 for the check; the bound is the axis's size.
// CHECK-LABEL: func.func @gather_i32_axis1
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: arith.index_cast %c3 : index to i64
// CHECK: kiln.check
func.func @gather_i32_axis1(%x: tensor<4x3xf32>, %i: tensor<2xi32>) -> tensor<4x2xf32> {
  %0 = onnx.Gather(%x, %i) {axis = 1 : i64} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<4x2xf32> loc("g")
  return %0 : tensor<4x2xf32>
}

// -----

// Valid constant indices (negative ones wrap): no run-time check.
// CHECK-LABEL: func.func @gather_constant
// CHECK-NOT: kiln.check
// CHECK: return
func.func @gather_constant(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %i = onnx.Constant() {value = dense<[3, -4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("g")
  return %0 : tensor<2x3xf32>
}

// -----

// Rows of run-time count: the bound is read with tensor.dim.
// CHECK-LABEL: func.func @gather_dynamic_rows
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: arith.index_cast %[[D]] : index to i64
// CHECK: kiln.check
module attributes {kiln.runtime_sizes} {
func.func @gather_dynamic_rows(%x: tensor<?x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("g")
  return %0 : tensor<2x3xf32>
}
}

// -----

// GatherND: each component of the index tuples against its own dim.
// CHECK-LABEL: func.func @gather_nd
// CHECK: tensor.extract_slice %arg1[0, 0] [2, 1] [1, 1]
// CHECK: kiln.check %{{.*}}, "node \22nd\22 (GatherND): index {} is outside [-{}, {})"
// CHECK: tensor.extract_slice %arg1[0, 1] [2, 1] [1, 1]
// CHECK: arith.index_cast %c3 : index to i64
// CHECK: kiln.check
func.func @gather_nd(%x: tensor<4x3xf32>, %i: tensor<2x2xi64>) -> tensor<2xf32> {
  %0 = onnx.GatherND(%x, %i) : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<2xf32> loc("nd")
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @gather_elements
// CHECK: kiln.check %{{.*}}, "node \22ge\22 (GatherElements): index {} is outside [-{}, {})"
func.func @gather_elements(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %0 = onnx.GatherElements(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32> loc("ge")
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_elements
// CHECK: kiln.check %{{.*}}, "node \22se\22 (ScatterElements): index {} is outside [-{}, {})"
// CHECK: scf.for
func.func @scatter_elements(%x: tensor<4x3xf32>, %i: tensor<1x3xi64>, %u: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = onnx.ScatterElements(%x, %i, %u) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<1x3xi64>, tensor<1x3xf32>) -> tensor<4x3xf32> loc("se")
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_nd
// CHECK: kiln.check %{{.*}}, "node \22sn\22 (ScatterND): index {} is outside [-{}, {})"
// CHECK: scf.for
func.func @scatter_nd(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = onnx.ScatterND(%x, %i, %u) : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32> loc("sn")
  return %0 : tensor<4x3xf32>
}

// -----

// One index tuple writing a whole row (a recurrent Loop's output at step
// t): the row inserted as a slice, no element loop, no copy of the data
// beyond what bufferization needs.
// CHECK-LABEL: func.func @scatter_nd_one_row
// CHECK: kiln.check %{{.*}}, "node \22sr\22 (ScatterND): index {} is outside [-{}, {})"
// CHECK-NOT: scf.for
// CHECK: tensor.insert_slice %{{.*}} into %arg0[%{{.*}}, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
func.func @scatter_nd_one_row(%x: tensor<4x3xf32>, %i: tensor<1x1xi64>, %u: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = onnx.ScatterND(%x, %i, %u) : (tensor<4x3xf32>, tensor<1x1xi64>, tensor<1x3xf32>) -> tensor<4x3xf32> loc("sr")
  return %0 : tensor<4x3xf32>
}

// -----

// A scalar index: Gather is a slice of the data (a view once bufferized).
// CHECK-LABEL: func.func @gather_scalar_index
// CHECK: kiln.check %{{.*}}, "node \22gs\22 (Gather): index {} is outside [-{}, {})"
// CHECK: tensor.extract_slice %arg0[%{{.*}}, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
func.func @gather_scalar_index(%x: tensor<4x3xf32>, %i: tensor<i64>) -> tensor<3xf32> {
  %0 = onnx.Gather(%x, %i) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<i64>) -> tensor<3xf32> loc("gs")
  return %0 : tensor<3xf32>
}
