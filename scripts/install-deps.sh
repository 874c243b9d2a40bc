#!/usr/bin/env bash
# Installs what kiln needs on Debian 12, only what is missing (idempotent).
# Versions are pinned so the ONNX schemas and test corpus stay stable.
set -euo pipefail

APT_PACKAGES=(cmake ninja-build ccache clang-19 lld-19 llvm-19-dev llvm-19-tools
  libmlir-19-dev mlir-19-tools libprotobuf-dev protobuf-compiler libgtest-dev
  python3 python3-pip)

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
LOCK="$HERE/python-requirements.lock"
PY=${PYTHON:-python3}
if ! "$PY" "$HERE/check-python-env.py" --lock "$LOCK" --quiet; then
  echo "kiln: installing the Python packages of scripts/python-requirements.lock"
  "$PY" -m pip install -q --no-deps -r "$LOCK" 2>&1 | grep -v "Running pip as the 'root' user" || true
  "$PY" "$HERE/check-python-env.py" --lock "$LOCK"
fi
