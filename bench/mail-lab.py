#!/usr/bin/env python3
"""Writes a lab file of N mail domains (bench0.test … benchN-1.test) for bench/mail.sh:
each with MX, an SPF record with an include, DMARC, a DKIM key at selector1, CAA and
TLS-RPT, its mail host on its own loopback address; and a shared SPF provider zone."""
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
out = sys.argv[2] if len(sys.argv) > 2 else "/dev/stdout"
# A real 2048-bit RSA SubjectPublicKeyInfo (a lab test key), split under 255 bytes.
KEY = ("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAqzcG4aX+TXQesAmqm9owU13ymzXANaWN1LsNAfg19JAYIS5VD5AVyk2XR6c9VxXczxAvi6mU6EQDCcZ0XjxdVZR7DDCg/IqGlHKnEz3YqUkACSRWFt8LrNsRJc6wJgr7LecAkzu0FboHfNnk4RTpnoGlZJzzVA5gA7uyKO2BAj3RSEW0RVC9WfG+vG36",
       "Lsg7TGVyNbonOxJP4I7EPTcNAAEnzN8qd4PRArdOV58msl0wejRpZ8OU4Mn2xTrekZYyTjXBP5b6EPNn53p1ohC617+SZIkSFpzFZDh/f/5rnbQ3JbcUrNQa39nGLvYCS5wKCrGpZpPhBe8SUkAyVCvIEQIDAQAB")
zones = [{"origin": "test", "dnssec": True},
         {"origin": "bench-provider.test", "records": ['_spf TXT "v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 -all"']}]
hosts = []
for i in range(n):
    d = f"bench{i}.test"
    policy = ["none", "quarantine", "reject"][i % 3]
    all_q = ["~all", "-all", "?all"][i % 3]
    zones.append({"origin": d, "dnssec": i % 4 == 0, "records": [
        "@ MX 10 mail",
        f'@ TXT "v=spf1 mx include:_spf.bench-provider.test {all_q}"',
        f'_dmarc TXT "v=DMARC1; p={policy}; rua=mailto:dmarc@{d}"',
        f'selector1._domainkey TXT "v=DKIM1; k=rsa; p={KEY[0]}" "{KEY[1]}"',
        '@ CAA 0 issue "lab-ca.test"',
        f'_smtp._tls TXT "v=TLSRPTv1; rua=mailto:tls@{d}"',
    ]})
    hosts.append({"name": f"mail.{d}", "address": f"127.60.{i // 250}.{i % 250 + 1}"})
lab = {"dns": {"address": "127.60.255.53"}, "port_map": {"53": 10053}, "zones": zones, "hosts": hosts}
with open(out, "w") as f:
    json.dump(lab, f)
