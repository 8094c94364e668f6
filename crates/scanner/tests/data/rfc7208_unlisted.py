#!/usr/bin/env python3
"""Which RFC 7208 suite tests' results depend on the client: runs pyspf's own driver
(test/testspf.py of the pyspf 2.0.14 sdist, which serves each scenario's zonedata) for
every test with the test's client and with a client no record lists, of the same
address family (203.0.113.77 or 2001:db8:dead::77), and prints the tests whose result
is a permerror for one and not for the other. spf_rfc7208.rs's CLIENT_DEPENDENT names
them (its rule 2).

Usage, from the sdist's test/ directory, with dnspython and PyYAML installed:
    python3 path/to/rfc7208_unlisted.py
"""

import ipaddress
import sys

import yaml

sys.path[:0] = [".", ".."]
import spf  # noqa: E402  (the sdist's spf.py)
import testspf  # noqa: E402  (its driver: replaces spf.DNSLookup with the zonedata)

UNLISTED = {4: "203.0.113.77", 6: "2001:db8:dead::77"}


def main():
    with open("rfc7208-tests.yml", "rb") as f:
        documents = [d for d in yaml.safe_load_all(f) if d]
    for doc in documents:
        scenario = testspf.SPFScenario(data=doc)
        testspf.zonedata.clear()
        testspf.zonedata.update(scenario.zonedata)
        for name, t in scenario.tests.items():
            family = ipaddress.ip_address(t.host).version
            results = []
            for client in (t.host, UNLISTED[family]):
                results.append(spf.query(i=client, s=t.mailfrom, h=t.helo, strict=t.strict).check())
            (mine, _, _), (theirs, _, why) = results
            if (mine == "permerror") != (theirs == "permerror"):
                print(f"{doc['description']} / {name}: client {t.host} {mine}; unlisted {UNLISTED[family]} {theirs} ({why})")


if __name__ == "__main__":
    main()
