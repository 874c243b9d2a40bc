//===- NameKernels.cpp - name outlined kernels after their ONNX nodes -----===//
//
// gpu-kernel-outlining names every kernel after the host function
// (`__kiln_m_main_kernel`, `..._kernel_0`, ...). Profiles, --emit=ptx and
// driver errors are read by people, so each kernel module and function takes
// the name of the node it computes, from the launch's location.
//
//===----------------------------------------------------------------------===//

#include "passes/NodeName.h"
#include "providers/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_NAMEKERNELS
#include "providers/Passes.h.inc"

namespace {

/// The innermost NameLoc's name, or "".
StringRef nodeName(Location loc) {
  StringRef name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().getValue();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// A PTX identifier: [A-Za-z_][A-Za-z0-9_]*, from "/encoder/layer.0/Add".
std::string identifier(StringRef name) {
  std::string out;
  for (char c : name.ltrim("/")) {
    bool ok = llvm::isAlnum(c) || c == '_';
    if (!ok && (out.empty() || out.back() == '_'))
      continue;
    out.push_back(ok ? c : '_');
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  if (out.empty() || llvm::isDigit(out.front()))
    out.insert(out.begin(), 'k');
  return out;
}

struct NameKernelsPass : public impl::NameKernelsBase<NameKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::StringSet<> taken;
    for (Operation &op : *module.getBody())
      if (auto sym = dyn_cast<SymbolOpInterface>(op))
        taken.insert(sym.getName());
    SmallVector<gpu::LaunchFuncOp> launches;
    llvm::StringMap<unsigned> launchesOf;
    module.walk([&](gpu::LaunchFuncOp launch) {
      launches.push_back(launch);
      ++launchesOf[launch.getKernelModuleName()];
    });
    for (gpu::LaunchFuncOp launch : launches) {
      StringRef node = nodeName(launch.getLoc());
      auto kernelModule = symbols.lookup<gpu::GPUModuleOp>(launch.getKernelModuleName());
      // Outlining makes one module per launch; a shared one keeps its name.
      if (node.empty() || !kernelModule || launchesOf[launch.getKernelModuleName()] != 1)
        continue;
      auto kernel = kernelModule.lookupSymbol<gpu::GPUFuncOp>(launch.getKernelName());
      if (!kernel)
        continue;
      // The op type rides in the name (`__op_` + type), which the runtime
      // splits off for the profile's op_name, as ONNX Runtime's CUDA
      // profiler names a kernel's launching node.
      std::string base = identifier(node), suffix;
      if (StringRef type = importedOpTypeOf(launch.getLoc()); !type.empty())
        suffix = "__op_" + identifier(type);
      std::string name = base + suffix;
      for (unsigned i = 1; taken.contains(name); ++i)
        name = base + "_" + std::to_string(i) + suffix;
      taken.insert(name);
      auto nameAttr = StringAttr::get(module.getContext(), name);
      SymbolTable::setSymbolName(kernel, nameAttr);
      SymbolTable::setSymbolName(kernelModule, nameAttr);
      launch.setKernelAttr(
          SymbolRefAttr::get(nameAttr, {FlatSymbolRefAttr::get(nameAttr)}));
    }
  }
};

} // namespace
} // namespace kiln
