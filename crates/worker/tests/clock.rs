//! One worker, two jobs days apart: each job is judged at its own time, and with the
//! reference data the store holds when it starts. The lab's www.kestrelfreight.test
//! serves a certificate that expires ten days after the lab came up (day D): a scan on
//! day D finds it expiring within 14 days; the same worker, its clock moved to D+11,
//! finds it expired on its next job. End-of-life data imported between the two jobs
//! (without restarting the worker) gives the second job its `sbom.end_of_life` findings.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, SocialId};
use scanner::probes::Context;
use store::{CompanySnapshot, Store};

const HOST: &str = "www.kestrelfreight.test";

fn eol_file() -> Option<PathBuf> {
    let f =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/endoflife/endoflife_products_all.json");
    f.exists().then_some(f)
}

/// Queues a scan of the company and waits until the worker has run it.
async fn scan_and_wait(store: &dyn Store, id: &SocialId) {
    assert!(store.enqueue(&model::JobSpec::Scan { social_id: id.clone() }).await.unwrap());
    let waited = std::time::Instant::now();
    while !store::testkit::pending_jobs(store).await.unwrap().is_empty() {
        assert!(waited.elapsed() < Duration::from_secs(60), "the scan did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn codes_on(store: &dyn Store, company: i64, asset_prefix: &str) -> Vec<String> {
    let mut codes: Vec<String> = store
        .open_findings(company)
        .await
        .unwrap()
        .into_iter()
        .filter(|f| f.asset.starts_with(asset_prefix))
        .map(|f| f.code)
        .collect();
    codes.sort();
    codes
}

#[tokio::test]
async fn each_job_is_judged_at_its_own_time_with_the_data_the_store_holds_then() {
    let eol = eol_file();
    if eol.is_none() {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        println!("skipped: ../shared/data/endoflife is not there");
        return;
    }
    let file = LabFile::builtin_at(92).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let mut ctx = Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    ctx.vectors = vec![model::RiskVector::CertificateInfo, model::RiskVector::Sbom];

    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("c.db").display())).await.unwrap();
    let id = SocialId::parse("kestrel-logistics").unwrap();
    let domain = Domain::parse("kestrelfreight.test").unwrap();
    let profile = CompanyProfile {
        social_id: Some(id.clone()),
        company_name: "Kestrel Logistics".into(),
        website: format!("https://{HOST}"),
        domain: Some(domain.clone()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: domain, attribution: "lab".into() }];
    let c =
        store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap();

    // The worker's clock: the system's, moved on by `days`.
    let days = Arc::new(AtomicI64::new(0));
    let clock = {
        let days = days.clone();
        worker::Clock::new(move || time::OffsetDateTime::now_utc() + time::Duration::days(days.load(Ordering::SeqCst)))
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(worker::run(
        store.clone(),
        Arc::new(ctx),
        worker::Config { clock, concurrency: 1, ..worker::Config::default() },
        async move {
            let _ = stopped.await;
        },
    ));

    // Day D: expiring within 14 days; no end-of-life data yet, so no such finding.
    scan_and_wait(&*store, &id).await;
    let day_d = codes_on(&*store, c.id, HOST).await;
    assert!(day_d.iter().any(|c| c == "certificate_info.expires_within_14_days"), "{day_d:?}");
    assert!(!day_d.iter().any(|c| c == "certificate_info.expired" || c == "sbom.end_of_life"), "{day_d:?}");

    // While the worker runs: end-of-life data is imported, and eleven days pass.
    let text = std::fs::read_to_string(eol.unwrap()).unwrap();
    store.save_eol_products(&scanner::software::Eol::rows(&text, "all").unwrap()).await.unwrap();
    days.store(11, Ordering::SeqCst);
    scan_and_wait(&*store, &id).await;
    let day_d11 = codes_on(&*store, c.id, HOST).await;
    assert!(day_d11.iter().any(|c| c == "certificate_info.expired"), "{day_d11:?}");
    assert!(!day_d11.iter().any(|c| c == "certificate_info.expires_within_14_days"), "{day_d11:?}");
    assert!(day_d11.iter().any(|c| c == "sbom.end_of_life"), "the imported data is used: {day_d11:?}");

    let _ = stop.send(());
    running.await.unwrap();
}
