#!/usr/bin/env python3
"""How much of the store's SQLite backend appears again in its PostgreSQL backend.

Lines are compared once placeholders (`?1`, `$1`, `CAST(?1 AS INTEGER)`), pool and
connection expressions and backend type names are normalised; blank lines, comments and
lines of punctuation only are left out. Prints the lines of `crates/store/src`, each
backend's lines, and the SQLite lines that appear again in the PostgreSQL backend
(as a multiset: a line written three times in one and twice in the other counts twice).
"""
import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "crates" / "store" / "src"

SUBS = [
    (r"CAST\(\?(\d+) AS INTEGER\)", r"$\1"),
    (r"\?(\d+)", r"$\1"),
    (r"&mut \*self\.read\.get\(\)\.await\?", "CONN"),
    (r"&self\.pool", "CONN"),
    (r"\bSqliteStore\b|\bPgStore\b", "Store"),
    (r"\bSqliteRow\b|\bPgRow\b", "Row"),
    (r"\bSqliteConnection\b|\bPgConnection\b", "Connection"),
    (r"\bSqlitePool\b|\bPgPool\b", "Pool"),
    (r"\bSqlite\b|\bPostgres\b", "Db"),
    (r"COLLATE \\?\"C\\?\"", ""),
    (r"\s+", " "),
]


def lines(directory: pathlib.Path):
    out = []
    for path in sorted(directory.rglob("*.rs")):
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if not line or line.startswith("//") or not re.search(r"[A-Za-z0-9]", line):
                continue
            for pattern, repl in SUBS:
                line = re.sub(pattern, repl, line)
            out.append(line.strip())
    return out


def nonblank(paths):
    return sum(1 for p in paths for l in p.read_text().splitlines() if l.strip())


def main() -> int:
    sqlite, postgres = lines(ROOT / "sqlite"), lines(ROOT / "postgres")
    pg = collections.Counter(postgres)
    again = 0
    for line in sqlite:
        if pg[line] > 0:
            pg[line] -= 1
            again += 1
    total = nonblank(list(ROOT.rglob("*.rs")))
    print(f"crates/store/src: {total} non-blank lines")
    print(f"sqlite/: {len(sqlite)} code lines, postgres/: {len(postgres)} code lines")
    print(f"sqlite lines that appear again in postgres: {again} of {len(sqlite)} ({100 * again / max(1, len(sqlite)):.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
