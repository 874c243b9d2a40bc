#!/usr/bin/env bash
# Builds kiln's wheel (pip wheel ., pyproject.toml) and installs it into a
# fresh venv, as a user would: then ONNX Runtime's snippet with
# `import kiln as ort` beside onnxruntime on a model kiln compiles there,
# the console scripts, and find_package(kiln) from the installed package
# building examples/standalone. Every Python package is the lock's
# (scripts/python-requirements.lock): the wheel builds without isolation
# from the suite's environment (scikit-build-core, nanobind, onnx), and the
# venv gets the lock with --no-deps. The wheel builds in build-wheel/ beside
# build/, so ccache serves it from build/'s objects. Exit 77 (skip) when
# PyPI cannot be reached (the venv's packages come from there).
set -euo pipefail
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lock="$src_dir/scripts/python-requirements.lock"
if ! "$py" -m pip download -q --no-deps -d "$work/probe" "$(grep '^numpy==' "$lock")" > /dev/null 2>&1; then
  echo "wheel: SKIP: PyPI cannot be reached (the venv installs the lock's packages from it)"
  exit 77
fi
cd "$src_dir"
"$py" -m pip wheel -q --no-deps --no-build-isolation . -w "$work/dist" 2>&1 |
  grep -v "Running pip as" || true
wheel=$(ls "$work"/dist/kiln-*.whl)
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --no-deps -r "$lock" "$wheel" 2>&1 |
  grep -v -e "Running pip as" -e "^\[notice\]" || true
"$work/venv/bin/python" "$src_dir/scripts/check-python-env.py" --lock "$lock"
export PATH="$work/venv/bin:$PATH" KILN_CACHE_DIR="$work/cache"
cd "$work"
python - "$src_dir/test/models/exported/transformer_enc_dynseq/model.onnx" <<'PY'
import sys
import numpy as np
outs = {}
for name in ("kiln", "onnxruntime"):
    ort = __import__(name)
    assert ort.__file__.startswith(sys.prefix), ort.__file__  # the venv's
    sess = ort.InferenceSession(sys.argv[1], providers=ort.get_available_providers())
    assert "CPUExecutionProvider" in sess.get_providers()
    x = sess.get_inputs()[0]
    shape = [2 if d == "batch" else 5 if isinstance(d, str) else d for d in x.shape]
    feed = {x.name: np.random.default_rng(0).random(shape, dtype=np.float32)}
    outs[name] = sess.run(None, feed)
for a, b in zip(outs["kiln"], outs["onnxruntime"]):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
print("wheel: kiln and onnxruntime agree on", sys.argv[1])
PY
kiln --version
kiln-run --list-providers > /dev/null
cmake -S "$src_dir/examples/standalone" -B "$work/app" -G Ninja \
  -Dkiln_DIR="$(python -m kiln --cmake-dir)" > "$work/configure.log"
cmake --build "$work/app" > "$work/app.log"
python3 "$src_dir/examples/check.py" "$work/app/kiln-example" "$src_dir/examples/tiny_cnn.onnx"
