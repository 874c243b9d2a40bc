#!/usr/bin/env bash
# Runs on the GPU machine, from the folder test/gpu/bundle.sh made: the
# runtime's CUDA unit tests on the real driver, then every model checked on
# CUDA (host and --device-io I/O) against its reference and timed against
# the CPU fallback of the same artifact and, where the bundle holds the
# onnx2torch wheel, against PyTorch on the same GPU. Exit 0 all pass, 1 a
# check failed, 77 no GPU here.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run="$here/bin/kiln-run"
atol="${KILN_GPU_ATOL:-1e-4}"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine"
  [ "${KILN_GPU_ALLOW_CPU:-0}" = 1 ] || exit 77
else
  nvidia-smi -L
fi
fail=0
if [ -x "$here/bin/kiln_cuda_tests_auto" ]; then
  echo "== runtime CUDA unit tests on this driver"
  if timeout 120 "$here/bin/kiln_cuda_tests_auto" --gtest_brief=1 >"$here/unit.log" 2>&1; then
    grep -E "PASSED|SKIPPED" "$here/unit.log"
  else
    tail -30 "$here/unit.log"
    echo "FAIL: CUDA unit tests"
    fail=1
  fi
fi
ms() { sed -n 's/.*"median_ms":\([0-9.e+-]*\).*/\1/p' | head -1; }
rows=()
for m in "$here"/models/*/; do
  name=$(basename "$m")
  lib="$m/lib$name.so"
  status=ok
  provider=?
  for io in host device-io; do
    extra=()
    [ "$io" = device-io ] && extra=(--device-io)
    check=$(timeout 120 "$run" "$lib" "${extra[@]}" --check-dir "$m/test_data_set_0" --atol "$atol" --rtol "$atol" 2>&1)
    rc=$?
    provider=$(echo "$check" | sed -n 's/.*running on \([a-z]*\).*/\1/p' | head -1)
    if [ $rc -ne 0 ]; then
      status="FAIL($io rc=$rc)"
    elif [ "$provider" != cuda ] && [ "${KILN_GPU_ALLOW_CPU:-0}" != 1 ]; then
      status="FAIL($io on ${provider:-?})"
    fi
    [ "$status" = ok ] || { echo "== $name ($io)"; echo "$check" | tail -5; break; }
  done
  [ "$status" = ok ] || fail=1
  t_gpu=$(timeout 120 "$run" "$lib" --inputs-dir "$m/test_data_set_0" --iterations 20 --warmup 3 2>/dev/null | ms)
  t_dio=$(timeout 120 "$run" "$lib" --device-io --inputs-dir "$m/test_data_set_0" --iterations 20 --warmup 3 2>/dev/null | ms)
  t_cpu=$(timeout 120 "$run" "$lib" --cpu --inputs-dir "$m/test_data_set_0" --iterations 20 --warmup 3 2>/dev/null | ms)
  t_torch=-
  if [ -f "$m/model.onnx" ] && ls "$here"/wheels/*.whl >/dev/null 2>&1; then
    echo "$name:" >>"$here/peer.log"
    peer=$(timeout 180 python3 "$here/torch_peer.py" "$m" --wheels "$here/wheels" 2>/dev/null | tail -1)
    t_torch=$(echo "$peer" | python3 -c 'import json,sys
try:
    d = json.loads(sys.stdin.read())
    print("%.4f" % d["median_ms"] if "median_ms" in d else "n/a")
    if "error" in d: print(d["error"], file=sys.stderr)
except Exception: print("n/a")' 2>>"$here/peer.log")
  fi
  speed=$(python3 -c "print(f'{float(\"$t_cpu\")/float(\"$t_dio\"):.2f}x')" 2>/dev/null || echo "?")
  rows+=("$name|${t_gpu:-?}|${t_dio:-?}|${t_cpu:-?}|$speed|$t_torch|$status (${provider:-?})")
done
echo
# cuda: I/O in host memory; dio: I/O in device memory (--device-io); cpu:
# the same artifact's CPU fallback; torch: PyTorch on the GPU (onnx2torch),
# inputs on the device, as dio.
printf '%-16s %9s %9s %9s %8s %10s  %s\n' model "cuda ms" "dio ms" "cpu ms" cpu/dio "torch ms" check
for r in "${rows[@]}"; do
  IFS='|' read -r n c d p s t k <<<"$r"
  printf '%-16s %9s %9s %9s %8s %10s  %s\n' "$n" "$c" "$d" "$p" "$s" "$t" "$k"
done
exit $fail
