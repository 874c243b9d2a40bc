//===- CudaProvider.cpp - the CUDA execution provider ---------------------===//
//
// A CUDA partition is lowered to linalg exactly like a CPU one (the linalg
// form is target-neutral); its structured ops are tagged `kiln.device =
// "cuda"`, and after bufferization kiln-cuda-offload places their buffers
// on the device, inserts the transfers and maps them to GPU kernels.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "dialects/onnx/OnnxOps.h"
#include "providers/Provider.h"
#include "providers/cpu/OnnxToLinalg.h"
#include "providers/cuda/Cuda.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace kiln {
namespace {

/// A small tensor of static shape: what shape arithmetic yields (exporters
/// also cast sizes to float and back, for a division).
bool isShapeSized(Type t) {
  auto st = dyn_cast<RankedTensorType>(t);
  return st && st.hasStaticShape() && st.getNumElements() <= 64 &&
         st.getElementType().isIntOrFloat();
}

/// Whether `op` computes on shapes only: its results are small tensors
/// derived from Shape or Size (through constants and other such
/// ops). With run-time sizes these subgraphs feed Reshape, Expand or Slice
/// on the host; on the device each would cost a copy back and a sync.
bool computesShapes(Operation *op) {
  if (op->getNumResults() == 0 ||
      !llvm::all_of(op->getResultTypes(), isShapeSized))
    return false;
  bool fromShape = false;
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<Operation *> work{op};
  while (!work.empty()) {
    Operation *cur = work.pop_back_val();
    if (!seen.insert(cur).second)
      continue;
    if (seen.size() > 64)
      return false;
    if (isa<onnx::ShapeOp, onnx::SizeOp>(cur)) {
      fromShape = true;
      continue;
    }
    if (isa<onnx::ConstantOp, onnx::NoValueOp>(cur))
      continue;
    if (!llvm::all_of(cur->getResultTypes(), isShapeSized))
      return false;
    for (Value v : cur->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def)
        return false;
      work.push_back(def);
    }
  }
  return fromShape;
}

class CudaProvider final : public Provider {
public:
  llvm::StringRef getName() const override { return "cuda"; }
  // Kernels and copies are timed with CUDA events (runtime/lib/DeviceMemory).
  bool runsOnHostThread() const override { return false; }

  bool canRun(Operation *op, std::string &why) const override {
    // Constants and shape-only ops stay with the host: their data is tiny
    // and a transfer would cost more than the work.
    if (isa<onnx::ConstantOp, onnx::NoValueOp, onnx::ShapeOp, onnx::SizeOp,
            onnx::ConstantOfShapeOp, onnx::RangeOp, onnx::IfOp, onnx::LoopOp>(
            op)) {
      why = "kept on the host (shape or control op)";
      return false;
    }
    if (computesShapes(op)) {
      why = "kept on the host (shape computation)";
      return false;
    }
    // Indices read at run time are range-checked (cpu::checkIndexRange)
    // on the host, which reads the check's result: a device reduction
    // there broke the run on the mock driver. Token ids are small.
    if (isa<onnx::GatherOp, onnx::GatherElementsOp, onnx::GatherNDOp,
            onnx::ScatterElementsOp, onnx::ScatterNDOp>(op) &&
        !onnx::getConstantInts(op->getOperand(1))) {
      why = "kept on the host (its run-time indices are checked there)";
      return false;
    }
    // The 8-bit products have kernels on the host only (VNNI); on the
    // device they would run on the naive loops.
    if (isa<onnx::MatMulIntegerOp>(op)) {
      why = "kept on the host (8-bit integer kernels run on the CPU)";
      return false;
    }
    // A string is a host pointer, compared with the C library's strcmp;
    // sequences and optionals are objects of the host runtime.
    auto string = [](Type t) {
      auto shaped = dyn_cast<ShapedType>(t);
      return (shaped && isa<onnx::StringType>(shaped.getElementType())) ||
             isa<onnx::SeqType, onnx::OptType>(t);
    };
    if (llvm::any_of(op->getOperandTypes(), string) ||
        llvm::any_of(op->getResultTypes(), string)) {
      why = "kept on the host (strings, sequences or optionals)";
      return false;
    }
    return cpu::canLowerOnCpu(op, why);
  }

  LogicalResult lowerPartition(Operation *partition) const override {
    // Ops of run-time size become whole kernels, not host loops over blocks.
    partition->setAttr(cpu::kStructuredOnlyAttr,
                       UnitAttr::get(partition->getContext()));
    if (failed(cpu::lowerOnnxToLinalg(partition)))
      return failure();
    Builder b(partition->getContext());
    partition->walk([&](linalg::LinalgOp op) {
      op->setAttr(kCudaDeviceAttr, b.getStringAttr("cuda"));
    });
    return success();
  }
};

} // namespace

void registerCudaProvider() { registerProvider(std::make_unique<CudaProvider>()); }

} // namespace kiln
