#!/usr/bin/env bash
# Configures and builds kiln in build/ (Ninja, clang-19, ccache, lld).
set -euo pipefail
cd "$(dirname "$0")/.."
# ctest runs the Python tests with the interpreter that install-deps.sh set
# up (PYTHON, else python3 on PATH): reconfigure when that changes.
PY=$(command -v "${PYTHON:-python3}")
if [ ! -f build/build.ninja ] ||
   ! grep -Eq "^Python3_EXECUTABLE:[A-Z]*=$PY\$" build/CMakeCache.txt; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PY"
fi
cmake --build build -j "$(nproc)"
