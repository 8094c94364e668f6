#!/usr/bin/env bash
# The load run of issue 19 (not a test): `rampart serve` (release) over the sample data,
# wrk with 256 connections for 60 s (LOAD_SECONDS, LOAD_CONNECTIONS) over a mix of ten
# operations (bench/mix.lua), the server's RSS read from /proc every second. Prints the
# latency percentiles, the errors, and RSS over time; figures go to docs/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${LOAD_SECONDS:-60}
CONNS=${LOAD_CONNECTIONS:-256}
if ! command -v wrk >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
cargo build --release -q -p rampart
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
db="sqlite://$work/load.db"
./target/release/rampart import cves --db "$db" crates/vulndb/sample/cves.jsonl 2>/dev/null
./target/release/rampart import companies --db "$db" crates/intel/sample/companies.jsonl 2>/dev/null
key=$(./target/release/rampart keys create --db "$db" --name load --scopes general,vulnerability,underwriter,monitor \
    --company acme-robotics --per-minute 0 --monthly 0 2>/dev/null)
RAMPART_LOG=warn ./target/release/rampart serve --db "$db" --listen 127.0.0.1:18095 &
pid=$!
sleep 1
# RSS every second while wrk runs.
( while kill -0 "$pid" 2>/dev/null; do
      awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true
      sleep 1
  done ) > "$work/rss" &
out=$(ulimit -n 65536 2>/dev/null; wrk -t2 -c"$CONNS" -d"${SECS}s" --latency --timeout 10s -s bench/mix.lua \
    -H "apikey: $key" http://127.0.0.1:18095)
echo "$out" | sed -n '/Latency Distribution/,/requests in/p'
echo "$out" | grep -E 'Requests/sec|Socket errors|Non-2xx' || true
echo "errors: $(echo "$out" | grep -cE 'Socket errors|Non-2xx' || true) kinds (0: no socket error and no non-2xx answer)"
awk '/VmHWM/ {printf "peak RSS %d MiB\n", $2 / 1024}' "/proc/$pid/status"
awk -v n="$SECS" '{ rss[NR] = $1 } END {
    if (NR < 4) { print "too few RSS samples"; exit }
    k = int(NR / 6); if (k < 1) k = 1
    for (i = 1; i <= k; i++) a += rss[i]; for (i = NR - k + 1; i <= NR; i++) b += rss[i]
    min = rss[1]; max = rss[1]; for (i = 1; i <= NR; i++) { if (rss[i] < min) min = rss[i]; if (rss[i] > max) max = rss[i] }
    printf "RSS over %d samples: min %d MiB, max %d MiB; first sixth %.1f MiB, last sixth %.1f MiB\n", NR, min / 1024, max / 1024, a / k / 1024, b / k / 1024
}' "$work/rss"
printf 'RSS samples (MiB, one a second): '; awk '{printf "%d ", $1 / 1024}' "$work/rss"; echo
