#!/usr/bin/env python3
"""Writes the vendors' advisories of the lab's software (the directories of
../shared/data/vendor-advisories named below) to OUT as one gzipped JSON object: each
file's path under that folder → its text, verbatim. Usage: bundle_advisories.py DIR OUT"""
import gzip
import json
import os
import sys

src, out = sys.argv[1:3]
bundle = {}
for sub in ["httpd", "nginx", "openssl", "ghsa-npm-jquery"]:
    for name in sorted(os.listdir(os.path.join(src, sub))):
        if name.endswith((".json", ".xml")):
            with open(os.path.join(src, sub, name), encoding="utf-8") as f:
                bundle[f"{sub}/{name}"] = f.read()
with gzip.GzipFile(out, "wb", compresslevel=9, mtime=0) as g:
    g.write(json.dumps(bundle, sort_keys=True, separators=(",", ":")).encode())
print(f"{len(bundle)} files, {os.path.getsize(out)} bytes")
