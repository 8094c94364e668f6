//! The DNS, mail, web-round and TLS probes (spf, dkim, dmarc, it_standardization,
//! certificate_info, certificate_conf, certificate_cve, open_ports, web_headers,
//! digitalization, sbom) against the built-in lab's
//! ground truth: every expected finding of these components is found on each company's
//! domains (with its CVE where it has one), and nothing else — in particular nothing on
//! clean assets.
//! Two of the expected hosts are found only through a link and a certificate SAN.

use std::collections::BTreeMap;

use lab::{Lab, LabFile};
use scanner::probes::Context;
use scanner::scan::scan_domain_with;

const COMPONENTS: [&str; 11] = [
    "spf",
    "dkim",
    "dmarc",
    "it_standardization",
    "certificate_info",
    "certificate_conf",
    "certificate_cve",
    "open_ports",
    "web_headers",
    "digitalization",
    // Needs the endoflife.date data; left out (with a note) when it is absent.
    "sbom",
];

/// The endoflife.date data in ../shared/data, parsed.
fn eol() -> Option<scanner::software::Eol> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/endoflife/endoflife_products_all.json");
    let text = std::fs::read_to_string(path).ok()?;
    let rows = scanner::software::Eol::rows(&text, "all").ok()?;
    Some(scanner::software::Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str()))))
}

#[tokio::test]
async fn findings_match_the_lab_ground_truth() {
    // The built-in lab on addresses of its own (another test binary may run the original).
    let file = LabFile::builtin_at(88).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let mut ctx = ctx;
    let mut components: Vec<&str> = COMPONENTS.to_vec();
    match eol() {
        Some(eol) => ctx.eol = Some(std::sync::Arc::new(eol)),
        None => {
            assert!(std::env::var_os("CI").is_none(), "CI is set and ../shared/data/endoflife is absent");
            println!("sbom left out: ../shared/data/endoflife is not there");
            components.retain(|c| *c != "sbom");
        }
    }

    let mut missing = Vec::new();
    let mut unexpected = Vec::new();
    let mut matched = 0;
    let mut wanted_total = 0;
    for company in file.every_company() {
        let website = company.company["website"].as_str().unwrap_or("");
        let website_host = website.trim_start_matches("https://").trim_start_matches("http://").trim_end_matches('/');
        let domains: Vec<String> = company.company["domains"]
            .as_array()
            .map(|d| d.iter().filter_map(|x| x["name"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        // The DKIM selectors the company names (its import record).
        let selectors: Vec<String> = company.company["dkim_selectors"]
            .as_array()
            .map(|d| d.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let mut found: BTreeMap<(String, String), usize> = BTreeMap::new();
        for domain in &domains {
            let web = (website_host == domain.as_str() || website_host.ends_with(&format!(".{domain}")))
                .then_some(website_host);
            let scan = scan_domain_with(&ctx, domain, web, &ctx.wordlist, &selectors).await.unwrap();
            for f in scan.findings {
                let expected_cve = company
                    .expected
                    .iter()
                    .find(|e| e.code == f.code && e.asset == f.asset)
                    .and_then(|e| e.cve.clone());
                if expected_cve.is_some() {
                    assert_eq!(f.cve, expected_cve, "{} on {}", f.code, f.asset);
                }
                *found.entry((f.code.clone(), f.asset.clone())).or_default() += 1;
            }
        }
        let mut want: BTreeMap<(String, String), usize> = BTreeMap::new();
        for e in company.expected.iter().filter(|e| components.contains(&e.risk_vector.as_str())) {
            *want.entry((e.code.clone(), e.asset.clone())).or_default() += 1;
            wanted_total += 1;
        }
        for (key, n) in &want {
            let got = found.get(key).copied().unwrap_or(0);
            matched += got.min(*n);
            if got < *n {
                missing.push(format!("{}: {} on {}", company.social_id(), key.0, key.1));
            }
        }
        for (key, n) in &found {
            if want.get(key).copied().unwrap_or(0) < *n {
                unexpected.push(format!("{}: {} on {}", company.social_id(), key.0, key.1));
            }
        }
        for clean in &company.clean {
            assert!(
                !found.keys().any(|(_, asset)| asset == clean),
                "{}: a finding on clean asset {clean}: {found:?}",
                company.social_id()
            );
        }
    }
    // A rescan of one host looks at its origins on other ports again, so it finds (and
    // keeps open) what the scan found there.
    let rescan = |vector| {
        scanner::scan::rescan_host(&ctx, "quarryanalytics.test", "wiki.quarryanalytics.test", None, vector, &[])
    };
    let mut web: Vec<String> =
        rescan(model::RiskVector::WebHeaders).await.unwrap().findings.into_iter().map(|f| f.code).collect();
    web.sort();
    let pages: Vec<String> =
        rescan(model::RiskVector::Digitalization).await.unwrap().findings.into_iter().map(|f| f.asset).collect();
    lab.down().await;
    assert_eq!(
        web,
        [
            "web_headers.cookie_without_samesite",
            "web_headers.permissions_policy_missing",
            "web_headers.referrer_policy_missing"
        ]
    );
    assert_eq!(pages, ["http://wiki.quarryanalytics.test:8080/login.action"]);
    println!("matched {matched} expected findings");
    assert!(missing.is_empty() && unexpected.is_empty(), "missing: {missing:#?}\nunexpected: {unexpected:#?}");
    assert_eq!(matched, wanted_total);
    assert!(matched >= 80, "the ground truth of these components is not trivial: {matched}");
}
