#!/usr/bin/env bash
# Compiles the vendored protos (proto/README.md) into proto/a2a.desc, the descriptor set the gRPC
# binding (crates/a2a-watch-engine/src/a2a/grpc.rs) reads at run time, so that building a2a-watch needs no protoc.
# protoc comes from grpcio-tools in the interop venv (tests/interop/python/setup.sh pins it);
# `cargo test grpc_descriptor` checks the committed file is what this script makes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-tests/interop/.venv-py13/bin/python}"
out="${1:-proto/a2a.desc}"
"$PY" -m grpc_tools.protoc -I proto --include_imports --descriptor_set_out="$out" \
  proto/a2a.proto proto/google/rpc/status.proto proto/google/rpc/error_details.proto
