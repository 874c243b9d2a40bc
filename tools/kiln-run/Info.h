// kiln-run --list-providers and --info: what this machine can run, and
// what a compiled library holds (ONNX Runtime's get_available_providers,
// get_inputs/get_outputs/get_providers).
#ifndef KILN_RUN_INFO_H
#define KILN_RUN_INFO_H

#include "Options.h"
#include "kiln/kiln_rt.h"

namespace kiln::run {

/// Prints each provider libkiln_rt knows: available, or why not.
int listProviders();
/// Prints the library's inputs, outputs, partitions, target CPU, producer
/// and the variant a session picks on this machine, and why.
int printInfo(const Options &Opts);

/// The shape variants of M compiled for listed sizes (--dim-values): all
/// but the last when that is the generic code for other sizes.
int32_t listedVariants(const kiln_model_info &M);

} // namespace kiln::run

#endif // KILN_RUN_INFO_H
