//! The demo's vulnerability data (`lab::NVD_RECORDS`, `lab::KEV_CATALOG`,
//! `lab::EPSS_SAMPLE`, built into the binary, so no ../shared/data is needed): the
//! Confluence 7.13.6 of the lab's quarry-analytics is charged with CVE-2022-26134 (NVD
//! 2.0 record, CISA KEV), critical, and the company's rating falls with it (it was 99.4,
//! an A, when the demo's records missed that CVE).

use std::sync::Arc;

use lab::{Lab, LabFile};
use model::Page;
use model::{CompanyProfile, CveId, Domain, DomainAsset, JobSpec, RiskVector, Severity, SocialId};
use scanner::probes::Context;
use store::{CompanySnapshot, Store};

const COMPANY: &str = "quarry-analytics";
const CVE: &str = "CVE-2022-26134";

#[tokio::test]
async fn the_demo_data_charges_the_labs_confluence_with_cve_2022_26134() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("d.db").display())).await.unwrap();
    // What `rampart demo` imports.
    let nvd = vulndb::import::nvd_bytes_all(&*store, lab::NVD_RECORDS).await.unwrap();
    assert!(nvd.read > 2000, "the lab's NVD records: {nvd:?}");
    let kev = vulndb::import::kev_bytes(&*store, "lab KEV", lab::KEV_CATALOG).await.unwrap();
    assert!(kev.read > 1000, "the KEV catalogue: {kev:?}");
    let epss = vulndb::import::epss_bytes(&*store, lab::EPSS_SAMPLE).await.unwrap();
    assert_eq!(epss.read, 99, "the EPSS sample's rows");
    let advisories = vulndb::import::advisory_bundle(&*store, "lab advisories", lab::ADVISORIES).await.unwrap();
    assert!(advisories.read > 500, "the vendors' advisories: {advisories:?}");
    let httpd = store.advisories_for("apache", "http_server").await.unwrap();
    assert!(httpd.iter().any(|a| a.cve_id.as_str() == "CVE-2021-41773"), "the Apache project's word on CVE-2021-41773");

    let record = store.cve(&CveId::parse(CVE).unwrap()).await.unwrap().expect("the NVD 2.0 record of CVE-2022-26134");
    assert_eq!(record.cvss3, Some(9.8));
    assert!(record.kev.is_some(), "CVE-2022-26134 is in the KEV catalogue");

    let file = LabFile::builtin_at(105).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let ctx = worker::with_store_data(ctx, &*store).await.unwrap();
    let company = file.companies.iter().find(|c| c.social_id() == COMPANY).expect("the lab company");
    let domains: Vec<DomainAsset> = company.company["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| DomainAsset { name: Domain::parse(d["name"].as_str().unwrap()).unwrap(), attribution: "lab".into() })
        .collect();
    let social_id = SocialId::parse(COMPANY).unwrap();
    let profile = CompanyProfile {
        social_id: Some(social_id.clone()),
        company_name: company.company["company_name"].as_str().unwrap().to_owned(),
        domain: domains.first().map(|d| d.name.clone()),
        ..Default::default()
    };
    let c =
        store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap();
    worker::process(&*store, &ctx, &JobSpec::Scan { social_id }).await.unwrap();
    lab.down().await;

    // On the SBOM, attributed to Confluence 7.13.6 by its bounded NVD range (scored).
    let sbom = store.sbom(c.id, Page::FIRST, true).await.unwrap();
    let confluence = sbom.items.iter().find(|s| s.name.contains("Confluence")).expect("Confluence on the SBOM");
    assert_eq!(confluence.version.as_deref(), Some("7.13.6"));
    let cve = confluence.cves.iter().find(|x| x.id.as_str() == CVE).expect("CVE-2022-26134 on Confluence's SBOM entry");
    assert_eq!(cve.basis, model::CveBasis::NvdRange);

    // An open vulnerabilities finding, critical (CVSS 3.1 9.8, and KEV).
    let open = store.open_findings(c.id).await.unwrap();
    let f = open
        .iter()
        .find(|f| f.risk_vector == RiskVector::Vulnerabilities && f.cve.as_ref().is_some_and(|x| x.as_str() == CVE))
        .unwrap_or_else(|| panic!("no open finding for {CVE}: {open:#?}"));
    assert_eq!(f.severity, Severity::Critical);
    assert!(f.evidence.contains("Known Exploited Vulnerabilities"), "{}", f.evidence);

    // The rating falls from the A it had without the CVE.
    let rated = store.latest_score(c.id).await.unwrap().expect("a rating");
    assert!(rated.score.as_f64() < 90.0, "rated {} ({})", rated.score.as_f64(), rated.grade.as_str());
}
