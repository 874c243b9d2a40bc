//===- Passes.td - provider passes --------------------------*- tablegen -*-===//
#ifndef KILN_PROVIDERS_PASSES_TD
#define KILN_PROVIDERS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerPartitions : Pass<"kiln-lower-partitions", "::mlir::ModuleOp"> {
  let summary = "Lower every kiln.partition with its provider";
  let description = [{
    Hands each `kiln.partition` to the provider named on it, which rewrites
    the onnx ops inside into its codegen dialects (linalg/tensor for the
    CPU). Partitions of providers that compile into the host function are
    then inlined; the module keeps the list of partitions in
    `kiln.partitions` for the model descriptor and profiling.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif
