#!/usr/bin/env python3
"""checkdmarc over the same lab domains, through the lab's DNS server (IP PORT N)."""
import sys
import time

import checkdmarc
import dns.resolver

ip, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
resolver = dns.resolver.Resolver(configure=False)
resolver.nameservers = [ip]
resolver.port = port
resolver.cache = None
domains = [f"bench{i}.test" for i in range(n)]
start = time.perf_counter()
results = checkdmarc.check_domains(domains, resolver=resolver, timeout=2.0, skip_tls=True)
took = time.perf_counter() - start
ok = sum(1 for r in (results if isinstance(results, list) else [results]) if r.get("spf", {}).get("valid"))
print(f"checkdmarc {checkdmarc.__version__}: {n} domains in {took:.2f} s = {n / took:.1f} domains/s ({ok} valid SPF)")
