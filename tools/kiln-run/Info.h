// kiln-run --list-providers and --info: what this machine can run, and
// what a compiled library holds (ONNX Runtime's get_available_providers,
// get_inputs/get_outputs/get_providers).
#ifndef KILN_RUN_INFO_H
#define KILN_RUN_INFO_H

#include "Options.h"

namespace kiln::run {

/// Prints each provider libkiln_rt knows: available, or why not.
int listProviders();
/// Prints the library's inputs, outputs, partitions, target CPU, producer
/// and the variant a session picks on this machine, and why.
int printInfo(const Options &Opts);

} // namespace kiln::run

#endif // KILN_RUN_INFO_H
