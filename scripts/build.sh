#!/usr/bin/env bash
# Configures and builds kiln in build/ (Ninja, clang-19, ccache, lld).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build -j "$(nproc)"
