#!/usr/bin/env python3
"""checkdmarc over the same lab domains, through the lab's DNS server (IP PORT N)."""
import sys
import time

import logging

import checkdmarc
import dns.nameserver
import dns.resolver

ip, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
resolver = dns.resolver.Resolver(configure=False)
resolver.nameservers = [ip]
resolver.port = port
resolver.cache = None
# checkdmarc's DNSSEC checks query `nameservers` themselves (over TCP); a plain address
# would mean port 53, so the lab server is given as a Nameserver object with its port.
nameservers = [dns.nameserver.Do53Nameserver(ip, port)]
failures = []


class Count(logging.Handler):
    def emit(self, record):
        failures.append(record.getMessage())


logging.getLogger().handlers = [Count()]
domains = [f"bench{i}.test" for i in range(n)]
start = time.perf_counter()
results = checkdmarc.check_domains(domains, nameservers=nameservers, resolver=resolver, timeout=2.0)
took = time.perf_counter() - start
ok = sum(1 for r in (results if isinstance(results, list) else [results]) if r.get("spf", {}).get("valid"))
print(f"checkdmarc {checkdmarc.__version__}: {n} domains in {took:.2f} s = {n / took:.1f} domains/s ({ok} valid SPF, "
      f"{len(failures)} logged failures{': ' + failures[0] if failures else ''})")
