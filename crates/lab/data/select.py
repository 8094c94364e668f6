#!/usr/bin/env python3
"""Writes every NVD record that names the lab's software, from the NVD data in DATA
(`nvd-1.1/*.json.gz`, NVD 1.1 feeds, and `nvd-2.0/*.json`, NVD API 2.0 records or
pages), to OUTDIR as two gzipped files in the feeds' own formats:
`nvd-lab.json.gz` (an NVD 1.1 feed) and `nvd-lab-2.0.json.gz` (an NVD 2.0 feed).

A record is taken when a CPE name of its configurations (vulnerable or not) is of a
vendor:product the lab's software is detected as, or of another name of that product
(`vulndb::aliases::ALIASES`, read from ALIASES_RS), or when its id is listed in IDS
(the CVEs the lab's findings name, e.g. certificate_cve's TLS CVEs). DETECTED holds the
lab's detections, one JSON array of software (each with `cpes`) a line: the
`detected_software.software` column of a demo's database.

The newest version of a record wins: a 2.0 record supersedes the 1.1 one, and within a
format the latest `lastModified` wins. Records are kept whole, in id order.

Usage: select.py DETECTED IDS ALIASES_RS DATA OUTDIR"""
import glob
import gzip
import json
import os
import re
import sys

detected_file, ids_file, aliases_rs, data, outdir = sys.argv[1:6]

# The detected products (vendor, product), then every other name of each.
products = set()
for line in open(detected_file):
    if line.strip():
        for software in json.loads(line):
            for cpe in software.get("cpes", []):
                attrs = cpe.split(":")
                products.add((attrs[3], attrs[4]))
detected = set(products)
source = open(aliases_rs).read()
table = source[source.index("pub const ALIASES") : source.index("];", source.index("pub const ALIASES"))]
for group in re.findall(r"&\[((?:\s*\(\"[^\"]+\",\s*\"[^\"]+\"\),?)+)\s*\]", table):
    names = set(re.findall(r"\(\"([^\"]+)\",\s*\"([^\"]+)\"\)", group))
    if names & detected:
        products |= names
ids = {line.strip() for line in open(ids_file) if line.strip()}


def names_product(criteria):
    attrs = criteria.split(":")
    return len(attrs) > 4 and (attrs[3], attrs[4]) in products


def criteria_11(nodes):
    for n in nodes:
        for m in n.get("cpe_match", []):
            yield m.get("cpe23Uri", "")
        yield from criteria_11(n.get("children", []))


def criteria_20(cve):
    for c in cve.get("configurations", []):
        for n in c.get("nodes", []):
            for m in n.get("cpeMatch", []):
                yield m.get("criteria", "")


items = {}
read_11 = 0
for path in sorted(glob.glob(f"{data}/nvd-1.1/*.json.gz")):
    for item in json.load(gzip.open(path))["CVE_Items"]:
        read_11 += 1
        cve = item["cve"]["CVE_data_meta"]["ID"]
        wanted = cve in ids or any(names_product(c) for c in criteria_11(item["configurations"]["nodes"]))
        if wanted and item.get("lastModifiedDate", "") >= items.get(cve, {}).get("lastModifiedDate", ""):
            items[cve] = item

records = {}
read_20 = 0
for path in sorted(glob.glob(f"{data}/nvd-2.0/*.json")):
    doc = json.load(open(path))
    for cve in [v["cve"] for v in doc["vulnerabilities"]] if "vulnerabilities" in doc else [doc]:
        read_20 += 1
        wanted = cve["id"] in ids or any(names_product(c) for c in criteria_20(cve))
        if wanted and cve["lastModified"] >= records.get(cve["id"], {}).get("lastModified", ""):
            records[cve["id"]] = cve
superseded = sorted(set(items) & set(records))
for cve in superseded:
    del items[cve]

feed_11 = {
    "CVE_data_type": "CVE",
    "CVE_data_format": "MITRE",
    "CVE_data_version": "4.0",
    "CVE_data_numberOfCVEs": str(len(items)),
    "CVE_data_timestamp": "2026-12-02T00:00Z",
    "CVE_Items": [items[k] for k in sorted(items)],
}
feed_20 = {
    "resultsPerPage": len(records),
    "startIndex": 0,
    "totalResults": len(records),
    "format": "NVD_CVE",
    "version": "2.0",
    "timestamp": "2026-12-02T00:00:00.000",
    "vulnerabilities": [{"cve": records[k]} for k in sorted(records)],
}
for name, feed in [("nvd-lab.json.gz", feed_11), ("nvd-lab-2.0.json.gz", feed_20)]:
    with gzip.GzipFile(os.path.join(outdir, name), "wb", compresslevel=9, mtime=0) as g:
        g.write(json.dumps(feed, separators=(",", ":")).encode())
    print(f"{name}: {os.path.getsize(os.path.join(outdir, name)):,} bytes")
print(f"products ({len(products)}): {' '.join(sorted(f'{v}:{p}' for v, p in products))}")
print(f"read {read_11} 1.1 and {read_20} 2.0 records; kept {len(items)} 1.1 and {len(records)} 2.0 records")
print(f"2.0 records that superseded a 1.1 one ({len(superseded)}): {' '.join(superseded)}")
print(f"listed ids absent from the data: {sorted(ids - set(items) - set(records))}")
