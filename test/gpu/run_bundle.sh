#!/usr/bin/env bash
# Runs on the GPU machine, from the folder test/gpu/bundle.sh made: checks
# every model on CUDA against its reference and times CUDA against the CPU
# fallback of the same artifact. Exit 0 all pass, 1 a check failed, 77 no
# GPU here.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run="$here/bin/kiln-run"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine"
  [ "${KILN_GPU_ALLOW_CPU:-0}" = 1 ] || exit 77
else
  nvidia-smi -L
fi
fail=0
printf '%-14s %10s %10s %8s  %s\n' model cuda_ms cpu_ms speedup check
for m in "$here"/models/*/; do
  name=$(basename "$m")
  lib="$m/lib$name.so"
  check=$(timeout 120 "$run" "$lib" --check-dir "$m/test_data_set_0" --atol 1e-4 --rtol 1e-4 2>&1)
  rc=$?
  provider=$(echo "$check" | sed -n 's/.*running on \([a-z]*\).*/\1/p' | head -1)
  status=ok
  [ $rc -eq 0 ] || status="FAIL(rc=$rc)"
  [ "$provider" = cuda ] || [ "${KILN_GPU_ALLOW_CPU:-0}" = 1 ] || status="FAIL(provider=$provider)"
  [ "$status" = ok ] || { fail=1; echo "$check" | tail -5; }
  t_gpu=$(timeout 120 "$run" "$lib" --inputs-dir "$m/test_data_set_0" --iterations 20 --warmup 3 2>/dev/null |
          sed -n 's/.*"median_ms":\([0-9.e+-]*\).*/\1/p')
  t_cpu=$(timeout 120 "$run" "$lib" --cpu --inputs-dir "$m/test_data_set_0" --iterations 20 --warmup 3 2>/dev/null |
          sed -n 's/.*"median_ms":\([0-9.e+-]*\).*/\1/p')
  speed=$(python3 -c "print(f'{float(\"$t_cpu\")/float(\"$t_gpu\"):.2f}x')" 2>/dev/null || echo "?")
  printf '%-14s %10s %10s %8s  %s (%s)\n' "$name" "${t_gpu:-?}" "${t_cpu:-?}" "$speed" "$status" "${provider:-?}"
done
exit $fail
