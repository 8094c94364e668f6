//! The feeds keep findings current without a rescan: a lab company is scanned once
//! (OpenSSH 9.9 on sftp.bluefinbank.test matches no CVE); a local feed server then
//! publishes a CVE for OpenSSH up to 9.9, and the worker's scheduled sync imports it:
//! the company gets the `vulnerabilities.cve` finding and a rating whose reason is
//! "feed update". The server then lists the CVE in KEV: after the next sync the finding
//! is critical and the KEV cap lowers the score. No job is queued and no other finding
//! is touched: nothing was rescanned.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use model::{CompanyProfile, Domain, DomainAsset, RiskVector, Severity, SocialId};
use store::{CompanySnapshot, Store};
use time::OffsetDateTime;

const CVE: &str = "CVE-2026-99001";

/// What the feed server publishes.
#[derive(Default)]
struct Published {
    cves: Vec<serde_json::Value>,
    kev: Vec<serde_json::Value>,
}

type Feeds = Arc<Mutex<Published>>;

fn openssh_cve() -> serde_json::Value {
    let now = OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap();
    let stamp = &now[..19];
    serde_json::json!({
        "id": CVE,
        "sourceIdentifier": "test@rampart.test",
        "published": stamp,
        "lastModified": stamp,
        "vulnStatus": "Analyzed",
        "descriptions": [{"lang": "en", "value": "A flaw in OpenSSH up to 9.9 lets a remote attacker in."}],
        "metrics": {"cvssMetricV31": [{"source": "nvd@nist.gov", "type": "Primary", "cvssData": {
            "version": "3.1", "vectorString": "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H",
            "baseScore": 8.1, "baseSeverity": "HIGH"}}]},
        "weaknesses": [{"source": "nvd@nist.gov", "type": "Primary", "description": [{"lang": "en", "value": "CWE-362"}]}],
        "configurations": [{"nodes": [{"operator": "OR", "negate": false, "cpeMatch": [{
            "vulnerable": true, "criteria": "cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*",
            "versionEndIncluding": "9.9", "matchCriteriaId": "A1B2C3D4-0000-4000-8000-000000000001"}]}]}],
        "references": [{"url": "https://www.openssh.test/security.html", "source": "test@rampart.test"}]
    })
}

fn kev_entry() -> serde_json::Value {
    serde_json::json!({
        "cveID": CVE, "vendorProject": "OpenBSD", "product": "OpenSSH",
        "vulnerabilityName": "OpenSSH Remote Code Execution", "dateAdded": "2026-11-27",
        "shortDescription": "A flaw in OpenSSH.", "requiredAction": "Apply updates.",
        "dueDate": "2026-12-18", "knownRansomwareCampaignUse": "Unknown", "notes": "", "cwes": ["CWE-362"]
    })
}

async fn cve_api(State(feeds): State<Feeds>) -> axum::Json<serde_json::Value> {
    let cves = feeds.lock().unwrap().cves.clone();
    let page: Vec<serde_json::Value> = cves.into_iter().map(|c| serde_json::json!({ "cve": c })).collect();
    axum::Json(serde_json::json!({
        "resultsPerPage": page.len(), "startIndex": 0, "totalResults": page.len(),
        "format": "NVD_CVE", "version": "2.0", "timestamp": "2026-11-27T00:00:00.000", "vulnerabilities": page,
    }))
}

async fn kev(State(feeds): State<Feeds>) -> axum::Json<serde_json::Value> {
    let entries = feeds.lock().unwrap().kev.clone();
    axum::Json(serde_json::json!({
        "title": "CISA Catalog of Known Exploited Vulnerabilities", "catalogVersion": "2026.11.27",
        "dateReleased": "2026-11-27T00:00:00.000Z", "count": entries.len(), "vulnerabilities": entries,
    }))
}

async fn epss() -> &'static str {
    "#model_version:v2025.03.14,score_date:2026-11-27T00:00:00+0000\ncve,epss,percentile\nCVE-2026-99001,0.51,0.97\n"
}

async fn serve(feeds: Feeds) -> String {
    let app = axum::Router::new()
        .route("/rest/json/cves/2.0", axum::routing::get(cve_api))
        .route("/kev.json", axum::routing::get(kev))
        .route("/epss.csv", axum::routing::get(epss))
        .with_state(feeds);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

async fn wait_for<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_published_cve_and_then_its_kev_entry_reach_the_findings_and_the_score_without_a_rescan() {
    let file = lab::LabFile::builtin_at(90).unwrap();
    let lab = lab::Lab::up(&file).await.unwrap();
    let ctx = scanner::probes::Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("f.db").display())).await.unwrap();
    let id = SocialId::parse("bluefin-bank").unwrap();
    let domain = Domain::parse("bluefinbank.test").unwrap();
    let profile = CompanyProfile {
        social_id: Some(id.clone()),
        company_name: "Bluefin Savings Bank".into(),
        website: "https://www.bluefinbank.test".into(),
        domain: Some(domain.clone()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: domain, attribution: "lab".into() }];
    let company =
        store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap();

    // The scan: OpenSSH 9.9 matches no CVE yet.
    worker::process(&*store, &ctx, &model::JobSpec::Scan { social_id: id.clone() }).await.unwrap();
    let scanned = store.latest_score(company.id).await.unwrap().unwrap();
    assert_eq!(scanned.reason.as_deref(), Some(model::RATED_BY_SCAN));
    let before = store.open_findings(company.id).await.unwrap();
    assert!(!before.iter().any(|f| f.cve.as_ref().is_some_and(|c| c.as_str() == CVE)));
    let others = |found: &[model::Finding]| {
        let mut v: Vec<(i64, String)> = found
            .iter()
            .filter(|f| f.risk_vector != RiskVector::Vulnerabilities)
            .map(|f| (f.id, f.last_seen.0.to_string()))
            .collect();
        v.sort();
        v
    };

    // Ratings are dated to the second, and one made within the second of the last
    // replaces it: each stage below starts in a second of its own.
    tokio::time::sleep(Duration::from_millis(1_100)).await;

    // The feed server, and a worker that syncs from it (the NVD feed already synced up
    // to yesterday: the API is asked for what changed since).
    let feeds: Feeds = Arc::default();
    feeds.lock().unwrap().cves.push(openssh_cve());
    let base = serve(feeds.clone()).await;
    let yesterday = OffsetDateTime::now_utc() - time::Duration::days(1);
    let since = format!(r#"{{"mode":"incremental","last_modified":"{}"}}"#, model::timefmt::rfc3339(yesterday));
    store.set_feed_state("nvd", &since).await.unwrap();
    let options = sync::SyncOptions {
        feeds: vec![sync::Feed::Nvd, sync::Feed::Kev, sync::Feed::Epss],
        nvd_api: format!("{base}/rest/json/cves/2.0"),
        nvd_pause: Duration::ZERO,
        kev_url: format!("{base}/kev.json"),
        epss_url: format!("{base}/epss.csv"),
        cache_dir: dir.path().join("cache"),
        retries: 0,
        ..sync::SyncOptions::default()
    };
    let mut feeds_config = worker::feeds::FeedsConfig::new(Some(Duration::from_secs(3_600)), options, "feeds-test");
    feeds_config.tick = Duration::from_millis(200);
    let config = worker::Config { concurrency: 1, feeds: Some(feeds_config), ..worker::Config::default() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(worker::run(store.clone(), Arc::new(ctx), config, async move {
        let _ = stopped.await;
    }));

    // The CVE arrives: a high finding on the SSH host, and a rating for the feed update.
    let finding = wait_for("the CVE's finding", async || {
        let open = store.open_findings(company.id).await.unwrap();
        open.into_iter().find(|f| f.cve.as_ref().is_some_and(|c| c.as_str() == CVE))
    })
    .await;
    assert_eq!((finding.code.as_str(), finding.asset.as_str()), ("vulnerabilities.cve", "sftp.bluefinbank.test"));
    assert_eq!(finding.severity, Severity::High);
    let updated = wait_for("the feed-update rating", async || {
        store
            .latest_score(company.id)
            .await
            .unwrap()
            .filter(|s| s.reason.as_deref() == Some(model::RATED_BY_FEED_UPDATE))
    })
    .await;
    assert!(updated.score < scanned.score, "{:?} then {:?}", scanned.score, updated.score);
    let vulns = &updated.components[&RiskVector::Vulnerabilities];
    assert_eq!(vulns.findings_count, 1);
    assert!(vulns.checks.as_ref().is_some_and(|c| c.finding >= 1), "the checks follow the match: {:?}", vulns.checks);

    // CISA lists it: the next sync makes the finding critical and the KEV cap applies.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    feeds.lock().unwrap().kev.push(kev_entry());
    store.set_feed_state(worker::feeds::SYNC_RUN, "2000-01-01T00:00:00Z").await.unwrap();
    let critical = wait_for("the KEV entry's effect", async || {
        let open = store.open_findings(company.id).await.unwrap();
        open.into_iter().find(|f| f.cve.as_ref().is_some_and(|c| c.as_str() == CVE) && f.severity == Severity::Critical)
    })
    .await;
    assert_eq!(critical.id, finding.id, "the same finding, now critical");
    let capped = wait_for("the KEV-capped rating", async || {
        let latest = store.latest_score(company.id).await.unwrap()?;
        (latest.score < updated.score).then_some(latest)
    })
    .await;
    assert_eq!(capped.reason.as_deref(), Some(model::RATED_BY_FEED_UPDATE));
    assert!(capped.score.as_f64() <= 69.9, "the KEV cap: {:?}", capped.score);
    assert!(updated.score.as_f64() > 69.9, "below the cap before: {:?}", updated.score);

    // The rating is saved before the change log is cleared (a worker stopped between the
    // two handles the changes again when it starts): the log empties within the round.
    wait_for("every change handled", async || store.cve_changes(10).await.unwrap().is_empty().then_some(())).await;

    // Nothing was rescanned: no job, the other findings as the scan left them.
    let _ = stop.send(());
    running.await.unwrap();
    assert!(store.jobs(None, 10).await.unwrap().is_empty(), "no job was queued");
    assert_eq!(others(&store.open_findings(company.id).await.unwrap()), others(&before));
    let history = store.score_history(company.id, 10).await.unwrap();
    let reasons: Vec<&str> = history.iter().filter_map(|s| s.reason.as_deref()).collect();
    assert_eq!(reasons.last(), Some(&model::RATED_BY_SCAN), "{reasons:?}");
    assert!(reasons[..reasons.len() - 1].iter().all(|r| *r == model::RATED_BY_FEED_UPDATE), "{reasons:?}");
    assert!(store.cve_changes(10).await.unwrap().is_empty(), "every change handled");
    lab.down().await;
}

/// A company concerned through a `certificate_cve` verdict: when KEV lists that CVE,
/// the company is re-rated and the KEV cap applies; a `vulnerabilities` finding its
/// last scan kept (a scan cut short) and that no changed CVE concerns stays open.
#[tokio::test]
async fn a_kev_entry_for_a_tls_verdicts_cve_re_rates_its_company() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("k.db").display())).await.unwrap();
    let profile = CompanyProfile {
        social_id: Some(SocialId::parse("poodle-co").unwrap()),
        company_name: "Poodle Co".into(),
        website: "https://www.poodle.example".into(),
        domain: Some(Domain::parse("poodle.example").unwrap()),
        ..Default::default()
    };
    let company = store.save_company(&CompanySnapshot { profile, ..Default::default() }).await.unwrap();
    let record = serde_json::json!({"vulnerabilities": [{"cve": {
        "id": "CVE-2014-3566", "published": "2014-10-15T00:55:05.007", "lastModified": "2025-01-01T00:00:00.000",
        "descriptions": [{"lang": "en", "value": "POODLE"}],
        "metrics": {"cvssMetricV31": [{"source": "nvd@nist.gov", "type": "Primary", "cvssData": {
            "version": "3.1", "vectorString": "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:L/I:N/A:N",
            "baseScore": 3.4, "baseSeverity": "LOW"}}]},
        "configurations": []}}]});
    let path = dir.path().join("nvd.json");
    std::fs::write(&path, record.to_string()).unwrap();
    vulndb::import::nvd_file(&*store, &path).await.unwrap();
    let now = OffsetDateTime::now_utc();
    let finding = scanner::ScanFinding::new("certificate_cve.poodle", "www.poodle.example:443", "SSLv3 with CBC")
        .with_cve("CVE-2014-3566");
    let kept = scanner::ScanFinding::new("vulnerabilities.cve", "old.poodle.example", "kept by a scan cut short")
        .with_cve("CVE-2020-0001");
    let vectors = [RiskVector::CertificateCve, RiskVector::Vulnerabilities];
    let scope =
        store::ScanScope { risk_vectors: &vectors, asset: None, below: false, close_missing: true, keep_open: &[] };
    store.record_scan(company.id, scope, &worker::to_findings(vec![finding, kept], now), now).await.unwrap();
    let detected = serde_json::json!([{"host": "ssh.poodle.example", "name": "OpenSSH", "version": "9.9",
        "categories": [], "cpes": ["cpe:2.3:a:openbsd:openssh:9.9:*:*:*:*:*:*:*"], "purl": null,
        "confidence": 100, "evidence": "banner"}]);
    let products = [("openbsd".to_owned(), "openssh".to_owned())];
    store.save_detected_software(company.id, &detected.to_string(), &products, now).await.unwrap();
    let basis = worker::rate::Basis {
        assets: RiskVector::ALL.iter().map(|v| (*v, 3)).collect(),
        reason: Some(model::RATED_BY_SCAN.to_owned()),
        ..Default::default()
    };
    let before = worker::rate::rate(&*store, company.id, None, &basis, now).await.unwrap().unwrap();
    assert!(before.score.as_f64() > 69.9, "{:?}", before.score);
    let changes = store.cve_changes(100).await.unwrap();
    store.forget_cve_changes(changes.last().unwrap().0).await.unwrap();

    let kev = serde_json::json!({"title": "t", "catalogVersion": "1", "dateReleased": "2026-11-27T00:00:00.000Z",
        "count": 1, "vulnerabilities": [{"cveID": "CVE-2014-3566", "vendorProject": "OpenSSL", "product": "SSLv3",
        "vulnerabilityName": "POODLE", "dateAdded": "2026-11-27", "shortDescription": "s", "requiredAction": "r",
        "dueDate": "2026-12-18", "knownRansomwareCampaignUse": "Unknown", "notes": ""}]});
    let path = dir.path().join("kev.json");
    std::fs::write(&path, kev.to_string()).unwrap();
    vulndb::import::kev_file(&*store, &path).await.unwrap();
    let later = now + time::Duration::seconds(2);
    let done = worker::feeds::rematch(&*store, None, later).await.unwrap();
    assert_eq!((done.changes, done.companies, done.rerated), (1, 1, 1), "{done:?}");
    let after = store.latest_score(company.id).await.unwrap().unwrap();
    assert_eq!(after.reason.as_deref(), Some(model::RATED_BY_FEED_UPDATE));
    assert!(after.score.as_f64() <= 69.9, "the KEV cap: {:?}", after.score);
    let mut open: Vec<String> = store.open_findings(company.id).await.unwrap().into_iter().map(|f| f.code).collect();
    open.sort();
    assert_eq!(open, ["certificate_cve.poodle", "vulnerabilities.cve"], "the verdict and the kept finding stay");
}
