// kiln-run's command line.
#ifndef KILN_RUN_OPTIONS_H
#define KILN_RUN_OPTIONS_H

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln::run {

struct Options {
  std::string Library;
  std::string InputsDir, OutputDir, CheckDir, ProfilePath;
  /// --input NAME=FILE, in command-line order.
  std::vector<std::pair<std::string, std::string>> Inputs;
  double RTol = 1e-3, ATol = 1e-5;
  int Iterations = 0; // 0: run once, print no timing
  int Warmup = 0;
  /// The size of generated inputs' symbolic dims without a --dim.
  int Batch = 1;
  bool BatchGiven = false; // --batch given
  /// --threads N: the session's thread count (0: the runtime's default).
  int Threads = 0;
  /// --dim NAME=SIZE: a symbolic dimension's size in generated inputs of a
  /// model with run-time sizes.
  std::map<std::string, int> Dims;
  bool Print = false;
  bool ForceCpu = false; // --cpu
  bool DeviceIO = false; // --device-io
  bool Help = false;
  bool ListProviders = false; // --list-providers (no library needed)
  bool Info = false;          // --info
};

/// Accepts "--opt value" and "--opt=value". Returns false with Err set on a
/// bad command line.
bool parseOptions(int Argc, char **Argv, Options &Opts, std::string &Err);
const char *usageText();

} // namespace kiln::run

#endif // KILN_RUN_OPTIONS_H
