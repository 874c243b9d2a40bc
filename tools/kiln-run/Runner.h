// What kiln-run does once its command line is parsed.
#ifndef KILN_RUN_RUNNER_H
#define KILN_RUN_RUNNER_H

#include "Options.h"

namespace kiln::run {

enum ExitCode { ExitOk = 0, ExitMismatch = 1, ExitError = 2 };

/// Loads, runs, writes and checks as Opts says; reports errors on stderr.
int runModel(const Options &Opts);

} // namespace kiln::run

#endif // KILN_RUN_RUNNER_H
