//! Alerts (docs/API.md, "Alerts"): a lab company in an organisation's portfolio, tier 1,
//! with alert rules; its first rating raises nothing (a first look is not news), then its
//! DMARC record breaks, the scheduled rescan finds it, and the rules that cover tier 1
//! raise alerts that say what changed and why; a rule for another tier stays quiet.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, SocialId};
use scanner::probes::Context;
use store::{AlertQuery, CompanySnapshot, Store};

const DNS: &str = "127.79.15.53";

fn lab_file(dmarc: &str) -> LabFile {
    LabFile::parse(&format!(
        r#"{{"dns": {{"address": "{DNS}"}}, "port_map": {{"53": 10053}},
            "zones": [{{"origin": "alert.test", "records": [
              "@ MX 10 mail", "@ TXT \"v=spf1 mx -all\"", "mail A 127.79.15.2",
              "_dmarc TXT \"{dmarc}\""]}}]}}"#
    ))
    .unwrap()
}

#[tokio::test]
async fn a_broken_dmarc_record_raises_the_alerts_whose_rules_cover_the_company() {
    let good = "v=DMARC1; p=reject; rua=mailto:d@alert.test";
    let lab = Lab::up(&lab_file(good)).await.unwrap();
    let file = lab_file(good);
    let ctx = Arc::new(Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("a.db").display())).await.unwrap();
    let profile = CompanyProfile {
        social_id: Some(SocialId::parse("alert-co").unwrap()),
        company_name: "Alert Co".into(),
        website: "https://www.alert.test".into(),
        domain: Some(Domain::parse("alert.test").unwrap()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: Domain::parse("alert.test").unwrap(), attribution: "test".into() }];
    let c =
        store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap();
    let org = store.create_org("Alerting Mutual").await.unwrap();
    let book = store.create_portfolio(org.id, "Book", 10).await.unwrap().unwrap();
    let record = model::VendorRecord { tier: Some(model::Tier::new(1).unwrap()), ..Default::default() };
    store.add_to_portfolio(book.id, &[(c.id, record)]).await.unwrap();
    let rules = r#"{"rules": [
        {"id": "high", "kind": "finding_opened", "severity": "high", "tiers": [1]},
        {"id": "tier2-any", "kind": "finding_opened", "severity": "info", "tiers": [2]},
        {"id": "kev", "kind": "kev_appeared"}]}"#;
    let doc: serde_json::Value = serde_json::from_str(rules).unwrap();
    model::alerts::AlertRules::parse(&doc).unwrap();
    store.set_alert_rules(book.id, rules, "test", time::OffsetDateTime::now_utc()).await.unwrap();

    let config = worker::Config {
        concurrency: 2,
        idle: Duration::from_millis(50),
        rescan_every: Some(Duration::from_secs(15)),
        retry_unit: Duration::from_millis(100),
        name: "alerts".into(),
        ..worker::Config::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(worker::run(store.clone(), ctx, config, async move {
        let _ = stopped.await;
    }));
    let alerts = async || store.alerts(org.id, &AlertQuery::default(), model::Page::FIRST).await.unwrap();

    // The first rating: no alert.
    let start = Instant::now();
    while store.latest_score(c.id).await.unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(60), "no first rating within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(alerts().await.total, 0, "a first look raises nothing");

    // The DMARC record breaks; the scheduled rescan finds it and the tier-1 rule says so.
    lab.down().await;
    let _lab = Lab::up(&lab_file("v=DMARC1; p=bogus")).await.unwrap();
    let start = Instant::now();
    let got = loop {
        let got = alerts().await;
        if got.total > 0 {
            break got;
        }
        assert!(start.elapsed() < Duration::from_secs(90), "no alert within 90 s of the break");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let _ = stop.send(());
    run.await.unwrap();
    let a = got.items.iter().find(|a| a.summary.contains("dmarc.syntax_error")).expect("the DMARC alert");
    assert_eq!((a.rule_id.as_str(), a.kind.as_str()), ("high", "finding_opened"));
    assert_eq!((a.social_id.as_str(), a.portfolio, a.portfolio_name.as_str()), ("alert-co", book.id, "Book"));
    assert!(a.summary.starts_with("high finding opened: dmarc.syntax_error on alert.test"), "{}", a.summary);
    assert!(a.explanation.starts_with("Score "), "{}", a.explanation);
    assert!(a.explanation.contains("dmarc.syntax_error on alert.test"), "{}", a.explanation);
    assert!(got.items.iter().all(|a| a.rule_id == "high"), "only the tier-1 rule raised: {:?}", got.items);
    assert!(a.acknowledged_at.is_none());
}
