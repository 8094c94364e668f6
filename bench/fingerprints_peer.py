"""The peer of the fingerprint benchmark: python-Wappalyzer 0.3.1 (BeautifulSoup + re)
over the same Wappalyzer 6.10.47 technologies rampart loads, on the same pages.

python-Wappalyzer predates that release's format, so the rules are adapted the least that
lets it read them: `scriptSrc` is its `scripts` (script URLs), and a header or meta
pattern given as a list is tried pattern by pattern (it expects one string). It has no
cookies, and it keeps detections inside the technology objects across pages, so they
are cleared before each page. Prints one JSON line in the shape of rampart's
fingerprint_bench example.

usage: fingerprints_peer.py WAPPALYZER_DIR ROUNDS PAGE...   (PAGE.headers beside a page)
"""
import glob
import json
import os
import re
import sys
import time
import warnings

warnings.filterwarnings("ignore")
from Wappalyzer import Wappalyzer, WebPage  # noqa: E402


class Peer(Wappalyzer):
    def _prepare_technology(self, technology):
        if "scriptSrc" in technology:
            technology["scripts"] = technology.pop("scriptSrc")
        lists = {}
        for key in ("headers", "meta"):
            obj = technology.get(key)
            if isinstance(obj, dict):
                for name, pattern in list(obj.items()):
                    if isinstance(pattern, list):
                        lists.setdefault(key, {})[name.lower()] = pattern[1:]
                        obj[name] = pattern[0] if pattern else ""
        super()._prepare_technology(technology)
        technology["_more"] = {
            key: {name: [self._prepare_pattern(p) for p in pats] for name, pats in by_name.items()}
            for key, by_name in lists.items()
        }

    def _has_technology(self, technology, webpage):
        found = super()._has_technology(technology, webpage)
        for key, by_name in technology.get("_more", {}).items():
            seen = webpage.headers if key == "headers" else webpage.meta
            for name, patterns in by_name.items():
                if name in seen:
                    for pattern in patterns:
                        if pattern["regex"].search(seen[name]):
                            self._set_detected_app(technology, key, pattern, seen[name], name)
                            found = True
        return found

    def fresh(self):
        for t in self.technologies.values():
            for key in ("detected", "versions", "confidence", "confidenceTotal"):
                t.pop(key, None)


def main():
    rules_dir, rounds, pages = sys.argv[1], max(1, int(sys.argv[2])), sys.argv[3:]
    started = time.perf_counter()
    technologies = {}
    for path in sorted(glob.glob(os.path.join(rules_dir, "technologies", "*.json"))):
        with open(path, encoding="utf-8") as f:
            technologies.update(json.load(f))
    with open(os.path.join(rules_dir, "categories.json"), encoding="utf-8") as f:
        categories = json.load(f)
    peer = Peer(categories, technologies)
    load_ms = (time.perf_counter() - started) * 1000
    inputs = []
    for page in pages:
        with open(page, encoding="utf-8", errors="replace") as f:
            html = f.read()
        headers = {}
        if os.path.exists(page + ".headers"):
            with open(page + ".headers", encoding="utf-8") as f:
                for line in f:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
        inputs.append((page, html, headers))
    found = []
    started = time.perf_counter()
    for r in range(rounds):
        for page, html, headers in inputs:
            peer.fresh()
            # Parsing the page is part of the peer's analysis, as it is of ours.
            webpage = WebPage("https://www.example.org/", html, headers)
            result = peer.analyze_with_versions(webpage)
            if r == 0:
                names = sorted(
                    f"{name} {v['versions'][0]}" if v["versions"] else name for name, v in result.items()
                )
                found.append({"page": page, "technologies": names})
    secs = time.perf_counter() - started
    analyzed = rounds * len(inputs)
    print(json.dumps({
        "tool": "python-Wappalyzer 0.3.1",
        "technologies": len(technologies),
        "load_ms": load_ms,
        "pages": analyzed,
        "seconds": secs,
        "pages_per_second": analyzed / max(secs, 1e-9),
        "found": found,
    }))


if __name__ == "__main__":
    main()
