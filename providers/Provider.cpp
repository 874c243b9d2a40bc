//===- Provider.cpp - execution provider registry -------------------------===//
#include "providers/Provider.h"

#include "llvm/ADT/StringMap.h"
#include <mutex>

namespace kiln {

Provider::~Provider() = default;

static llvm::StringMap<std::unique_ptr<Provider>> &registry() {
  static llvm::StringMap<std::unique_ptr<Provider>> providers;
  return providers;
}
static std::mutex registryMutex;

void registerProvider(std::unique_ptr<Provider> provider) {
  std::lock_guard<std::mutex> lock(registryMutex);
  std::string name = provider->getName().str();
  registry()[name] = std::move(provider);
}

const Provider *lookupProvider(llvm::StringRef name) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second.get();
}

std::vector<std::string> registeredProviderNames() {
  std::lock_guard<std::mutex> lock(registryMutex);
  std::vector<std::string> names;
  for (auto &entry : registry())
    names.push_back(entry.getKey().str());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace kiln
