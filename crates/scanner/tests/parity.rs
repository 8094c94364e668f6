//! A rescan is the scan's check on one host: against the built-in lab, a rescan of one
//! host for one risk vector finds exactly what a full scan of its domain found for that
//! vector on that host and below it (the same codes, assets, evidence, severities, CVEs
//! and components), for every host and vector the scan found something for, and nothing
//! on the hosts the scan found nothing on.

use std::collections::{BTreeMap, BTreeSet};

use lab::{Lab, LabFile};
use model::RiskVector as V;
use scanner::ScanFinding;
use scanner::probes::Context;

/// The vectors judged per host (the mail vectors are judged per domain, and a rescan of
/// the domain itself is a full scan).
const VECTORS: [V; 8] = [
    V::OpenPorts,
    V::CertificateInfo,
    V::CertificateConf,
    V::CertificateCve,
    V::WebHeaders,
    V::ItStandardization,
    V::Digitalization,
    V::Sbom,
];

fn eol() -> Option<scanner::software::Eol> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/endoflife/endoflife_products_all.json");
    let text = std::fs::read_to_string(path).ok()?;
    let rows = scanner::software::Eol::rows(&text, "all").ok()?;
    Some(scanner::software::Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str()))))
}

/// What a finding says, as the store keeps one per identity (the first one seen).
type Said = (String, String, Option<String>, Option<String>, String, String);

fn said(found: &[ScanFinding]) -> BTreeSet<Said> {
    let mut seen = BTreeSet::new();
    let mut out = BTreeSet::new();
    for f in found {
        if seen.insert((f.code.clone(), f.asset.clone(), f.cve.clone(), f.component.clone())) {
            out.insert((
                f.code.clone(),
                f.asset.clone(),
                f.cve.clone(),
                f.component.clone(),
                f.evidence.clone(),
                f.severity.as_str().to_owned(),
            ));
        }
    }
    out
}

/// The host an asset names (`https://h:8443/x` → `h`, `h:443` → `h`).
fn host_of(asset: &str) -> String {
    let rest = asset.split_once("://").map_or(asset, |(_, r)| r);
    let host = rest.split('/').next().unwrap_or(rest);
    host.rsplit_once(':').map_or(host, |(h, _)| h).to_owned()
}

#[tokio::test]
async fn a_rescan_finds_on_its_host_what_the_scan_found_there() {
    let file = LabFile::builtin_at(84).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let mut ctx = Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let mut vectors = VECTORS.to_vec();
    match eol() {
        Some(eol) => ctx.eol = Some(std::sync::Arc::new(eol)),
        None => {
            assert!(std::env::var_os("CI").is_none(), "CI is set and ../shared/data/endoflife is absent");
            println!("sbom left out: ../shared/data/endoflife is not there");
            vectors.retain(|v| *v != V::Sbom);
        }
    }
    let mut compared: BTreeMap<V, usize> = BTreeMap::new();
    let mut differ = Vec::new();
    let domains = file.every_company().flat_map(|c| {
        let names = c.company["domains"].as_array().into_iter().flatten().filter_map(|d| d["name"].as_str());
        names.map(move |d| (c, d))
    });
    for (company, domain) in domains {
        let website = company.company["website"].as_str().unwrap_or_default();
        let website_host = website.trim_start_matches("https://").trim_start_matches("http://").trim_end_matches('/');
        let website_host = Some(website_host).filter(|h| model::asset_under(h, domain));
        let scan = scanner::scan::scan_domain(&ctx, domain, website_host, &ctx.wordlist).await.unwrap();
        // Every host the scan found, and every host a finding is on.
        let mut hosts: BTreeSet<String> = scan.assets.iter().map(|a| a.name.clone()).collect();
        hosts.extend(scan.findings.iter().map(|f| host_of(&f.asset)));
        hosts.remove(domain);
        // DKIM keys (`s1._domainkey.<domain>`) are judged with the domain.
        hosts.retain(|h| !h.split('.').any(|label| label.starts_with('_')));
        for host in &hosts {
            for vector in &vectors {
                // A wildcard's `*.` name is not a host: only its DNS is looked at.
                if host.starts_with("*.") && *vector != V::Digitalization {
                    continue;
                }
                let mine: Vec<ScanFinding> = scan
                    .findings
                    .iter()
                    .filter(|f| f.risk_vector == *vector && model::asset_under(&f.asset, host))
                    .cloned()
                    .collect();
                let rescanned =
                    scanner::scan::rescan_host(&ctx, domain, host, website_host, *vector, &[]).await.unwrap();
                // A host the guard refuses is not rescanned (what the scan found on it
                // stays open); the scan did not reach it either.
                if let Some(why) = &rescanned.unreached {
                    let unreached = scan.checks.iter().any(|c| c.unreached && host_of(&c.asset) == *host);
                    assert!(unreached, "{host} {vector}: the rescan did not reach it ({why}), the scan did");
                    continue;
                }
                let (want, got) = (said(&mine), said(&rescanned.findings));
                if want != got {
                    differ.push(format!(
                        "{host} {vector}: the scan only: {:#?}\nthe rescan only: {:#?}",
                        want.difference(&got).collect::<Vec<_>>(),
                        got.difference(&want).collect::<Vec<_>>()
                    ));
                }
                if !want.is_empty() {
                    *compared.entry(*vector).or_default() += want.len();
                }
            }
        }
    }
    lab.down().await;
    println!("findings compared per vector: {compared:?}");
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
    for vector in vectors {
        assert!(compared.get(&vector).copied().unwrap_or(0) > 0, "no {vector} finding was compared");
    }
}
