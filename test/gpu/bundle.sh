#!/usr/bin/env bash
# Prepares a self-contained GPU check for a machine that has a GPU but no
# LLVM/MLIR (the `device` machines): compiles models here with
# --providers=cuda,cpu and gathers kiln-run, the shared libraries it needs
# and the models into out/gpu-bundle (< 64 MiB), for test/gpu/run_bundle.sh,
# with the runtime's CUDA unit tests and, where pip can fetch it here, the
# onnx2torch wheel for the PyTorch peer (test/gpu/torch_peer.py).
#   test/gpu/bundle.sh [model-dir ...]   (default: ../shared/models/* except
#                                          resnet18, whose weights are 47 MB,
#                                          and test/models/exported/*)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
out="$repo/out/gpu-bundle"
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/models"
build="${KILN_BUILD:-$repo/build}"
cp "$build/bin/kiln-run" "$build/bin/kiln_cuda_tests_auto" "$out/bin/"
# The C++ runtime libraries kiln-run links dynamically (protobuf & co).
ldd "$build/bin/kiln-run" | awk '/=> \//{print $3}' | grep -v -E 'libc\.so|libm\.so|libpthread|libdl|ld-linux' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  for d in "$repo"/../shared/models/* "$repo"/test/models/exported/*; do
    [ -f "$d/model.onnx" ] && [ "$(basename "$d")" != resnet18 ] && dirs+=("$d")
  done
fi
for d in "${dirs[@]}"; do
  name=$(basename "$d")
  mkdir -p "$out/models/$name"
  if ! "$build/bin/kiln" compile "$d/model.onnx" -o "$out/models/$name/$name" --providers=cuda,cpu -q; then
    echo "bundle: skipping $name (does not compile)"
    rm -rf "$out/models/$name"
    continue
  fi
  rm -f "$out/models/$name/$name.o" "$out/models/$name/lib$name.a"
  cp -r "$d/test_data_set_0" "$out/models/$name/"
  # The peer converts the ONNX file itself; large weights stay behind.
  if [ "$(stat -c %s "$d/model.onnx")" -lt 8000000 ]; then cp "$d/model.onnx" "$out/models/$name/"; fi
done
mkdir -p "$out/wheels"
python3 -m pip download -q --no-deps -d "$out/wheels" onnx2torch==1.5.15 2>/dev/null ||
  echo "bundle: no onnx2torch wheel (pip could not fetch it): no PyTorch peer"
cp "$repo/test/gpu/run_bundle.sh" "$repo/test/gpu/torch_peer.py" "$out/"
du -sh "$out"
