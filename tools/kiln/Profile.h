//===- Profile.h - kiln profile: summarize Chrome-trace profiles -*- C++
//-*-===//
//
// kiln profile FILE.json [--top N] [--html OUT.html]
// kiln profile --compare A.json B.json [--html OUT.html]
//
// Reads the Chrome-trace profiles that kiln-run --profile and ONNX Runtime
// (SessionOptions.enable_profiling) write, and prints the time per op type,
// per provider and per node, averaged over the runs in the file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_PROFILE_H
#define KILN_TOOLS_KILN_PROFILE_H

namespace kiln {

/// Runs `kiln profile`: argv[0] is "profile", the rest its arguments.
/// Returns the exit code: 0 success, 1 an unreadable or invalid profile or
/// output file, 2 bad usage.
int profileMain(int argc, char **argv);

} // namespace kiln

#endif // KILN_TOOLS_KILN_PROFILE_H
