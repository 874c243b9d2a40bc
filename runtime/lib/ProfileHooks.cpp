//===- ProfileHooks.cpp - per-node events from compiled code --------------===//
#include "ProfileHooks.h"
#include "RunCall.h"

namespace kiln::rt {

const ProfileContext::Fields &ProfileContext::fields(const char *Descriptor) {
  auto It = Parsed.find(Descriptor);
  if (It != Parsed.end())
    return It->second;
  Fields F;
  std::string *Parts[] = {&F.Name, &F.OpType, &F.Provider, &F.Args};
  unsigned I = 0;
  for (const char *C = Descriptor; *C; ++C) {
    if (*C == '\x1f' && I < 3)
      ++I;
    else
      Parts[I]->push_back(*C);
  }
  return Parsed.emplace(Descriptor, std::move(F)).first->second;
}

} // namespace kiln::rt

namespace {

void report(int64_t Context, int64_t Descriptor, bool IsEnd) {
  using kiln::rt::nowNs;
  auto *Ctx = reinterpret_cast<kiln::rt::ProfileContext *>(static_cast<uintptr_t>(Context));
  uint64_t Now = nowNs();
  try {
    const auto &F = Ctx->fields(kiln::rt::ptrOf<char>(Descriptor));
    kiln_profile_event E{F.Name.c_str(), F.Provider.c_str(), F.OpType.c_str(),
                         KILN_EVENT_NODE, IsEnd ? Ctx->BeginNs : Now, IsEnd ? Now - Ctx->BeginNs : 0,
                         0, F.Args.c_str()};
    Ctx->Callback(&E, IsEnd, Ctx->User);
  } catch (...) {
    // A profiler must never take the run down (nor unwind through compiled
    // code, which has no unwind tables): drop the event.
  }
  // The kernel's time starts after the begin callback returns.
  if (!IsEnd)
    Ctx->BeginNs = nowNs();
}

} // namespace

KILN_RT_EXPORT void kilnProfileBegin(int64_t Context, int64_t Descriptor) {
  report(Context, Descriptor, /*IsEnd=*/false);
}

KILN_RT_EXPORT void kilnProfileEnd(int64_t Context, int64_t Descriptor) {
  report(Context, Descriptor, /*IsEnd=*/true);
}
