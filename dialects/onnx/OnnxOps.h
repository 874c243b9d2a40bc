//===- OnnxOps.h - onnx dialect operations ----------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_ONNX_ONNXOPS_H
#define KILN_DIALECTS_ONNX_ONNXOPS_H

#include "dialects/onnx/OnnxDialect.h"
#include "dialects/onnx/ShapeInference.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::onnx {

/// How an ONNX formal parameter may appear (FormalParameterOption).
enum class OnnxParamKind : unsigned char { Single, Optional, Variadic };

/// One input or output of an ONNX schema, as far as the verifier needs it.
struct OnnxParamInfo {
  const char *name;    ///< ONNX name (ODS names may carry a '_' suffix).
  const char *typeVar; ///< Type variable ("T"), nullptr for a fixed type.
  OnnxParamKind kind;
  bool homogeneous; ///< Variadic values all share typeVar's type.
  int minArity;     ///< Minimum count of a variadic parameter.
};

/// The schema facts each generated op exposes via getOnnxSchema().
struct OnnxSchemaInfo {
  const char *name;
  int sinceVersion;
  llvm::ArrayRef<OnnxParamInfo> inputs;
  llvm::ArrayRef<OnnxParamInfo> outputs;
  int minInputs, maxInputs, minOutputs, maxOutputs;
};

/// Checks what the schema implies beyond the ODS constraints (shared by all
/// generated verify() methods): type-variable consistency, variadic arity,
/// and well-formed subgraph regions.
mlir::LogicalResult verifyOnnxSchema(mlir::Operation *op,
                                     const OnnxSchemaInfo &schema);

} // namespace kiln::onnx

#include "dialects/onnx/ShapeInferenceInterface.h.inc"

#define GET_OP_CLASSES
#include "dialects/onnx/OnnxOps.h.inc"

#endif // KILN_DIALECTS_ONNX_ONNXOPS_H
