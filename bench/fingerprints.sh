#!/usr/bin/env bash
# Fingerprinting: rampart's engine (crates/scanner/src/fingerprint, the fingerprint_bench
# example) beside python-Wappalyzer 0.3.1 (PyPI; BeautifulSoup + re), both over the same
# MIT-licensed Wappalyzer 6.10.47 technologies in ../shared/data/wappalyzer, on the same
# pages: the 41 page fixtures of crates/scanner/tests/fixtures/fingerprints (with their
# response headers) and one 200 KB page (the WordPress fixture with a long article), in
# the same run. Prints rules load time, pages per second, and where the two disagree on
# what a page runs. The rampart figure with its built-in rules is printed too.
#
# BENCH_FP_ROUNDS  times each page is analyzed (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${BENCH_FP_ROUNDS:-20}
RULES=../shared/data/wappalyzer
[ -d "$RULES/technologies" ] || { echo "fingerprints.sh: $RULES is not there" >&2; exit 1; }
work=target/bench-fingerprints
rm -rf "$work" && mkdir -p "$work/pages"

cargo build --release -q -p scanner --example fingerprint_bench
if [ ! -x target/bench-venv/bin/python ]; then
    python3 -m venv target/bench-venv
fi
target/bench-venv/bin/python -c 'import Wappalyzer' 2>/dev/null ||
    target/bench-venv/bin/pip install -q 'python-Wappalyzer==0.3.1'

# The pages: each fixture with its headers, and a large one.
python3 - "$work/pages" <<'PY'
import json, os, sys
out = sys.argv[1]
src = "crates/scanner/tests/fixtures/fingerprints"
cases = json.load(open(os.path.join(src, "cases.json")))
for case in cases["pages"]:
    html = open(os.path.join(src, case["file"]), encoding="utf-8").read()
    open(os.path.join(out, case["file"]), "w").write(html)
    with open(os.path.join(out, case["file"] + ".headers"), "w") as f:
        for k, v in case["headers"]:
            f.write(f"{k}: {v}\n")
wp = open(os.path.join(src, "wordpress.html"), encoding="utf-8").read()
para = "<p>Our bakers start at four every morning. Sourdough, rye and seeded loaves are shaped by hand, proved overnight and baked in a stone oven; pastries follow at six. <a href=\"/menu/\">See the menu</a>.</p>\n"
article = "<article>\n" + para * (200_000 // len(para)) + "</article>\n"
open(os.path.join(out, "large-wordpress.html"), "w").write(wp.replace("</body>", article + "</body>"))
open(os.path.join(out, "large-wordpress.html.headers"), "w").write(
    "".join(f"{k}: {v}\n" for k, v in cases["pages"][0]["headers"]))
PY
pages=$(ls "$work"/pages/*.html)
small=$(ls "$work"/pages/*.html | grep -v large-)

echo "pages: $(echo "$small" | wc -l) fixtures ($(cat $small | wc -c) bytes of HTML) + large-wordpress.html ($(wc -c < "$work/pages/large-wordpress.html") bytes); $ROUNDS rounds"
./target/release/examples/fingerprint_bench "$RULES" "$ROUNDS" $small > "$work/rampart.json"
./target/release/examples/fingerprint_bench builtin "$ROUNDS" $small > "$work/rampart-builtin.json"
./target/release/examples/fingerprint_bench "$RULES" "$ROUNDS" "$work/pages/large-wordpress.html" > "$work/rampart-large.json"
target/bench-venv/bin/python bench/fingerprints_peer.py "$RULES" "$ROUNDS" $small > "$work/peer.json"
target/bench-venv/bin/python bench/fingerprints_peer.py "$RULES" "$ROUNDS" "$work/pages/large-wordpress.html" > "$work/peer-large.json"

python3 - "$work" <<'PY'
import json, os, sys
w = sys.argv[1]
r = lambda n: json.load(open(os.path.join(w, n)))
ours, builtin, peer, ours_l, peer_l = r("rampart.json"), r("rampart-builtin.json"), r("peer.json"), r("rampart-large.json"), r("peer-large.json")
print(f"{'engine (rules)':<52} {'load ms':>9} {'pages/s (fixtures)':>19} {'pages/s (200 KB)':>17}")
for name, a, b in [("rampart (Wappalyzer 6.10.47, %d technologies)" % ours["technologies"], ours, ours_l),
                   ("python-Wappalyzer 0.3.1 (same %d technologies)" % peer["technologies"], peer, peer_l)]:
    print(f"{name:<52} {a['load_ms']:>9.0f} {a['pages_per_second']:>19.0f} {b['pages_per_second']:>17.1f}")
print(f"{'rampart (built-in, %d technologies)' % builtin['technologies']:<52} {builtin['load_ms']:>9.1f} {builtin['pages_per_second']:>19.0f} {'':>17}")
print(f"speed-up on the fixtures: {ours['pages_per_second'] / peer['pages_per_second']:.1f}x; on the 200 KB page: {ours_l['pages_per_second'] / peer_l['pages_per_second']:.1f}x")
# Agreement on names (versions compared where both give one).
both = only_ours = only_peer = vdiff = 0
diffs = []
split = lambda t: (t.split(" ")[0] if False else t)
def parse(items):
    out = {}
    for t in items:
        # "Name 1.2.3" -> (Name, 1.2.3); names may contain spaces: the version is the last word when it starts with a digit
        parts = t.rsplit(" ", 1)
        if len(parts) == 2 and parts[1][:1].isdigit():
            out[parts[0]] = parts[1]
        else:
            out[t] = None
    return out
for a, b in zip(ours["found"], peer["found"]):
    x, y = parse(a["technologies"]), parse(b["technologies"])
    page = os.path.basename(a["page"])
    for n in sorted(set(x) | set(y)):
        if n in x and n in y:
            both += 1
            if x[n] and y[n] and x[n] != y[n]:
                vdiff += 1
                diffs.append(f"{page}: {n} version {x[n]} (rampart) vs {y[n]} (peer)")
        elif n in x:
            only_ours += 1
            diffs.append(f"{page}: {n}{' ' + x[n] if x[n] else ''} found by rampart only")
        else:
            only_peer += 1
            diffs.append(f"{page}: {n}{' ' + y[n] if y[n] else ''} found by the peer only")
print(f"detections on the fixtures: {both} by both ({vdiff} with different versions), {only_ours} by rampart only, {only_peer} by the peer only")
for d in diffs:
    print("  " + d)
PY
