#!/usr/bin/env python3
"""Onboarding at speed, against a generated lab (docs/PERFORMANCE.md, "Onboarding").

    python3 bench/onboard.py [RAMPART_BINARY]      # target/release/rampart by default

1. Quick ratings: 20 lab companies onboarded one at a time through
   POST /portfolio-add-companies; each request's time to its first rating (the first
   200 of /underwriter-getcompanyscores), median and worst, and its depth.
2. Bulk: 1,000 new lab domains in one request (its time); then how the queue runs them
   while the first 20 are due for their scheduled rescans (--rescan-every 1m): when the
   1,000 quick ratings are all in, when the 1,000 full scans are, and how long the
   scheduled rescans waited meanwhile (queued to started) beside their wait before.

One server (`serve --workers 2`, lab mode) on a fresh SQLite file; everything on
127.0.0.0/8. Needs only the Python standard library.
"""
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/rampart"
NET = "127.79"  # addresses of this bench's lab (the built-in lab is on 127.78)
QUICK, BULK = 20, 1000


def lab_file(path):
    zones, hosts = [{"origin": "test", "dnssec": False}], []
    names = [f"quick{i:02d}.test" for i in range(QUICK)] + [f"bulk{i:04d}.test" for i in range(BULK)]
    for n, dom in enumerate(names):
        zones.append({"origin": dom, "records": ["@ MX 10 mail", "@ TXT \"v=spf1 mx -all\"",
                                                 "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:d@" + dom + "\""]})
        addr = f"{NET}.{n // 250 + 1}.{n % 250 + 2}"
        title = dom.split(".")[0].capitalize() + " Ltd | home of " + dom
        hosts.append({"name": f"www.{dom}", "address": addr, "services": [
            {"port": 80, "kind": "http", "http": {"pages": [
                {"path": "/", "body": f"<html><head><title>{title}</title></head><body>hi</body></html>"}]}}]})
    json.dump({"dns": {"address": f"{NET}.250.53"}, "zones": zones, "hosts": hosts}, open(path, "w"))
    return names[:QUICK], names[QUICK:]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(base, key, path, body=None):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers={"apikey": key, "content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def main():
    work = tempfile.mkdtemp(prefix="rampart-onboard-")
    quick, bulk = lab_file(f"{work}/lab.json")
    db = f"{work}/o.db"
    env = dict(os.environ, RAMPART_LOG="warn", RAMPART_SYNC_EVERY="off")
    env.pop("RAMPART_DB", None)
    lab = subprocess.Popen([BIN, "lab", "up", "--file", f"{work}/lab.json", "--out", f"{work}/lab"], env=env,
                           stdout=subprocess.DEVNULL, stderr=open(f"{work}/lab.err", "w"))
    for _ in range(600):
        if os.path.exists(f"{work}/lab/scanner.json"):
            break
        time.sleep(0.1)
    subprocess.run([BIN, "orgs", "create", "--db", f"sqlite://{db}", "Bench Desk"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    key = subprocess.run([BIN, "keys", "create", "--db", f"sqlite://{db}", "--name", "uw", "--scopes", "underwriter",
                          "--org", "Bench Desk"], env=env, check=True, capture_output=True, text=True).stdout.strip()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([BIN, "serve", "--db", f"sqlite://{db}", "--listen", f"127.0.0.1:{port}",
                               "--workers", "2", "--rescan-every", "1m", "--lab", f"{work}/lab"], env=env,
                              stdout=subprocess.DEVNULL, stderr=open(f"{work}/serve.err", "w"))
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        book = call(base, key, "/portfolio-create", {"name": "Bench"})[1]["portfolio_id"]

        # 1. Quick ratings, one at a time.
        took, depths, quick_jobs = [], [], []
        con = sqlite3.connect(db, timeout=30)
        for dom in quick:
            t0, wall = time.monotonic(), time.time()
            status, out = call(base, key, "/portfolio-add-companies", {"portfolio_id": book, "companies": [{"domain": dom}]})
            assert status == 200 and out["results"][0]["status"] == "queued", out
            while True:
                status, v = call(base, key, f"/underwriter-getcompanyscores?social_id={dom}")
                if status == 200:
                    took.append(time.monotonic() - t0)
                    depths.append(v.get("depth"))
                    done = con.execute("SELECT updated_at FROM jobs WHERE kind = 'quick' AND status = 'done' "
                                       "AND payload LIKE ?", (f'%"{dom}"%',)).fetchone()
                    if done:
                        from datetime import datetime
                        quick_jobs.append(datetime.fromisoformat(done[0].replace("Z", "+00:00")).timestamp() - wall)
                    break
                if time.monotonic() - t0 > 60:
                    raise SystemExit(f"{dom}: not rated in 60 s: {v}")
                time.sleep(0.02)
        named = call(base, key, f"/underwriter-getcompanyscores?social_id={quick[0]}")[1]["company_name"]
        print(f"quick rating, request to rated ({QUICK} companies one at a time): "
              f"median {statistics.median(took):.2f} s, worst {max(took):.2f} s; depths {sorted(set(depths))}; "
              f"{quick[0]} named {named!r}")
        if quick_jobs:
            print(f"  the quick rating itself written (its job done): median {statistics.median(quick_jobs):.2f} s, "
                  f"worst {max(quick_jobs):.2f} s after the request; the first answer read is the rating then "
                  f"latest (a full one when the full scan finished first)")

        # 2. Bulk, once the first 20 are due for their scheduled rescans.
        time.sleep(65)
        rows = [{"domain": d, "tier": i % 4 + 1} for i, d in enumerate(bulk)]
        t0 = time.monotonic()
        status, out = call(base, key, "/portfolio-add-companies", {"portfolio_id": book, "companies": rows})
        request = time.monotonic() - t0
        assert status == 200, out
        print(f"add-companies, {BULK} new lab domains in one request: {request:.2f} s ({out['counts']})")
        started = time.time()
        quick_done = full_done = None
        while time.time() - started < 1800:
            q = con.execute("SELECT count(*) FROM jobs WHERE kind = 'quick' AND status = 'done' "
                            "AND payload LIKE '%bulk%'").fetchone()[0]
            f = con.execute("SELECT count(*) FROM jobs WHERE kind = 'scan' AND status = 'done' "
                            "AND payload LIKE '%bulk%'").fetchone()[0]
            if q >= BULK and quick_done is None:
                quick_done = time.time() - started
            if f >= BULK:
                full_done = time.time() - started
                break
            time.sleep(0.5)
        print(f"  all {BULK} quick ratings in {quick_done:.1f} s after the answer; all {BULK} full scans in "
              f"{full_done:.1f} s" if full_done else f"  not done in 30 min (quick {quick_done})")

        def waits(since, until):
            rows = con.execute("SELECT started_at, created_at FROM jobs WHERE kind = 'scan' AND status = 'done' "
                               "AND payload LIKE '%quick%' AND created_at >= ? AND created_at < ?",
                               (since, until)).fetchall()
            from datetime import datetime
            parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
            return [(parse(s) - parse(c)).total_seconds() for s, c in rows if s]

        def iso(t):
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))

        before = waits("0", iso(started - request))
        during = waits(iso(started - request), iso(started + (full_done or 0)))
        for what, w in (("before the bulk", before), ("during it", during)):
            if w:
                print(f"  scheduled rescans {what}: {len(w)}, waited median {statistics.median(w):.1f} s, "
                      f"worst {max(w):.1f} s (queued to started)")
            else:
                print(f"  scheduled rescans {what}: none")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        lab.send_signal(signal.SIGTERM)
        lab.wait(timeout=30)
    print(f"(work files in {work})")


if __name__ == "__main__":
    main()
