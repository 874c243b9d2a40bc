#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds kiln, then runs
# ctest (lit + FileCheck, GoogleTest, end-to-end models, the example and the
# installed-package flow, the fuzzers' smoke runs, the runtime's tests under
# ASan+UBSan and TSan).
#
#   scripts/test.sh --sanitize   everything built with ASan+UBSan in
#                                build-sanitize/; runs the unit, kiln-run,
#                                lit and end-to-end tests there (about 4x
#                                the normal build's time: not part of CI)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ "${1:-}" = "--sanitize" ]; then
  PY=$(command -v "${PYTHON:-python3}")
  # (vptr: LLVM and MLIR are built without RTTI, so their objects would
  # all look invalid.)
  san="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PY" \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" -DKILN_FUZZ_SMOKE_SCALE=0 >/dev/null
  cmake --build build-sanitize -j "$(nproc)"
  # LLVM and MLIR keep global state until exit: no leak report for them.
  # The models kiln compiles are not instrumented; the compiler, the
  # runtime and kiln-run are.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" \
      -R '^(lit|kiln_run\.|e2e\.|example\.|[A-Z][A-Za-z]*\.)'
  exit
fi
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
