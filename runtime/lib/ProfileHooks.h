//===- ProfileHooks.h - per-node events from compiled code ------*- C++ -*-===//
//
// Compiled partitions call kilnProfileBegin/kilnProfileEnd(context,
// descriptor) around each node's kernel when the arena's profiler slot holds
// a context (model_abi.h, ABI 8); the session puts its ProfileContext there.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RT_PROFILEHOOKS_H
#define KILN_RT_PROFILEHOOKS_H

#include "kiln/kiln_rt.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace kiln::rt {

/// The clock of every profile event (kiln_profile_event.start_ns).
inline uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

struct ProfileContext {
  kiln_profile_callback Callback = nullptr;
  void *User = nullptr;
  uint64_t BeginNs = 0;
  // A descriptor's fields, split once per descriptor (its address).
  struct Fields {
    std::string Name, OpType, Provider, Args;
  };
  std::unordered_map<const char *, Fields> Parsed;

  const Fields &fields(const char *Descriptor);
};

} // namespace kiln::rt

extern "C" {
void kilnProfileBegin(int64_t Context, int64_t Descriptor);
void kilnProfileEnd(int64_t Context, int64_t Descriptor);
}

#endif
