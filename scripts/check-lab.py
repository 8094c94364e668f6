#!/usr/bin/env python3
"""Checks the built-in lab file (crates/lab/lab.json) against its schema, the address
plan and the finding vocabulary in docs/FINDINGS.md, and prints a summary.

    python3 scripts/check-lab.py [LAB_FILE] [FINDINGS_MD]

Exit status 1 on any error. Needs only the Python standard library.
"""
import ipaddress
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAB = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "crates/lab/lab.json"
FINDINGS = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "docs/FINDINGS.md"

COMPONENTS = ["spf", "dkim", "dmarc", "certificate_info", "certificate_conf", "certificate_cve",
              "open_ports", "web_headers", "it_standardization", "digitalization", "vulnerabilities", "sbom"]
SEVERITIES = ["info", "low", "medium", "high", "critical"]
KINDS = {"ssh", "ftp", "smtp", "telnet", "redis", "memcached", "mysql", "postgresql", "rdp", "mongodb",
         "elasticsearch", "smb", "http", "https", "tls"}
CERTS = {"valid", "expired", "not_yet_valid", "expires_in_14_days", "expires_in_30_days", "self_signed",
         "wrong_host", "rsa1024", "sha1_signature", "long_validity", "missing_intermediate", "rsa2048"}
RSA_CERTS = {"rsa1024", "rsa2048"}  # every other variant has an ECDSA P-256 leaf
VERSIONS = {"tls1.2", "tls1.3"}
LEGACY_VERSIONS = {"ssl2", "ssl3", "tls1.0", "tls1.1", "tls1.2"}
SUITES = {"TLS_RSA_WITH_RC4_128_MD5", "TLS_RSA_WITH_RC4_128_SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
          "TLS_RSA_EXPORT_WITH_RC4_40_MD5", "TLS_RSA_EXPORT_WITH_DES40_CBC_SHA", "TLS_DH_anon_WITH_AES_128_CBC_SHA",
          "TLS_RSA_WITH_NULL_SHA", "TLS_RSA_WITH_NULL_MD5", "TLS_DHE_RSA_WITH_AES_128_CBC_SHA",
          "TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_RSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"}
# The legacy responder's own suite table, when the crate is there, is the authority.
_SUITES_RS = ROOT / "crates/labtls/src/legacy/suites.rs"
if _SUITES_RS.exists():
    SUITES |= set(re.findall(r'"((?:TLS|SSL_CK)_[A-Za-z0-9_]+)"', _SUITES_RS.read_text(encoding="utf-8")))
FIELDS = {
    "top": ({"dns", "port_map", "zones", "hosts", "companies", "applicants"}, set()),
    "dns": ({"address", "port"}, {"address"}),
    "zone": ({"origin", "dnssec", "dnssec_bogus", "records", "failures"}, {"origin"}),
    "host": ({"name", "address", "services"}, {"name", "address"}),
    "service": ({"port", "kind", "version", "tls", "http"}, {"port", "kind"}),
    "tls": ({"cert", "versions", "legacy", "sans", "organization"}, set()),
    "legacy": ({"versions", "suites", "dh_bits", "heartbleed", "secure_renegotiation", "compression",
                "server_preference"}, {"versions", "suites"}),
    "http": ({"headers", "pages", "redirect"}, set()),
    "page": ({"path", "status", "headers", "body"}, {"path"}),
    "company_entry": ({"company", "expected", "clean"}, {"company", "expected"}),
    "company": ({"social_id", "company_name", "website", "domain", "industry", "description", "employees_number",
                 "followers_number", "naics_code", "parent_social_id", "domains", "dkim_selectors"},
                {"social_id", "company_name", "website", "domain", "domains"}),
    "expected": ({"risk_vector", "asset", "code", "severity", "cve", "basis"}, {"risk_vector", "asset", "code", "severity"}),
}

errors = []


def err(msg):
    errors.append(msg)


def fields(kind, obj, where):
    allowed, required = FIELDS[kind]
    if not isinstance(obj, dict):
        err(f"{where}: expected an object")
        return
    for k in obj:
        if k not in allowed:
            err(f"{where}: unknown field {k!r}")
    for k in required:
        if k not in obj:
            err(f"{where}: missing field {k!r}")


def finding_codes(md: Path):
    """Codes are the first backticked cell of the tables in FINDINGS.md."""
    codes = {}
    for line in md.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\|\s*`([a-z_]+\.[a-z0-9_]+)`\s*\|", line)
        if m:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            sev = next((c.strip("*` ").lower() for c in cells if c.strip("*` ").lower() in SEVERITIES + ["cvss"]), None)
            codes[m.group(1)] = sev
    return codes


def txt_strings(rdata):
    return re.findall(r'"((?:[^"\\]|\\.)*)"', rdata)


def main():
    lab = json.loads(LAB.read_text(encoding="utf-8"))
    fields("top", lab, "lab")
    if "dns" in lab:
        fields("dns", lab["dns"], "dns")
        if not ipaddress.ip_address(lab["dns"]["address"]).is_loopback:
            err("dns.address is not loopback")

    # Zones and records.
    zones = {}
    for z in lab.get("zones", []):
        fields("zone", z, f"zone {z.get('origin')}")
        o = z["origin"].rstrip(".").lower()
        if o in zones:
            err(f"zone {o} declared twice")
        if not (o == "test" or o.endswith(".test")):
            err(f"zone {o} is not under .test")
        zones[o] = z
        for r in z.get("records", []):
            parts = r.split(None, 2)
            if len(parts) < 3:
                err(f"zone {o}: record {r!r} is not `name TYPE rdata`")
                continue
            name, rtype, rdata = parts
            if rtype == "AAAA" and ipaddress.ip_address(rdata) not in ipaddress.ip_network("2001:db8::/32"):
                err(f"zone {o}: AAAA {rdata} outside 2001:db8::/32")
            if rtype == "A" and not ipaddress.ip_address(rdata).is_loopback:
                err(f"zone {o}: A {rdata} is not loopback")
            if rtype == "TXT":
                for s in txt_strings(rdata):
                    if len(s.encode()) > 255:
                        err(f"zone {o}: TXT string of {len(s)} bytes at {name} (split it)")
            if rtype in ("CNAME", "MX", "NS") and rdata.split()[-1].endswith(".") and not rdata.split()[-1].rstrip(".").endswith(".test"):
                err(f"zone {o}: {rtype} target outside .test: {rdata}")

    def zone_of(name):
        labels = name.rstrip(".").lower().split(".")
        for i in range(len(labels)):
            cand = ".".join(labels[i:])
            if cand in zones and cand != "test":
                return cand
        return None

    def zone_names(origin):
        """Owner names declared by records (relative -> absolute)."""
        out = defaultdict(list)
        for r in zones[origin].get("records", []):
            name, rtype, rdata = r.split(None, 2)
            fq = origin if name == "@" else f"{name}.{origin}"
            out[fq.lower()].append((rtype, rdata))
        return out

    # Hosts.
    hosts = {}
    addrs = Counter()
    for h in lab.get("hosts", []):
        fields("host", h, f"host {h.get('name')}")
        name = h["name"].lower()
        if name in hosts:
            err(f"host {name} declared twice")
        hosts[name] = h
        a = h["address"]
        addrs[a] += 1
        if not a.startswith("127.") or not ipaddress.ip_address(a).is_loopback:
            err(f"host {name}: address {a} is not in 127.0.0.0/8")
        if zone_of(name) is None:
            err(f"host {name}: no declared zone contains it")
        ports = Counter()
        for s in h.get("services", []):
            where = f"host {name} port {s.get('port')}"
            fields("service", s, where)
            ports[s["port"]] += 1
            if s["kind"] not in KINDS:
                err(f"{where}: unknown kind {s['kind']!r}")
            if "tls" in s:
                fields("tls", s["tls"], where + " tls")
                if s["tls"].get("cert", "valid") not in CERTS:
                    err(f"{where}: unknown cert {s['tls']['cert']!r}")
                if not set(s["tls"].get("versions", [])) <= VERSIONS:
                    err(f"{where}: tls.versions outside {sorted(VERSIONS)}")
                cert = s["tls"].get("cert", "valid")
                if cert == "rsa1024" and "legacy" not in s["tls"]:
                    err(f"{where}: an rsa1024 certificate can only be served by the legacy responder")
                if "legacy" in s["tls"]:
                    lg = s["tls"]["legacy"]
                    for su in lg.get("suites", []):
                        rsa = su.startswith("SSL_CK_") or ("_RSA_" in su and "anon" not in su)
                        ecdsa = "_ECDSA_" in su
                        if (rsa and cert not in RSA_CERTS) or (ecdsa and cert in RSA_CERTS):
                            err(f"{where}: suite {su} does not match the {cert} certificate's key type")
                    if "ssl2" in lg.get("versions", []) and not any(x.startswith("SSL_CK_") for x in lg.get("suites", [])):
                        err(f"{where}: ssl2 needs SSL_CK_* ciphers")
                    fields("legacy", lg, where + " legacy")
                    if not set(lg.get("versions", [])) <= LEGACY_VERSIONS:
                        err(f"{where}: legacy.versions outside {sorted(LEGACY_VERSIONS)}")
                    for su in lg.get("suites", []):
                        if su not in SUITES:
                            err(f"{where}: suite {su} not in the lab's list")
                    if lg.get("dh_bits", 2048) not in (512, 1024, 2048):
                        err(f"{where}: dh_bits must be 512, 1024 or 2048")
                    if "http" in s:
                        err(f"{where}: a legacy endpoint serves no HTTP; drop http")
            if "http" in s:
                fields("http", s["http"], where + " http")
                for p in s["http"].get("pages", []):
                    fields("page", p, where + f" page {p.get('path')}")
                if s["kind"] not in ("http", "https"):
                    err(f"{where}: http spec on a {s['kind']} service")
        for p, c in ports.items():
            if c > 1:
                err(f"host {name}: port {p} declared {c} times")
    for a, c in addrs.items():
        if c > 1:
            err(f"address {a} used by {c} hosts")

    # Finding vocabulary.
    vocab = finding_codes(FINDINGS) if FINDINGS.exists() else {}
    if not vocab:
        err(f"no finding codes found in {FINDINGS}")

    def host_has(hostname, port, kinds=None):
        h = hosts.get(hostname)
        if not h:
            return False
        return any(s["port"] == port and (kinds is None or s["kind"] in kinds) for s in h.get("services", []))

    def check_asset(rv, code, asset, where, company_domains):
        if rv in ("certificate_info", "certificate_conf", "certificate_cve", "open_ports"):
            m = re.fullmatch(r"([a-z0-9.-]+):(\d+)", asset)
            if not m or not host_has(m.group(1), int(m.group(2))):
                err(f"{where}: asset {asset} is not host:port of a lab service")
            elif rv.startswith("certificate_") and not host_has(m.group(1), int(m.group(2)), {"https", "tls", "smtp"}):
                err(f"{where}: {asset} is not a TLS endpoint")
        elif rv == "web_headers" or asset.startswith("http"):
            m = re.fullmatch(r"(https?)://([a-z0-9.-]+)(?::(\d+))?(/[^ ]*)", asset)
            if not m:
                err(f"{where}: asset {asset} is not an origin URL")
            else:
                port = int(m.group(3)) if m.group(3) else (443 if m.group(1) == "https" else 80)
                web = {"http", "https", "elasticsearch"} if m.group(3) else {"http", "https"}
                if not host_has(m.group(2), port, web):
                    err(f"{where}: no {m.group(1)} service on {m.group(2)}")
        elif rv in ("vulnerabilities", "sbom"):
            if asset not in hosts:
                err(f"{where}: asset {asset} is not a lab host")
        elif rv == "dkim" and "._domainkey." in asset:
            z = zone_of(asset)
            if not z or asset not in zone_names(z):
                err(f"{where}: no record at {asset}")
        elif rv in ("spf", "dmarc", "dkim"):
            if asset not in company_domains:
                err(f"{where}: asset {asset} is not one of the company's domains")
        else:  # it_standardization / digitalization: a domain, a host, or a DNS name
            if asset.startswith("*."):
                z = zone_of(asset[2:]) or (asset[2:] if asset[2:] in zones else None)
                if not z or asset not in zone_names(z):
                    err(f"{where}: no wildcard record {asset}")
            elif asset not in hosts and asset not in company_domains:
                z = zone_of(asset)
                if not z or asset not in zone_names(z):
                    err(f"{where}: asset {asset} is neither a host, a company domain nor a record owner")

    applicants = lab.get("applicants", [])
    companies = lab.get("companies", []) + applicants
    ids = [c["company"]["social_id"] for c in companies]
    for i in ids:
        if ids.count(i) > 1:
            err(f"social id {i} is used twice")
    for c in lab.get("companies", []):
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", c["company"]["social_id"]):
            err(f"social id {c['company']['social_id']} is not a lowercase slug")
    # An applicant's social id is the one onboarding makes: its domain.
    for c in applicants:
        if c["company"]["social_id"] != c["company"]["domain"]:
            err(f"applicant {c['company']['social_id']}: its social id is not its domain")
    by_rv = Counter()
    by_sev = Counter()
    by_code = Counter()
    total_clean = 0
    rows = []
    for ce in companies:
        c = ce["company"]
        sid = c["social_id"]
        fields("company_entry", ce, sid)
        fields("company", c, sid)
        if c.get("parent_social_id") and c["parent_social_id"] not in ids:
            err(f"{sid}: parent {c['parent_social_id']} is not a lab company")
        doms = {d["name"] for d in c["domains"]}
        if c["domain"] not in doms:
            err(f"{sid}: domain {c['domain']} not in domains[]")
        for d in doms:
            if d not in zones:
                err(f"{sid}: domain {d} has no zone")
        seen = Counter()
        for n, e in enumerate(ce["expected"]):
            where = f"{sid} expected[{n}] {e.get('code')}"
            fields("expected", e, where)
            rv, code, sev = e["risk_vector"], e["code"], e["severity"]
            if rv not in COMPONENTS:
                err(f"{where}: unknown risk vector {rv}")
            if code.split(".")[0] != rv:
                err(f"{where}: code prefix does not match risk vector {rv}")
            if sev not in SEVERITIES:
                err(f"{where}: unknown severity {sev}")
            if code not in vocab:
                err(f"{where}: code not in {FINDINGS.name}")
            elif vocab[code] not in (sev, "cvss", None):
                err(f"{where}: severity {sev} differs from the default {vocab[code]} in {FINDINGS.name}")
            wants_cve = code == "vulnerabilities.cve" or rv == "certificate_cve"
            if wants_cve != ("cve" in e):
                err(f"{where}: cve field {'missing' if wants_cve else 'not allowed'}")
            if "cve" in e and not re.fullmatch(r"CVE-\d{4}-\d{4,}", e["cve"]):
                err(f"{where}: bad CVE id {e['cve']}")
            check_asset(rv, code, e["asset"], where, doms)
            seen[(rv, e["asset"], code, e.get("cve"))] += 1
            by_rv[rv] += 1
            by_sev[sev] += 1
            by_code[code] += 1
        exp_assets = {e["asset"] for e in ce["expected"]}
        for a in ce.get("clean", []):
            if a in exp_assets:
                err(f"{sid}: clean asset {a} also carries an expected finding")
            if re.fullmatch(r"[a-z0-9.-]+:\d+", a):
                h, p = a.rsplit(":", 1)
                if not host_has(h, int(p)):
                    err(f"{sid}: clean asset {a} is not a lab service")
            elif a.startswith("http"):
                check_asset("web_headers", "", a, f"{sid} clean", doms)
            elif a not in hosts and a not in doms and not (zone_of(a) and a in zone_names(zone_of(a))):
                err(f"{sid}: clean asset {a} is unknown")
        total_clean += len(ce.get("clean", []))
        sevs = Counter(e["severity"] for e in ce["expected"])
        comps = sorted({e["risk_vector"] for e in ce["expected"]}, key=COMPONENTS.index)
        rows.append((sid, c.get("parent_social_id") or "", c["domain"], len(ce["expected"]),
                     " ".join(f"{s[0].upper()}{sevs[s]}" for s in reversed(SEVERITIES) if sevs[s]),
                     len(ce.get("clean", [])), ",".join(comps)))

    for ce in companies:
        others = {e["asset"] for o in companies if o is not ce for e in o["expected"]}
        for a in ce.get("clean", []):
            if a in others:
                err(f"{ce['company']['social_id']}: clean asset {a} carries a finding of another company")

    total = sum(by_rv.values())
    if len(companies) < 12:
        err(f"{len(companies)} companies (< 12)")
    if total < 80:
        err(f"{total} expected findings (< 80)")
    if total_clean < 10:
        err(f"{total_clean} clean assets (< 10)")
    missing = [c for c in COMPONENTS if not by_rv[c]]
    if missing:
        err(f"components without findings: {missing}")
    if not any(len(ce["expected"]) == 0 for ce in companies):
        err("no company is excellent (zero expected findings)")
    if len(hosts) > 120:
        err(f"{len(hosts)} hosts (> 120)")

    # Summary.
    print(f"lab file: {LAB}")
    print(f"{len(companies)} companies ({len(applicants)} of them applicants), {len(zones)} zones, {len(hosts)} hosts, "
          f"{total} expected findings, {total_clean} clean assets\n")
    w = max(len(r[0]) for r in rows)
    print(f"{'company':<{w}}  {'parent':<17} {'domain':<24} {'n':>3}  {'severities':<18} {'clean':>5}  components")
    for r in rows:
        print(f"{r[0]:<{w}}  {r[1]:<17} {r[2]:<24} {r[3]:>3}  {r[4]:<18} {r[5]:>5}  {r[6]}")
    print("\nper component:")
    for c in COMPONENTS:
        print(f"  {c:<20} {by_rv[c]:>3}")
    print("per severity: " + ", ".join(f"{s} {by_sev[s]}" for s in SEVERITIES))
    unused = sorted(set(vocab) - set(by_code))
    print(f"\n{len(vocab)} codes in {FINDINGS.name}, {len(by_code)} used by the lab; not used: {', '.join(unused) or '-'}")
    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
