//! How long a feed change takes to reach the ratings (docs/PERFORMANCE.md): N companies with
//! detected software and SBOMs (versions of OpenSSH, nginx, Apache httpd, OpenSSL and
//! PHP spread over them), matched against the vulnerability database the store holds
//! (import the real NVD first: `bench/feeds.sh`); then a new CVE for OpenSSH is
//! imported and `worker::feeds::rematch` runs — the time from the import to every
//! affected company re-rated is printed — and then a KEV entry for it, the same way.
//!
//!     cargo run --release -p worker --example rematch_bench -- DB_URL [COMPANIES]

use std::collections::BTreeMap;
use std::time::Instant;

use model::{CompanyProfile, Domain, RiskVector, SocialId};
use scanner::software::Software;
use store::{CompanySnapshot, ScanScope, Store};
use time::OffsetDateTime;

const PRODUCTS: &[(&str, &str, &str, &[&str])] = &[
    ("OpenSSH", "openbsd", "openssh", &["8.2", "8.9", "9.3", "9.6"]),
    ("nginx", "f5", "nginx", &["1.18.0", "1.22.1", "1.24.0"]),
    ("Apache HTTP Server", "apache", "http_server", &["2.4.41", "2.4.52", "2.4.57"]),
    ("OpenSSL", "openssl", "openssl", &["1.1.1f", "3.0.2", "3.0.13"]),
    ("PHP", "php", "php", &["7.4.3", "8.1.2", "8.2.12"]),
];

fn detections(i: usize) -> Vec<Software> {
    PRODUCTS
        .iter()
        .enumerate()
        .map(|(k, (name, vendor, product, versions))| {
            let version = versions[(i + k) % versions.len()];
            Software {
                host: format!("{}.c{i}.example", if k == 0 { "ssh" } else { "www" }),
                name: (*name).to_owned(),
                version: Some(version.to_owned()),
                categories: Vec::new(),
                cpes: vec![format!("cpe:2.3:a:{vendor}:{product}:{version}:*:*:*:*:*:*:*")],
                purl: None,
                confidence: 100,
                evidence: "banner".to_owned(),
                packaged: None,
            }
        })
        .collect()
}

async fn import_json(store: &dyn Store, name: &str, doc: serde_json::Value) -> std::time::Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, doc.to_string()).expect("write");
    let t = Instant::now();
    if name.starts_with("kev") {
        vulndb::import::kev_file(store, &path).await.expect("kev import");
    } else {
        vulndb::import::nvd_file(store, &path).await.expect("nvd import");
    }
    t.elapsed()
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("usage: rematch_bench DB_URL [COMPANIES]");
    let n: usize = args.next().map_or(1_000, |a| a.parse().expect("COMPANIES is a number"));
    let store = store::open(&url).await.expect("open the store");
    let now = OffsetDateTime::now_utc();

    // The companies, each scanned once: detections kept, SBOM, findings, a rating.
    let t = Instant::now();
    for i in 0..n {
        let social = SocialId::parse(&format!("bench-feed-{i}")).expect("social id");
        let profile = CompanyProfile {
            social_id: Some(social),
            company_name: format!("Bench Feed {i}"),
            website: format!("https://www.c{i}.example"),
            domain: Some(Domain::parse(&format!("c{i}.example")).expect("domain")),
            ..Default::default()
        };
        let c = store.save_company(&CompanySnapshot { profile, ..Default::default() }).await.expect("save");
        let detected = detections(i);
        let inv = worker::software::inventory(&*store, &detected, None, now).await.expect("inventory");
        store.record_software(c.id, &inv.applications, &inv.components, now).await.expect("software");
        let json = serde_json::to_string(&detected).expect("json");
        store.save_detected_software(c.id, &json, &worker::feeds::products(&detected), now).await.expect("kept");
        let vectors = [RiskVector::Vulnerabilities];
        let scope =
            ScanScope { risk_vectors: &vectors, asset: None, below: false, close_missing: true, keep_open: &[] };
        store.record_scan(c.id, scope, &worker::to_findings(inv.findings, now), now).await.expect("findings");
        let basis = worker::rate::Basis {
            assets: BTreeMap::from([(RiskVector::Vulnerabilities, PRODUCTS.len() as u32)]),
            reason: Some(model::RATED_BY_SCAN.to_owned()),
            ..Default::default()
        };
        worker::rate::rate(&*store, c.id, Some("www.example"), &basis, now).await.expect("rating");
    }
    let setup = t.elapsed();
    // What the setup left in the log (the companies' own writes leave none).
    let pending = store.cve_changes(u32::MAX).await.expect("changes");
    if let Some((last, _)) = pending.last() {
        store.forget_cve_changes(*last).await.expect("forget");
    }
    println!(
        "{n} companies scanned and rated in {:.1} s ({:.0}/s)",
        setup.as_secs_f64(),
        n as f64 / setup.as_secs_f64()
    );

    // A new CVE for OpenSSH up to 9.9: every company runs OpenSSH.
    let stamp = &now.format(&time::format_description::well_known::Rfc3339).expect("time")[..19];
    let cve = serde_json::json!({"vulnerabilities": [{"cve": {
        "id": "CVE-2026-99002", "published": stamp, "lastModified": stamp, "vulnStatus": "Analyzed",
        "descriptions": [{"lang": "en", "value": "bench"}],
        "metrics": {"cvssMetricV31": [{"source": "nvd@nist.gov", "type": "Primary", "cvssData": {
            "version": "3.1", "vectorString": "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H",
            "baseScore": 8.1, "baseSeverity": "HIGH"}}]},
        "configurations": [{"nodes": [{"operator": "OR", "negate": false, "cpeMatch": [{
            "vulnerable": true, "criteria": "cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*",
            "versionEndIncluding": "9.9", "matchCriteriaId": "B1B2C3D4-0000-4000-8000-000000000002"}]}]}]}}]});
    let kev = serde_json::json!({"title": "bench", "catalogVersion": "1", "dateReleased": "2026-11-27T00:00:00.000Z",
        "count": 1, "vulnerabilities": [{"cveID": "CVE-2026-99002", "vendorProject": "OpenBSD", "product": "OpenSSH",
        "vulnerabilityName": "bench", "dateAdded": "2026-11-27", "shortDescription": "bench",
        "requiredAction": "update", "dueDate": "2026-12-18", "knownRansomwareCampaignUse": "Unknown", "notes": ""}]});
    for (what, file, doc) in [("a new CVE", "nvd-bench.json", cve), ("its KEV entry", "kev-bench.json", kev)] {
        let imported = import_json(&*store, file, doc).await;
        let t = Instant::now();
        let done = worker::feeds::rematch(&*store, None, OffsetDateTime::now_utc()).await.expect("rematch");
        let took = t.elapsed() + imported;
        println!(
            "{what}: {} companies matched again and {} re-rated ({} opened, {} closed) {:.2} s after the import began \
             (import {:.2} s); {:.0} companies/s",
            done.companies,
            done.rerated,
            done.opened,
            done.closed,
            took.as_secs_f64(),
            imported.as_secs_f64(),
            done.companies as f64 / took.as_secs_f64()
        );
        assert_eq!(done.rerated, n, "every company runs OpenSSH up to 9.6");
    }
}
