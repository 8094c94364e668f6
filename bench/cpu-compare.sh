#!/usr/bin/env bash
# Server CPU per request of every API operation, two builds side by side in one run:
#
#   bench/cpu-compare.sh BEFORE_BINARY AFTER_BINARY
#
# (two release builds of `rampart`, e.g. one built from a worktree of the commit before a
# restructuring). Each serves its own copy of the same demo database (the lab scanned
# and rated, plus the real NVD 2014 feed when ../shared/data has it), on SQLite and,
# when PostgreSQL runs at 127.0.0.1:5432, on PostgreSQL (each build in a schema of its
# own). Every operation is driven by wrk (BENCH_CONNECTIONS, default 16; BENCH_SECONDS,
# default 3) against each server in turn, in the order before, after, after, before
# (the machine's speed drifts within a run); the server's CPU time (user + system, from
# /proc/PID/stat) over the requests it answered is its CPU per request. Prints, per
# operation and backend, microseconds of CPU per request before and after, and the
# change; the last line counts the operations whose CPU per request rose by more than
# 5 %.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 BEFORE_BINARY AFTER_BINARY" >&2; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
DATA=${RAMPART_DATA:-../shared/data}
SECS=${BENCH_SECONDS:-3}
CONNS=${BENCH_CONNECTIONS:-16}
PG=${RAMPART_TEST_POSTGRES:-postgres://root@127.0.0.1:5432/test}
export PGOPTIONS='-c client_min_messages=warning'
command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
work=$(mktemp -d)
schemas=("cpu_before_$$" "cpu_after_$$")
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    wait 2>/dev/null || true
    for s in "${schemas[@]}"; do psql -q "$PG" -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# The demo's database, made by the BEFORE build (the AFTER build migrates its copy).
RAMPART_LOG=error "$before" demo --db "$work/before.db" --listen 127.0.0.1:18310 --lab-octet 84 >"$work/demo.out" 2>&1 &
demo=$!
for _ in $(seq 600); do grep -q "Scanned and rated" "$work/demo.out" && break; sleep 0.2; done
kill "$demo"; wait "$demo" 2>/dev/null || true
db="sqlite://$work/before.db"
if [ -f "$DATA/nvd-1.1/nvdcve-1.1-2014.json.gz" ]; then
    "$before" import nvd --db "$db" "$DATA/nvd-1.1/nvdcve-1.1-2014.json.gz" 2>/dev/null
    cpe="cpe:2.3:a:openbsd:openssh:6.6"
else
    cpe="cpe:2.3:a:openbsd:openssh:9.9"
fi
key=$("$before" keys create --db "$db" --name cpu --per-minute 0 --monthly 0 2>/dev/null)
mkey=$("$before" keys create --db "$db" --name cpu-monitor --scopes monitor --company kestrel-logistics \
    --per-minute 0 --monthly 0 2>/dev/null)
cp "$work/before.db" "$work/after.db"

# name|binary|url|port
servers=("sqlite-before|$before|sqlite://$work/before.db|18311" "sqlite-after|$after|sqlite://$work/after.db|18312")
if psql -q "$PG" -c "CREATE SCHEMA ${schemas[0]}" >/dev/null 2>&1 && psql -q "$PG" -c "CREATE SCHEMA ${schemas[1]}" >/dev/null 2>&1; then
    for i in 0 1; do
        bin=$before; [ "$i" = 1 ] && bin=$after
        url="$PG?options=-c%20search_path%3D${schemas[$i]}"
        "$bin" migrate --from "sqlite://$work/$([ "$i" = 0 ] && echo before || echo after).db" --to "$url" >/dev/null 2>&1
        servers+=("postgresql-$([ "$i" = 0 ] && echo before || echo after)|$bin|$url|$((18313 + i))")
    done
else
    echo "PostgreSQL at $PG cannot be reached: SQLite only"
fi
declare -A pid
for s in "${servers[@]}"; do
    IFS='|' read -r name bin url port <<<"$s"
    RAMPART_LOG=error "$bin" serve --db "$url" --listen "127.0.0.1:$port" &
    pid[$name]=$!
done
for s in "${servers[@]}"; do
    IFS='|' read -r _ _ _ port <<<"$s"
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
done

. bench/ops.sh

# port_of NAME: the port of the server NAME (sqlite-before, postgresql-after, ...).
port_of() {
    local s n p
    for s in "${servers[@]}"; do
        IFS='|' read -r n _ _ p <<<"$s"
        if [ "$n" = "$1" ]; then echo "$p"; return 0; fi
    done
    return 1
}

ticks=$(getconf CLK_TCK)
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# method url key body pid -> "requests cpu_ticks"
measure() {
    local method=$1 url=$2 k=$3 body=$4 p=$5 script="$work/req.lua" out c0 c1
    wrk_script "$method" "$k" "$body" "$script"
    c0=$(cpu_of "$p")
    out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" -s "$script" "$url")
    c1=$(cpu_of "$p")
    echo "$out" | awk -v c=$((c1 - c0)) '/requests in/ { printf "%d %d\n", $1, c }'
}

# Each server answers requests for 2 s first (a fresh process's first seconds are slower).
for s in "${servers[@]}"; do
    IFS='|' read -r _ _ _ port <<<"$s"
    wrk -t2 -c"$CONNS" -d2s -H "apikey: $key" \
        "http://127.0.0.1:$port/general-getdomain-by-socialid?social_id=kestrel-logistics" >/dev/null 2>&1 || true
done

printf 'CPU per request (user + system of the server, µs), wrk -t2 -c%s -d%ss, order before, after, after, before\n\n' "$CONNS" "$SECS"
printf '%-46s | %9s %9s %7s | %9s %9s %7s\n' operation "SL before" "SL after" change "PG before" "PG after" change
worse=0; total=0
for op in "${ops[@]}"; do
    [[ -n "${BENCH_ONLY:-}" && ! "$op" =~ ${BENCH_ONLY} ]] && continue
    op_parts "$op"
    line=$(printf '%-46s' "$method ${path%%\?*}")
    for backend in sqlite postgresql; do
        [ -n "${pid[$backend-before]:-}" ] || { line+=$(printf ' | %9s %9s %7s' - - -); continue; }
        declare -A req=() cpu=()
        for side in before after; do
            port=$(port_of "$backend-$side")
            # The first request of a write does the write; the first of a read fills the caches.
            curl -s -o /dev/null -X "$method" -H "apikey: $k" \
                ${body:+-H 'Content-Type: application/json' --data "$body"} "http://127.0.0.1:$port$path"
            req[$side]=0; cpu[$side]=0
        done
        for side in before after after before; do
            port=$(port_of "$backend-$side")
            read -r r c <<<"$(measure "$method" "http://127.0.0.1:$port$path" "$k" "$body" "${pid[$backend-$side]}")"
            req[$side]=$((req[$side] + r)); cpu[$side]=$((cpu[$side] + c))
        done
        read -r b a ch <<<"$(awk -v rb="${req[before]}" -v cb="${cpu[before]}" -v ra="${req[after]}" -v ca="${cpu[after]}" -v t="$ticks" \
            'BEGIN { b = cb / t * 1e6 / (rb > 0 ? rb : 1); a = ca / t * 1e6 / (ra > 0 ? ra : 1);
                     printf "%.1f %.1f %+.1f%%\n", b, a, (b > 0 ? 100 * (a - b) / b : 0) }')"
        line+=$(printf ' | %9s %9s %7s' "$b" "$a" "$ch")
        total=$((total + 1))
        awk -v c="${ch%\%}" 'BEGIN { exit !(c > 5) }' && worse=$((worse + 1))
    done
    echo "$line"
done
echo
echo "operations × backends whose CPU per request rose by more than 5 %: $worse of $total"
