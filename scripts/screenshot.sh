#!/usr/bin/env bash
# Regenerates the README's picture from the real screen: records `a2a-watch demo` headless
# (--json --record) for a while, checks that the recording holds no token, then draws the screen
# at its end with `replay --snapshot`. The recording stays in assets/ beside the picture, so
# anyone can replay it (`a2a-watch replay assets/demo.ndjson`).
#
#   scripts/screenshot.sh                      # 60 seconds of the demo, a 132x36 screen
#   SECONDS_RECORDED=20 SIZE=160x45 scripts/screenshot.sh
#   A2A_WATCH=/path/to/a2a-watch scripts/screenshot.sh   # another build of the binary
set -euo pipefail

cd "$(dirname "$0")/.."
recorded=${SECONDS_RECORDED:-60}
size=${SIZE:-132x36}
recording=assets/demo.ndjson
picture=assets/demo.svg

if [[ -z "${A2A_WATCH:-}" ]]; then
    cargo build --quiet
    A2A_WATCH=target/debug/a2a-watch
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Free ports, so that a running demo is left alone; Ctrl-C (SIGINT) ends --json cleanly.
"$A2A_WATCH" demo --base-port 0 --json --record "$recording" --force --log-file "$log" >/dev/null &
demo=$!
sleep "$recorded"
kill -INT "$demo"
wait "$demo"

# The demo's deployer token is a random UUID in its simple form (32 hex digits, no dashes);
# task and context ids are UUIDs with dashes. Nothing of that form may be in the recording.
if grep -Eq '[0-9a-f]{32}' "$recording"; then
    echo "screenshot.sh: $recording holds what looks like the demo's token; not kept" >&2
    rm -f "$recording"
    exit 1
fi

# A screenshot never replaces a file: the old picture goes first.
rm -f "$picture"
TZ=UTC "$A2A_WATCH" replay "$recording" --snapshot "$picture" --size "$size"
echo "wrote $recording ($(wc -l <"$recording") lines) and $picture"
