#!/usr/bin/env bash
# CUDA provider check on a GPU machine: builds kiln, compiles every model of
# ../shared/models for cuda,cpu, checks each on CUDA (host and --device-io
# I/O) against its test_data_set_0, and times CUDA against the CPU fallback.
#
#   test/gpu/run.sh            exit 0 all checks pass, 1 a check failed,
#                              77 no GPU here (skip), 2 setup failed
# Environment: KILN_GPU_MODELS (models folder), KILN_GPU_OUT (work folder),
# KILN_GPU_SKIP_BUILD=1 (use the existing build/), KILN_GPU_ATOL (1e-4).
# Budget: about 8 minutes; every step has a timeout.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
models="${KILN_GPU_MODELS:-$here/../../../shared/models}"
out="${KILN_GPU_OUT:-$repo/build/gpu-test}"
atol="${KILN_GPU_ATOL:-1e-4}"
start=$SECONDS
mkdir -p "$out"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine (nvidia-smi missing or failing)"
  exit 77
fi
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' &&
   ! ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 >/dev/null 2>&1; then
  echo "no GPU on this machine (no libcuda.so.1 driver)"
  exit 77
fi
nvidia-smi -L

if [ "${KILN_GPU_SKIP_BUILD:-0}" != 1 ]; then
  echo "== building kiln"
  if ! timeout 300 "$repo/scripts/build.sh" >"$out.build.log" 2>&1; then
    mkdir -p "$(dirname "$out")"
    tail -30 "$out.build.log"
    echo "build failed (log: $out.build.log)"
    exit 2
  fi
fi
kiln="$repo/build/bin/kiln"
run="$repo/build/bin/kiln-run"
for b in "$kiln" "$run"; do
  [ -x "$b" ] || { echo "missing $b"; exit 2; }
done

echo "== runtime unit tests (CUDA shims on the real driver)"
failures=0
if ! timeout 60 ctest --test-dir "$repo/build" -R '^(auto|nodriver|stub)\.|kiln_run\.cuda' \
     --output-on-failure >"$out.ctest.log" 2>&1; then
  tail -40 "$out.ctest.log"
  echo "FAIL: CUDA unit tests (log: $out.ctest.log)"
  failures=$((failures + 1))
else
  grep -E "tests passed" "$out.ctest.log"
fi

if [ ! -d "$models" ]; then
  echo "no models folder at $models: nothing more to check"
  exit $((failures > 0))
fi

mkdir -p "$out"
rows=()
ms() { # median_ms of an --iterations JSON line
  python3 -c 'import json,sys
for l in sys.stdin:
    l=l.strip()
    if l.startswith("{"): print("%.3f" % json.loads(l)["median_ms"]); break' 2>/dev/null
}
for dir in "$models"/*/; do
  name="$(basename "$dir")"
  onnx="$dir/model.onnx"
  data="$dir/test_data_set_0"
  [ -f "$onnx" ] || continue
  if [ $((SECONDS - start)) -gt 420 ]; then
    echo "time budget spent; skipping $name and later models"
    rows+=("$name|-|-|-|-|SKIPPED (time)")
    continue
  fi
  echo "== $name"
  lib="$out/$name/lib$name.so"
  log="$out/$name.log"
  : >"$log"
  if ! timeout 180 "$kiln" compile "$onnx" -o "$out/$name/$name" --providers=cuda,cpu >>"$log" 2>&1; then
    tail -5 "$log"
    rows+=("$name|-|-|-|-|FAIL (compile)")
    failures=$((failures + 1))
    continue
  fi
  status="ok"
  check=()
  [ -d "$data" ] && check=(--check-dir "$data" --atol "$atol")
  for io in host device-io; do
    extra=()
    [ "$io" = device-io ] && extra=(--device-io)
    if ! timeout 60 "$run" "$lib" "${check[@]}" "${extra[@]}" >>"$log" 2>"$log.err"; then
      cat "$log.err" >>"$log"
      tail -5 "$log.err"
      status="FAIL ($io check)"
    elif ! grep -q "kiln-run: running on cuda" "$log.err"; then
      grep "running on" "$log.err"
      status="FAIL ($io: not on cuda)"
    fi
    cat "$log.err" >>"$log"
  done
  cuda_ms="$(timeout 60 "$run" "$lib" --iterations 20 --warmup 3 2>>"$log" | tee -a "$log" | ms)"
  dio_ms="$(timeout 60 "$run" "$lib" --device-io --iterations 20 --warmup 3 2>>"$log" | tee -a "$log" | ms)"
  cpu_ms="$(timeout 90 "$run" "$lib" --cpu --iterations 20 --warmup 3 2>>"$log" | tee -a "$log" | ms)"
  speedup="-"
  if [ -n "$cuda_ms" ] && [ -n "$cpu_ms" ]; then
    speedup="$(python3 -c "print('%.2fx' % ($cpu_ms / max($cuda_ms, 1e-9)))")"
  else
    [ "$status" = ok ] && status="FAIL (timing run)"
  fi
  [ "$status" = ok ] || failures=$((failures + 1))
  rows+=("$name|${cuda_ms:--}|${dio_ms:--}|${cpu_ms:--}|$speedup|$status")
done

echo
# cuda: inputs and outputs in host memory; dio: in device memory
# (--device-io, the copies outside the timed runs).
printf '%-14s %10s %10s %10s %9s  %s\n' model "cuda ms" "dio ms" "cpu ms" speed-up check
for r in "${rows[@]}"; do
  IFS='|' read -r m c d p s k <<<"$r"
  printf '%-14s %10s %10s %10s %9s  %s\n' "$m" "$c" "$d" "$p" "$s" "$k"
done
echo "($((SECONDS - start)) s; logs in $out)"
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all CUDA checks passed"
