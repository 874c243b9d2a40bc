#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds kiln, then runs
# ctest (lit + FileCheck, GoogleTest, end-to-end models, the example and the
# installed-package flow).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
