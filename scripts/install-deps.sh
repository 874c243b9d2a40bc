#!/usr/bin/env bash
# Installs what kiln needs on Debian 12, only what is missing (idempotent).
# Versions are pinned so the ONNX schemas and test corpus stay stable.
#
#   scripts/install-deps.sh [--bench]   --bench: also the benchmark's peers
#                                       (bench/requirements.lock)
set -euo pipefail

APT_PACKAGES=(cmake ninja-build ccache clang-19 lld-19 llvm-19-dev llvm-19-tools
  libmlir-19-dev mlir-19-tools libprotobuf-dev protobuf-compiler libgtest-dev
  libclang-rt-19-dev
  python3 python3-pip python3-dev python3-venv)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kiln: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

# Python: exactly the packages of the lock, transitive ones included (an
# unpinned dependency of onnx once changed the node tests' expected outputs).
HERE=$(cd "$(dirname "$0")" && pwd)
LOCKS=("$HERE/python-requirements.lock")
if [ "${1:-}" = "--bench" ]; then LOCKS+=("$HERE/../bench/requirements.lock"); fi
CHECK=()
PIP_REQS=()
for lock in "${LOCKS[@]}"; do CHECK+=(--lock "$lock"); PIP_REQS+=(-r "$lock"); done
PY=${PYTHON:-python3}
if ! "$PY" "$HERE/check-python-env.py" "${CHECK[@]}" --quiet; then
  echo "kiln: installing the Python packages of ${LOCKS[*]#"$HERE/"}"
  # Debian's own python3 is "externally managed" (PEP 668): pip then needs
  # to be told (a venv or pyenv interpreter is not).
  PIP_FLAGS=(-q --no-deps)
  if "$PY" -c 'import sys, sysconfig, os; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) or sys.prefix != sys.base_prefix)'; then
    PIP_FLAGS+=(--break-system-packages)
  fi
  "$PY" -m pip install "${PIP_FLAGS[@]}" "${PIP_REQS[@]}" 2>&1 | grep -v "Running pip as the 'root' user" || true
  "$PY" "$HERE/check-python-env.py" "${CHECK[@]}"
fi
