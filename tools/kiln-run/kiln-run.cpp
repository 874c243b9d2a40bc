// kiln-run: load a kiln-compiled model library, feed it inputs from files
// (or pseudo-random data), then write, check, time or profile its outputs.
#include "CrashReport.h"
#include "Info.h"
#include "Options.h"
#include "Runner.h"

#include <cstdio>

int main(int Argc, char **Argv) {
  kiln::run::installCrashReport();
  kiln::run::Options Opts;
  std::string Err;
  if (!kiln::run::parseOptions(Argc, Argv, Opts, Err)) {
    std::fprintf(stderr, "kiln-run: error: %s\n", Err.c_str());
    return kiln::run::ExitError;
  }
  if (Opts.Help) {
    std::fputs(kiln::run::usageText(), stdout);
    return kiln::run::ExitOk;
  }
  if (Opts.ListProviders)
    return kiln::run::listProviders();
  if (Opts.Info)
    return kiln::run::printInfo(Opts);
  return kiln::run::runModel(Opts);
}
