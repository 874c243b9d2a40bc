#include "Error.h"

#include <cstring>

namespace kiln::rt {

// The only mutable state outside sessions; thread-local so concurrent
// sessions never race on it.
static thread_local std::string LastError;

kiln_status fail(kiln_status Status, std::string Message) {
  LastError = std::move(Message);
  return Status;
}

std::string formatShape(const int64_t *Shape, int32_t Rank) {
  std::string S = "[";
  for (int32_t I = 0; I < Rank; ++I) {
    if (I)
      S += ',';
    S += Shape ? std::to_string(Shape[I]) : "?";
  }
  return S + "]";
}

std::string quoted(const char *S) { return std::string("\"") + (S ? S : "?") + "\""; }

int32_t matchTensor(const kiln_tensor_info *Infos, int32_t NumInfos, const kiln_tensor &T,
                    int32_t Position) {
  if (!T.name)
    return Position < NumInfos ? Position : -1;
  for (int32_t J = 0; J < NumInfos; ++J)
    if (std::strcmp(T.name, Infos[J].name) == 0)
      return J;
  return -1;
}

} // namespace kiln::rt

extern "C" const char *kiln_last_error(void) {
  return kiln::rt::LastError.c_str();
}
