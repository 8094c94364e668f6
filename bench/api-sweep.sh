#!/usr/bin/env bash
# Every one of the 44 operations (the 43 of the spec and score history) under wrk (64
# connections, 4 s each: BENCH_CONNECTIONS, BENCH_SECONDS), on SQLite and on PostgreSQL
# (the same data: the demo's database with the real NVD 2014 feed, copied with `rampart
# migrate`), beside the axum hello-world in the same run (measured again after each
# measurement; each is compared with the better hello-world around it). Prints one table: answer size,
# req/s and p99 on each backend, the ratio to the hello-world, PostgreSQL/SQLite, and MB/s
# for answers of 16 KB or more. Goals (issue 21 §6): answers < 16 KB at ≥ 0.5× the
# hello-world with p99 ≤ 5 ms, larger ones p99 ≤ 20 ms, PostgreSQL within 2× of SQLite.
# Needs PostgreSQL at 127.0.0.1:5432 for the PostgreSQL columns (skipped without it).
# The writes are repeated requests: after the first, most answer "already done" (200) or
# 400, which the non-2xx column shows. BENCH_ONLY=REGEX runs only the operations whose
# "METHOD /path" matches (e.g. BENCH_ONLY='^(POST|PUT|DELETE)').
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${RAMPART_DATA:-../shared/data}
SECS=${BENCH_SECONDS:-4}
CONNS=${BENCH_CONNECTIONS:-64}
PG=${RAMPART_TEST_POSTGRES:-postgres://root@127.0.0.1:5432/test}
export PGOPTIONS='-c client_min_messages=warning'

command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
command -v curl >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq curl) >/dev/null
cargo build --release -q -p rampart
cargo build --release -q -p api --example hello
bin=./target/release
work=$(mktemp -d)
schema="sweep_$$"
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    wait 2>/dev/null || true
    psql -q "$PG" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# The demo's database: the lab scanned and rated, then the demo stopped.
db="sqlite://$work/demo.db"
RAMPART_LOG=error $bin/rampart demo --db "$work/demo.db" --listen 127.0.0.1:18300 --lab-octet 83 >"$work/demo.out" 2>&1 &
demo=$!
for _ in $(seq 600); do grep -q "Scanned and rated" "$work/demo.out" && break; sleep 0.2; done
kill "$demo"; wait "$demo" 2>/dev/null || true
if [ -f "$DATA/nvd-1.1/nvdcve-1.1-2014.json.gz" ]; then
    $bin/rampart import nvd --db "$db" "$DATA/nvd-1.1/nvdcve-1.1-2014.json.gz" 2>/dev/null
    cpe="cpe:2.3:a:openbsd:openssh:6.6"
else
    echo "the NVD 2014 feed is absent ($DATA/nvd-1.1): the CVE operations run on the lab's NVD records"
    cpe="cpe:2.3:a:openbsd:openssh:9.9"
fi
key=$($bin/rampart keys create --db "$db" --name sweep --per-minute 0 --monthly 0 2>/dev/null)
mkey=$($bin/rampart keys create --db "$db" --name sweep-monitor --scopes monitor --company kestrel-logistics \
    --per-minute 0 --monthly 0 2>/dev/null)
backends=("sqlite|$db|18301")
if psql -q "$PG" -c "CREATE SCHEMA $schema" >/dev/null 2>&1; then
    pgdb="$PG?options=-c%20search_path%3D$schema"
    $bin/rampart migrate --from "$db" --to "$pgdb" >/dev/null 2>&1
    backends+=("postgresql|$pgdb|18302")
else
    echo "PostgreSQL at $PG cannot be reached: SQLite only"
fi
for b in "${backends[@]}"; do
    IFS='|' read -r _ url port <<<"$b"
    RAMPART_LOG=error $bin/rampart serve --db "$url" --listen "127.0.0.1:$port" &
done
$bin/examples/hello 127.0.0.1:18303 &
for port in 18301 18302 18303; do
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
done

# The operations, one "METHOD /path[?query] [body]" each; monitor-* paths use the monitor key.
. bench/ops.sh

measure() { # method url key body -> "rps p99_ms non2xx"
    local method=$1 url=$2 k=$3 body=$4 script="$work/req.lua" out
    wrk_script "$method" "$k" "$body" "$script"
    out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s "$script" "$url")
    echo "$out" | awk '
        /Requests\/sec/ { rps = $2 }
        $1 == "99%" { v = $2; if (v ~ /us$/) p = v / 1000; else if (v ~ /ms$/) p = v + 0; else if (v ~ /s$/) p = v * 1000; }
        /Non-2xx/ { bad = $NF }
        END { printf "%.0f %.2f %d\n", rps, p, bad }'
}

# Each server answers requests for 2 s before the first measurement (a fresh process's
# first seconds are slower: page cache, allocator, the CPU's clock).
for port in 18301 18302 18303; do
    wrk -t2 -c"$CONNS" -d2s -H "apikey: $key" \
        "http://127.0.0.1:$port/general-getdomain-by-socialid?social_id=kestrel-logistics" >/dev/null 2>&1 || true
done

# The hello-world is measured before the first measurement and again after each one
# (each operation on each backend): a measurement is compared with the better of the two
# hello-worlds around it (this machine's speed drifts by up to 2x within a run, and
# switches between a fast and a slow state within seconds; the faster baseline is the
# harder comparison). Its p99 is printed too (the worst around the operation): on these
# 2 cores, shared with wrk, it is itself 4-6 ms at 64 connections.
hello_once() { read -r r p _ <<<"$(measure GET http://127.0.0.1:18303/ none "")"; echo "$r $p"; }
read -r hello_before hello_p99_before <<<"$(hello_once)"
hello_all=("$hello_before")
hello_p99_all=("$hello_p99_before")
printf 'axum hello-world measured before the first measurement and after each (wrk -t2 -c%s -d%ss); x = req/s over the\n' "$CONNS" "$SECS"
printf 'better of the two around it (the columns "hello": for SQLite and PostgreSQL, with the worst p99 around). A p99 over the\n'
printf 'goal (5 ms under 16 KB, 20 ms above), or a rate under 0.5x the hello-world before it (under 16 KB), is measured\n'
printf 'once more, shown as first/second: the second counts.\n\n'
printf '%-46s %8s | %13s %11s %5s %6s | %13s %11s %5s %6s | %6s | %7s %7s %6s\n' operation bytes "SQLite" p99ms "x" non2xx "PgSQL" p99ms "x" non2xx "Pg/SL" hello "hello" p99ms
n=0; fast=0; small=0; pg_fast=0; again=0
for op in "${ops[@]}"; do
    [[ -n "${BENCH_ONLY:-}" && ! "$op" =~ ${BENCH_ONLY} ]] && continue
    op_parts "$op"
    bytes=$(curl -s -o /dev/null -w '%{size_download}' -X "$method" -H "apikey: $k" \
        ${body:+-H 'Content-Type: application/json' --data "$body"} "http://127.0.0.1:18301$path")
    limit=5
    [ "$bytes" -ge 16384 ] && limit=20
    results=()
    hello_p99=0
    for b in "${backends[@]}"; do
        IFS='|' read -r name _ port <<<"$b"
        # The first request of a write does the write, and the first of a read fills the
        # caches (the tail risk's simulation takes a tenth of a second): done before the
        # measurement on every backend, as the size request above does it on SQLite.
        curl -s -o /dev/null -X "$method" -H "apikey: $k" \
            ${body:+-H 'Content-Type: application/json' --data "$body"} "http://127.0.0.1:$port$path"
        read -r rps p99 bad <<<"$(measure "$method" "http://127.0.0.1:$port$path" "$k" "$body")"
        shown=$p99
        shown_rps=$rps
        # Under the goal (p99, or under 0.5x the hello-world before it for an answer under
        # 16 KB): measured once more, both shown, the second counts.
        if awk -v p="$p99" -v l="$limit" -v r="$rps" -v h="$hello_before" -v b="$bytes" \
            'BEGIN { exit !(p > l || (b < 16384 && r < 0.5 * h)) }'; then
            again=$((again + 1))
            read -r rps p99 bad <<<"$(measure "$method" "http://127.0.0.1:$port$path" "$k" "$body")"
            shown="$shown/$p99"
            shown_rps="$shown_rps/$rps"
        fi
        read -r hello_after hello_p99_after <<<"$(hello_once)"
        hello_all+=("$hello_after")
        hello_p99_all+=("$hello_p99_after")
        hello_rps=$(awk -v a="$hello_before" -v b="$hello_after" 'BEGIN { print (a > b ? a : b) }')
        hello_p99=$(awk -v a="$hello_p99_before" -v b="$hello_p99_after" -v c="$hello_p99" \
            'BEGIN { m = (a > b ? a : b); if (c > m) m = c; printf "%.2f", m }')
        hello_before=$hello_after
        hello_p99_before=$hello_p99_after
        results+=("$name $rps $p99 $bad $shown $hello_rps $shown_rps")
    done
    line=$(printf '%-46s %8s' "$method ${path%%\?*}" "$bytes")
    sl_rps=0
    hellos=""
    for result in "${results[@]}"; do
        read -r name rps p99 bad shown hello_rps shown_rps <<<"$result"
        hellos+=$(printf ' %7s' "$hello_rps")
        ratio=$(awk -v r="$rps" -v h="$hello_rps" 'BEGIN { printf "%.2f", r / h }')
        line+=$(printf ' | %13s %11s %5s %6s' "$shown_rps" "$shown" "$ratio" "$bad")
        met=0
        if [ "$bytes" -lt 16384 ]; then
            awk -v r="$ratio" -v p="$p99" 'BEGIN { exit !(r >= 0.5 && p <= 5) }' && met=1
        fi
        if [ "$name" = sqlite ]; then
            sl_rps=$rps
            n=$((n + 1))
            [ "$bytes" -lt 16384 ] && small=$((small + 1))
            fast=$((fast + met))
        else
            pg_fast=$((pg_fast + met))
            line+=$(awk -v p="$rps" -v s="$sl_rps" 'BEGIN { printf " | %6.2f", (s > 0 ? p / s : 0) }')
        fi
    done
    [ "${#backends[@]}" -eq 1 ] && line+=$(printf ' | %13s %11s %5s %6s | %6s' - - - - -) && hellos+=$(printf ' %7s' -)
    line+=$(printf ' |%s %6s' "$hellos" "$hello_p99")
    if [ "$bytes" -ge 16384 ]; then
        line+=$(awk -v b="$bytes" -v r="$sl_rps" 'BEGIN { printf "  (%.0f MB/s)", b * r / 1e6 }')
    fi
    echo "$line"
done
echo
printf 'axum hello-world over the run (%s measurements): %s to %s req/s, p99 %s to %s ms\n' "${#hello_all[@]}" \
    "$(printf '%s\n' "${hello_all[@]}" | sort -n | head -1)" "$(printf '%s\n' "${hello_all[@]}" | sort -n | tail -1)" \
    "$(printf '%s\n' "${hello_p99_all[@]}" | sort -g | head -1)" "$(printf '%s\n' "${hello_p99_all[@]}" | sort -g | tail -1)"
echo
echo "SQLite: $fast of $small operations with answers under 16 KB at >= 0.5x the hello-world and p99 <= 5 ms ($n operations)"
[ "${#backends[@]}" -gt 1 ] && echo "PostgreSQL: $pg_fast of $small"
echo "measurements taken again (p99 or rate under the goal at the first): $again"
