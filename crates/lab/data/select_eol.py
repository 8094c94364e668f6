"""Selects the endoflife.date products the built-in lab's software maps to.

Usage: python3 select_eol.py ../shared/data/endoflife/endoflife_products_all.json eol-lab.json

A product is kept when one of its CPE identifiers names the vendor and product of
software the lab's hosts show (the CPE prefixes below: those of the SBOM of a demo scan).
"""
import json
import sys

LAB_CPES = [
    "cpe:2.3:a:apache:http_server", "cpe:2.3:a:atlassian:confluence_server",
    "cpe:2.3:a:elastic:elasticsearch", "cpe:2.3:a:exim:exim", "cpe:2.3:a:f5:nginx",
    "cpe:2.3:a:jquery:jquery", "cpe:2.3:a:memcached:memcached", "cpe:2.3:a:mongodb:mongodb",
    "cpe:2.3:a:openbsd:openssh", "cpe:2.3:a:openssl:openssl", "cpe:2.3:a:oracle:mysql",
    "cpe:2.3:a:php:php", "cpe:2.3:a:postfix:postfix", "cpe:2.3:a:postgresql:postgresql",
    "cpe:2.3:a:redis:redis", "cpe:2.3:a:vsftpd_project:vsftpd", "cpe:2.3:a:wordpress:wordpress",
]


def cpes(product):
    for ident in product.get("identifiers", []):
        value = ident.get("cpe") or (ident.get("id") if ident.get("type") == "cpe" else None)
        if value:
            yield value


def main():
    source, out = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        products = json.load(f)
    kept = {
        name: p for name, p in sorted(products.items())
        if any(c == lab or c.startswith(lab + ":") for c in cpes(p) for lab in LAB_CPES)
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(kept, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    print(f"{len(kept)} products: {', '.join(kept)}")


if __name__ == "__main__":
    main()
