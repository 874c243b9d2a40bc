//===- CudaProvider.cpp - the CUDA execution provider ---------------------===//
//
// A CUDA partition is lowered to linalg exactly like a CPU one (the linalg
// form is target-neutral); its structured ops are tagged `kiln.device =
// "cuda"`, and after bufferization kiln-cuda-offload places their buffers
// on the device, inserts the transfers and maps them to GPU kernels.
//
//===----------------------------------------------------------------------===//
#include "providers/Provider.h"
#include "dialects/onnx/OnnxDialect.h"
#include "providers/cpu/OnnxToLinalg.h"
#include "providers/cuda/Cuda.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {
namespace {

class CudaProvider final : public Provider {
public:
  llvm::StringRef getName() const override { return "cuda"; }
  // Kernels and copies are timed with CUDA events (runtime/lib/DeviceMemory).
  bool runsOnHostThread() const override { return false; }

  bool canRun(Operation *op, std::string &why) const override {
    StringRef name = op->getName().getStringRef();
    // Constants and shape-only ops stay with the host: their data is tiny
    // and a transfer would cost more than the work.
    static const llvm::StringSet<> hostOnly = {
        "onnx.Constant", "onnx.NoValue", "onnx.Shape", "onnx.Size",
        "onnx.ConstantOfShape", "onnx.Range", "onnx.If", "onnx.Loop"};
    if (hostOnly.contains(name)) {
      why = "kept on the host (shape or control op)";
      return false;
    }
    // Kernels and device buffers are laid out at compile time.
    auto dynamic = [](Type t) {
      auto shaped = dyn_cast<ShapedType>(t);
      return shaped && !shaped.hasStaticShape();
    };
    if (llvm::any_of(op->getOperandTypes(), dynamic) ||
        llvm::any_of(op->getResultTypes(), dynamic)) {
      why = "kept on the host (dynamic shape)";
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
