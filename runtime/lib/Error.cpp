#include "Error.h"

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

} // namespace kiln::rt

extern "C" const char *kiln_last_error(void) {
  return kiln::rt::LastError.c_str();
}
