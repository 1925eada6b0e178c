#!/usr/bin/env bash
# Create tests/interop/.venv-py13 with the official A2A Python SDK (1.x) with its gRPC extra
# (grpcio, grpcio-tools for `python -m grpc_tools.protoc`, googleapis-common-protos for
# google/api/*.proto), its signing extra (PyJWT, for a2a.utils.signing: tests/it/signed_cards.rs
# signs cards with it) and uvicorn.
# Idempotent: does nothing if the venv already has the pinned versions and imports them all.
# python03/setup.sh runs this same script for the 0.3 SDK, with SDK_VERSION, SDK_MODULE,
# SDK_EXTRAS and VENV set.
set -euo pipefail

SDK_VERSION="${SDK_VERSION:-1.3.0}"
# A module only that SDK line has, to tell a complete install from a broken one.
SDK_MODULE="${SDK_MODULE:-a2a.server.routes}"
SDK_EXTRAS="${SDK_EXTRAS:-http-server,grpc,signing}"
IMPORTS="$SDK_MODULE, uvicorn, httpx"
if [[ ",$SDK_EXTRAS," == *,grpc,* ]]; then
  IMPORTS="$IMPORTS, grpc, grpc_tools.protoc, google.api.annotations_pb2, a2a.types.a2a_pb2_grpc"
fi
if [[ ",$SDK_EXTRAS," == *,signing,* ]]; then
  IMPORTS="$IMPORTS, a2a.utils.signing"
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${VENV:-${A2A_PY13_VENV:-$(cd "$HERE/.." && pwd)/.venv-py13}}"
PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
  for cand in python3.11 python3.12 python3.13 python3; do
    if command -v "$cand" >/dev/null 2>&1; then PYTHON="$cand"; break; fi
  done
fi
[[ -n "$PYTHON" ]] || { echo "setup.sh: no python3 found" >&2; exit 1; }

installed_version() {
  "$VENV/bin/python" - <<'PY' 2>/dev/null || true
import importlib.metadata as m
try:
    print(m.version("a2a-sdk"))
    m.version("uvicorn"); m.version("sse-starlette"); m.version("starlette")
except m.PackageNotFoundError:
    pass
PY
}

if [[ -x "$VENV/bin/python" ]] && [[ "$(installed_version | head -n1)" == "$SDK_VERSION" ]] \
   && "$VENV/bin/python" -c "import $IMPORTS" >/dev/null 2>&1; then
  echo "setup.sh: $VENV already has a2a-sdk $SDK_VERSION"
  exit 0
fi

echo "setup.sh: creating $VENV with $("$PYTHON" --version 2>&1)"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "a2a-sdk[$SDK_EXTRAS]==$SDK_VERSION" "uvicorn>=0.30" "httpx>=0.27"
"$VENV/bin/python" -c "import $IMPORTS"
"$VENV/bin/python" -c 'import importlib.metadata as m; print("setup.sh: a2a-sdk", m.version("a2a-sdk"), "uvicorn", m.version("uvicorn"))'
