// A fatal signal in a model or the runtime is reported with the faulting
// address and a backtrace whose frames name the library and offset, which
// llvm-symbolizer or objdump can map back to the compiled model.
#include "CrashReport.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <execinfo.h>
#include <initializer_list>
#include <unistd.h>

namespace kiln::run {
namespace {

void onFatalSignal(int Sig, siginfo_t *Info, void *) {
  // fprintf is not async-signal-safe, but the process is dying anyway and
  // the report is what matters.
  std::fprintf(stderr, "kiln-run: fatal signal %d (%s) at address %p\n", Sig,
               strsignal(Sig), Info ? Info->si_addr : nullptr);
  void *Frames[64];
  int N = backtrace(Frames, 64);
  for (int I = 0; I < N; ++I) {
    Dl_info D;
    if (dladdr(Frames[I], &D) && D.dli_fname)
      std::fprintf(stderr, "  #%d %s+0x%lx (%s)\n", I, D.dli_fname,
                   (unsigned long)((char *)Frames[I] - (char *)D.dli_fbase),
                   D.dli_sname ? D.dli_sname : "?");
    else
      std::fprintf(stderr, "  #%d %p\n", I, Frames[I]);
  }
  std::fflush(stderr);
  signal(Sig, SIG_DFL);
  raise(Sig);
}

} // namespace

void installCrashReport() {
  struct sigaction Act;
  std::memset(&Act, 0, sizeof(Act));
  Act.sa_sigaction = onFatalSignal;
  Act.sa_flags = SA_SIGINFO | SA_RESETHAND;
  for (int Sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
    sigaction(Sig, &Act, nullptr);
}

} // namespace kiln::run
