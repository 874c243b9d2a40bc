//===- OnnxDialect.cpp - onnx dialect -------------------------------------===//

#include "dialects/onnx/OnnxDialect.h"
#include "dialects/onnx/OnnxOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::onnx;

#include "dialects/onnx/OnnxOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/onnx/OnnxOpsTypes.cpp.inc"

void ONNXDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/onnx/OnnxOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/onnx/OnnxOps.cpp.inc"
      >();
}

Operation *ONNXDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  // Only onnx.NoValue folds to an attribute here; real constants are
  // onnx.Constant, which the folder does not create.
  if (isa<UnitAttr>(value) && isa<NoneType>(type))
    return builder.create<NoValueOp>(loc);
  return nullptr;
}
