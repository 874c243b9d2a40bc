//===- Provider.h - execution provider interface and registry ---*- C++ -*-===//
//
// A provider answers which ops it can run and lowers the partitions it was
// given. Adding a provider means adding a folder and registering it here;
// the partitioner only talks to this interface.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_PROVIDER_H
#define KILN_PROVIDERS_PROVIDER_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>
#include <vector>

namespace kiln {

class Provider {
public:
  virtual ~Provider();
  virtual llvm::StringRef getName() const = 0;
  /// Whether this provider can run `op`; else `why` says what is missing.
  virtual bool canRun(mlir::Operation *op, std::string &why) const = 0;
  /// Rewrites the onnx ops inside `partition` (a kiln.partition of this
  /// provider) into code this provider's backend compiles.
  virtual mlir::LogicalResult lowerPartition(mlir::Operation *partition) const = 0;
  /// Whether this provider's kernels run on the calling thread, so that
  /// begin/end hooks around them time them (kiln-profile-kernels); a device
  /// provider times its kernels with its own events instead.
  virtual bool runsOnHostThread() const { return true; }
};

void registerProvider(std::unique_ptr<Provider> provider);
const Provider *lookupProvider(llvm::StringRef name);
std::vector<std::string> registeredProviderNames();

/// Registers the providers built into kiln (idempotent).
void registerBuiltinProviders();

} // namespace kiln

#endif
