#!/usr/bin/env python3
"""Compares the port scans bench/ports.sh saved: rampart's `probe ports` JSON beside nmap's
connect scan (-sT) and service detection (-sV --version-light) XML, host by host.

    python3 bench/ports_compare.py WORK-DIR      (bench/ports.sh's target/bench-ports)

Reads WORK/ports.tsv (standard port, port connected to), WORK/hosts.tsv (name, IP),
WORK/times.tsv (tool, host, start, end, exit status) and WORK/out/{rampart,nmap-sT,nmap-sV}/.
nmap was pointed at the lab ports; its port numbers are mapped back to standard ports.

Services are compared after normalising nmap's names (microsoft-ds = smb, ms-wbt-server =
rdp, https or an ssl tunnel = tls-or-http, ...). Per port the outcome is one of
  same       both name the same service, nmap by a probe's match
  table      the same name, but nmap's only from its port table (no probe matched; it
             guesses by port number, which means something only on an unmapped port)
  naming     the same thing named differently (rampart elasticsearch, nmap http)
  nmap-unid  nmap did not identify the service (no match, or only a port-table guess
             for a lab port or a different name)
  rampart-unid  rampart said unknown, nmap named it
  DIFF       both identified it, differently
Versions are compared where nmap reports one (rampart's may be nmap's cut at the first
non-version character, e.g. 5.7.33 of 5.7.33-0ubuntu0.18.04.1: counted as agreeing).
Python standard library only.
"""

import json
import os
import re
import statistics
import sys
import xml.etree.ElementTree as ET

# nmap service name -> the name rampart uses.
NMAP_NAMES = {
    "microsoft-ds": "smb",
    "netbios-ssn": "smb",
    "ms-wbt-server": "rdp",
    "ftp": "ftp",
    "ssh": "ssh",
    "telnet": "telnet",
    "mysql": "mysql",
    "postgresql": "postgresql",
    "redis": "redis",
    "mongodb": "mongodb",
    "mongod": "mongodb",
    "memcached": "memcached",
    "http": "http",
    "http-proxy": "http",
    "http-alt": "http",
    "https": "tls-or-http",
    "https-alt": "tls-or-http",
    "ssl": "tls-or-http",
    "smtp": "smtp",
    "submission": "smtp",
    "pop3": "pop3",
    "imap": "imap",
}
# rampart service name -> the common name.
RAMPART_NAMES = {"tls": "tls-or-http"}
# rampart names nmap calls by the protocol they are served over: (rampart, nmap normalised).
NAMING = {("elasticsearch", "http")}
TOOLS = ("rampart", "nmap-sT", "nmap-sV")


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def load_rampart(path):
    """{port: (service, product, version)} and rampart's own `seconds`, or None."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None, None, None
    ports = {o["port"]: (o["service"], o.get("product"), o.get("version")) for o in doc.get("open", [])}
    return ports, doc.get("seconds"), doc.get("ports_scanned")


def load_nmap(path, to_standard):
    """{standard port: service attributes (empty dict when none)} of the open ports, or None."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    out = {}
    for port in root.iter("port"):
        state = port.find("state")
        if state is None or state.get("state") != "open":
            continue
        lab = int(port.get("portid"))
        svc = port.find("service")
        out[to_standard.get(lab, lab)] = dict(svc.attrib) if svc is not None else {}
        out[to_standard.get(lab, lab)]["_lab_port"] = lab
    return out


def nmap_label(svc):
    """How nmap's answer reads in a report: ssl/name product version (method)."""
    if not svc.get("name"):
        return "no service"
    name = ("ssl/" if svc.get("tunnel") == "ssl" else "") + svc["name"]
    extra = " ".join(x for x in (svc.get("product"), svc.get("version")) if x)
    how = "" if svc.get("method") == "probed" else " [port table]"
    return f"{name}{' ' + extra if extra else ''}{how}"


def rampart_label(r):
    service, product, version = r
    extra = " ".join(x for x in (product, version) if x)
    return f"{service}{' ' + extra if extra else ''}"


def compare_service(std, r, svc):
    """(outcome, note) for one port both sides list as open."""
    r_name = RAMPART_NAMES.get(r[0], r[0])
    mapped = svc.get("_lab_port", std) != std
    name = svc.get("name")
    if svc.get("tunnel") == "ssl":
        n_name = "tls-or-http"
    else:
        n_name = NMAP_NAMES.get(name, name) if name else None
    # An ssl tunnel is found by nmap's TLS probes even when nothing inside it is matched.
    probed = svc.get("method") == "probed" or svc.get("tunnel") == "ssl"
    if r_name == "unknown":
        return ("rampart-unid", "") if (n_name and n_name != "unknown" and (probed or not mapped)) else ("same", "")
    if not name or name == "unknown" or (not probed and (mapped or n_name != r_name)):
        fp = svc.get("servicefp", "")
        if re.search(r"r\(GetRequest,[0-9A-F]+,\"HTTP/1", fp):
            why = "its GET / answer is HTTP, but no http signature matched"
            if "\\r\\nserver:" in fp or "\\r\\ncontent-type:" in fp:
                why = ("its GET / answer is HTTP with lowercase header names, which nmap's http "
                       "signatures (Server: ...) do not match")
        elif fp:
            why = "answered nmap's probes, no signature matched"
        else:
            why = "no answer matched"
        if name and not probed:
            why += f"; port-table guess '{name}' for {'lab port ' if mapped else 'port '}{svc['_lab_port']}"
        return "nmap-unid", why
    if n_name == r_name:
        if svc.get("tunnel") == "ssl" and svc.get("method") != "probed":
            return "same", "nmap found TLS; nothing it knows matched inside (its name is a port-table guess)"
        return ("same" if probed else "table"), ""
    if (r_name, n_name) in NAMING:
        return "naming", ""
    return "DIFF", ""


def version_matches(rv, nv):
    if rv is None:
        return False
    return nv == rv or (nv.startswith(rv) and not nv[len(rv)].isalnum() and nv[len(rv)] != ".")


def fmt_s(x):
    return "ERR" if x is None else f"{x:.2f}"


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else "target/bench-ports"
    ports = [(int(a), int(b)) for a, b in read_tsv(os.path.join(work, "ports.tsv"))]
    to_standard = {lab: std for std, lab in ports}
    hosts = read_tsv(os.path.join(work, "hosts.tsv"))
    times, status = {}, {}
    for tool, host, t0, t1, rc in read_tsv(os.path.join(work, "times.tsv")):
        times[(tool, host)] = float(t1) - float(t0)
        status[(tool, host)] = int(rc)

    rows, diffs, own_seconds, scanned = [], {}, [], set()
    port_outcomes = {}
    version_totals = [0, 0]
    for host, ip in hosts:
        notes = []
        r, own, n_scanned = load_rampart(os.path.join(work, "out", "rampart", f"{host}.json"))
        st = load_nmap(os.path.join(work, "out", "nmap-sT", f"{host}.xml"), to_standard)
        sv = load_nmap(os.path.join(work, "out", "nmap-sV", f"{host}.xml"), to_standard)
        t = {}
        for tool, parsed in zip(TOOLS, (r, st, sv)):
            ok = status.get((tool, host)) == 0 and parsed is not None
            t[tool] = times.get((tool, host)) if ok else None
            if not ok:
                notes.append(f"{tool} failed (exit status {status.get((tool, host))}; see out/{tool}/{host}.stderr)")
        if own is not None:
            own_seconds.append(own)
        if n_scanned is not None:
            scanned.add(n_scanned)
        if r is None or st is None or sv is None:
            rows.append((host, t, "ERR", "ERR", "ERR"))
            diffs[host] = notes
            continue

        # Open ports.
        r_open, st_open, sv_open = set(r), set(st), set(sv)
        if r_open == st_open == sv_open:
            open_agree = f"yes ({len(r_open)})"
        else:
            open_agree = "NO"
            for label, other in (("nmap -sT", st_open), ("nmap -sV", sv_open)):
                if r_open - other:
                    notes.append(f"open to rampart only (not {label}): {sorted(r_open - other)}")
                if other - r_open:
                    notes.append(f"open to {label} only: {sorted(other - r_open)}")

        # Services, on the ports both rampart and nmap -sV list.
        counts = {}
        versions = [0, 0]
        for p in sorted(r_open & sv_open):
            svc = sv[p]
            outcome, why = compare_service(p, r[p], svc)
            counts[outcome] = counts.get(outcome, 0) + 1
            port_outcomes[outcome] = port_outcomes.get(outcome, 0) + 1
            lab = f" (lab port {svc['_lab_port']})" if svc["_lab_port"] != p else ""
            pair = f"rampart {rampart_label(r[p])!r}, nmap {nmap_label(svc)!r}"
            if outcome == "same" and why:
                notes.append(f"port {p}{lab}: same service ({why}): {pair}")
            elif outcome == "table":
                notes.append(f"port {p}{lab}: same service, nmap's name by port table only: {pair}")
            elif outcome == "naming":
                notes.append(f"port {p}{lab}: naming difference, not a disagreement: {pair}")
            elif outcome == "nmap-unid":
                notes.append(f"port {p}{lab}: nmap did not identify it ({why}): {pair}")
            elif outcome in ("rampart-unid", "DIFF"):
                notes.append(f"port {p}{lab}: SERVICES DIFFER ({outcome}): {pair}")
            nv = svc.get("version")
            if nv and svc.get("method") == "probed":
                versions[1] += 1
                if version_matches(r[p][2], nv):
                    versions[0] += 1
                    if r[p][2] != nv:
                        notes.append(f"port {p}: version {r[p][2]!r} (rampart) is nmap's {nv!r} cut short")
                else:
                    notes.append(f"port {p}: VERSIONS DIFFER: rampart {r[p][2]!r}, nmap {nv!r}")
            elif r[p][2] and svc.get("method") == "probed":
                notes.append(f"port {p}: nmap gives no version, rampart {r[p][2]!r} ({nmap_label(svc)!r})")
        agreeing = sum(counts.get(k, 0) for k in ("same", "table", "naming"))
        n = len(r_open & sv_open)
        tags = [f"{counts[k]} {k}" for k in ("table", "naming", "nmap-unid", "rampart-unid", "DIFF") if counts.get(k)]
        services = ("yes" if agreeing == n else f"{agreeing}/{n}") + (f" ({', '.join(tags)})" if tags else "")
        version_totals[0] += versions[0]
        version_totals[1] += versions[1]
        vers = "-" if versions[1] == 0 else ("yes" if versions[0] == versions[1] else "NO") + f" {versions[0]}/{versions[1]}"
        rows.append((host, t, open_agree, services, vers))
        diffs[host] = notes

    # --- the table ---------------------------------------------------------------------------
    head = ("host", "rampart s", "nmap -sT s", "nmap -sV s", "open ports agree?", "services agree?",
            "versions agree?")
    body = [(h, fmt_s(t["rampart"]), fmt_s(t["nmap-sT"]), fmt_s(t["nmap-sV"]), o, s, v) for h, t, o, s, v in rows]
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
    right = {1, 2, 3}

    def line(cells):
        return " | ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                          for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(f"{len(hosts)} hosts, {len(ports)} ports each"
          + (f" (rampart's ports_scanned: {', '.join(map(str, sorted(scanned)))})" if scanned else ""))
    print("versions agree?: over the ports where nmap -sV reports a version; '-': nmap reports none")
    print()
    print(line(head))
    print("-+-".join("-" * w for w in widths))
    for b in body:
        print(line(b))

    # --- totals -----------------------------------------------------------------------------
    print()
    complete = [t for _, t, *_ in rows if all(t[k] is not None for k in TOOLS)]
    if complete:
        tot = {k: sum(t[k] for t in complete) for k in TOOLS}
        med = {k: statistics.median(t[k] for t in complete) for k in TOOLS}
        print(f"over {len(complete)} hosts every tool finished:")
        for k in TOOLS:
            print(f"  {k:8} total {tot[k]:7.2f} s   median {med[k]:6.3f} s/host")
        if own_seconds:
            print(f"  (rampart's own `seconds`, process start-up and lab-mode setup excluded: total "
                  f"{sum(own_seconds):.2f} s, median {statistics.median(own_seconds):.3f} s)")
        for k in ("nmap-sT", "nmap-sV"):
            ratios = [t[k] / t["rampart"] for t in complete if t["rampart"] > 0]
            print(f"  {k} / rampart: {tot[k] / tot['rampart']:.2f}x of the totals, "
                  f"median per-host ratio {statistics.median(ratios):.2f}x")
    print("port outcomes: " + ", ".join(f"{v} {k}" for k, v in sorted(port_outcomes.items()))
          + f"; versions {version_totals[0]}/{version_totals[1]} agree where nmap has one")

    # --- differences -----------------------------------------------------------------------------
    print()
    print("differences per host:")
    for host, _ in hosts:
        notes = diffs.get(host) or []
        print(f"  {host}: {'none' if not notes else ''}")
        for n in notes:
            print(f"    - {n}")


if __name__ == "__main__":
    main()
