#!/usr/bin/env bash
# Instructions per request of API operations, two builds side by side, under callgrind:
#
#   bench/instructions.sh BEFORE_BINARY AFTER_BINARY [PATH...]
#
# The deterministic twin of bench/cpu-compare.sh: CPU time per request moves by ±10 %
# between runs on this machine, an instruction count does not, so a change that
# cpu-compare flags is settled here. Each build serves its own copy of the demo database
# (made by BEFORE, migrated by AFTER) on SQLite under valgrind's callgrind, with the data
# versions polled once a minute (no background reads); it is asked PATH 50 times, then,
# started afresh, 350 times: the difference of the two totals over 300 is the count per
# request (start-up and shutdown cancel out). PATHs default to a few of bench/ops.sh's.
# Requests are sequential (curl), so the figure is the work of one request, not of a
# loaded server's batching. Needs valgrind (Debian's package).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BINARY AFTER_BINARY [PATH...]" >&2; exit 2; }
before=$(realpath "$1"); after=$(realpath "$2"); shift 2
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(
    "/general-getsocialid-by-domain?domain=kestrelfreight.test"
    "/underwriter-getcompanyinfo?social_id=kestrel-logistics"
    "/underwriter-getcompanysbom?social_id=kestrel-logistics"
    "/underwriter-getcompanyscores?social_id=kestrel-logistics"
    "/vulnerability-search-by-vendor?vendor=openbsd&product=openssh"
)
command -v valgrind >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq valgrind) >/dev/null
PORT=${BENCH_PORT:-29711}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

RAMPART_LOG=error "$before" demo --db "$work/demo.db" --listen 127.0.0.1:$((PORT + 1)) --lab-octet 86 >"$work/demo.out" 2>&1 &
demo=$!
for _ in $(seq 600); do grep -q "Scanned and rated" "$work/demo.out" && break; sleep 0.2; done
kill "$demo"; wait "$demo" 2>/dev/null || true
key=$("$before" keys create --db "sqlite://$work/demo.db" --name instructions --per-minute 0 --monthly 0 2>/dev/null)
# The database with its write-ahead log (the demo was stopped, not closed).
for side in before after; do
    for f in "" -wal -shm; do [ -f "$work/demo.db$f" ] && cp "$work/demo.db$f" "$work/$side.db$f"; done
done

# run BINARY DB PATH N -> the instructions of a server that answered PATH N times
run() {
    local bin=$1 db=$2 path=$3 n=$4 vpid
    rm -f "$work"/cg.out.*
    RAMPART_LOG=error valgrind --tool=callgrind --callgrind-out-file="$work/cg.out.%p" \
        "$bin" serve --db "sqlite://$db" --listen "127.0.0.1:$PORT" --version-poll-ms 60000 >"$work/serve.out" 2>&1 &
    vpid=$!
    for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.5; done
    for _ in $(seq "$n"); do curl -s -o /dev/null -H "apikey: $key" "http://127.0.0.1:$PORT$path"; done
    kill -TERM "$vpid"; wait "$vpid" 2>/dev/null || true
    grep -h '^summary:\|^totals:' "$work"/cg.out.* | awk '{ s += $2 } END { print s + 0 }'
}

printf 'Instructions per request (callgrind, sequential requests, SQLite)\n\n'
printf '%-64s %12s %12s %8s\n' operation before after change
for path in "${paths[@]}"; do
    declare -A per=()
    for side in before after; do
        bin=$before; [ "$side" = after ] && bin=$after
        i1=$(run "$bin" "$work/$side.db" "$path" 50)
        i2=$(run "$bin" "$work/$side.db" "$path" 350)
        per[$side]=$(( (i2 - i1) / 300 ))
    done
    printf '%-64s %12s %12s %8s\n' "${path%%\?*}" "${per[before]}" "${per[after]}" \
        "$(awk -v b="${per[before]}" -v a="${per[after]}" 'BEGIN { printf "%+.1f%%", (b > 0 ? 100 * (a - b) / b : 0) }')"
done
