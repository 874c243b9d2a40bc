#include "AmxTiles.h"

#include <cerrno>
#include <cstring>
#include <string>

#if defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kiln::rt {

const char *requestAmxTiles() {
#if defined(__linux__) && defined(__x86_64__)
  static const std::string Why = []() -> std::string {
    // CPUID leaf 7: EDX bit 24 AMX-TILE, bit 25 AMX-INT8.
    unsigned A, B, C, D;
    if (!__get_cpuid_count(7, 0, &A, &B, &C, &D) || !(D & (1u << 24)) ||
        !(D & (1u << 25)))
      return "the CPU has no AMX-INT8";
    // ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA (asm/prctl.h; the
    // constants are the kernel ABI, not every libc has the names).
    constexpr long ReqXcompPerm = 0x1023, XtileData = 18;
    if (syscall(SYS_arch_prctl, ReqXcompPerm, XtileData) != 0)
      return std::string("the OS refused the tile state (arch_prctl: ") +
             std::strerror(errno) + "; Linux gives it from 5.16 on)";
    return "";
  }();
  return Why.empty() ? nullptr : Why.c_str();
#else
  return "AMX tiles need Linux on x86-64";
#endif
}

} // namespace kiln::rt
