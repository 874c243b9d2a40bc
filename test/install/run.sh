#!/usr/bin/env bash
# Installs kiln into a temporary prefix and builds examples/standalone from
# it as a separate project would (find_package(kiln) + kiln_add_model), then
# checks the app's output against ONNX Runtime.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$src_dir/examples/standalone" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/build"
python3 "$src_dir/examples/check.py" "$work/build/kiln-example" "$src_dir/examples/tiny_cnn.onnx"
