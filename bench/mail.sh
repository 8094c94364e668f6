#!/usr/bin/env bash
# DNS and mail checks for N lab domains (default 1000): rampart's probes (spf, dkim with
# its 40 curated selectors, dmarc, DNSSEC validation, CAA, MTA-STS, TLS-RPT, IPv6) beside
# checkdmarc (PyPI; SPF, DMARC, MX, NS, DNSSEC, MTA-STS, TLS-RPT, BIMI) on the same zones,
# through the same lab DNS server, in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_DOMAINS:-1000}
RUNS=${BENCH_RUNS:-3}
work=target/bench-mail
mkdir -p "$work"
if [ ! -x target/bench-venv/bin/python ] || ! target/bench-venv/bin/python -c 'import checkdmarc' 2>/dev/null; then
    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install -q --disable-pip-version-check 'checkdmarc==6.0.4'
fi
cargo build --release -q -p rampart
cargo build --release -q -p scanner --example mail_bench
python3 bench/mail-lab.py "$N" "$work/lab.json"
rm -f "$work/scanner.json"
RAMPART_LOG=warn ./target/release/rampart lab up --file "$work/lab.json" --out "$work" > "$work/lab.log" 2>&1 &
lab=$!
trap 'kill $lab 2>/dev/null || true' EXIT
for _ in $(seq 600); do [ -f "$work/scanner.json" ] && break; sleep 0.1; done
head -1 "$work/lab.log"
resolver=$(python3 -c "import json; print(json.load(open('$work/scanner.json'))['resolver'])")
# Each tool RUNS times, alternating, over the same lab; the ratio is of the medians.
: > "$work/runs"
for run in $(seq "$RUNS"); do
    ./target/release/examples/mail_bench "$work" "$N" | tee -a "$work/runs"
    target/bench-venv/bin/python bench/checkdmarc_bench.py "${resolver%:*}" "${resolver##*:}" "$N" | tee -a "$work/runs"
done
python3 - "$work/runs" <<'PY'
import re, statistics, sys
rate = {"rampart": [], "checkdmarc": []}
for line in open(sys.argv[1]):
    m = re.search(r"= ([0-9.]+) domains/s", line)
    if m:
        rate["rampart" if line.startswith("rampart") else "checkdmarc"].append(float(m.group(1)))
r, c = statistics.median(rate["rampart"]), statistics.median(rate["checkdmarc"])
print(f"median of {len(rate['rampart'])} runs: rampart {r:.0f} domains/s, checkdmarc {c:.1f} domains/s, ratio {r / c:.1f}x "
      f"(per run: {', '.join(f'{a / b:.1f}x' for a, b in zip(rate['rampart'], rate['checkdmarc']))})")
PY
