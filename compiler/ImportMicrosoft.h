//===- ImportMicrosoft.h - com.microsoft's quantized ops --------*- C++ -*-===//
#ifndef KILN_COMPILER_IMPORTMICROSOFT_H
#define KILN_COMPILER_IMPORTMICROSOFT_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace kiln_onnx {
class NodeProto;
}

namespace kiln {

/// The com.microsoft ops that onnxruntime.quantization's QOperator format
/// writes, for error messages: "QGemm, QLinearAdd, ...".
const char *microsoftOpsList();

/// Writes a com.microsoft quantized node (QLinearAdd, QGemm, ...) as the
/// default-domain ops its definition is made of: DequantizeLinear of the
/// 8-bit inputs, the float op, QuantizeLinear of the result. kiln's
/// fusions then treat it as a QDQ model. `inputs` holds one value per node
/// input, null for an absent optional one. On failure `why` says why.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
expandMicrosoftNode(mlir::OpBuilder &b, mlir::Location loc,
                    const kiln_onnx::NodeProto &node,
                    llvm::ArrayRef<mlir::Value> inputs, std::string &why);

} // namespace kiln

#endif
