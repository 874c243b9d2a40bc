#include "ModelLibrary.h"

#include <dlfcn.h>

namespace kiln::run {

ModelLibrary::~ModelLibrary() {
  if (Handle)
    dlclose(Handle);
}

std::string entrySymbolForFile(const std::string &Path) {
  std::string Base = Path.substr(Path.find_last_of('/') + 1);
  if (Base.compare(0, 3, "lib") == 0)
    Base = Base.substr(3);
  Base = Base.substr(0, Base.find('.'));
  for (char &C : Base)
    if (!((C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
          (C >= '0' && C <= '9') || C == '_'))
      C = '_';
  return "kiln_model_" + Base;
}

bool ModelLibrary::load(const std::string &Path, std::string &Err) {
  // Without a '/', dlopen would search the library path, not the cwd.
  std::string Open = Path.find('/') == std::string::npos ? "./" + Path : Path;
  Handle = dlopen(Open.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    const char *Msg = dlerror();
    Err = "cannot load model library: " + std::string(Msg ? Msg : Path.c_str());
    return false;
  }
  std::string Fallback = entrySymbolForFile(Path);
  void *Sym = dlsym(Handle, KILN_MODEL_ENTRY_SYMBOL);
  if (!Sym)
    Sym = dlsym(Handle, Fallback.c_str());
  if (!Sym) {
    Err = "\"" + Path + "\" defines neither " KILN_MODEL_ENTRY_SYMBOL " nor " +
          Fallback + "; is it a kiln-compiled model?";
    return false;
  }
  // dlsym yields an object pointer; POSIX guarantees this conversion.
  auto Entry = reinterpret_cast<kiln_model_entry_fn>(Sym);
  Model = Entry();
  if (!Model) {
    Err = "\"" + Path + "\": the model entry point returned NULL";
    return false;
  }
  return true;
}

} // namespace kiln::run
