//! A rescan job is the scan's check on one host, end to end: against the built-in lab,
//! with the real NVD, CISA KEV and endoflife.date data, a company is scanned, then each
//! host it has open findings on is rescanned for each risk vector they are of
//! (vulnerabilities, sbom, open_ports, the certificate vectors, web_headers,
//! digitalization, it_standardization): the rescan opens nothing, closes nothing, and
//! leaves those findings as the scan wrote them (evidence and severity included).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, JobSpec, RiskVector, SocialId};
use scanner::probes::Context;
use store::{CompanySnapshot, Store};

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let needed = ["nvd-2.0", "kev/known_exploited_vulnerabilities.json", "endoflife/endoflife_products_all.json"];
    needed.iter().all(|n| dir.join(n).exists()).then_some(dir)
}

/// Companies whose hosts show vulnerabilities, sbom, open_ports, TLS, header and page
/// findings between them.
const COMPANIES: [&str; 6] = [
    "granite-valley-water",
    "tidepool-games",
    "vantage-aerostructures",
    "quarry-analytics",
    "orchard-pharma",
    "kestrel-logistics",
];

/// What a finding says, by identity.
type Said = BTreeMap<(String, String, Option<String>, Option<String>), (String, String)>;

fn said(findings: &[model::Finding], vector: RiskVector, host: &str) -> Said {
    findings
        .iter()
        .filter(|f| f.risk_vector == vector && model::asset_under(&f.asset, host))
        .map(|f| {
            let id = (f.code.clone(), f.asset.clone(), f.cve.as_ref().map(|c| c.to_string()), f.component.clone());
            (id, (f.evidence.clone(), f.severity.as_str().to_owned()))
        })
        .collect()
}

/// The host an asset names (`https://h:8443/x` → `h`, `h:443` → `h`).
fn host_of(asset: &str) -> String {
    let rest = asset.split_once("://").map_or(asset, |(_, r)| r);
    let host = rest.split('/').next().unwrap_or(rest);
    host.rsplit_once(':').map_or(host, |(h, _)| h).to_owned()
}

#[tokio::test]
async fn a_rescan_job_leaves_what_the_scan_found_on_its_host_as_it_was() {
    let Some(data) = data_dir() else {
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: ../shared/data (nvd-2.0, kev, endoflife) is not there");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("s.db").display())).await.unwrap();
    for entry in std::fs::read_dir(data.join("nvd-2.0")).unwrap() {
        vulndb::import::nvd_file(&*store, &entry.unwrap().path()).await.unwrap();
    }
    vulndb::import::kev_file(&*store, &data.join("kev/known_exploited_vulnerabilities.json")).await.unwrap();
    let eol_text = std::fs::read_to_string(data.join("endoflife/endoflife_products_all.json")).unwrap();
    store.save_eol_products(&scanner::software::Eol::rows(&eol_text, "all").unwrap()).await.unwrap();

    let file = LabFile::builtin_at(82).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let ctx = worker::with_store_data(ctx, &*store).await.unwrap();
    let mut compared: BTreeMap<RiskVector, usize> = BTreeMap::new();
    let mut differ = Vec::new();
    for company in file.companies.iter().filter(|c| COMPANIES.contains(&c.social_id())) {
        let social_id = SocialId::parse(company.social_id()).unwrap();
        let domains: Vec<DomainAsset> = company.company["domains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| DomainAsset {
                name: Domain::parse(d["name"].as_str().unwrap()).unwrap(),
                attribution: "lab".into(),
            })
            .collect();
        let profile = CompanyProfile {
            social_id: Some(social_id.clone()),
            company_name: company.company["company_name"].as_str().unwrap().to_owned(),
            website: company.company["website"].as_str().unwrap_or_default().to_owned(),
            domain: domains.first().map(|d| d.name.clone()),
            ..Default::default()
        };
        let names: Vec<String> = domains.iter().map(|d| d.name.to_string()).collect();
        let c = store
            .save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() })
            .await
            .unwrap();
        worker::process(&*store, &ctx, &JobSpec::Scan { social_id: social_id.clone() }).await.unwrap();
        let scanned = store.open_findings(c.id).await.unwrap();
        // Each (host, vector) the scan found something for, below the company's domains.
        let pairs: BTreeSet<(String, RiskVector)> = scanned
            .iter()
            .map(|f| (host_of(&f.asset), f.risk_vector))
            .filter(|(h, v)| {
                !names.contains(h)
                    && !h.starts_with("*.")
                    && !matches!(v, RiskVector::Spf | RiskVector::Dkim | RiskVector::Dmarc)
            })
            .collect();
        for (host, vector) in pairs {
            let want = said(&scanned, vector, &host);
            let rescan = JobSpec::Rescan {
                social_id: social_id.clone(),
                subdomain: Domain::parse(&host).unwrap(),
                risk_vector: vector,
            };
            let outcome = worker::process(&*store, &ctx, &rescan).await.unwrap();
            let got = said(&store.open_findings(c.id).await.unwrap(), vector, &host);
            if (outcome.opened, outcome.closed) != (0, 0) || want != got {
                differ.push(format!(
                    "{host} {vector}: opened {}, closed {}\nthe scan: {want:#?}\nafter the rescan: {got:#?}",
                    outcome.opened, outcome.closed
                ));
            }
            *compared.entry(vector).or_default() += want.len();
        }
    }
    lab.down().await;
    println!("findings compared per vector: {compared:?}");
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
    for vector in [RiskVector::Vulnerabilities, RiskVector::Sbom, RiskVector::OpenPorts, RiskVector::WebHeaders] {
        assert!(compared.get(&vector).copied().unwrap_or(0) > 0, "no {vector} finding was compared");
    }
}
