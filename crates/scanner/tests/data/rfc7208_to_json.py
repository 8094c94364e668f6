#!/usr/bin/env python3
"""Converts the openspf.org RFC 7208 test suite (rfc7208-tests.yml, several YAML
documents) into rfc7208-tests.json for crates/scanner/tests/spf_rfc7208.rs.

Usage (see README.md beside this file):
    python3 rfc7208_to_json.py pyspf-2.0.14/test/rfc7208-tests.yml rfc7208-tests.json

Kept: each scenario's description, zonedata (as the YAML has it: names in order, each
with its entries, "TIMEOUT" and {"TYPE": data}) and tests (name, spec, helo, host,
mailfrom, and result, always a list). Dropped: descriptions, comments and explanations of
the tests, which the Rust test does not read.
"""

import json
import sys

import yaml  # PyYAML


def convert(documents):
    scenarios = []
    for doc in documents:
        if not doc:
            continue
        tests = []
        for name, t in doc["tests"].items():
            result = t["result"]
            tests.append(
                {
                    "name": name,
                    "spec": str(t["spec"]),
                    "helo": t["helo"],
                    "host": t["host"],
                    "mailfrom": t["mailfrom"],
                    "result": result if isinstance(result, list) else [result],
                }
            )
        zonedata = [[name, entries] for name, entries in (doc.get("zonedata") or {}).items()]
        scenarios.append({"description": doc["description"], "zonedata": zonedata, "tests": tests})
    return scenarios


def dumps(scenarios):
    """JSON, one zone name or test a line (ASCII: other characters as \\u escapes)."""

    def one(value):
        return json.dumps(value, ensure_ascii=True)

    out = ["["]
    for i, s in enumerate(scenarios):
        out.append(" {\"description\": %s," % one(s["description"]))
        out.append('  "zonedata": [')
        out.append(",\n".join("   " + one(z) for z in s["zonedata"]))
        out.append("  ],")
        out.append('  "tests": [')
        out.append(",\n".join("   " + one(t) for t in s["tests"]))
        out.append("  ]}" + ("," if i + 1 < len(scenarios) else ""))
    out.append("]")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        scenarios = convert(yaml.safe_load_all(f))
    with open(sys.argv[2], "w", encoding="ascii") as f:
        f.write(dumps(scenarios))
    print(f"{sum(len(s['tests']) for s in scenarios)} tests in {len(scenarios)} scenarios", file=sys.stderr)


if __name__ == "__main__":
    main()
