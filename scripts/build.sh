#!/usr/bin/env bash
# Configures and builds kiln in build/ (Ninja, clang-19, ccache, lld).
set -euo pipefail
cd "$(dirname "$0")/.."
# ctest runs the Python tests with the interpreter that install-deps.sh set
# up (PYTHON, else python3 on PATH): reconfigure when that changes.
PY=$(command -v "${PYTHON:-python3}") || { echo "kiln: no ${PYTHON:-python3} found" >&2; exit 1; }
cached=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' build/CMakeCache.txt 2>/dev/null || true)
if [ ! -f build/build.ninja ] || [ "$cached" != "$PY" ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PY"
fi
cmake --build build -j "$(nproc)"
