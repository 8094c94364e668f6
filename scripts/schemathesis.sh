#!/usr/bin/env bash
# schemathesis (PyPI, in target/venv-st) against `rampart serve` over a fresh database seeded
# with the sample companies and CVEs, with every check on; fails on any failure. The
# OpenAPI document is the server's own (/openapi.json). Time bounded by ST_MAX_TIME
# (seconds, default 60); the seed is fixed (ST_SEED, default 1) so a run can be repeated.
set -euo pipefail
cd "$(dirname "$0")/.."
# A venv of its own (its dependencies differ from the OpenAPI validator's).
if ! target/venv-st/bin/python -c 'import schemathesis' >/dev/null 2>&1; then
    mkdir -p target
    python3 -m venv target/venv-st
    target/venv-st/bin/pip install --quiet --disable-pip-version-check 'schemathesis==4.32.5'
fi
bin=${RAMPART_BIN:-target/debug/rampart}
dir=$(mktemp -d)
db="sqlite://$dir/st.db"
"$bin" import companies --db "$db" crates/intel/sample/companies.jsonl >/dev/null 2>&1
"$bin" import cves --db "$db" crates/vulndb/sample/cves.jsonl >/dev/null 2>&1
key=$("$bin" keys create --db "$db" --name schemathesis --scopes general,vulnerability,underwriter,monitor \
    --company acme-robotics --per-minute 0 --monthly 0)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The per-address failure limit is off: schemathesis's authentication checks send many
# requests without a key from one address (the limit has its own contract test).
RAMPART_LOG=warn "$bin" serve --db "$db" --listen "127.0.0.1:$port" --auth-failures-per-minute 0 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
target/venv-st/bin/st --config-file schemathesis.toml --no-color run "http://127.0.0.1:$port/openapi.json" \
    -H "apikey: $key" --checks all --max-time "${ST_MAX_TIME:-60}" --seed "${ST_SEED:-1}"
