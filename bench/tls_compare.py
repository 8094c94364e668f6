#!/usr/bin/env python3
"""Reads what bench/tls.sh saved in WORK (endpoints.tsv, times.tsv, out/{rampart,sslyze,
sslscan}/LABEL.*) and prints per-endpoint wall-clock times, totals, medians and speed
ratios, and whether the protocol versions and, per version, the cipher-suite sets agree
between rampart and each peer, then the differences.

Suite names are compared as IANA names: rampart and sslyze report them; sslscan reports
OpenSSL names (IANA ones for TLS 1.3 and for the suites its OpenSSL lacks, which it offers
in raw ClientHellos), turned into IANA names with `openssl ciphers -V -stdname`, or by
the hex id sslscan gives for each suite. Standard library only.

usage: tls_compare.py WORK
"""

import json
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

VERSIONS = ["SSLv2", "SSLv3", "TLS 1.0", "TLS 1.1", "TLS 1.2", "TLS 1.3"]
SSLYZE_COMMANDS = {
    "ssl_2_0_cipher_suites": "SSLv2",
    "ssl_3_0_cipher_suites": "SSLv3",
    "tls_1_0_cipher_suites": "TLS 1.0",
    "tls_1_1_cipher_suites": "TLS 1.1",
    "tls_1_2_cipher_suites": "TLS 1.2",
    "tls_1_3_cipher_suites": "TLS 1.3",
}
SSLSCAN_VERSIONS = {
    ("ssl", "2"): "SSLv2",
    ("ssl", "3"): "SSLv3",
    ("tls", "1.0"): "TLS 1.0",
    ("tls", "1.1"): "TLS 1.1",
    ("tls", "1.2"): "TLS 1.2",
    ("tls", "1.3"): "TLS 1.3",
    "SSLv2": "SSLv2",
    "SSLv3": "SSLv3",
    "TLSv1.0": "TLS 1.0",
    "TLSv1.1": "TLS 1.1",
    "TLSv1.2": "TLS 1.2",
    "TLSv1.3": "TLS 1.3",
}
PEERS = ["sslyze", "sslscan"]
TOOLS = ["rampart"] + PEERS
# Versions whose suites a peer cannot list at all, whatever the server does (it may still
# detect the version): these are shown, not counted as disagreement. sslscan 2.x detects
# SSLv2 and SSLv3 with raw hellos but enumerates SSLv3 suites only through its OpenSSL
# (see main() for the SSLv3 case) and SSLv2 ciphers never.
NOT_ENUMERATED = {("sslscan", "SSLv2"): "sslscan has no SSLv2 cipher enumeration"}


class Result:
    """One tool's view of one endpoint: versions and, per version, a set of suite names."""

    def __init__(self):
        self.error = None  # why there is no result
        self.ip = None  # the address probed, when the tool says
        self.versions = set()
        self.suites = {}  # version -> set of IANA names
        self.notes = []  # partial failures worth showing
        self.tested = None  # version -> every suite the tool has a verdict on, when it says


def openssl_tables():
    """OpenSSL name -> IANA name and hex id -> IANA name, from the local openssl."""
    text = subprocess.run(
        ["openssl", "ciphers", "-V", "-stdname", "ALL:COMPLEMENTOFALL:@SECLEVEL=0"],
        capture_output=True, text=True, check=True,
    ).stdout
    by_name, by_code = {}, {}
    for line in text.splitlines():
        m = re.match(r"\s*0x([0-9A-Fa-f]{2}),0x([0-9A-Fa-f]{2})\s+-\s+(\S+)\s+-\s+(\S+)", line)
        if m:
            code = (m[1] + m[2]).upper()
            by_name[m[4]] = m[3]
            by_code[code] = m[3]
    return by_name, by_code


def load_rampart(path, rc):
    r = Result()
    if rc != 0:
        r.error = exit_text(rc)
    try:
        d = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        r.error = r.error or f"no JSON ({e.__class__.__name__})"
        return r
    rep = d.get("report") or {}
    r.ip = rep.get("ip")
    r.versions = set(rep.get("versions") or [])
    for entry in rep.get("suites") or []:
        r.suites.setdefault(entry["version"], set()).update(entry.get("suites") or [])
    if rep.get("ssl2_ciphers"):
        r.suites.setdefault("SSLv2", set()).update(rep["ssl2_ciphers"])
    return r


def load_sslyze(path, rc):
    r = Result()
    try:
        d = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        r.error = exit_text(rc) if rc else f"no JSON ({e.__class__.__name__})"
        return r
    results = d.get("server_scan_results") or []
    if not results:
        bad = d.get("invalid_server_strings") or []
        r.error = "invalid target: " + "; ".join(str(b.get("error_message", b)) for b in bad)
        return r
    sr = results[0]
    if sr.get("scan_status") != "COMPLETED":
        trace = (sr.get("connectivity_error_trace") or "").strip().splitlines()
        last = trace[-1] if trace else sr.get("scan_status", "?")
        r.error = f"{sr.get('scan_status')}: {last.split(': ', 1)[-1]}"
        return r
    res = sr.get("scan_result") or {}
    r.tested = {}
    for cmd, version in SSLYZE_COMMANDS.items():
        attempt = res.get(cmd) or {}
        if attempt.get("status") != "COMPLETED":
            r.notes.append(f"{version} scan {attempt.get('status')}: {attempt.get('error_reason')}")
            continue
        names = {c["cipher_suite"]["name"] for c in attempt["result"]["accepted_cipher_suites"]}
        r.tested[version] = names | {c["cipher_suite"]["name"] for c in attempt["result"]["rejected_cipher_suites"]}
        if names:
            r.versions.add(version)
            r.suites[version] = names
    return r


def load_sslscan(path, rc, by_name, by_code):
    r = Result()
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        r.error = exit_text(rc) if rc else f"no XML ({e.__class__.__name__})"
        return r
    test = root.find("ssltest")
    if test is None:
        err = root.find("error")
        r.error = "no result" + (f": {err.text.strip()}" if err is not None and err.text else "")
        return r
    for p in test.findall("protocol"):
        version = SSLSCAN_VERSIONS.get((p.get("type"), p.get("version")))
        if version and p.get("enabled") == "1":
            r.versions.add(version)
    for c in test.findall("cipher"):
        version = SSLSCAN_VERSIONS.get(c.get("sslversion"), c.get("sslversion"))
        r.suites.setdefault(version, set()).add(iana(c.get("cipher", ""), c.get("id", ""), by_name, by_code))
    return r


def iana(name, hex_id, by_name, by_code):
    """sslscan's name for a suite as an IANA name."""
    if name.startswith(("TLS_", "SSL_")):
        return name
    if name in by_name:
        return by_name[name]
    code = hex_id.upper().removeprefix("0X").rjust(4, "0")
    return by_code.get(code, name)


def exit_text(rc):
    return {124: "timed out", 0: "ok"}.get(rc, f"exit status {rc}")


def compare(ours, theirs, peer, in_openssl):
    """(versions agree, suites agree, difference lines); None for 'no result'."""

    def names(suites, version):
        def mark(n):
            if peer == "sslscan" and n in in_openssl:
                return n + "*"
            if theirs.tested is not None and n not in theirs.tested.get(version, ()):
                return n + "†"
            return n
        return ", ".join(mark(n) for n in sorted(suites))

    if ours.error or theirs.error:
        return None, None, []
    lines = []
    only_r = sorted(ours.versions - theirs.versions, key=VERSIONS.index)
    only_p = sorted(theirs.versions - ours.versions, key=VERSIONS.index)
    if only_r:
        lines.append(f"versions only rampart lists: {', '.join(only_r)}")
    if only_p:
        lines.append(f"versions only {peer} lists: {', '.join(only_p)}")
    suites_ok = True
    for version in VERSIONS:
        a, b = ours.suites.get(version, set()), theirs.suites.get(version, set())
        if (peer, version) in NOT_ENUMERATED:
            if a != b:
                lines.append(f"{version} suites not compared ({NOT_ENUMERATED[peer, version]}): "
                             f"rampart lists {', '.join(sorted(a)) or 'none'}; "
                             f"{peer} lists {', '.join(sorted(b)) or 'none'}")
            continue
        if a == b:
            continue
        suites_ok = False
        if a - b:
            lines.append(f"{version} suites only rampart lists: {names(a - b, version)}")
        if b - a:
            lines.append(f"{version} suites only {peer} lists: {names(b - a, version)}")
    return not only_r and not only_p, suites_ok, lines


def yes_no(v):
    return "n/a" if v is None else ("yes" if v else "NO")


def fmt_s(s):
    return "-" if s is None else f"{s:.3f}"


def ratio(a, b):
    return f"{a / b:.1f}x" if a is not None and b else "-"


def main():
    work = Path(sys.argv[1])
    out = work / "out"
    endpoints = [line.split("\t") for line in (work / "endpoints.tsv").read_text().splitlines() if line]
    times, rcs = {}, {}
    for line in (work / "times.tsv").read_text().splitlines():
        tool, label, t0, t1, rc = line.split("\t")
        times[tool, label] = float(t1) - float(t0)
        rcs[tool, label] = int(rc)
    by_name, by_code = openssl_tables()
    in_openssl = set(by_code.values())
    s_client = subprocess.run(["openssl", "s_client", "-help"], capture_output=True, text=True)
    if not re.search(r"^\s*-ssl3\s", s_client.stdout + s_client.stderr, re.M):
        NOT_ENUMERATED["sslscan", "SSLv3"] = "the local OpenSSL, sslscan's, has no SSLv3"

    rows, details = [], []
    for label, sni, ip, port, kind in endpoints:
        res = {
            "rampart": load_rampart(out / "rampart" / f"{label}.json", rcs.get(("rampart", label), -1)),
            "sslyze": load_sslyze(out / "sslyze" / f"{label}.json", rcs.get(("sslyze", label), -1)),
            "sslscan": load_sslscan(out / "sslscan" / f"{label}.xml", rcs.get(("sslscan", label), -1),
                                    by_name, by_code),
        }
        cmp = {peer: compare(res["rampart"], res[peer], peer, in_openssl) for peer in PEERS}
        rows.append((label, [times.get((t, label)) for t in TOOLS], cmp))
        d = [f"{label} ({ip}:{port}, SNI {sni})"]
        r = res["rampart"]
        if r.ip and r.ip != ip:
            d.append(f"  rampart: probed {r.ip}, not {ip} as the peers did")
        if r.error:
            d.append(f"  rampart: no result: {r.error}")
        else:
            d.append("  rampart: " + (", ".join(
                f"{v} ({len(r.suites.get(v, ()))})" for v in VERSIONS if v in r.versions) or "no version"))
        for peer in PEERS:
            p = res[peer]
            if p.error:
                d.append(f"  {peer}: no result: {p.error}")
                continue
            for note in p.notes:
                d.append(f"  {peer}: {note}")
            lines = cmp[peer][2]
            if not lines:
                d.append(f"  {peer}: same versions and suites")
            for line in lines:
                d.append(f"  {peer}: {line}")
        details.append(d)

    head = ["endpoint", "rampart s", "sslyze s", "sslscan s", "versions agree? sslyze/sslscan",
            "suites agree? sslyze/sslscan"]
    body = []
    for label, ts, cmp in rows:
        body.append([label] + [fmt_s(t) for t in ts]
                    + [f"{yes_no(cmp['sslyze'][0])} / {yes_no(cmp['sslscan'][0])}",
                       f"{yes_no(cmp['sslyze'][1])} / {yes_no(cmp['sslscan'][1])}"])
    per_tool = {t: [ts[i] for _, ts, _ in rows if ts[i] is not None] for i, t in enumerate(TOOLS)}
    total = {t: sum(v) if v else None for t, v in per_tool.items()}
    median = {t: statistics.median(v) if v else None for t, v in per_tool.items()}
    count = {
        peer: (sum(1 for _, _, c in rows if c[peer][0]), sum(1 for _, _, c in rows if c[peer][1]),
               sum(1 for _, _, c in rows if c[peer][0] is not None))
        for peer in PEERS
    }
    body.append(["total"] + [fmt_s(total[t]) for t in TOOLS]
                + [f"{count['sslyze'][0]}/{count['sslyze'][2]} / {count['sslscan'][0]}/{count['sslscan'][2]}",
                   f"{count['sslyze'][1]}/{count['sslyze'][2]} / {count['sslscan'][1]}/{count['sslscan'][2]}"])
    body.append(["median per endpoint"] + [fmt_s(median[t]) for t in TOOLS] + ["", ""])
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]

    def line(cells):
        return " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(line(head))
    print("-+-".join("-" * w for w in widths))
    for r in body[:-2]:
        print(line(r))
    print("-+-".join("-" * w for w in widths))
    for r in body[-2:]:
        print(line(r))
    print()
    print(f"{len(rows)} endpoints, one at a time per tool; wall clock per run, process start-up included.")
    print("agree counts are out of the endpoints where both sides have a result; n/a = the peer (or rampart) has none.")
    for peer in PEERS:
        print(f"{peer}/rampart: {ratio(median[peer], median['rampart'])} on the median per-endpoint time, "
              f"{ratio(total[peer], total['rampart'])} on the total")
    print()
    print("Differences (IANA names; per endpoint, rampart's versions with its suite counts):")
    for d in details:
        print("\n".join(d))
    if any("*" in line for d in details for line in d):
        print("* a suite the local OpenSSL implements: sslscan lists those only from a completed handshake "
              "(the ones its OpenSSL lacks it tries with raw ClientHellos)")
    if any("†" in line for d in details for line in d):
        print("† a suite the peer has no verdict on: in neither its accepted nor its rejected list")


if __name__ == "__main__":
    main()
