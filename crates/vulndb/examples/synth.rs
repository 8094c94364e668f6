//! A synthetic NVD 2.0 feed with realistic configuration shapes, for benchmarks at
//! scale: `synth COUNT OUT.json.gz [SEED]`.
//!
//! Shapes, in the proportions NVD shows: lists of exact versions (most CVEs), version
//! ranges (start/end, including/excluding), an application running on an OS (AND of a
//! vulnerable node and a platform node), firmware on hardware, and a few records with
//! no configuration. Vendors and products follow a skewed distribution, so some
//! products carry thousands of CVEs as the Linux kernel does.

use std::io::Write;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// Skewed choice: low indexes far more often.
    fn skewed(&mut self, n: u64) -> u64 {
        let a = self.below(n);
        let b = self.below(n);
        let c = self.below(n);
        a.min(b).min(c)
    }
}

fn version(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => format!("{}.{}.{}{}", rng.below(3), rng.below(3), rng.below(3), (b'a' + rng.below(26) as u8) as char),
        1 => format!("{}.{}.{}p{}", rng.below(10), rng.below(10), rng.below(10), rng.below(3) + 1),
        2 => format!("{}.{}.{}.{}", rng.below(20), rng.below(10), rng.below(10), rng.below(100)),
        _ => format!("{}.{}.{}", rng.below(20), rng.below(30), rng.below(60)),
    }
}

fn cpe(part: char, vendor: &str, product: &str, version: &str) -> String {
    format!("cpe:2.3:{part}:{vendor}:{product}:{version}:*:*:*:*:*:*:*")
}

fn exact(criteria: String, vulnerable: bool) -> serde_json::Value {
    serde_json::json!({"vulnerable": vulnerable, "criteria": criteria, "matchCriteriaId": "00000000-0000-0000-0000-000000000000"})
}

fn configurations(rng: &mut Rng, vendors: u64) -> serde_json::Value {
    // One CVE in twenty concerns one of ten "hot" products (a kernel, a browser, an OS),
    // which so collect thousands of CVEs each; the rest spread over a long tail.
    let (vendor, product) = if rng.below(20) == 0 {
        (format!("vendor{}", rng.below(10)), "product0".to_owned())
    } else {
        (format!("vendor{}", rng.skewed(vendors)), format!("product{}", rng.skewed(8)))
    };
    match rng.below(100) {
        0..=4 => serde_json::json!([]),
        5..=54 => {
            let n = 1 + rng.skewed(40);
            let matches: Vec<_> = (0..n).map(|_| exact(cpe('a', &vendor, &product, &version(rng)), true)).collect();
            serde_json::json!([{"nodes": [{"operator": "OR", "negate": false, "cpeMatch": matches}]}])
        }
        55..=84 => {
            let mut m = exact(cpe('a', &vendor, &product, "*"), true);
            let (lo, hi) = (version(rng), version(rng));
            let (lo, hi) = if lo < hi { (lo, hi) } else { (hi, lo) };
            if rng.below(2) == 0 {
                m["versionStartIncluding"] = lo.into();
            }
            m[if rng.below(3) == 0 { "versionEndIncluding" } else { "versionEndExcluding" }] = hi.into();
            serde_json::json!([{"nodes": [{"operator": "OR", "negate": false, "cpeMatch": [m]}]}])
        }
        85..=94 => {
            let app: Vec<_> =
                (0..1 + rng.below(5)).map(|_| exact(cpe('a', &vendor, &product, &version(rng)), true)).collect();
            let os = exact(cpe('o', "osvendor", &format!("os{}", rng.below(5)), "-"), false);
            serde_json::json!([{"operator": "AND", "nodes": [
                {"operator": "OR", "negate": false, "cpeMatch": app},
                {"operator": "OR", "negate": false, "cpeMatch": [os]}]}])
        }
        _ => {
            let mut fw = exact(cpe('o', &vendor, &format!("{product}_firmware"), "*"), true);
            fw["versionEndExcluding"] = version(rng).into();
            let hw = exact(cpe('h', &vendor, &product, "-"), false);
            serde_json::json!([{"operator": "AND", "nodes": [
                {"operator": "OR", "negate": false, "cpeMatch": [fw]},
                {"operator": "OR", "negate": false, "cpeMatch": [hw]}]}])
        }
    }
}

fn record(rng: &mut Rng, i: u64, vendors: u64) -> serde_json::Value {
    let year = 2000 + (i % 25);
    let day = 1 + rng.below(28);
    let month = 1 + rng.below(12);
    let av = ["NETWORK", "ADJACENT_NETWORK", "LOCAL", "PHYSICAL"][rng.below(4) as usize];
    let score = (rng.below(100) as f64) / 10.0;
    serde_json::json!({"cve": {
        "id": format!("CVE-{year}-{:07}", 1_000_000 + i),
        "sourceIdentifier": "synthetic@example.org",
        "published": format!("{year}-{month:02}-{day:02}T10:15:09.143"),
        "lastModified": format!("{}-{month:02}-{day:02}T12:00:00.{:03}", year.max(2010) + rng.below(10), rng.below(1000)),
        "vulnStatus": "Analyzed",
        "descriptions": [{"lang": "en", "value": format!("Synthetic vulnerability {i} in a product, for benchmarks only.")}],
        "metrics": {
            "cvssMetricV31": [{"source": "nvd@nist.gov", "type": "Primary", "cvssData": {
                "version": "3.1", "vectorString": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", "baseScore": score,
                "baseSeverity": "HIGH", "attackVector": av, "attackComplexity": "LOW", "privilegesRequired": "NONE",
                "userInteraction": "NONE", "scope": "UNCHANGED", "confidentialityImpact": "HIGH",
                "integrityImpact": "HIGH", "availabilityImpact": "HIGH"}, "exploitabilityScore": 3.9, "impactScore": 5.9}],
            "cvssMetricV2": [{"source": "nvd@nist.gov", "type": "Primary", "cvssData": {
                "version": "2.0", "vectorString": "AV:N/AC:L/Au:N/C:P/I:P/A:P", "baseScore": 7.5, "accessVector": "NETWORK",
                "accessComplexity": "LOW", "authentication": "NONE", "confidentialityImpact": "PARTIAL",
                "integrityImpact": "PARTIAL", "availabilityImpact": "PARTIAL"}, "exploitabilityScore": 10.0, "impactScore": 6.4}]
        },
        "weaknesses": [{"source": "nvd@nist.gov", "type": "Primary", "description": [{"lang": "en", "value": format!("CWE-{}", 20 + rng.below(900))}]}],
        "configurations": configurations(rng, vendors),
        "references": (0..1 + rng.below(8)).map(|r| serde_json::json!({"url": format!("https://advisories.example.org/{i}/{r}"), "source": "synthetic@example.org"})).collect::<Vec<_>>()
    }})
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let count: u64 = args.next().and_then(|c| c.parse().ok()).unwrap_or(300_000);
    let out = args.next().unwrap_or_else(|| "synthetic-nvd.json.gz".to_owned());
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_CAFE);
    let mut rng = Rng(seed | 1);
    let vendors = (count / 40).max(10);
    let file = std::fs::File::create(&out)?;
    let mut w = flate2::write::GzEncoder::new(std::io::BufWriter::new(file), flate2::Compression::fast());
    write!(
        w,
        "{{\"resultsPerPage\":{count},\"startIndex\":0,\"totalResults\":{count},\"format\":\"NVD_CVE\",\"version\":\"2.0\",\"timestamp\":\"2026-11-22T00:00:00.000\",\"vulnerabilities\":["
    )?;
    for i in 0..count {
        if i > 0 {
            w.write_all(b",")?;
        }
        serde_json::to_writer(&mut w, &record(&mut rng, i, vendors))?;
    }
    w.write_all(b"]}")?;
    w.finish()?.flush()?;
    eprintln!("{count} synthetic records in {out}");
    Ok(())
}
