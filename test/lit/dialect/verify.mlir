// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Operands bound to one type variable must agree on the element type.
func.func @add_mixed_types(%a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Add' op operand 'B' has element type 'f16' but operand 'A' bound to the same type variable 'T' has element type 'f32'}}
  %0 = onnx.Add(%a, %b) : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// ...and so must results.
func.func @relu_result_type(%a: tensor<2xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'onnx.Relu' op result 'Y' has element type 'i32' but operand 'X' bound to the same type variable 'T' has element type 'f32'}}
  %0 = onnx.Relu(%a) : (tensor<2xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// A type the schema does not allow.
func.func @sigmoid_int(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{'onnx.Sigmoid' op operand #0 must be tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values, but got 'tensor<2xi32>'}}
  %0 = onnx.Sigmoid(%a) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @concat_no_inputs() -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Concat' op variadic operand 'inputs' needs at least 1 value(s), got 0}}
  %0 = onnx.Concat() {axis = 0 : i64} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gemm_missing_c(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'onnx.Gemm' op expected 3 operands, but found 1}}
  %0 = onnx.Gemm(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @relu_two_results(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Relu' op requires one result}}
  %0:2 = onnx.Relu(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0 : tensor<2xf32>
}

// -----

func.func @concat_missing_axis(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.Concat' op requires attribute 'axis'}}
  %0 = onnx.Concat(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @partition_yield_mismatch(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.partition' op yielded types do not match the partition's results}}
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<3xf32> {
    %1 = onnx.Relu(%a) : (tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %1 : tensor<2xf32>
  }
  return %0 : tensor<3xf32>
}

// -----

func.func @partition_yield_count(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.partition' op yielded types do not match the partition's results}}
  %0 = kiln.partition "cpu_0" provider("cpu") -> tensor<2xf32> {
    kiln.yield
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @partition_no_provider(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.partition' op needs a provider name}}
  %0 = kiln.partition "cpu_0" provider("") -> tensor<2xf32> {
    kiln.yield %a : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @yield_outside(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.yield' op expects parent op 'kiln.partition'}}
  kiln.yield %a : tensor<2xf32>
}

// -----

// kilnCheckMessage formats one value per `{}`.
func.func @check_values(%ok: i1, %i: i64) {
  // expected-error @+1 {{'kiln.check' op needs one `{}` in the message per value, at most three}}
  kiln.check %ok, "index {} is outside [-{}, {})"(%i : i64) : i1
  return
}
