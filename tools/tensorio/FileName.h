// Turning tensor names (which may hold '/', ':' ...) into file names.
#ifndef KILN_TENSORIO_FILENAME_H
#define KILN_TENSORIO_FILENAME_H

#include <string>

namespace kiln::tensorio {

/// Keeps letters, digits, '.', '_' and '-'; everything else becomes '_'.
/// An empty name becomes "_"; "." and ".." are prefixed with '_' so the
/// result is always a plain file inside the target folder.
std::string sanitizeFileName(const std::string &Name);

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_FILENAME_H
