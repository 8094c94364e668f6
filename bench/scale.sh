#!/usr/bin/env bash
# Scale-out figures, side by side in one run on this machine (issue 21 §7):
#   1. the queue: empty jobs leased and completed per second by 1, 4 and 16 workers,
#      SQLite and PostgreSQL (crates/store/examples/queue_bench.rs);
#   2. NVD 1.1 import (../shared/data/nvd-1.1, BENCH_NVD_FILES to choose) on SQLite and
#      on PostgreSQL;
#   3. the API on SQLite and on PostgreSQL (the same data: `rampart migrate`) beside the
#      axum hello-world: scores, company info, CVE-by-CPE (wrk, 64 connections, 4 s);
#   4. lab company scans per minute with 1 and 2 `rampart worker` processes on
#      PostgreSQL (a generated lab of BENCH_COMPANIES companies, 200 by default).
# Needs PostgreSQL at 127.0.0.1:5432 (trust auth, database `test`; each run works in
# schemas of its own, dropped at the end). Figures go to docs/PERFORMANCE.md by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${RAMPART_DATA:-../shared/data}
SECS=${BENCH_SECONDS:-4}
CONNS=${BENCH_CONNECTIONS:-64}
COMPANIES=${BENCH_COMPANIES:-200}
PG=${RAMPART_TEST_POSTGRES:-postgres://root@127.0.0.1:5432/test}

command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
command -v psql >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq postgresql-client) >/dev/null
command -v curl >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq curl) >/dev/null
cargo build --release -q -p rampart
cargo build --release -q -p api --example hello
cargo build --release -q -p store --example queue_bench
bin=./target/release
export PGOPTIONS='-c client_min_messages=warning'

work=$(mktemp -d)
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    wait 2>/dev/null || true
    # The schemas made (in subshells: `$(schema …)`) are listed in a file.
    while read -r s; do psql -q "$PG" -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done \
        < <(cat "$work/schemas" 2>/dev/null)
    rm -rf "$work"
}
trap cleanup EXIT
schema() { # a new schema; prints its database URL
    local s="bench_$$_$1"
    psql -q "$PG" -c "DROP SCHEMA IF EXISTS $s CASCADE; CREATE SCHEMA $s" >/dev/null
    echo "$s" >>"$work/schemas"
    echo "$PG?options=-c%20search_path%3D$s"
}

echo "== 1. the queue: empty jobs, leased and completed"
$bin/examples/queue_bench "${BENCH_JOBS:-5000}" 1,4,16

echo
echo "== 2. NVD 1.1 import"
if [ -n "${BENCH_NVD_FILES:-}" ]; then
    # shellcheck disable=SC2206
    nvd=($BENCH_NVD_FILES)
else
    nvd=("$DATA"/nvd-1.1/*.json.gz)
fi
sqlite_db="sqlite://$work/api.db"
if [ -e "${nvd[0]}" ]; then
    t0=$(date +%s.%N)
    $bin/rampart import nvd --db "$sqlite_db" "${nvd[@]}" 2>"$work/sqlite-import.log"
    t1=$(date +%s.%N)
    printf '%-12s %s (%.1f s wall)\n' "SQLite" "$(tail -1 "$work/sqlite-import.log")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
    pg_import=$(schema import)
    t0=$(date +%s.%N)
    $bin/rampart import nvd --db "$pg_import" "${nvd[@]}" 2>"$work/pg-import.log"
    t1=$(date +%s.%N)
    printf '%-12s %s (%.1f s wall)\n' "PostgreSQL" "$(tail -1 "$work/pg-import.log")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
    cpe="cpe:2.3:a:openbsd:openssh:7.4"
else
    echo "skipped: $DATA/nvd-1.1 is absent; the API runs on the sample CVEs"
    $bin/rampart import cves --db "$sqlite_db" crates/vulndb/sample/cves.jsonl 2>/dev/null
    cpe="cpe:2.3:a:f5:nginx:1.18.0"
fi

echo
echo "== 3. the API: SQLite and PostgreSQL (the same data), beside the axum hello-world"
$bin/rampart import companies --db "$sqlite_db" crates/intel/sample/companies.jsonl 2>/dev/null
key=$($bin/rampart keys create --db "$sqlite_db" --name bench --per-minute 0 --monthly 0 2>/dev/null)
pg_api=$(schema api)
$bin/rampart migrate --from "$sqlite_db" --to "$pg_api" >/dev/null 2>&1
RAMPART_LOG=warn $bin/rampart serve --db "$sqlite_db" --listen 127.0.0.1:18190 &
RAMPART_LOG=warn $bin/rampart serve --db "$pg_api" --listen 127.0.0.1:18191 &
$bin/examples/hello 127.0.0.1:18192 &
for port in 18190 18191 18192; do
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
done
row() { # name url
    local out rps p99 non2xx
    out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -H "apikey: $key" "$2")
    rps=$(echo "$out" | awk '/Requests\/sec/ {printf "%.0f", $2}')
    p99=$(echo "$out" | awk '$1=="99%" {print $2}')
    non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
    printf '%-44s %10s %10s %8s\n' "$1" "$rps" "$p99" "${non2xx:-0}"
    echo "$rps" >"$work/rps"
}
printf '%-44s %10s %10s %8s\n' "target (wrk -t2 -c$CONNS -d${SECS}s)" "req/s" "p99" "non-2xx"
row "axum hello-world" "http://127.0.0.1:18192/"
hello=$(cat "$work/rps")
for op in "scores|/underwriter-getcompanyscores?social_id=acme-robotics" \
    "company info|/underwriter-getcompanyinfo?social_id=acme-robotics" \
    "CVE by CPE|/vulnerability-get-cve-from-cpe-id?cpe=$cpe"; do
    name=${op%%|*}
    path=${op#*|}
    row "$name, SQLite" "http://127.0.0.1:18190$path"
    s=$(cat "$work/rps")
    row "$name, PostgreSQL" "http://127.0.0.1:18191$path"
    p=$(cat "$work/rps")
    awk -v s="$s" -v p="$p" -v h="$hello" -v n="$name" \
        'BEGIN { printf "  %-42s SQLite %.2fx, PostgreSQL %.2fx of hello-world; PostgreSQL/SQLite %.2f\n", n, s / h, p / h, p / s }'
done
kill $(jobs -p) 2>/dev/null || true
wait 2>/dev/null || true

echo
echo "== 4. lab company scans with 1 and 2 worker processes (PostgreSQL, $COMPANIES companies)"
python3 - "$work" "$COMPANIES" <<'EOF'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
zones, hosts, companies = [], [], []
for i in range(n):
    address = f"127.82.{i // 200}.{i % 200 + 1}"
    zones.append({"origin": f"bench{i}.test", "records": [
        f"@ A {address}", f"www A {address}", "@ MX 10 www", '@ TXT "v=spf1 -all"',
        '_dmarc TXT "v=DMARC1; p=reject"']})
    hosts.append({"name": f"www.bench{i}.test", "address": address, "services": [{"port": 80, "kind": "http"}]})
    companies.append({"social_id": f"bench{i}", "company_name": f"Bench {i} Ltd",
                      "website": f"http://www.bench{i}.test", "domain": f"bench{i}.test"})
json.dump({"dns": {"address": "127.82.255.53"}, "port_map": {"53": 10053}, "zones": zones, "hosts": hosts},
          open(f"{work}/lab.json", "w"))
with open(f"{work}/companies.jsonl", "w") as f:
    for c in companies:
        f.write(json.dumps(c) + "\n")
EOF
RAMPART_LOG=error $bin/rampart lab up --file "$work/lab.json" --out "$work/lab" >/dev/null 2>&1 &
for _ in $(seq 300); do [ -f "$work/lab/trust-anchor.txt" ] && break; sleep 0.2; done
sleep 0.5
# Worker processes × jobs each: one process alone, two side by side.
for shape in 1x1 2x1 1x4 2x4; do
    workers=${shape%x*}
    each=${shape#*x}
    db=$(schema "scan$shape")
    $bin/rampart import companies --db "$db" "$work/companies.jsonl" 2>/dev/null
    $bin/rampart jobs scan --db "$db" --all 2>/dev/null
    s=${db##*%3D}
    t0=$(date +%s.%N)
    pids=()
    for _ in $(seq "$workers"); do
        RAMPART_LOG=warn $bin/rampart worker --db "$db" --lab "$work/lab" --concurrency "$each" --rescan-every off --sync-every off >/dev/null 2>&1 &
        pids+=($!)
    done
    while [ "$(psql -tAq "$PG" -c "SELECT count(*) FROM $s.jobs WHERE status IN ('queued', 'running')")" != 0 ]; do
        sleep 0.1
    done
    t1=$(date +%s.%N)
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    done_n=$(psql -tAq "$PG" -c "SELECT count(*) FROM $s.jobs WHERE status = 'done'")
    awk -v n="$done_n" -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v w="$workers" -v e="$each" \
        'BEGIN { printf "%d worker process(es) x %d jobs at once: %d scans in %.1f s, %.0f scans/min\n", w, e, n, t, n / t * 60 }'
done
