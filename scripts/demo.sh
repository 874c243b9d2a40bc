#!/usr/bin/env bash
# From nothing to a running app: installs what is missing, builds kiln,
# compiles the bundled example model (examples/tiny_cnn.onnx) at build time
# into a library, links it into examples/main.cpp, runs it and compares its
# output with ONNX Runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo
echo "== kiln-example (examples/main.cpp + kiln-compiled examples/tiny_cnn.onnx)"
python3 examples/check.py build/bin/kiln-example examples/tiny_cnn.onnx
