#include "tensorio/FileName.h"

namespace kiln::tensorio {

std::string sanitizeFileName(const std::string &Name) {
  std::string Out;
  Out.reserve(Name.size());
  for (unsigned char C : Name) {
    // ASCII tests only: std::isalnum depends on the locale.
    bool Keep = (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
                (C >= '0' && C <= '9') || C == '.' || C == '_' || C == '-';
    Out += Keep ? static_cast<char>(C) : '_';
  }
  if (Out.empty() || Out == "." || Out == "..")
    Out = "_" + Out;
  return Out;
}

} // namespace kiln::tensorio
