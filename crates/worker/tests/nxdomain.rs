//! A company domain that does not exist is not rated: on a lab whose parent zone answers
//! NXDOMAIN for it, the scan job ends dead at once (no retry) with the reason, the
//! company keeps no rating and no finding, and the reason is stored for the API. A
//! company with one existing and one absent domain is rated on the existing one only.

use std::sync::Arc;

use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, JobStatus, SocialId};
use scanner::probes::Context;
use store::{CompanySnapshot, Store};

async fn company(store: &dyn Store, id: &str, domains: &[&str]) -> model::Company {
    let profile = CompanyProfile {
        social_id: Some(SocialId::parse(id).unwrap()),
        company_name: id.to_owned(),
        website: format!("https://www.{}", domains[0]),
        domain: Some(Domain::parse(domains[0]).unwrap()),
        ..Default::default()
    };
    let domains =
        domains.iter().map(|d| DomainAsset { name: Domain::parse(d).unwrap(), attribution: "test".into() }).collect();
    store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap()
}

#[tokio::test]
async fn a_domain_that_does_not_exist_is_not_rated() {
    let file = LabFile::parse(
        r#"{"dns": {"address": "127.79.9.53"}, "port_map": {"53": 10053},
            "zones": [{"origin": "test"},
                      {"origin": "real.test", "records": ["@ TXT \"v=spf1 -all\""]}]}"#,
    )
    .unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Arc::new(Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap());
    // The scanner itself refuses the name.
    let err = scanner::probes::scan_domain(&ctx, "ghost.test", None, &[]).await.unwrap_err();
    assert!(matches!(err, scanner::dns::DnsError::NoSuchDomain(ref d) if d == "ghost.test"), "{err}");
    let err = scanner::probes::mail_and_standards(&ctx, "ghost.test", None).await.unwrap_err();
    assert!(err.to_string().contains("does not exist (NXDOMAIN)"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("n.db").display())).await.unwrap();
    let ghost = company(&*store, "ghost-co", &["ghost.test"]).await;
    let half = company(&*store, "half-co", &["real.test", "gone.test"]).await;
    for id in ["ghost-co", "half-co"] {
        store.enqueue(&model::JobSpec::Scan { social_id: model::SocialId::parse(id).unwrap() }).await.unwrap();
    }
    let watcher = store.clone();
    let drained = async move {
        while !store::testkit::pending_jobs(&*watcher).await.unwrap().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    worker::run(store.clone(), ctx.clone(), worker::Config::default(), drained).await;
    lab.down().await;

    let jobs = store.jobs(None, 10).await.unwrap();
    let job = |id: &str| jobs.iter().find(|j| j.spec.company().as_str() == id).unwrap().clone();
    let dead = job("ghost-co");
    assert_eq!((dead.status, dead.attempts), (JobStatus::Dead, 1), "not retried: {dead:?}");
    assert!(dead.last_error.as_deref().unwrap_or("").contains("ghost.test does not exist (NXDOMAIN)"), "{dead:?}");
    assert!(store.latest_score(ghost.id).await.unwrap().is_none(), "no rating");
    assert!(store.open_findings(ghost.id).await.unwrap().is_empty(), "no finding");
    let (why, _) = store.scan_error(ghost.id).await.unwrap().expect("the reason is kept for the API");
    assert!(why.contains("ghost.test does not exist"), "{why}");

    assert_eq!(job("half-co").status, JobStatus::Done);
    let rated = store.latest_score(half.id).await.unwrap().expect("rated on real.test");
    assert_eq!(
        rated.notes,
        ["gone.test: the domain does not exist (NXDOMAIN); not scanned"],
        "the rating says what it left out"
    );
    let found = store.open_findings(half.id).await.unwrap();
    assert!(found.iter().all(|f| !f.asset.contains("gone.test")), "{found:?}");
    assert!(!found.is_empty(), "real.test has findings (no DMARC, no MX…)");
    assert!(store.scan_error(half.id).await.unwrap().is_none());
}
