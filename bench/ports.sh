#!/usr/bin/env bash
# Port scanning: rampart's scanner (`rampart probe ports`) beside nmap (Debian) on the same
# hosts of the built-in lab in the same run: nmap's connect scan (-sT) and its service
# detection (-sV --version-light). Every tool scans the same ports: rampart's curated
# DEFAULT_PORTS (crates/scanner/src/probes/ports.rs), which nmap is given as the ports the
# lab serves them on. The lab runs unprivileged, so a standard port below 1024 is served
# on a lab port (scanner.json's port_map, e.g. 22 -> 10022); rampart in lab mode connects
# to the lab port but reports the standard one, and bench/ports_compare.py maps nmap's
# port numbers back before comparing. Each tool takes the hosts one after another; each
# run is timed by wall clock, process start-up included. bench/ports_compare.py prints
# per-host times, the ratios, whether open ports, services and versions agree, and the
# differences.
#
# RAMPART_BIN       the rampart binary (default target/release/rampart, built when missing)
# BENCH_PORTS_HOSTS space-separated lab host names to scan (default below)
set -euo pipefail
cd "$(dirname "$0")/.."
work=target/bench-ports
out=$work/out
RAMPART_BIN=${RAMPART_BIN:-target/release/rampart}
HOSTS=${BENCH_PORTS_HOSTS:-"db.granitevalleywater.test scada.granitevalleywater.test
    files.granitevalleywater.test search.brightwater.test research-db.brightwater.test
    cache.brightwater.test sftp.bluefinbank.test www.granitevalleywater.test
    mail.granitevalleywater.test www.kestrelfreight.test"}
TOOL_TIMEOUT=60 # seconds one tool may take on one host

# --- tools ------------------------------------------------------------------------------
if [ "$RAMPART_BIN" = target/release/rampart ] && [ ! -x "$RAMPART_BIN" ]; then
    cargo build --release -q -p rampart
fi
[ -x "$RAMPART_BIN" ] || { echo "ports.sh: no rampart binary at $RAMPART_BIN" >&2; exit 1; }
if ! command -v nmap >/dev/null; then
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nmap >/dev/null
fi

mkdir -p "$work"
rm -rf "$out" "$work/scanner.json" "$work/times.tsv" "$work/hosts.tsv" "$work/ports.tsv"
mkdir -p "$out/rampart" "$out/nmap-sT" "$out/nmap-sV"

# --- the lab ------------------------------------------------------------------------------
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
RAMPART_LOG=warn "$RAMPART_BIN" lab up --out "$work" > "$work/lab.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -f "$work/scanner.json" ] && break; sleep 0.1; done
[ -f "$work/scanner.json" ] || { echo "ports.sh: the lab did not come up:" >&2; cat "$work/lab.log" >&2; exit 1; }
head -1 "$work/lab.log"
echo "$(nmap --version | head -1 | sed 's/ ( .*//'); $("$RAMPART_BIN" --version 2>/dev/null || echo rampart)"

# --- the ports: rampart's DEFAULT_PORTS, standard -> the port connected to ------------------
# The port a lab-mode scanner connects to is scanner.json's port_map entry, or the port
# itself (the guard's rule): the map holds every port the lab serves, so a port it does
# not list is served nowhere in the lab and is closed either way.
python3 - "$work/scanner.json" > "$work/ports.tsv" <<'EOF'
import json, re, sys
src = open("crates/scanner/src/probes/ports.rs").read()
m = re.search(r"pub const DEFAULT_PORTS: &\[u16\] = &\[(.*?)\];", src, re.S)
if not m:
    sys.exit("ports.sh: DEFAULT_PORTS not found in crates/scanner/src/probes/ports.rs")
port_map = {int(k): v for k, v in json.load(open(sys.argv[1]))["port_map"].items()}
for p in (int(x) for x in re.findall(r"\d+", m.group(1))):
    print(f"{p}\t{port_map.get(p, p)}")
EOF
lab_ports=$(cut -f2 "$work/ports.tsv" | paste -sd, -)
echo "ports: $(wc -l < "$work/ports.tsv") (rampart's DEFAULT_PORTS); $(awk '$1 != $2' "$work/ports.tsv" | wc -l) of them served on lab ports"

# --- hosts: name -> IP from the lab's "NAME port P listening on IP:PORT" lines ---------------
# scanner.json is written just before that list: wait for the lines a little.
for h in $HOSTS; do
    ip=
    for _ in $(seq 50); do
        ip=$(awk -v n="$h" '$1 == n && $2 == "port" { a = $NF; sub(/:[0-9]+$/, "", a); print a; exit }' "$work/lab.log")
        [ -n "$ip" ] && break
        sleep 0.1
    done
    [ -n "$ip" ] || { echo "ports.sh: $h is not a lab host" >&2; exit 1; }
    printf '%s\t%s\n' "$h" "$ip" >> "$work/hosts.tsv"
done

# One timed run: TOOL HOST STDOUT-FILE COMMAND...
timed() {
    local tool=$1 host=$2 stdout=$3 t0 t1 rc=0
    shift 3
    t0=$(date +%s.%N)
    timeout "$TOOL_TIMEOUT" "$@" < /dev/null > "$stdout" 2> "$out/$tool/$host.stderr" || rc=$?
    t1=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\t%s\n' "$tool" "$host" "$t0" "$t1" "$rc" >> "$work/times.tsv"
}

# --- the runs: each tool over the whole list, one host at a time ------------------------------
echo "rampart: $RAMPART_BIN probe ports NAME --lab $work --format json"
while IFS=$'\t' read -r host ip; do
    timed rampart "$host" "$out/rampart/$host.json" "$RAMPART_BIN" probe ports "$host" --lab "$work" --format json
done < "$work/hosts.tsv"

echo "nmap -sT: nmap -sT -Pn -n -p LAB-PORTS -oX FILE IP"
while IFS=$'\t' read -r host ip; do
    timed nmap-sT "$host" "$out/nmap-sT/$host.stdout" nmap -sT -Pn -n -p "$lab_ports" -oX "$out/nmap-sT/$host.xml" "$ip"
done < "$work/hosts.tsv"

echo "nmap -sV: nmap -sV --version-light -Pn -n -p LAB-PORTS -oX FILE IP"
[ "$(id -u)" = 0 ] && echo "          (as root nmap finds the open ports of an -sV run by a SYN scan)"
while IFS=$'\t' read -r host ip; do
    timed nmap-sV "$host" "$out/nmap-sV/$host.stdout" \
        nmap -sV --version-light -Pn -n -p "$lab_ports" -oX "$out/nmap-sV/$host.xml" "$ip"
done < "$work/hosts.tsv"
echo "LAB-PORTS: $lab_ports"

echo
python3 bench/ports_compare.py "$work"
