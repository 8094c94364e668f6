//! Scan jobs end to end: a company of the built-in lab is known, a scan job is queued,
//! a worker leases and runs it against the lab, and the store holds exactly the mail
//! and DNS findings the lab's ground truth expects; a rescan of one (domain, vector)
//! re-runs that probe only.

use std::sync::Arc;

use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, RiskVector, SocialId};
use scanner::probes::Context;
use store::{CompanySnapshot, Store};

#[tokio::test]
async fn a_queued_scan_is_run_by_a_worker_and_its_findings_are_stored() {
    let file = LabFile::builtin_at(98).unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let ctx = Arc::new(ctx);

    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("w.db").display())).await.unwrap();
    let company = file.companies.iter().find(|c| c.social_id() == "lumen-pike").unwrap();
    let profile = CompanyProfile {
        social_id: Some(SocialId::parse("lumen-pike").unwrap()),
        company_name: company.company["company_name"].as_str().unwrap().to_owned(),
        website: company.company["website"].as_str().unwrap().to_owned(),
        domain: Some(Domain::parse("lumenpike.test").unwrap()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: Domain::parse("lumenpike.test").unwrap(), attribution: "lab".into() }];
    let c =
        store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap();
    assert!(
        store
            .enqueue(&model::JobSpec::Scan { social_id: model::SocialId::parse("lumen-pike").unwrap() })
            .await
            .unwrap()
    );

    // A worker runs until the queue is empty.
    let watcher = store.clone();
    let drained = async move {
        while !store::testkit::pending_jobs(&*watcher).await.unwrap().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    worker::run(store.clone(), ctx.clone(), worker::Config::default(), drained).await;

    let stored = store.open_findings(c.id).await.unwrap();
    let mut got: Vec<(String, String)> = stored.iter().map(|f| (f.code.clone(), f.asset.clone())).collect();
    got.sort();
    let mut want: Vec<(String, String)> = company
        .expected
        .iter()
        .filter(|e| worker::VECTORS.iter().any(|v| v.as_str() == e.risk_vector))
        .map(|e| (e.code.clone(), e.asset.clone()))
        .collect();
    want.sort();
    assert_eq!(got, want);

    // The scan rated the company: the methodology's version, every component judged
    // against what the scan assessed, the findings' points lost, the company scanned.
    let rated = store.latest_score(c.id).await.unwrap().expect("the scan rates the company");
    assert_eq!(rated.methodology.as_deref(), Some(rating::METHODOLOGY_VERSION));
    assert_eq!(rated.components.len(), 12);
    assert!(rated.score.as_f64() < 100.0, "{rated:?}");
    let dmarc = &rated.components[&RiskVector::Dmarc];
    assert_eq!((dmarc.assets_checked, dmarc.findings_count, dmarc.not_assessable.as_deref()), (1, 2, None));
    assert!(dmarc.score.as_f64() < 100.0);
    let certs = &rated.components[&RiskVector::CertificateInfo];
    assert!(certs.assets_checked >= 3 && certs.findings_count >= 1, "{certs:?}");
    let now = store.company_by_social_id(&SocialId::parse("lumen-pike").unwrap()).await.unwrap().unwrap();
    assert_eq!(now.last_scanned_at, Some(rated.scanned_at.0));
    assert_eq!(now.score, Some(rated.score));

    // A rescan of (lumenpike.test, dmarc) sees the same two DMARC findings again and
    // leaves the others alone.
    let outcome = worker::process(
        &*store,
        &ctx,
        &spec(
            "rescan",
            &serde_json::json!({"social_id": "lumen-pike", "subdomain": "lumenpike.test", "risk_vector": "dmarc"}),
        ),
    )
    .await
    .unwrap();
    assert_eq!((outcome.opened, outcome.seen_again, outcome.closed), (0, 2, 0));
    let after = store.open_findings(c.id).await.unwrap();
    let ids = |p: &[model::Finding]| p.iter().map(|f| f.id).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&stored), "the same findings with the same ids");
    // It re-rates the company over the same assets: the same findings, the same score.
    let history = store.score_history(c.id, 10).await.unwrap();
    assert!(!history.is_empty() && history[0].scanned_at.0 >= rated.scanned_at.0);
    assert_eq!((history[0].score, &history[0].components), (rated.score, &rated.components));
    assert!(after.iter().any(|f| f.risk_vector == RiskVector::Dkim));

    // The hosts are stored with why they are the company's, and so are the endpoints
    // the web round saw (the apex has no address of its own: not a host).
    let hosts = store.hosts(c.id).await.unwrap();
    let names: Vec<(&str, &str)> = hosts.iter().map(|h| (h.name.as_str(), h.attribution.source.as_str())).collect();
    assert_eq!(
        names,
        [
            ("intranet-old.lumenpike.test", "wordlist"),
            ("mail.lumenpike.test", "mx"),
            ("vpn.lumenpike.test", "wordlist"),
            ("www.lumenpike.test", "wordlist"),
        ]
    );
    let endpoints = store.network_endpoints(c.id, model::Page::FIRST).await.unwrap().items;
    let seen: Vec<(String, u16, &str)> = endpoints
        .iter()
        .map(|e| (e.host.clone().unwrap_or_default(), e.port, e.attribution.as_ref().map_or("", |a| a.source.as_str())))
        .collect();
    for want in [("www.lumenpike.test", 443), ("www.lumenpike.test", 80), ("vpn.lumenpike.test", 443)] {
        assert!(seen.iter().any(|(h, p, s)| (h.as_str(), *p) == want && *s == "wordlist"), "{want:?} in {seen:?}");
    }

    // A rescan of one host for it_standardization re-runs the checks on that host
    // only: its IPv6 finding is seen again, the domain's findings are not touched.
    let outcome = worker::process(&*store, &ctx, &spec("rescan", &serde_json::json!({"social_id": "lumen-pike", "subdomain": "mail.lumenpike.test", "risk_vector": "it_standardization"}))).await
    .unwrap();
    assert_eq!((outcome.opened, outcome.seen_again, outcome.closed), (0, 1, 0));
    assert_eq!(ids(&store.open_findings(c.id).await.unwrap()), ids(&stored));
    // The TLS probe of one host: its self-signed certificate is seen again.
    let tls = serde_json::json!({"social_id": "lumen-pike", "subdomain": "vpn.lumenpike.test", "risk_vector": "certificate_info"});
    let outcome = worker::process(&*store, &ctx, &spec("rescan", &tls)).await.unwrap();
    assert_eq!((outcome.opened, outcome.seen_again, outcome.closed), (0, 1, 0));
    // The parked host is seen parked again.
    let parked = serde_json::json!({"social_id": "lumen-pike", "subdomain": "intranet-old.lumenpike.test", "risk_vector": "digitalization"});
    let outcome = worker::process(&*store, &ctx, &spec("rescan", &parked)).await.unwrap();
    assert_eq!((outcome.opened, outcome.seen_again, outcome.closed), (0, 1, 0));
    // A port scan and a header check of a host with nothing to report close nothing.
    for vector in ["open_ports", "web_headers"] {
        let job =
            serde_json::json!({"social_id": "lumen-pike", "subdomain": "www.lumenpike.test", "risk_vector": vector});
        let outcome = worker::process(&*store, &ctx, &spec("rescan", &job)).await.unwrap();
        assert_eq!(outcome.closed, 0, "{vector}");
    }
    assert_eq!(ids(&store.open_findings(c.id).await.unwrap()), ids(&stored));
    let outside = serde_json::json!({"social_id": "lumen-pike", "subdomain": "www.other.test", "risk_vector": "dmarc"});
    assert!(!worker::process(&*store, &ctx, &spec("rescan", &outside)).await.unwrap_err().retryable());

    // Bad payloads fail without retry.
    let bad =
        worker::process(&*store, &ctx, &spec("scan", &serde_json::json!({"social_id": "nobody"}))).await.unwrap_err();
    assert!(!bad.retryable(), "{bad}");
    lab.down().await;

    // The company fixes its DMARC record; a rescan of (lumenpike.test, dmarc) closes the
    // two DMARC findings and the re-rating moves the component's score at once.
    let before = store.latest_score(c.id).await.unwrap().unwrap();
    let mut fixed = file.clone();
    let zone = fixed.zones.iter_mut().find(|z| z.origin == "lumenpike.test").unwrap();
    for r in zone.records.iter_mut().filter(|r| r.starts_with("_dmarc ")) {
        *r = "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:dmarc@lumenpike.test\"".to_owned();
    }
    let lab = Lab::up(&fixed).await.unwrap();
    let ctx = Context::lab(
        lab.resolver.unwrap(),
        fixed.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    let job = serde_json::json!({"social_id": "lumen-pike", "subdomain": "lumenpike.test", "risk_vector": "dmarc"});
    let outcome = worker::process(&*store, &ctx, &spec("rescan", &job)).await.unwrap();
    lab.down().await;
    assert_eq!((outcome.opened, outcome.closed), (0, 2));
    let after = store.latest_score(c.id).await.unwrap().unwrap();
    assert_eq!(after.components[&RiskVector::Dmarc].score.as_f64(), 100.0);
    assert_eq!(after.components[&RiskVector::Dmarc].findings_count, 0);
    assert!(after.components[&RiskVector::Dmarc].score > before.components[&RiskVector::Dmarc].score);
    // The global score never falls when a finding closes (here it stays at its cap: the
    // company's critical finding still bounds it).
    assert!(after.score >= before.score, "{} -> {}", before.score.as_f64(), after.score.as_f64());
    assert_eq!(after.components[&RiskVector::Spf], before.components[&RiskVector::Spf], "other components unchanged");
}

/// The job a stored kind and payload describe.
fn spec(kind: &str, payload: &serde_json::Value) -> model::JobSpec {
    model::JobSpec::from_stored(kind, &payload.to_string()).unwrap()
}
