#!/usr/bin/env bash
# Runs every benchmark of issue 6 in one go and writes BENCHMARKS.md at the repository root:
# the figures, how each was measured, the machine, the date, and callgrind profiles of the
# worst ratios. Benchmarks report; this script fails only if the benchmarks cannot be built.
#
#   scripts/bench.sh                    # everything (about 20 minutes on 2 cores, 8 of them the fleet)
#   BENCH_QUICK=1 scripts/bench.sh      # smoke run: smaller sizes, shorter windows
#   BENCH_ONLY="decode render" scripts/bench.sh   # a subset
#   BENCH_ONLY="discovery e2e quiet" BENCH_QUICK=1 scripts/bench.sh   # issue 11's rows, the real binary
#                                       # from outside (discovery at 10k-100k tasks, end to end against
#                                       # curl and the Python SDK, memory of quiet tasks)
#   BENCH_ONLY=tap scripts/bench.sh    # issue 12: a planner's calls through `--tap` against direct
#   BENCH_ONLY=fleet scripts/bench.sh  # issue 23: 50 agents × 40 tasks, an update per stream every 5 s, read
#                                       # by a bare reader, --headless, --json, the dashboard and the Python SDK
#   BENCH_ONLY="fleet --seconds 20 --agents 10" scripts/bench.sh   # a shorter, smaller fleet
#                                       # (also --tasks-per-agent N, --large-tasks-per-agent N, 0 = no 10k row)
#   BENCH_ONLY=monitoring scripts/bench.sh   # issue 22: --json end to end and idle with metrics scraped
#                                       # every second and --otlp to a loopback receiver, against without
#   BENCH_BINARY=/tmp/old/a2a-watch scripts/bench.sh   # measure another build of the binary (before/after)
#   BENCH_PROFILE=0 scripts/bench.sh    # no callgrind section
#   BENCH_REPORT=/tmp/b.md scripts/bench.sh       # write the report elsewhere
#
# Uses, when present: tmux and strace (idle), prlimit (scale), valgrind (profiles), curl (e2e), and
# the a2a-sdk 1.3.0 venv of tests/interop/python/setup.sh (the Python baselines of ingest and e2e).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
REPORT="${BENCH_REPORT:-$ROOT/BENCHMARKS.md}"

warn() { echo "bench.sh: $*" >&2; }

# The Python baseline needs the official SDK; setting it up needs the network the first time.
if [[ ! -x "${A2A_PY13_VENV:-tests/interop/.venv-py13}/bin/python" ]]; then
  bash tests/interop/python/setup.sh || warn "no a2a-sdk 1.3.0 venv: ingest baseline (b) will be skipped"
fi
# A fresh machine may lack some of them: install what Debian's packages have, when we may.
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v strace >/dev/null 2>&1 || missing+=(strace)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if ((${#missing[@]})) && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" \
    || warn "could not install ${missing[*]}"
fi
for tool in tmux strace prlimit valgrind curl; do
  command -v "$tool" >/dev/null 2>&1 || warn "$tool not found: the parts that need it are skipped"
done

args=()
read -r -a args <<<"${BENCH_ONLY:-all}"
if [[ "${BENCH_PROFILE:-1}" != "0" ]] && command -v valgrind >/dev/null 2>&1; then
  args+=(--profile)
fi

# The bench target is built with the release profile, and so is the a2a-watch binary it drives.
cargo bench --bench perf --no-run
cargo bench --bench perf -- "${args[@]}" --report "$REPORT"
echo "bench.sh: wrote $REPORT"
