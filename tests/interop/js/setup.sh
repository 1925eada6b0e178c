#!/usr/bin/env bash
# Install tests/interop/js/node_modules: the official A2A JS SDK (@a2a-js/sdk 1.3.0) and express,
# exactly as pinned in package-lock.json (`npm ci`; `npm install` only if there is no lock).
# Idempotent: does nothing if node_modules already has the pinned versions.
set -euo pipefail

SDK_VERSION="1.3.0"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

command -v node >/dev/null 2>&1 || { echo "setup.sh: node not found (need Node >= 20)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "setup.sh: npm not found" >&2; exit 1; }
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if (( NODE_MAJOR < 20 )); then
  echo "setup.sh: Node $(node --version) is too old; @a2a-js/sdk $SDK_VERSION needs >= 20" >&2
  exit 1
fi

# Prints "<sdk version> <express version>" of what is installed, or nothing.
installed_versions() {
  node -e '
    const fs = require("fs");
    const v = (p) => JSON.parse(fs.readFileSync(p, "utf8")).version;
    try {
      console.log(v("node_modules/@a2a-js/sdk/package.json"), v("node_modules/express/package.json"));
    } catch {}
  ' 2>/dev/null || true
}

wanted_express() {
  node -p 'require("./package.json").dependencies.express'
}

if [[ "$(installed_versions)" == "$SDK_VERSION $(wanted_express)" ]] \
   && node --input-type=module -e 'await import("@a2a-js/sdk/server/express"); await import("express")' >/dev/null 2>&1; then
  echo "setup.sh: $HERE/node_modules already has @a2a-js/sdk $SDK_VERSION and express $(wanted_express)"
  exit 0
fi

if [[ -f package-lock.json ]]; then
  echo "setup.sh: npm ci in $HERE (node $(node --version), npm $(npm --version))"
  npm ci --no-audit --no-fund --loglevel=warn
else
  echo "setup.sh: no package-lock.json; npm install in $HERE"
  npm install --no-audit --no-fund --loglevel=warn
fi

got="$(installed_versions)"
if [[ "$got" != "$SDK_VERSION $(wanted_express)" ]]; then
  echo "setup.sh: expected @a2a-js/sdk $SDK_VERSION and express $(wanted_express), got '${got:-nothing}'" >&2
  exit 1
fi
echo "setup.sh: @a2a-js/sdk and express installed: $got"
