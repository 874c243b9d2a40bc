//===- CpuProvider.cpp - the CPU execution provider -----------------------===//
#include "providers/Provider.h"
#include "providers/cpu/OnnxToLinalg.h"
#include "providers/cuda/Cuda.h"

namespace kiln {
namespace {

class CpuProvider final : public Provider {
public:
  llvm::StringRef getName() const override { return "cpu"; }
  bool canRun(mlir::Operation *op, std::string &why) const override {
    return cpu::canLowerOnCpu(op, why);
  }
  mlir::LogicalResult lowerPartition(mlir::Operation *partition) const override {
    return cpu::lowerOnnxToLinalg(partition);
  }
};

} // namespace

void registerBuiltinProviders() {
  static bool done = [] {
    registerProvider(std::make_unique<CpuProvider>());
    registerCudaProvider();
    return true;
  }();
  (void)done;
}

} // namespace kiln
