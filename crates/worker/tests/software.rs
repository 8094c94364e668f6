//! The software components end to end against the built-in lab: scan jobs fingerprint
//! every page and service, the store keeps applications and SBOM components, and the
//! `sbom` (endoflife.date data) and `vulnerabilities` (CVE matching against the real NVD
//! records in ../shared/data/nvd-2.0, CISA KEV) findings equal the lab's ground truth —
//! severities and CVE ids included — with nothing on clean assets.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, Page, RiskVector, SocialId};
use scanner::probes::Context;
use store::{CompanySnapshot, Store};

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let needed = ["nvd-2.0", "kev/known_exploited_vulnerabilities.json", "endoflife/endoflife_products_all.json"];
    needed.iter().all(|n| dir.join(n).exists()).then_some(dir)
}

#[tokio::test]
async fn sbom_and_vulnerability_findings_match_the_lab_ground_truth() {
    let Some(data) = data_dir() else {
        // With CI set the data is always there: its absence is a failure, not a skip.
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
    let rows = scanner::software::Eol::rows(&eol_text, "all").unwrap();
    assert!(rows.len() > 400, "{} products", rows.len());
    store.save_eol_products(&rows).await.unwrap();

    let file = LabFile::builtin_at(86).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let mut ctx = Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let stored = store.eol_products().await.unwrap();
    ctx.eol = Some(Arc::new(scanner::software::Eol::from_rows(stored.iter().map(|(a, b)| (a.as_str(), b.as_str())))));
    // Only the software components: the others are checked by their own tests.
    ctx.vectors = vec![RiskVector::Sbom, RiskVector::Vulnerabilities];

    let vectors = ["sbom", "vulnerabilities"];
    let (mut missing, mut unexpected) = (Vec::new(), Vec::new());
    let (mut matched, mut wanted) = (0, 0);
    for company in file.every_company() {
        let social_id = company.social_id();
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
            social_id: Some(SocialId::parse(social_id).unwrap()),
            company_name: company.company["company_name"].as_str().unwrap().to_owned(),
            website: company.company["website"].as_str().unwrap_or_default().to_owned(),
            domain: domains.first().map(|d| d.name.clone()),
            ..Default::default()
        };
        let c = store
            .save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() })
            .await
            .unwrap();
        worker::process(&*store, &ctx, &model::JobSpec::Scan { social_id: model::SocialId::parse(social_id).unwrap() })
            .await
            .unwrap();

        type Key = (String, String, String, String, Option<String>);
        let mut got: BTreeMap<Key, usize> = BTreeMap::new();
        for f in store.open_findings(c.id).await.unwrap() {
            let key = (
                f.risk_vector.as_str().to_owned(),
                f.asset.clone(),
                f.code.clone(),
                f.severity.as_str().to_owned(),
                f.cve.as_ref().map(|c| c.to_string()),
            );
            assert!(f.component.is_some(), "{} on {} names no component", f.code, f.asset);
            *got.entry(key).or_default() += 1;
        }
        let mut want: BTreeMap<Key, usize> = BTreeMap::new();
        for e in company.expected.iter().filter(|e| vectors.contains(&e.risk_vector.as_str())) {
            let key = (e.risk_vector.clone(), e.asset.clone(), e.code.clone(), e.severity.clone(), e.cve.clone());
            *want.entry(key).or_default() += 1;
            wanted += 1;
        }
        for (k, n) in &want {
            let g = got.get(k).copied().unwrap_or(0);
            matched += g.min(*n);
            if g < *n {
                missing.push(format!("{social_id}: {k:?} ×{}", n - g));
            }
        }
        for (k, n) in &got {
            if want.get(k).copied().unwrap_or(0) < *n {
                unexpected.push(format!("{social_id}: {k:?}"));
            }
            assert!(!company.clean.contains(&k.1), "{social_id}: a finding on clean {}", k.1);
        }

        // The basis the ground truth names (a distribution's package) is the SBOM's.
        if company.expected.iter().any(|e| e.basis.is_some()) {
            let sbom = store.sbom(c.id, Page::parse(None).unwrap(), true).await.unwrap();
            for e in company.expected.iter().filter(|e| e.basis.is_some()) {
                let got = sbom
                    .items
                    .iter()
                    .filter(|i| i.hosts.iter().any(|h| h.as_str() == e.asset))
                    .flat_map(|i| &i.cves)
                    .find(|x| Some(x.id.as_str()) == e.cve.as_deref())
                    .map(|x| x.basis.as_str());
                if got != e.basis.as_deref() {
                    missing.push(format!("{social_id}: {} {:?} has basis {got:?}, not {:?}", e.asset, e.cve, e.basis));
                }
            }
        }

        // The inventory the API serves: a component for every CVE finding's software.
        if social_id == "tidepool-games" {
            let sbom = store.sbom(c.id, Page::parse(None).unwrap(), false).await.unwrap();
            let names: Vec<(String, Option<String>)> =
                sbom.items.iter().map(|s| (s.name.clone(), s.version.clone())).collect();
            for (name, version) in [("WordPress", "5.8.1"), ("PHP", "7.4.3"), ("jQuery", "1.12.4")] {
                assert!(names.contains(&(name.to_owned(), Some(version.to_owned()))), "{name} {version} in {names:?}");
            }
            let wp = sbom.items.iter().find(|s| s.name == "WordPress").unwrap();
            assert_eq!(wp.cpe.as_deref(), Some("cpe:2.3:a:wordpress:wordpress:5.8.1:*:*:*:*:*:*:*"));
            assert_eq!(wp.end_of_life, Some(true));
            assert_eq!(wp.hosts.iter().map(|h| h.as_str()).collect::<Vec<_>>(), vec!["www.tidepoolgames.test"]);
            let mut cves: Vec<String> = wp.cves.iter().filter(|c| c.basis.scored()).map(|c| c.id.to_string()).collect();
            cves.sort();
            assert_eq!(cves, vec!["CVE-2022-21661", "CVE-2022-21664"]);
            let with_cves = store.sbom(c.id, Page::parse(None).unwrap(), true).await.unwrap();
            assert!(with_cves.items.iter().all(|s| !s.cves.is_empty()) && with_cves.total >= 3);
            let apps = store.applications(c.id, Page::parse(None).unwrap()).await.unwrap();
            assert!(apps.items.iter().any(|a| a.name == "WordPress" && a.confidence == Some(100)), "{apps:?}");
            // The rating keeps the checks behind both components: WordPress's CVE match
            // found the two CVEs, its lifecycle check found it at its end of life.
            let rated = store.latest_score(c.id).await.unwrap().expect("rated");
            let kept = |v: model::RiskVector| rated.components[&v].checks.clone().expect("checks");
            let vulns = kept(model::RiskVector::Vulnerabilities);
            let wp = vulns.list.iter().find(|k| k.check == "cves of WordPress 5.8.1").expect("the WordPress check");
            assert_eq!(wp.outcome, model::CheckOutcome::Finding);
            assert!(wp.detail.contains("CVE-2022-21661") && wp.detail.contains("CVE-2022-21664"), "{wp:?}");
            assert_eq!(
                vulns.finding as usize,
                vulns.list.iter().filter(|k| k.outcome == model::CheckOutcome::Finding).count()
            );
            let sbom_checks = kept(model::RiskVector::Sbom);
            let life = sbom_checks.list.iter().find(|k| k.check == "lifecycle of WordPress 5.8.1").expect("lifecycle");
            assert_eq!((life.outcome, life.detail.as_str()), (model::CheckOutcome::Finding, "sbom.end_of_life"));
        }
    }
    lab.down().await;
    println!("matched {matched} expected sbom and vulnerabilities findings");
    assert!(missing.is_empty() && unexpected.is_empty(), "missing: {missing:#?}\nunexpected: {unexpected:#?}");
    assert_eq!(matched, wanted);
    assert!(matched >= 40, "the ground truth of these components is not trivial: {matched}");
}
