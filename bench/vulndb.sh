#!/usr/bin/env bash
# The vulnerability database at scale: import rate and peak RSS for the real NVD 1.1
# corpus (../shared/data/nvd-1.1, ~148k CVEs) and a synthetic 300k-record feed; lookup
# latency in-process (search_bench) and over HTTP (wrk, 8 connections).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${RAMPART_DATA:-../shared/data}
SECS=${BENCH_SECONDS:-5}
work=${BENCH_DIR:-target/bench-vulndb}
mkdir -p "$work"

command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
cargo build --release -q -p rampart
cargo build --release -q -p vulndb --example synth --example search_bench
bin=./target/release

import() { # name db files...
    local name=$1 db=$2; shift 2
    if [ -n "${BENCH_REUSE:-}" ] && [ -f "$db" ]; then
        echo "$name: reusing $db (BENCH_REUSE)"
        return
    fi
    rm -f "$db" "$db-wal" "$db-shm"
    /usr/bin/time -f "%M" -o "$work/rss" $bin/rampart import nvd --db "sqlite://$db" "$@" 2>"$work/import.log"
    printf '%-28s %s; peak RSS %d MB\n' "$name" "$(tail -1 "$work/import.log")" "$(( $(cat "$work/rss") / 1024 ))"
}

echo "== import"
if [ -d "$DATA/nvd-1.1" ]; then
    import "real NVD 1.1" "$work/real.db" "$DATA"/nvd-1.1/*.json.gz
else
    echo "skipped the real corpus: $DATA/nvd-1.1 is absent"
fi
[ -f "$work/synth.json.gz" ] || $bin/examples/synth 300000 "$work/synth.json.gz" 2>/dev/null
import "synthetic 300k" "$work/synth.db" "$work/synth.json.gz"

echo "== in-process lookups (p50/p99 over 100 rounds)"
if [ -f "$work/real.db" ]; then
    $bin/examples/search_bench "sqlite://$work/real.db" 100
fi
$bin/examples/search_bench "sqlite://$work/synth.db" 100 \
    "cpe:2.3:a:vendor0:product0:1.2.3" "cpe:2.3:a:vendor1:product0:*" "cpe:2.3:o:vendor2:product0_firmware:5.5.5" \
    "cpe:2.3:a:vendor40:product1:2.0.1"

key=$($bin/rampart keys create --db "sqlite://$work/synth.db" --name bench --per-minute 0 --monthly 0 2>/dev/null)
# Cold: every answer computed (answer reuse off), its records from the in-memory record
# cache (after the first request). Uncached: the same with no record cache, every record
# read from SQLite. Warm: answers reused for 60 s.
for mode in cold uncached warm; do
    secs=0 mib=64
    [ "$mode" = warm ] && secs=60
    [ "$mode" = uncached ] && mib=0
    echo "== HTTP, $mode (wrk -t1 -d${SECS}s, 1 and 8 connections) over the synthetic 300k database"
    RAMPART_LOG=warn $bin/rampart serve --db "sqlite://$work/synth.db" --listen 127.0.0.1:18096 \
        --cve-cache-secs $secs --served-cache-mib $mib &
    pid=$!
    trap 'kill $pid 2>/dev/null || true' EXIT
    sleep 1
    if [ "$mode" = cold ]; then
        # The first request of a product reads its records from SQLite into the cache.
        firsts=$(for v in 0 1 2 3 4 5 6 7 8 9; do
            curl -s -o /dev/null -w '%{time_total}\n' -H "apikey: $key" \
                "http://127.0.0.1:18096/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:vendor$v:product0:*"
        done | sort -n | awk '{printf "%.2f ", $1 * 1000}')
        echo "first request of each of 10 products (500 records each, none in memory yet), ms: $firsts"
    fi
    if [ "$mode" != warm ]; then
        # The ten hot products in turn (bench/rotate.lua): no answer asked twice in a row.
        out=$(wrk -t1 -c1 -d"${SECS}s" --latency -s bench/rotate.lua -H "apikey: $key" "http://127.0.0.1:18096")
        printf '%-78s c=1 %10s req/s  p50 %8s  p90 %8s  p99 %8s\n' "get-cve-from-cpe-id, vendor0..9:product0:* in turn (500 results each)" \
            "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" "$(echo "$out" | awk '$1=="50%" {print $2}')" \
            "$(echo "$out" | awk '$1=="90%" {print $2}')" "$(echo "$out" | awk '$1=="99%" {print $2}')"
    fi
    for path in \
        "vulnerability-describe-cve-id?cve_id=CVE-2001-1000001" \
        "vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:vendor40:product1:2.0.1" \
        "vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:vendor0:product0:1.2.3" \
        "vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:vendor1:product0:*"; do
        # The first request of a path (its pages possibly still on disk) is reported
        # apart; the runs start after it.
        first=$(curl -s -o /dev/null -w '%{time_total}' -H "apikey: $key" "http://127.0.0.1:18096/$path" |
            awk '{printf "%.2f ms", $1 * 1000}')
        for c in 1 8; do
            out=$(wrk -t1 -c$c -d"${SECS}s" --latency -H "apikey: $key" "http://127.0.0.1:18096/$path")
            printf '%-78s c=%s %10s req/s  p50 %8s  p99 %8s  %s, first %s\n' "$path" "$c" \
                "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" "$(echo "$out" | awk '$1=="50%" {print $2}')" \
                "$(echo "$out" | awk '$1=="99%" {print $2}')" "$(curl -s -H "apikey: $key" "http://127.0.0.1:18096/$path" | wc -c) bytes" \
                "$first"
        done
    done
    kill $pid
    wait $pid 2>/dev/null || true
done
