#!/usr/bin/env bash
# Install tests/interop/js/node_modules: the official A2A JS SDK (@a2a-js/sdk 1.3.0), express,
# and what the SDK's gRPC server needs (@grpc/grpc-js, @bufbuild/protobuf), exactly as pinned in
# package-lock.json (`npm ci`; `npm install` only if there is no lock).
# Idempotent: does nothing if node_modules already has every pinned version of package.json.
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

# Prints the dependencies whose installed version is not the one package.json pins, or nothing.
missing() {
  node -e '
    const fs = require("fs");
    const wanted = JSON.parse(fs.readFileSync("package.json", "utf8")).dependencies;
    for (const [name, version] of Object.entries(wanted)) {
      let got = "nothing";
      try { got = JSON.parse(fs.readFileSync(`node_modules/${name}/package.json`, "utf8")).version; } catch {}
      if (got !== version) console.log(`${name} ${version} (installed: ${got})`);
    }
  '
}

imports_work() {
  node --input-type=module -e '
    await import("@a2a-js/sdk/server/express");
    await import("@a2a-js/sdk/server/grpc");
    await import("express");
    await import("@grpc/grpc-js");
  ' >/dev/null 2>&1
}

if [[ "$(node -p 'require("./package.json").dependencies["@a2a-js/sdk"]')" != "$SDK_VERSION" ]]; then
  echo "setup.sh: package.json does not pin @a2a-js/sdk $SDK_VERSION" >&2
  exit 1
fi

if [[ -z "$(missing)" ]] && imports_work; then
  echo "setup.sh: $HERE/node_modules already has @a2a-js/sdk $SDK_VERSION, express, @grpc/grpc-js as pinned"
  exit 0
fi

if [[ -f package-lock.json ]]; then
  echo "setup.sh: npm ci in $HERE (node $(node --version), npm $(npm --version))"
  npm ci --no-audit --no-fund --loglevel=warn
else
  echo "setup.sh: no package-lock.json; npm install in $HERE"
  npm install --no-audit --no-fund --loglevel=warn
fi

if [[ -n "$(missing)" ]] || ! imports_work; then
  echo "setup.sh: after npm, still not as pinned: $(missing)" >&2
  exit 1
fi
echo "setup.sh: installed $(node -p 'Object.entries(require("./package.json").dependencies).map(([n, v]) => n + " " + v).join(", ")')"
