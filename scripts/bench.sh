#!/usr/bin/env bash
# Regenerates docs/performance.md: kiln beside ONNX Runtime and OpenVINO on
# the bench set, at 1 and 2 threads, interleaved in one run. Installs what
# is missing (the peers of bench/requirements.lock; Debian's python3-torch
# and a venv with transformers to export the bench models), builds kiln.
#
#   scripts/bench.sh [bench/run.py options]   e.g. --rounds 3 --threads 1
#   scripts/bench.sh --zoo [bench/run.py options]
#       the zoo instead (bench/export_zoo.py: third-party-style models
#       that probe kiln for performance cliffs) into docs/performance-zoo.md
set -euo pipefail
cd "$(dirname "$0")/.."
zoo=false
if [ "${1:-}" = "--zoo" ]; then zoo=true; shift; fi
scripts/install-deps.sh --bench
scripts/build.sh

# Debian's torch, which the exports run under.
need_torch() {
  if ! /usr/bin/python3 -c 'import torch, yaml, requests' 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q python3-torch python3-yaml python3-requests
  fi
}

BM=build/bench_models
if $zoo; then
  ZOO=$BM/zoo
  # The exporter lists the models it has yet to export (all its sets);
  # then every exported model directory is timed.
  if [ -n "$(python3 bench/export_zoo.py --dry-run "$ZOO")" ]; then
    need_torch
    python3 bench/export_zoo.py "$ZOO"
  fi
  # QDQ copies of some (ONNX Runtime's quantization tool; timed against its
  # int8 kernels).
  if [ ! -f "$ZOO/resnet50_lite_qdq/test_data_set_0/output_0.pb" ]; then
    python3 bench/quantize_models.py --zoo "$ZOO"
  fi
  models=()
  for d in "$ZOO"/*/; do
    if [ -f "$d/test_data_set_0/output_0.pb" ]; then models+=("${d%/}"); fi
  done
  exec python3 bench/run.py --threads 1,2 --rounds 3 --iterations 20 --pin-shapes \
    --markdown docs/performance-zoo.md "$@" "${models[@]}"
fi

# The exported models: a BERT at sequence 128, a GPT-2 decode step after
# 128 tokens, mobilenet_v2 and two recurrent models (a 2-layer LSTM over 100
# frames, conv + 2-layer GRU over 50), each with its test_data_set_0.
TORCH_PY=${KILN_TORCH_PYTHON:-/tmp/hfvenv/bin/python}
if [ ! -f "$BM/gpt2_dyn/test_data_set_0/input_0.pb" ] ||
   [ ! -f "$BM/crnn_gru/test_data_set_0/input_0.pb" ]; then
  need_torch
  if ! "$TORCH_PY" -c 'import transformers' 2>/dev/null; then
    /usr/bin/python3 -m venv --system-site-packages "$(dirname "$(dirname "$TORCH_PY")")"
    # (Every package pinned, transitive ones too: --no-deps.)
    "$TORCH_PY" -m pip install -q --no-deps -r bench/hf-requirements.lock
  fi
  KILN_TORCH_PYTHON=$TORCH_PY python3 bench/export_dynamic_models.py "$BM"
fi

models=()
if [ -d ../shared/models ]; then
  for m in resnet18 bert_tiny mlp lenet; do models+=("../shared/models/$m"); done
  # Their 8-bit versions, by ONNX Runtime's quantization tool (timed
  # against ONNX Runtime's int8 kernels), and fp16 copies.
  if [ ! -f "$BM/bert_tiny_fp16/test_data_set_0/output_0.pb" ] ||
     [ ! -f "$BM/gpt2_dyn_dynamic/test_data_set_0/output_0.pb" ] ||
     [ ! -f "$BM/mobilenet_v2_qop/test_data_set_0/output_0.pb" ]; then
    python3 bench/quantize_models.py "$BM" ../shared/models
  fi
  for m in bert_tiny_dynamic bert_tiny_qdq bert_tiny_qop resnet18_qdq resnet18_qop \
           bert_dyn_dynamic gpt2_dyn_dynamic mobilenet_v2_qdq mobilenet_v2_qop \
           resnet18_fp16 bert_tiny_fp16; do
    models+=("$BM/$m")
  done
else
  echo "bench: no ../shared/models in this checkout: resnet18, bert_tiny, mlp, lenet and their 8-bit and fp16 versions left out" >&2
fi
models+=("$BM/mobilenet_v2" "$BM/bert_dyn" "$BM/gpt2_dyn" "$BM/lstm_dyn" "$BM/crnn_gru")
python3 bench/run.py --threads 1,2 --rounds 5 --iterations 20 --pin-shapes \
  --markdown docs/performance.md "$@" "${models[@]}"
