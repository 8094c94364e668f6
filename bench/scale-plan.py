#!/usr/bin/env python3
"""Rating every registered domain daily, on paper: the measured figures of this
machine (docs/PERFORMANCE.md, ./bench/scale.sh and the sizing run in docs/SCALE.md)
turned into machine counts. Every input is a flag; the defaults are the measurements
and the stated assumptions. Usage: bench/scale-plan.py [--domains N] [--hosts-per-company H] …
"""

import argparse
import math

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
# The target.
p.add_argument("--domains", type=float, default=370e6, help="companies rated (registered domains: ~370 million)")
p.add_argument("--scans-per-day", type=float, default=1.0, help="full scans of each company a day")
# Measured (2026-11-26, built-in lab: 16 companies, 74 hosts; PostgreSQL 15 on 2 cores).
p.add_argument("--cpu-s-per-host", type=float, default=0.94 / 74, help="worker CPU-seconds per scanned host (measured: 0.94 s / 74 hosts)")
p.add_argument("--queue-jobs-per-s", type=float, default=2700, help="jobs leased+completed per second by one PostgreSQL (measured, 16 workers, 2 shared cores)")
p.add_argument("--findings-per-company", type=float, default=206 / 16, help="open findings per company (measured: 206 / 16)")
p.add_argument("--finding-bytes", type=float, default=80733 / 206, help="bytes per finding row (measured)")
p.add_argument("--rating-bytes", type=float, default=(1309 + 126087) / 16, help="bytes per rating: score + 12 component rows with their checks (measured)")
p.add_argument("--rating-summary-bytes", type=float, default=1309 / 16 + 12 * 48, help="bytes per rating without the checks detail (score + 12 × id, score, grade)")
p.add_argument("--asset-bytes", type=float, default=(11468 + 19333 + 10080 + 9048) / 16, help="bytes of hosts, endpoints, applications, SBOM per company (measured)")
p.add_argument("--row-writes-per-scan", type=float, default=13 + 13 + 12, help="rows written per daily scan: findings refreshed, rating rows, assets refreshed")
p.add_argument("--api-req-per-core", type=float, default=5000, help="API answers per core and second over a mix, cache misses included (measured 2026-11-29 on 2 cores shared with wrk: the operations with answers under 16 KB at 66-107 k req/s with answers kept, so 35-50 k/core; answers read afresh from the store are slower)")
# Assumptions (not measurable on the lab; stated).
p.add_argument("--hosts-per-company", type=float, default=20, help="internet-facing hosts of a real company (assumption; the lab has 4.6)")
p.add_argument("--scan-wall-s", type=float, default=120, help="wall time of a real scan, mostly waiting on the network (assumption)")
p.add_argument("--scans-in-flight-per-core", type=float, default=200, help="concurrent scans one worker core sustains (sockets, memory; assumption)")
p.add_argument("--cores-per-machine", type=float, default=32)
p.add_argument("--primary-row-writes-per-s", type=float, default=50000, help="sustained row writes one PostgreSQL primary takes (assumption for a large machine with NVMe)")
p.add_argument("--api-req-per-day", type=float, default=50e6, help="API requests a day from all customers (assumption)")
p.add_argument("--headroom", type=float, default=2.0, help="capacity over the average rate (peaks, retries, rescans)")
a = p.parse_args()

scans_per_s = a.domains * a.scans_per_day / 86400
cpu_cores = scans_per_s * a.hosts_per_company * a.cpu_s_per_host * a.headroom
flight_cores = scans_per_s * a.scan_wall_s / a.scans_in_flight_per_core * a.headroom
worker_cores = max(cpu_cores, flight_cores)
queue_shards = math.ceil(scans_per_s * a.headroom / a.queue_jobs_per_s)
row_writes = scans_per_s * a.row_writes_per_scan
write_shards = math.ceil(row_writes * a.headroom / a.primary_row_writes_per_s)
history_full = a.domains * a.scans_per_day * 365 * a.rating_bytes
history_summary = a.domains * a.scans_per_day * 365 * a.rating_summary_bytes + a.domains * a.rating_bytes
current = a.domains * (a.findings_per_company * a.finding_bytes + a.asset_bytes)
api_rps = a.api_req_per_day / 86400 * a.headroom * 5  # the busiest hour at 5× the average
api_cores = api_rps / a.api_req_per_core


def tb(b):
    return f"{b / 1e12:,.1f} TB"


print(f"target: {a.domains:,.0f} companies, {a.scans_per_day:g} scan(s) a day -> {scans_per_s:,.0f} scans/s on average")
print()
print("workers")
print(f"  CPU:         {scans_per_s:,.0f} scans/s x {a.hosts_per_company:g} hosts x {a.cpu_s_per_host * 1000:.1f} ms/host x {a.headroom:g} = {cpu_cores:,.0f} cores")
print(f"  in flight:   {scans_per_s:,.0f} scans/s x {a.scan_wall_s:g} s = {scans_per_s * a.scan_wall_s:,.0f} scans at once; / {a.scans_in_flight_per_core:g} per core x {a.headroom:g} = {flight_cores:,.0f} cores")
print(f"  -> {worker_cores:,.0f} worker cores = {math.ceil(worker_cores / a.cores_per_machine):,} machines of {a.cores_per_machine:g} cores "
      f"({'waiting on the network' if flight_cores > cpu_cores else 'CPU'} decides)")
print()
print("queue")
print(f"  {scans_per_s * a.headroom:,.0f} jobs/s with headroom vs {a.queue_jobs_per_s:,.0f}/s measured on one PostgreSQL -> {queue_shards} queue shard(s) by company hash")
print()
print("database writes")
print(f"  {scans_per_s:,.0f} scans/s x {a.row_writes_per_scan:g} rows = {row_writes:,.0f} row writes/s; one primary takes ~{a.primary_row_writes_per_s:,.0f}/s"
      f" -> {write_shards} write shard(s) (findings and history partitioned by company: native partitions, then Citus)")
print()
print("storage")
print(f"  current state (open findings + assets): {tb(current)}")
print(f"  rating history a year, every rating with its checks detail:  {tb(history_full)}")
print(f"  rating history a year, checks kept for the latest rating only: {tb(history_summary)}")
print()
print("API")
print(f"  {a.api_req_per_day:,.0f} requests a day, busiest hour at 5x and {a.headroom:g}x headroom = {api_rps:,.0f} req/s"
      f" -> {max(1, math.ceil(api_cores)):,} API core(s); reads from replicas")
