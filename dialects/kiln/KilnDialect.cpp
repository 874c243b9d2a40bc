//===- KilnDialect.cpp - kiln execution dialect ---------------------------===//
#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln;

#include "dialects/kiln/KilnOpsDialect.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/KilnOps.cpp.inc"
      >();
}

LogicalResult PartitionOp::verify() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types do not match the partition's results");
  if (getProvider().empty())
    return emitOpError("needs a provider name");
  return success();
}

int64_t PartitionOp::getNumBodyOps() {
  return static_cast<int64_t>(getBody().front().getOperations().size()) - 1;
}

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.cpp.inc"
