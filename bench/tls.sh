#!/usr/bin/env bash
# TLS enumeration: rampart's prober (`rampart probe tls`) beside sslyze (PyPI) and sslscan
# (Debian) on the same endpoints in the same run: TLS hosts of the built-in lab (rustls ones
# and the legacy responder's) plus two real `openssl s_server`s. Each tool takes the
# endpoints one after another (one at a time, the same list and order for every tool);
# each run is timed by wall clock, process start-up included. bench/tls_compare.py reads
# the saved outputs and prints per-endpoint times, the ratios and whether the versions and
# the per-version cipher suites agree, with the differences.
#
# RAMPART_BIN     the rampart binary (default target/release/rampart, built when missing)
# BENCH_TLS_HOSTS space-separated lab host names to probe on port 443 (default below)
set -euo pipefail
cd "$(dirname "$0")/.."
work=target/bench-tls
out=$work/out
RAMPART_BIN=${RAMPART_BIN:-target/release/rampart}
HOSTS=${BENCH_TLS_HOSTS:-"www.kestrelfreight.test online.bluefinbank.test www.orcharddx.test
    partners.orchardlane.test lims.orchardlane.test legacyapp.orchardlane.test
    portal.vantageaero.test supplier.vantageaero.test vpn.vantageaero.test
    edi.vantageaero.test webmail.vantageaero.test"}
OSSL_IP=127.77.90.1
OSSL_NAME=openssl.test
# Two real OpenSSL servers (Debian's OpenSSL 3, the same certificate): a modern one, and a
# permissive one (TLS 1.0-1.3, every suite at security level 0) that, unlike the lab's
# legacy responder, completes handshakes, so the peers can check old versions and suites.
OSSL_SERVERS="44390:-min_protocol TLSv1.2 -max_protocol TLSv1.3
44391:-min_protocol TLSv1 -max_protocol TLSv1.3 -cipher ALL:COMPLEMENTOFALL:@SECLEVEL=0"
TOOL_TIMEOUT=60 # seconds one tool may take on one endpoint

# --- tools ------------------------------------------------------------------------------
if [ "$RAMPART_BIN" = target/release/rampart ] && [ ! -x "$RAMPART_BIN" ]; then
    cargo build --release -q -p rampart
fi
[ -x "$RAMPART_BIN" ] || { echo "tls.sh: no rampart binary at $RAMPART_BIN" >&2; exit 1; }
sslyze_py=target/bench-sslyze/bin/python
if [ ! -x "$sslyze_py" ] || ! "$sslyze_py" -c 'import sslyze' 2>/dev/null; then
    python3 -m venv target/bench-sslyze
    "$sslyze_py" -m pip install -q --disable-pip-version-check 'sslyze==6.3.1'
fi
if ! command -v sslscan >/dev/null; then
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq sslscan >/dev/null
fi
command -v openssl >/dev/null || { echo "tls.sh: openssl is needed" >&2; exit 1; }

mkdir -p "$work"
rm -rf "$out" "$work/scanner.json" "$work/times.tsv" "$work/endpoints.tsv"
mkdir -p "$out/rampart" "$out/sslyze" "$out/sslscan"

# --- servers ------------------------------------------------------------------------------
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
RAMPART_LOG=warn "$RAMPART_BIN" lab up --out "$work" > "$work/lab.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -f "$work/scanner.json" ] && break; sleep 0.1; done
[ -f "$work/scanner.json" ] || { echo "tls.sh: the lab did not come up:" >&2; cat "$work/lab.log" >&2; exit 1; }
head -1 "$work/lab.log"

if [ ! -f "$work/openssl.crt" ] || ! openssl x509 -checkend 86400 -noout -in "$work/openssl.crt" >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -subj "/CN=$OSSL_NAME" -days 30 \
        -keyout "$work/openssl.key" -out "$work/openssl.crt" 2>/dev/null
fi
while IFS=: read -r port args; do
    # shellcheck disable=SC2086 # $args: the server's options, split on purpose
    openssl s_server -accept "$OSSL_IP:$port" -cert "$work/openssl.crt" -key "$work/openssl.key" \
        -quiet -no_ticket $args < /dev/null > "$work/s_server-$port.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/$OSSL_IP/$port") 2>/dev/null && break; sleep 0.1; done
    (exec 3<>"/dev/tcp/$OSSL_IP/$port") 2>/dev/null ||
        { echo "tls.sh: openssl s_server did not start on $port" >&2; cat "$work/s_server-$port.log" >&2; exit 1; }
    echo "openssl s_server on $OSSL_IP:$port: $args"
done <<< "$OSSL_SERVERS"
echo "$(openssl version | cut -d' ' -f1-2); sslyze $("$sslyze_py" -c 'import importlib.metadata as m; print(m.version("sslyze"))'); sslscan $(sslscan --version | sed 's/\x1b\[[0-9;]*m//g' | awk 'NF{print $1; exit}')"

# --- endpoints: label, SNI name, IP, port, how rampart is pointed at it -----------------------
# The lab's stdout lists "NAME port 443 listening on IP:PORT" (port 443 is served on the
# lab port of scanner.json's port_map); the peers get IP:PORT and the name as SNI.
# scanner.json is written just before that list: wait for the line a little.
for h in $HOSTS; do
    addr=
    for _ in $(seq 50); do
        addr=$(awk -v n="$h" '$1 == n && $2 == "port" && $3 == "443" { print $NF; exit }' "$work/lab.log")
        [ -n "$addr" ] && break
        sleep 0.1
    done
    [ -n "$addr" ] || { echo "tls.sh: $h has no port 443 in the lab" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\tlab\n' "$h" "$h" "${addr%:*}" "${addr##*:}" >> "$work/endpoints.tsv"
done
while IFS=: read -r port _; do
    printf '%s\t%s\t%s\t%s\topenssl\n' "$OSSL_NAME:$port" "$OSSL_NAME" "$OSSL_IP" "$port" >> "$work/endpoints.tsv"
done <<< "$OSSL_SERVERS"

# One timed run: TOOL LABEL STDOUT-FILE COMMAND...
timed() {
    local tool=$1 label=$2 stdout=$3 t0 t1 rc=0
    shift 3
    t0=$(date +%s.%N)
    timeout "$TOOL_TIMEOUT" "$@" < /dev/null > "$stdout" 2> "$out/$tool/$label.stderr" || rc=$?
    t1=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\t%s\n' "$tool" "$label" "$t0" "$t1" "$rc" >> "$work/times.tsv"
}

# --- the runs: each tool over the whole list, one endpoint at a time ------------------------
echo "rampart: $RAMPART_BIN probe tls NAME:443 --lab $work --format json"
while IFS=$'\t' read -r label sni ip port kind; do
    if [ "$kind" = lab ]; then
        timed rampart "$label" "$out/rampart/$label.json" \
            "$RAMPART_BIN" probe tls "$sni:443" --lab "$work" --format json
    else
        timed rampart "$label" "$out/rampart/$label.json" \
            "$RAMPART_BIN" probe tls "$ip:$port" --allow-private --sni "$sni" --format json
    fi
done < "$work/endpoints.tsv"

# sslyze: the version/suite scans and certinfo only (no Mozilla-profile check), trusting the
# lab CA for lab hosts as rampart's --lab does.
echo "sslyze:  python -m sslyze --quiet --json_out=FILE --mozilla_config=disable --sslv2 --sslv3 --tlsv1 --tlsv1_1 --tlsv1_2 --tlsv1_3 --certinfo [--certinfo_ca_file=$work/lab-ca.pem] 'NAME:PORT{IP}'"
while IFS=$'\t' read -r label sni ip port kind; do
    ca=()
    [ "$kind" = lab ] && ca=(--certinfo_ca_file="$work/lab-ca.pem")
    timed sslyze "$label" "$out/sslyze/$label.stdout" \
        "$sslyze_py" -m sslyze --quiet --json_out="$out/sslyze/$label.json" --mozilla_config=disable \
        --sslv2 --sslv3 --tlsv1 --tlsv1_1 --tlsv1_2 --tlsv1_3 --certinfo "${ca[@]}" "$sni:$port{$ip}"
done < "$work/endpoints.tsv"

# sslscan: versions, suites and its certificate check; its Heartbleed, renegotiation,
# compression, fallback and group checks are off (the same work as sslyze's run, and with
# them a single legacy-responder host takes sslscan about two minutes of 3 s timeouts).
sslscan_flags=(--no-colour --no-heartbleed --no-renegotiation --no-compression --no-fallback --no-groups)
echo "sslscan: sslscan ${sslscan_flags[*]} --sni-name=NAME --xml=FILE IP:PORT"
while IFS=$'\t' read -r label sni ip port kind; do
    timed sslscan "$label" "$out/sslscan/$label.stdout" \
        sslscan "${sslscan_flags[@]}" --sni-name="$sni" --xml="$out/sslscan/$label.xml" "$ip:$port"
done < "$work/endpoints.tsv"

echo
python3 bench/tls_compare.py "$work"
