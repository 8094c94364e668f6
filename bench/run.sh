#!/usr/bin/env bash
# API throughput and latency against a bare axum hello-world, in the same run, on
# this machine: wrk, 64 connections, 2 threads, 10 s per target (BENCH_SECONDS).
# Prints a table; the figures go to docs/PERFORMANCE.md by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNECTIONS:-64}

if ! command -v wrk >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
cargo build --release -q -p rampart
cargo build --release -q -p api --example hello

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
db="sqlite://$work/bench.db"
./target/release/rampart import cves --db "$db" crates/vulndb/sample/cves.jsonl 2>/dev/null
./target/release/rampart import companies --db "$db" crates/intel/sample/companies.jsonl 2>/dev/null
key=$(./target/release/rampart keys create --db "$db" --name bench --per-minute 0 --monthly 0 2>/dev/null)

RAMPART_LOG=warn ./target/release/rampart serve --db "$db" --listen 127.0.0.1:18090 &
api_pid=$!
./target/release/examples/hello 127.0.0.1:18091 &
hello_pid=$!
sleep 1

slug() { echo "$1" | tr -c 'a-z0-9' '_'; }
run() { # name url [header]
    local out
    if [ -n "${3:-}" ]; then
        out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -H "$3" "$2")
    else
        out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "$2")
    fi
    local rps p50 p99 non2xx
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(echo "$out" | awk '$1=="50%" {print $2}')
    p99=$(echo "$out" | awk '$1=="99%" {print $2}')
    non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
    printf '%-48s %12s %10s %10s %8s\n' "$1" "$rps" "$p50" "$p99" "${non2xx:-0}"
    echo "$rps" > "$work/$(slug "$1").rps"
}

printf '%-48s %12s %10s %10s %8s\n' "target (wrk -t2 -c$CONNS -d${SECS}s)" "req/s" "p50" "p99" "non-2xx"
run "axum hello-world (baseline)" "http://127.0.0.1:18091/"
run "GET /underwriter-getcompanyscores" "http://127.0.0.1:18090/underwriter-getcompanyscores?social_id=acme-robotics" "apikey: $key"
run "GET /general-getsocialid-by-domain" "http://127.0.0.1:18090/general-getsocialid-by-domain?domain=acme-robotics.example" "apikey: $key"

hello=$(cat "$work/$(slug "axum hello-world (baseline)").rps")
for t in "GET /underwriter-getcompanyscores" "GET /general-getsocialid-by-domain"; do
    r=$(cat "$work/$(slug "$t").rps")
    awk -v r="$r" -v h="$hello" -v t="$t" 'BEGIN { printf "%-48s %11.2fx of hello-world\n", t, r / h }'
done
awk '/VmHWM/ {printf "rampart serve peak RSS: %d MB\n", $2 / 1024}' "/proc/$api_pid/status"
awk '/VmHWM/ {printf "hello-world peak RSS:   %d MB\n", $2 / 1024}' "/proc/$hello_pid/status"
