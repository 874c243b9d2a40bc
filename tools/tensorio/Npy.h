// numpy .npy files (format versions 1.0-3.0, little-endian, C order).
#ifndef KILN_TENSORIO_NPY_H
#define KILN_TENSORIO_NPY_H

#include "tensorio/HostTensor.h"

#include <string>

namespace kiln::tensorio {

/// Reads Path into Out (Out.Name is left empty). On failure returns false
/// and sets Err.
bool readNpy(const std::string &Path, HostTensor &Out, std::string &Err);
/// Parses an in-memory .npy image; Source names it in messages.
bool parseNpy(const std::string &Data, const std::string &Source,
              HostTensor &Out, std::string &Err);
/// Writes T as a version 1.0 .npy (2.0 if the header needs it).
bool writeNpy(const std::string &Path, const HostTensor &T, std::string &Err);

/// "<f4" for KILN_DTYPE_FLOAT, ... ; empty when numpy has no equivalent.
std::string npyDescr(int32_t DType);

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_NPY_H
