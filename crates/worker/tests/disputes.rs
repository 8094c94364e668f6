//! Disputes and footprint corrections through to their outcomes (docs/API.md,
//! "Disputes"), on a lab company: `fixed` decided by the rescan it queues (rejected while
//! the lab still shows the finding, accepted once it is fixed), `compensating_control`
//! (shown, no weight), `incorrect` (closed as a false positive and kept closed by later
//! scans), `not_ours` (the host leaves the company and its scans), and the company's own
//! additions (a host name and an address, scanned with the company as their attribution).

use std::sync::Arc;

use lab::{Lab, LabFile};
use model::{
    CompanyProfile, DisputeReason, DisputeState, Domain, DomainAsset, FootprintAsset, JobSpec, RiskVector, SocialId,
};
use scanner::probes::Context;
use store::{Decision, NewDispute, Opened, Store};

const LAB: &str = r#"{"dns": {"address": "127.79.20.53"}, "port_map": {"53": 10053},
    "zones": [{"origin": "test"}, {"origin": "disp.test", "records": [
      "@ MX 10 mail", "@ TXT \"v=spf1 mx -all\"", "mail A 127.79.20.2",
      "vpn A 127.79.20.3", "remote A 127.79.20.4", "zz-extra A 127.79.20.5"]}],
    "hosts": [
      {"name": "vpn.disp.test", "address": "127.79.20.3", "services": [{"port": 6379, "kind": "redis", "version": "5.0.7"}]},
      {"name": "remote.disp.test", "address": "127.79.20.4", "services": [{"port": 3389, "kind": "rdp"}]},
      {"name": "zz-extra.disp.test", "address": "127.79.20.5", "services": [{"port": 3389, "kind": "rdp"}]},
      {"name": "unnamed.nowhere.test", "address": "127.79.20.6", "services": [{"port": 6379, "kind": "redis", "version": "5.0.7"}]}
    ]}"#;

const DMARC: &str = "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:d@disp.test\"";

async fn up(file: &LabFile) -> (Lab, Arc<Context>) {
    let lab = Lab::up(file).await.unwrap();
    let ctx = Arc::new(Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap());
    (lab, ctx)
}

fn open<'a>(company: i64, finding: i64, reason: DisputeReason) -> NewDispute<'a> {
    NewDispute {
        company,
        finding: Some(finding),
        asset: "",
        reason,
        explanation: "we disagree",
        by: "key 1",
        at: time::OffsetDateTime::now_utc(),
        max_open: 200,
    }
}

async fn opened(store: &dyn Store, new: &NewDispute<'_>) -> model::Dispute {
    match store.open_dispute(new).await.unwrap() {
        Opened::Opened(d) => d,
        other => panic!("not opened: {other:?}"),
    }
}

async fn finding(store: &dyn Store, company: i64, pick: impl Fn(&model::Finding) -> bool) -> model::Finding {
    let open = store.open_findings(company).await.unwrap();
    open.iter().find(|f| pick(f)).cloned().unwrap_or_else(|| panic!("no such finding among {open:#?}"))
}

async fn decide(
    store: &dyn Store,
    company: &model::Company,
    id: i64,
    accept: bool,
    note: &str,
) -> model::ScoreSnapshot {
    let now = time::OffsetDateTime::now_utc();
    let d = store.decide_dispute(id, &Decision { accept, note, by: "ops", at: now }).await.unwrap().unwrap();
    worker::disputes::rerate_after(store, company, &d, now).await.unwrap().expect("re-rated")
}

#[tokio::test]
async fn each_reason_comes_to_its_outcome() {
    let mut file = LabFile::parse(LAB).unwrap();
    let (lab, ctx) = up(&file).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("d.db").display())).await.unwrap();
    let sid = SocialId::parse("disp-co").unwrap();
    let profile = CompanyProfile {
        social_id: Some(sid.clone()),
        company_name: "Disp Co".into(),
        website: "https://disp.test".into(),
        domain: Some(Domain::parse("disp.test").unwrap()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: Domain::parse("disp.test").unwrap(), attribution: "test".into() }];
    let c = store
        .save_company(&store::CompanySnapshot { profile, domains: Some(domains), ..Default::default() })
        .await
        .unwrap();
    let scan = JobSpec::Scan { social_id: sid.clone() };
    worker::process(&*store, &ctx, &scan).await.unwrap();
    let first = store.latest_score(c.id).await.unwrap().unwrap();

    // `fixed`, while the lab still lacks a DMARC record: the rescan rejects it with
    // what it saw, and the rating says so.
    let dmarc = finding(&*store, c.id, |f| f.risk_vector == RiskVector::Dmarc).await;
    let d = opened(&*store, &open(c.id, dmarc.id, DisputeReason::Fixed)).await;
    assert!(store.open_findings(c.id).await.unwrap().iter().any(|f| f.id == dmarc.id && f.disputed));
    assert_eq!(store.disputed_vectors(c.id).await.unwrap(), vec![RiskVector::Dmarc]);
    // The same finding again: the open dispute, not a second one.
    assert!(
        matches!(store.open_dispute(&open(c.id, dmarc.id, DisputeReason::Incorrect)).await.unwrap(), Opened::AlreadyOpen(o) if o.id == d.id)
    );
    let rescan = JobSpec::Rescan {
        social_id: sid.clone(),
        subdomain: Domain::parse("disp.test").unwrap(),
        risk_vector: RiskVector::Dmarc,
    };
    worker::process(&*store, &ctx, &rescan).await.unwrap();
    let rejected = store.dispute(d.id).await.unwrap().unwrap();
    assert_eq!((rejected.state, rejected.decided_by.as_deref()), (DisputeState::Rejected, Some("rescan")));
    assert!(rejected.note.as_deref().unwrap().contains("still sees"), "{rejected:?}");
    let reason = store.latest_score(c.id).await.unwrap().unwrap().reason.unwrap();
    assert!(reason.contains(&format!("dispute {} (fixed) rejected", d.id)), "{reason}");
    assert!(store.disputed_vectors(c.id).await.unwrap().is_empty());

    // The company fixes it and disputes again: the rescan accepts, the finding closes
    // and the DMARC component's score rises, with the reason in the history.
    lab.down().await;
    let zone = file.zones.iter_mut().find(|z| z.origin == "disp.test").unwrap();
    zone.records.push(DMARC.to_owned());
    let (lab, ctx) = up(&file).await;
    let d = opened(&*store, &open(c.id, dmarc.id, DisputeReason::Fixed)).await;
    worker::process(&*store, &ctx, &rescan).await.unwrap();
    let accepted = store.dispute(d.id).await.unwrap().unwrap();
    assert_eq!(accepted.state, DisputeState::Accepted, "{accepted:?}");
    assert!(!store.open_findings(c.id).await.unwrap().iter().any(|f| f.id == dmarc.id));
    let after_fix = store.latest_score(c.id).await.unwrap().unwrap();
    assert!(after_fix.reason.as_deref().unwrap().contains(&format!("dispute {} (fixed) accepted", d.id)));
    assert!(after_fix.components[&RiskVector::Dmarc].score > first.components[&RiskVector::Dmarc].score);
    // A closed finding cannot be disputed, and says when it closed.
    assert!(matches!(
        store.open_dispute(&open(c.id, dmarc.id, DisputeReason::Incorrect)).await.unwrap(),
        Opened::FindingClosed { .. }
    ));

    // `compensating_control` accepted: the RDP finding stays, weighs nothing.
    let rdp = finding(&*store, c.id, |f| f.code == "open_ports.rdp_exposed").await;
    let ports_before = after_fix.components[&RiskVector::OpenPorts].score;
    let d = opened(&*store, &open(c.id, rdp.id, DisputeReason::CompensatingControl)).await;
    let rated = decide(&*store, &c, d.id, true, "RDP is reachable through the VPN gateway only").await;
    let kept = finding(&*store, c.id, |f| f.id == rdp.id).await;
    assert!(kept.no_weight && !kept.disputed);
    assert!(rated.components[&RiskVector::OpenPorts].score > ports_before);
    assert!(rated.reason.as_deref().unwrap().contains("(compensating_control) accepted by ops"), "{:?}", rated.reason);

    // `incorrect` accepted: closed as a false positive of its check; the next scan sees
    // it again and keeps it closed.
    let redis = finding(&*store, c.id, |f| f.code == "open_ports.redis_exposed").await;
    let d = opened(&*store, &open(c.id, redis.id, DisputeReason::Incorrect)).await;
    decide(&*store, &c, d.id, true, "a honeypot").await;
    assert_eq!(store.false_positives().await.unwrap(), vec![("open_ports.redis_exposed".to_owned(), 1)]);
    worker::process(&*store, &ctx, &scan).await.unwrap();
    assert!(!store.open_findings(c.id).await.unwrap().iter().any(|f| f.code == "open_ports.redis_exposed"));
    let stored = store.finding_by_id(redis.id).await.unwrap().unwrap();
    assert!(stored.false_positive && stored.closed_at.is_some());

    // A rejected dispute changes nothing but the finding's disputed mark.
    let rdp_again = finding(&*store, c.id, |f| f.code == "open_ports.rdp_exposed").await;
    let d = opened(&*store, &open(c.id, rdp_again.id, DisputeReason::Incorrect)).await;
    decide(&*store, &c, d.id, false, "the port answers RDP").await;
    let still = finding(&*store, c.id, |f| f.id == rdp_again.id).await;
    assert!(!still.disputed);
    // Deciding twice is refused.
    let twice = store
        .decide_dispute(d.id, &Decision { accept: true, note: "x", by: "ops", at: time::OffsetDateTime::now_utc() })
        .await;
    assert!(matches!(twice, Err(store::StoreError::Invalid(_))), "{twice:?}");

    // `not_ours` accepted: remote.disp.test leaves the company, and the next scan
    // leaves it out although the wordlist finds it.
    let d = opened(&*store, &open(c.id, rdp_again.id, DisputeReason::NotOurs)).await;
    decide(&*store, &c, d.id, true, "the name points at our ISP's gateway").await;
    let hosts = |s: Arc<dyn Store>| async move { s.hosts(c.id).await.unwrap() };
    assert!(!hosts(store.clone()).await.iter().any(|h| h.name == "remote.disp.test"));
    let footprint = store.footprint(c.id).await.unwrap();
    assert_eq!(
        (footprint[0].asset.as_str(), footprint[0].change.as_str(), footprint[0].dispute_id),
        ("remote.disp.test", "removed", Some(d.id))
    );
    worker::process(&*store, &ctx, &scan).await.unwrap();
    assert!(!hosts(store.clone()).await.iter().any(|h| h.name == "remote.disp.test"));
    assert!(!store.open_findings(c.id).await.unwrap().iter().any(|f| f.asset.starts_with("remote.disp.test")));
    assert!(
        store
            .network_endpoints(c.id, model::Page::FIRST)
            .await
            .unwrap()
            .items
            .iter()
            .all(|e| e.host.as_deref() != Some("remote.disp.test"))
    );

    // The company adds a host discovery does not find, and an address with no name:
    // both are scanned, attributed to the company.
    assert!(!hosts(store.clone()).await.iter().any(|h| h.name == "zz-extra.disp.test"), "not found by discovery");
    let now = time::OffsetDateTime::now_utc();
    let name = FootprintAsset::parse("zz-extra.disp.test").unwrap();
    let caps = store::FootprintCaps { per_day: 20, total: 100 };
    store.add_to_footprint(c.id, &name, "our partner portal", "key 1", now, true, caps).await.unwrap();
    let addr = FootprintAsset::parse("127.79.20.6").unwrap();
    store.add_to_footprint(c.id, &addr, "our cache server", "key 1", now, true, caps).await.unwrap();
    worker::process(&*store, &ctx, &scan).await.unwrap();
    let all = hosts(store.clone()).await;
    let extra = all.iter().find(|h| h.name == "zz-extra.disp.test").expect("the added host");
    assert_eq!(extra.attribution.source, "company");
    let evidence = &extra.attribution.evidence;
    assert!(
        evidence.starts_with("added by the company (key 1) on ") && evidence.ends_with(": our partner portal"),
        "{extra:?}"
    );
    let open_now = store.open_findings(c.id).await.unwrap();
    assert!(
        open_now.iter().any(|f| f.asset == "zz-extra.disp.test:3389" && f.code == "open_ports.rdp_exposed"),
        "{open_now:#?}"
    );
    assert!(
        open_now.iter().any(|f| f.asset.starts_with("127.79.20.6") && f.code == "open_ports.redis_exposed"),
        "{open_now:#?}"
    );
    lab.down().await;
}
