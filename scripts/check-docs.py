#!/usr/bin/env python3
"""Checks that the maps of the repository point at things that exist.

For ARCHITECTURE.md and docs/PERFORMANCE.md: every repository path named in inline
code, in a fenced code block or as a link target must exist, relative to the repository
root. A word counts as a path when it contains `/` or ends in a known file extension;
`path:12` and `file.rs::test_name` are checked for their path.
Skipped: glob-like forms and placeholders (any word with `*`, `<` or `{`), absolute
paths and URL paths (`/metrics`, `/proc/PID/stat`), URLs, paths outside the repository
(`../shared/data/...`), build outputs (`target/...`), address ranges (`127.0.0.0/8`),
and words with characters no path here has (`?`, `=`, `|`, `$`, ...).

ARCHITECTURE.md must also stay under 12,288 bytes.

Standard library only; runs from any directory. Exit 0 when all is well, else 1 with
one line per problem.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DOCUMENTS = ["ARCHITECTURE.md", "docs/PERFORMANCE.md"]
SIZE_LIMITS = {"ARCHITECTURE.md": 12_288}

EXTENSIONS = (
    ".rs", ".md", ".sql", ".toml", ".sh", ".py", ".json", ".jsonl", ".lua", ".js",
    ".css", ".tsv", ".gz", ".yml", ".yaml", ".lock", ".txt", ".pem",
)
PATH_WORD = re.compile(r"^[A-Za-z0-9_.\-/+@]+$")
ADDRESS_RANGE = re.compile(r"^[0-9a-fA-F.:]+/[0-9]+$")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
# Punctuation that may close or open a path written in a sentence or a command.
STRIP = "\"'()[],;:"


def candidate(word):
    """The repository path `word` names, or None when it names none."""
    word = word.split("::", 1)[0]  # `file.rs::test_name`
    word = re.sub(r"(:[0-9]+)+$", "", word)  # `file.rs:12`
    word = word.strip(STRIP)
    while word.endswith((".", ",")) and not word.endswith(".."):
        word = word[:-1]
    if not word or any(c in word for c in "*<{"):
        return None
    if "/" not in word and not word.endswith(EXTENSIONS):
        return None
    if "://" in word or word.startswith(("/", "~", "../", "target/")):
        return None
    if not PATH_WORD.match(word) or ADDRESS_RANGE.match(word):
        return None
    if word.startswith("./"):
        word = word[2:]
    return word or None


def code_and_links(text):
    """(line number, text) pieces of `text` that may name paths: code and link targets."""
    pieces = []
    lines = text.split("\n")
    prose = []  # the lines outside fenced blocks, fenced lines blanked
    in_fence = False
    for number, line in enumerate(lines, start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            prose.append("")
            continue
        if in_fence:
            pieces.append((number, line))
            prose.append("")
        else:
            prose.append(line)
    # Inline code does not cross a blank line: look for it paragraph by paragraph.
    start = 0
    paragraph = []
    for number, line in enumerate(prose + [""], start=1):
        if line.strip():
            if not paragraph:
                start = number
            paragraph.append(line)
            continue
        if paragraph:
            block = "\n".join(paragraph)
            for m in INLINE_CODE.finditer(block):
                pieces.append((start + block.count("\n", 0, m.start()), m.group(2)))
            for m in LINK.finditer(block):
                target = m.group(1).split("#", 1)[0]
                if target and not re.match(r"^[a-z]+:", target):
                    pieces.append((start + block.count("\n", 0, m.start()), target))
            paragraph = []
    return pieces


def check(document):
    problems = []
    path = os.path.join(ROOT, document)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return [f"{document}: cannot be read ({e.strerror})"]
    limit = SIZE_LIMITS.get(document)
    if limit is not None and len(data) > limit:
        problems.append(f"{document}: {len(data):,} bytes, over the limit of {limit:,}")
    text = data.decode("utf-8", errors="replace")
    seen = set()
    for number, piece in code_and_links(text):
        for word in piece.split():
            name = candidate(word)
            if name is None or (number, name) in seen:
                continue
            seen.add((number, name))
            if not os.path.exists(os.path.join(ROOT, name)):
                problems.append(f"{document}:{number}: {name} does not exist")
    return problems


def main():
    problems = []
    for document in DOCUMENTS:
        problems.extend(check(document))
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check-docs: {', '.join(DOCUMENTS)} name only paths that exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
