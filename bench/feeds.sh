#!/usr/bin/env bash
# Feed change → updated ratings (issue 22, §3): 1,000 companies with detected software
# and SBOMs over the real NVD 1.1 corpus (../shared/data/nvd-1.1, ~148k CVEs); a new CVE
# for OpenSSH (which every company runs) is imported, then its KEV entry, and the time
# until every affected company is matched again and re-rated is printed — on SQLite and
# on PostgreSQL. Goal: under one minute for 1,000 companies. No peer does this.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${RAMPART_DATA:-../shared/data}
N=${BENCH_COMPANIES:-1000}
work=${BENCH_DIR:-target/bench-feeds}
mkdir -p "$work"
cargo build --release -q -p rampart
cargo build --release -q -p worker --example rematch_bench
bin=./target/release
files=("$DATA"/nvd-1.1/*.json.gz)

echo "== SQLite"
db="$work/feeds.db"
rm -f "$db" "$db-wal" "$db-shm"
$bin/rampart import nvd --db "sqlite://$db" "${files[@]}" 2>&1 | tail -1
$bin/examples/rematch_bench "sqlite://$db" "$N"

echo "== PostgreSQL"
schema="bench_feeds_$$"
export PGOPTIONS='-c client_min_messages=warning'
psql -q -h 127.0.0.1 -U root -d test -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema"
pg="postgres://root@127.0.0.1:5432/test?options=-c%20search_path%3D$schema"
$bin/rampart import nvd --db "$pg" "${files[@]}" 2>&1 | tail -1
$bin/examples/rematch_bench "$pg" "$N"
psql -q -h 127.0.0.1 -U root -d test -c "DROP SCHEMA $schema CASCADE"
