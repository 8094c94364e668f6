#!/usr/bin/env python3
"""Writes the NVD 1.1 records whose ids are listed in IDS (one per line), taken from the
gzipped NVD 1.1 feeds in FEEDS (the newest version of a record wins), to OUT as one
gzipped NVD 1.1 feed. Usage: select.py IDS FEEDS OUT"""
import glob
import gzip
import json
import sys

ids_file, feeds, out = sys.argv[1:4]
ids = {line.strip() for line in open(ids_file) if line.strip()}
items = {}
for path in sorted(glob.glob(f"{feeds}/*.json.gz")):
    for item in json.load(gzip.open(path))["CVE_Items"]:
        cve = item["cve"]["CVE_data_meta"]["ID"]
        if cve in ids and item.get("lastModifiedDate", "") >= items.get(cve, {}).get("lastModifiedDate", ""):
            items[cve] = item
feed = {
    "CVE_data_type": "CVE",
    "CVE_data_format": "MITRE",
    "CVE_data_version": "4.0",
    "CVE_data_numberOfCVEs": str(len(items)),
    "CVE_data_timestamp": "2026-11-28T00:00Z",
    "CVE_Items": [items[k] for k in sorted(items)],
}
with gzip.GzipFile(out, "wb", compresslevel=9, mtime=0) as g:
    g.write(json.dumps(feed, separators=(",", ":")).encode())
print(f"{len(items)} of {len(ids)} records; missing: {sorted(ids - set(items))}")
