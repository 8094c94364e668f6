#!/usr/bin/env bash
# The test command: installs what the tests need, then runs every check.
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true
cd "$(dirname "$0")/.."
# Free disk before the build (a full debug build with its tests takes several GB).
df -h . | tail -1 | awk '{print "disk: " $4 " free of " $2}'

command -v cargo-nextest >/dev/null 2>&1 || cargo install cargo-nextest --locked

# Independent peers the lab's tests cross-check against: BIND's delv (DNSSEC validation)
# and the openssl CLI (TLS handshakes). Tests skip with a reason when they are missing.
if ! command -v delv >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        (apt-get install -y -qq bind9-dnsutils openssl >/dev/null 2>&1 \
            || (apt-get update -qq && apt-get install -y -qq bind9-dnsutils openssl) >/dev/null 2>&1) \
            || echo "note: could not install bind9-dnsutils/openssl; the cross-checks will be skipped"
    fi
fi

# OpenAPI 3.1 validator (PyPI), in a venv of its own under target/.
if [ ! -x target/venv/bin/openapi-spec-validator ]; then
    mkdir -p target
    python3 -m venv target/venv
    target/venv/bin/pip install --quiet --disable-pip-version-check 'openapi-spec-validator==0.7.2'
fi

# CycloneDX 1.5 schema validation of `rampart sbom` (PyPI cyclonedx-python-lib), same venv.
if ! target/venv/bin/python -c 'import cyclonedx.validation.json' >/dev/null 2>&1; then
    target/venv/bin/pip install --quiet --disable-pip-version-check 'cyclonedx-python-lib[json-validation]==8.9.0'
fi

# The web app's browser test (crates/rampart/tests/web.rs): Debian's Chromium, driven by
# Playwright for Python (which cannot download a browser of its own here), and pdftotext
# to read the PDF report back.
if ! command -v chromium >/dev/null 2>&1 || ! command -v pdftotext >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        (apt-get install -y -qq chromium poppler-utils >/dev/null 2>&1 \
            || (apt-get update -qq && apt-get install -y -qq chromium poppler-utils) >/dev/null 2>&1) \
            || echo "note: could not install chromium/poppler-utils; the browser test skips (fails under CI)"
    fi
fi
if ! target/venv/bin/python -c 'import playwright' >/dev/null 2>&1; then
    target/venv/bin/pip install --quiet --disable-pip-version-check 'playwright==1.65.2'
fi

# The built-in lab's ground truth against docs/FINDINGS.md and the address plan.
python3 scripts/check-lab.py >/dev/null
# The paths ARCHITECTURE.md and docs/PERFORMANCE.md name exist; the map stays under 12 KiB.
python3 scripts/check-docs.py

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings

# cargo-deny (advisories, licences, bans, sources; deny.toml) against the offline
# snapshot of the RustSec database in ../shared/data/rustsec. cargo-deny's --offline
# also keeps cargo metadata off the network, so the sources of every platform's
# dependencies are fetched first.
command -v cargo-deny >/dev/null 2>&1 || cargo install cargo-deny --locked
ADVISORY_BUNDLE=../shared/data/rustsec/advisory-db.bundle
ADVISORY_DB=target/advisory-dbs/advisory-db-3157b0e258782691
if [ -f "$ADVISORY_BUNDLE" ]; then
    if [ ! -d "$ADVISORY_DB" ]; then
        mkdir -p target/advisory-dbs
        git clone -q "$ADVISORY_BUNDLE" "$ADVISORY_DB"
    fi
    cargo fetch -q
    cargo deny --offline check
elif [ -n "${CI:-}" ]; then
    echo "CI is set and $ADVISORY_BUNDLE is absent" >&2
    exit 1
else
    echo "note: $ADVISORY_BUNDLE is absent; cargo-deny skipped"
fi

cargo build -q -p rampart
./target/debug/rampart openapi > target/openapi.json
# The validator echoes the whole document on failure; keep the verdict readable.
target/venv/bin/openapi-spec-validator target/openapi.json 2>&1 | cut -c1-400

cargo nextest run --workspace --no-fail-fast

# The API contract tests again with the server on PostgreSQL (127.0.0.1:5432, database
# `test`, a schema of their own per test): both backends give the same answers.
# (The workspace's build, filtered: `-p api` alone would resolve features anew and rebuild.)
RAMPART_TEST_BACKEND=postgres cargo nextest run --workspace --no-fail-fast -E 'package(api) & binary(contract)'

# schemathesis against a seeded server, every check on, 60 s: the OpenAPI document says
# exactly what the server accepts (docs/SECURITY.md).
ST_MAX_TIME=60 ./scripts/schemathesis.sh
