// Loading a compiled model's shared library and finding its entry point.
#ifndef KILN_RUN_MODELLIBRARY_H
#define KILN_RUN_MODELLIBRARY_H

#include "kiln/model_abi.h"

#include <string>

namespace kiln::run {

class ModelLibrary {
public:
  ModelLibrary() = default;
  ModelLibrary(const ModelLibrary &) = delete;
  ModelLibrary &operator=(const ModelLibrary &) = delete;
  ~ModelLibrary();

  /// dlopens Path and resolves KILN_MODEL_ENTRY_SYMBOL, else
  /// kiln_model_<NAME> for a file named libNAME.so.
  bool load(const std::string &Path, std::string &Err);
  const kiln_model_info *model() const { return Model; }

private:
  void *Handle = nullptr;
  const kiln_model_info *Model = nullptr;
};

/// "kiln_model_mnist" for "dir/libmnist.so"; characters that cannot appear
/// in a C identifier become '_'.
std::string entrySymbolForFile(const std::string &Path);

} // namespace kiln::run

#endif // KILN_RUN_MODELLIBRARY_H
