// Failure reporting shared by the runtime's C entry points.
#ifndef KILN_RUNTIME_ERROR_H
#define KILN_RUNTIME_ERROR_H

#include "kiln/kiln_rt.h"

#include <cstdint>
#include <string>

namespace kiln::rt {

/// Records Message as the calling thread's last error and returns Status, so
/// that entry points can `return fail(...)`.
kiln_status fail(kiln_status Status, std::string Message);

/// "[1,784]"
std::string formatShape(const int64_t *Shape, int32_t Rank);

/// "\"name\"" (for messages); "\"?\"" for NULL.
std::string quoted(const char *S);

/// Index of the model tensor a caller tensor names (its position when it
/// has no name); -1 when the name is unknown.
int32_t matchTensor(const kiln_tensor_info *Infos, int32_t NumInfos, const kiln_tensor &T,
                    int32_t Position);

} // namespace kiln::rt

extern "C" {
/// Called by compiled code when a kiln.check with values fails: `format`
/// (a NUL-terminated message) with its `{}`s replaced by A, B and C in
/// order. The result is the address of a buffer of the calling thread that
/// stays valid until its fourth next call (the run reads it when it ends).
int64_t kilnCheckMessage(int64_t format, int64_t a, int64_t b, int64_t c);
}

#endif // KILN_RUNTIME_ERROR_H
