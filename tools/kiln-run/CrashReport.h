// kiln-run: report fatal signals with a backtrace.
#ifndef KILN_TOOLS_KILN_RUN_CRASHREPORT_H
#define KILN_TOOLS_KILN_RUN_CRASHREPORT_H

namespace kiln::run {
void installCrashReport();
} // namespace kiln::run

#endif
