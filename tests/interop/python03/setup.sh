#!/usr/bin/env bash
# Create tests/interop/.venv-py03 with the official A2A Python SDK (newest 0.3.x) and uvicorn:
# the 1.x script, with this SDK line's version, a module only it has, and its own venv.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SDK_VERSION="0.3.26" SDK_MODULE="a2a.server.apps" SDK_EXTRAS="http-server" \
  VENV="${A2A_PY03_VENV:-$(cd "$HERE/.." && pwd)/.venv-py03}" \
  exec bash "$HERE/../python/setup.sh"
