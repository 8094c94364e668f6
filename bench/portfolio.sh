#!/usr/bin/env bash
# A portfolio at size beside the axum hello-world, in one run (wrk, 64 connections,
# 2 threads, BENCH_SECONDS per target): a generated population of BENCH_COMPANIES
# companies (10,000 by default; two ratings each, five findings) imported, put into one
# portfolio through POST /portfolio-add-companies (1,000 rows a request, timed), then
# portfolio-getcompanies sorted and filtered, portfolio-getsummary, and the CSV of every
# row. On SQLite, and on PostgreSQL when BENCH_PG (a database URL) is given.
# Prints a table; the figures go to docs/PERFORMANCE.md by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNECTIONS:-64}
N=${BENCH_COMPANIES:-10000}

if ! command -v wrk >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
cargo build --release -q -p rampart
cargo build --release -q -p api --example hello

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

python3 - "$N" > "$work/companies.jsonl" <<'PY'
import json, sys, random, datetime
random.seed(41)
n = int(sys.argv[1])
now = datetime.datetime.now(datetime.timezone.utc)
t = lambda days: (now - datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
vectors = ["spf", "dkim", "certificate_conf", "certificate_info", "open_ports", "web_headers", "dmarc",
           "it_standardization", "digitalization", "certificate_cve", "vulnerabilities", "sbom"]
sev = ["info", "low", "medium", "high", "critical"]
industries = ["Software Development", "Financial Services", "Hospitals and Health Care", "Retail", "Manufacturing"]
def grade(s):
    return "A" if s >= 90 else "B" if s >= 80 else "C" if s >= 70 else "D" if s >= 60 else "E" if s >= 50 else "F"
for i in range(n):
    d = f"pop{i:05d}.example"
    scores = []
    for days in (40, 2):
        s = round(random.uniform(40, 100), 1)
        comp = {v: {"score": s, "grade": grade(s), "weight": 8.33, "assets_checked": 1, "findings_count": 1} for v in vectors}
        scores.append({"scanned_at": t(days), "score": s, "grade": grade(s), "components": comp})
    findings = [{"risk_vector": random.choice(vectors), "asset": f"www.{d}", "severity": random.choice(sev),
                 "code": f"bench.code{k}", "title": "t", "first_seen": t(40), "last_seen": t(2)} for k in range(5)]
    print(json.dumps({"social_id": f"pop-{i:05d}", "company_name": f"Population {i:05d}", "website": f"https://www.{d}",
                      "domain": d, "industry": random.choice(industries), "scores": scores, "findings": findings}))
PY

slug() { echo "$1" | tr -c 'a-z0-9' '_'; }
run() { # name url [header]
    local out
    out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency ${3:+-H "$3"} "$2")
    local rps p50 p99 non2xx
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(echo "$out" | awk '$1=="50%" {print $2}')
    p99=$(echo "$out" | awk '$1=="99%" {print $2}')
    non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
    printf '%-58s %10s %9s %9s %8s\n' "$1" "$rps" "$p50" "$p99" "${non2xx:-0}"
    echo "$rps" > "$work/$(slug "$1").rps"
}

./target/release/examples/hello 127.0.0.1:18091 &
sleep 0.5
printf '%-58s %10s %9s %9s %8s\n' "target (wrk -t2 -c$CONNS -d${SECS}s)" "req/s" "p50" "p99" "non-2xx"
run "axum hello-world (baseline)" "http://127.0.0.1:18091/"
hello=$(cat "$work/$(slug "axum hello-world (baseline)").rps")

bench_on() { # label db-url port
    local label=$1 db=$2 port=$3 base="http://127.0.0.1:$3"
    ./target/release/rampart import companies --db "$db" "$work/companies.jsonl" >/dev/null 2>&1
    ./target/release/rampart orgs create --db "$db" "Bench $label" >/dev/null 2>&1
    local key
    key=$(./target/release/rampart keys create --db "$db" --name "bench $label" --org "Bench $label" --per-minute 0 --monthly 0 2>/dev/null)
    # Lab mode admits the .test names of the new companies below; no workers: nothing is scanned.
    RAMPART_LOG=warn ./target/release/rampart serve --db "$db" --listen "127.0.0.1:$port" --allow-private --workers 0 &
    local pid=$!
    for _ in $(seq 50); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.2; done
    local pf
    pf=$(curl -s -H "apikey: $key" -H 'content-type: application/json' -d '{"name":"Bench book"}' "$base/portfolio-create" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["portfolio_id"])')
    # 1,000 rows a request, each an existing company's domain: the request's time.
    local t0 t1 worst=0 total=0
    for chunk in $(seq 0 1000 $((N - 1))); do
        python3 -c "import json; print(json.dumps({'portfolio_id': $pf, 'companies': [{'domain': f'pop{i:05d}.example', 'tier': i % 4 + 1, 'tags': ['t%d' % (i % 7)]} for i in range($chunk, min($chunk + 1000, $N))]}))" > "$work/rows.json"
        t0=$(date +%s%N)
        curl -sf -H "apikey: $key" -H 'content-type: application/json' --data-binary @"$work/rows.json" "$base/portfolio-add-companies" >/dev/null
        t1=$(date +%s%N)
        total=$((total + (t1 - t0) / 1000000))
        [ $(((t1 - t0) / 1000000)) -gt "$worst" ] && worst=$(((t1 - t0) / 1000000))
    done
    printf '%-58s %10s\n' "$label: add-companies, 1,000 known domains a request" "worst ${worst} ms, all ${total} ms"
    # 1,000 domains new to Rampart in one request: each a company created, its scan queued.
    python3 -c "import json; print(json.dumps({'portfolio_id': $pf, 'companies': [{'domain': f'new{i:04d}.test'} for i in range(1000)]}))" > "$work/new.json"
    local created
    created=$(curl -s -o "$work/new.out" -w '%{time_total}' -H "apikey: $key" -H 'content-type: application/json' --data-binary @"$work/new.json" "$base/portfolio-add-companies")
    printf '%-58s %10s\n' "$label: add-companies, 1,000 new domains in one request" "${created} s ($(python3 -c "import json; print(json.load(open('$work/new.out'))['counts'])"))"
    local h="apikey: $key"
    run "$label: GET /portfolio-getcompanies?sort=-score" "$base/portfolio-getcompanies?portfolio_id=$pf&sort=-score" "$h"
    run "$label: GET /portfolio-getcompanies (grade=B&tier=1&sort=change_30d)" "$base/portfolio-getcompanies?portfolio_id=$pf&grade=B&tier=1&sort=change_30d&page=3" "$h"
    run "$label: GET /portfolio-getsummary" "$base/portfolio-getsummary?portfolio_id=$pf" "$h"
    local csv
    csv=$(curl -s -o "$work/all.csv" -w '%{time_total}' -H "$h" "$base/portfolio-getcompanies?portfolio_id=$pf&format=csv")
    printf '%-58s %10s\n' "$label: CSV of every row ($(($(wc -l < "$work/all.csv") - 1)) rows)" "${csv} s"
    for t in "$label: GET /portfolio-getcompanies?sort=-score" "$label: GET /portfolio-getcompanies (grade=B&tier=1&sort=change_30d)" "$label: GET /portfolio-getsummary"; do
        awk -v r="$(cat "$work/$(slug "$t").rps")" -v h="$hello" -v t="$t" 'BEGIN { printf "%-58s %9.2fx of hello-world\n", t, r / h }'
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
}

bench_on SQLite "sqlite://$work/bench.db" 18092
if [ -n "${BENCH_PG:-}" ]; then
    bench_on PostgreSQL "$BENCH_PG" 18093
fi
