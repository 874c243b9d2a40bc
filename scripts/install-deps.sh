#!/usr/bin/env bash
# Installs what kiln needs on Debian 12, only what is missing (idempotent).
# Versions are pinned so the ONNX schemas and test corpus stay stable.
set -euo pipefail

APT_PACKAGES=(cmake ninja-build ccache clang-19 lld-19 llvm-19-dev llvm-19-tools
  libmlir-19-dev mlir-19-tools libprotobuf-dev protobuf-compiler libgtest-dev
  python3 python3-pip)
PIP_PACKAGES=(onnx==1.23.2 onnxruntime==1.30.0 numpy==2.2.6)

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

PY=${PYTHON:-python3}
if ! "$PY" - "${PIP_PACKAGES[@]}" <<'PYEOF'
import sys
from importlib import metadata
for spec in sys.argv[1:]:
    name, version = spec.split("==")
    try:
        if metadata.version(name) != version:
            sys.exit(1)
    except metadata.PackageNotFoundError:
        sys.exit(1)
PYEOF
then
  echo "kiln: installing ${PIP_PACKAGES[*]}"
  "$PY" -m pip install -q "${PIP_PACKAGES[@]}" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
