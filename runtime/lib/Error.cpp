#include "Error.h"

#include <algorithm>
#include <cstdio>
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

extern "C" int64_t kilnCheckMessage(int64_t Format, int64_t A, int64_t B,
                                    int64_t C) {
  // Fixed buffers: formatting a failure must not allocate or throw, and a
  // few checks may fail in one run before it reads the last message.
  static thread_local char Buffers[4][512];
  static thread_local unsigned Next = 0;
  char *Out = Buffers[Next++ % 4];
  const char *F =
      reinterpret_cast<const char *>(static_cast<uintptr_t>(Format));
  const int64_t Values[] = {A, B, C};
  size_t Used = 0, Taken = 0;
  const size_t Cap = sizeof(Buffers[0]) - 1;
  for (; F && *F && Used < Cap; ++F) {
    if (F[0] == '{' && F[1] == '}' && Taken < 3) {
      int N = std::snprintf(Out + Used, Cap + 1 - Used, "%lld",
                            static_cast<long long>(Values[Taken++]));
      Used = N > 0 ? std::min(Cap, Used + static_cast<size_t>(N)) : Used;
      ++F;
      continue;
    }
    Out[Used++] = *F;
  }
  Out[Used] = '\0';
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(Out));
}
