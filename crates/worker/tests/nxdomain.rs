//! What a scan cannot see, and what it may not count. A company domain that does not
//! exist is not rated: on a lab whose parent zone answers NXDOMAIN for it, the scan job
//! ends dead at once (no retry) with the reason, the company keeps no rating and no
//! finding, and the reason is stored for the API; a company with one existing and one
//! absent domain is rated on the existing one only. A host hidden behind an internal
//! address, or a domain whose DNS fails, keeps its findings (docs/SECURITY.md §2); a
//! domain a key claimed is scanned but not rated until it is proved (docs/API.md, "Domain
//! ownership").

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
    let err = scanner::scan::scan_domain(&ctx, "ghost.test", None, &[]).await.unwrap_err();
    assert!(matches!(err, scanner::dns::DnsError::NoSuchDomain(ref d) if d == "ghost.test"), "{err}");
    let err = scanner::scan::mail_and_standards(&ctx, "ghost.test", None).await.unwrap_err();
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

/// The lab of [`a_host_hidden_behind_an_internal_address_keeps_its_findings`]: one web
/// host with an exposed Telnet; `hidden` adds a private A record beside its lab one.
fn hiding_lab(hidden: bool) -> LabFile {
    let extra = if hidden { r#", "www A 10.0.0.1""# } else { "" };
    LabFile::parse(&format!(
        r#"{{"dns": {{"address": "127.79.10.53"}}, "port_map": {{"53": 10053, "80": 10080, "443": 10443, "23": 10023}},
            "zones": [{{"origin": "test"}},
                      {{"origin": "hide.test", "records": ["@ TXT \"v=spf1 -all\""{extra}]}}],
            "hosts": [{{"name": "www.hide.test", "address": "127.79.10.2", "services": [
                {{"port": 80, "kind": "http"}}, {{"port": 23, "kind": "telnet"}}]}}]}}"#
    ))
    .unwrap()
}

/// A company controls its DNS (docs/SECURITY.md §2); one RFC 1918 A record beside the
/// public one makes the guard refuse the host. That must not read as "0 ports open": the
/// checks on it are not assessable with the reason, the findings the last probe saw stay
/// open and keep counting, the name is a finding of its own, and a rescan closes nothing.
#[tokio::test]
async fn a_host_hidden_behind_an_internal_address_keeps_its_findings() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("h.db").display())).await.unwrap();
    let c = company(&*store, "hide-co", &["hide.test"]).await;
    let scan = model::JobSpec::Scan { social_id: c.social_id.clone() };

    let file = hiding_lab(false);
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    worker::process(&*store, &ctx, &scan).await.unwrap();
    lab.down().await;
    let seen = store.open_findings(c.id).await.unwrap();
    let on_www: Vec<&model::Finding> = seen.iter().filter(|f| f.asset.contains("www.hide.test")).collect();
    assert!(on_www.iter().any(|f| f.code == "open_ports.telnet_exposed"), "{seen:#?}");
    let before = store.latest_score(c.id).await.unwrap().unwrap();

    let file = hiding_lab(true);
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    worker::process(&*store, &ctx, &scan).await.unwrap();
    // A rescan of the hidden host, as a `fixed` dispute would queue it.
    let rescan = model::JobSpec::Rescan {
        social_id: c.social_id.clone(),
        subdomain: model::Domain::parse("www.hide.test").unwrap(),
        risk_vector: model::RiskVector::OpenPorts,
    };
    let rescanned = worker::process(&*store, &ctx, &rescan).await.unwrap();
    lab.down().await;

    assert_eq!(rescanned.closed, 0, "a rescan of a host it could not reach closes nothing");
    let open = store.open_findings(c.id).await.unwrap();
    for f in &on_www {
        assert!(
            open.iter().any(|o| o.id == f.id),
            "{} on {} was closed by a scan that never reached it",
            f.code,
            f.asset
        );
    }
    let internal: Vec<&model::Finding> = open.iter().filter(|f| f.code == "digitalization.internal_address").collect();
    assert_eq!(internal.len(), 1, "{open:#?}");
    assert_eq!(internal[0].asset, "www.hide.test");
    assert!(internal[0].evidence.contains("10.0.0.1"), "{}", internal[0].evidence);

    let after = store.latest_score(c.id).await.unwrap().unwrap();
    assert!(after.score <= before.score, "hiding raised the score: {:?} → {:?}", before.score, after.score);
    let ports = &after.components[&model::RiskVector::OpenPorts];
    assert!(ports.not_assessable.is_none(), "open_ports is judged on the kept findings: {ports:?}");
    assert!(ports.assets_checked >= 1 && ports.findings_count >= 1, "{ports:?}");
    let checks = ports.checks.as_ref().expect("the component keeps its checks");
    let refused = checks.list.iter().find(|k| k.asset == "www.hide.test").expect("the host's port-scan check");
    assert_eq!(refused.outcome, model::CheckOutcome::NotAssessable);
    assert_eq!(refused.detail, "refused: 10.0.0.1 is a private (RFC 1918) address");
}

/// A `verify` job (docs/API.md, "Domain ownership") finds the token the company was
/// issued in a TXT record at `_rampart-challenge.<domain>`, or in the file
/// `/.well-known/rampart-challenge` of the domain's web server, and makes the claim a
/// verified domain; a domain where the token is not published (another token, the file
/// elsewhere, a redirect to it) stays a claim.
#[tokio::test]
async fn a_verify_job_finds_the_token_in_dns_or_a_well_known_file() {
    let file = LabFile::parse(
        r#"{"dns": {"address": "127.79.11.53"}, "port_map": {"53": 10053, "80": 10080, "443": 10443},
            "zones": [{"origin": "test"},
                      {"origin": "proof.test", "records": ["_rampart-challenge TXT \"rampart-verify=0123\""]},
                      {"origin": "miss.test", "records": ["_rampart-challenge TXT \"rampart-verify=0123\""]},
                      {"origin": "file.test"}, {"origin": "misfile.test"}, {"origin": "hop.test"}],
            "hosts": [
              {"name": "file.test", "address": "127.79.11.2", "services": [{"port": 443, "kind": "https", "http": {
                  "pages": [{"path": "/.well-known/rampart-challenge", "body": "rampart-verify=4567\n"}]}}]},
              {"name": "misfile.test", "address": "127.79.11.3", "services": [{"port": 80, "kind": "http", "http": {
                  "pages": [{"path": "/rampart-challenge", "body": "rampart-verify=4567"}]}}]},
              {"name": "hop.test", "address": "127.79.11.4", "services": [{"port": 80, "kind": "http", "http": {
                  "redirect": "http://file.test"}}]}]}"#,
    )
    .unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), lab.ca_root_der.clone(), "").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("v.db").display())).await.unwrap();
    let proved = [("proof-co", "dns txt"), ("file-co", "well-known file")];
    for (id, name, token) in [
        ("proof-co", "proof.test", "rampart-verify=0123"),
        ("miss-co", "miss.test", "rampart-verify=9999"),
        ("file-co", "file.test", "rampart-verify=4567"),
        ("misfile-co", "misfile.test", "rampart-verify=4567"),
        ("hop-co", "hop.test", "rampart-verify=4567"),
    ] {
        let c = company(&*store, id, &[name]).await;
        let domain = Domain::parse(name).unwrap();
        store.claim_domain(c.id, &domain, "claimed by key 1 through add-subsidiary", false).await.unwrap();
        assert!(store.company_by_domain(&domain).await.unwrap().is_none(), "a claim answers no look-up by domain");
        assert_eq!(store.challenge_domain(c.id, &domain, token).await.unwrap().as_deref(), Some(token));
        // The token stays the first one issued.
        assert_eq!(store.challenge_domain(c.id, &domain, "other").await.unwrap().as_deref(), Some(token));
        worker::process(
            &*store,
            &ctx,
            &model::JobSpec::Verify { social_id: c.social_id.clone(), domain: domain.clone() },
        )
        .await
        .unwrap();
        let claim = store.domain_claims(c.id).await.unwrap().into_iter().find(|d| d.name == domain).unwrap();
        let found = store.company_by_domain(&domain).await.unwrap().map(|f| f.social_id.to_string());
        if let Some((_, how)) = proved.iter().find(|(p, _)| *p == id) {
            assert!(claim.verified, "{claim:?}");
            assert_eq!(claim.verified_by.as_deref(), Some(*how));
            assert_eq!(found.as_deref(), Some(id));
        } else {
            assert!(!claim.verified, "{id}: the token is not where it must be: {claim:?}");
            assert_eq!(found, None);
        }
    }
    lab.down().await;
}

/// The lab of [`a_domain_whose_dns_fails_freezes_nothing`]: `refused.test` answers, or
/// (`failing`) its server refuses every question about it.
fn refusing_lab(failing: bool) -> LabFile {
    let failures = if failing { r#", "failures": [{"name": "@", "answer": "refused"}]"# } else { "" };
    LabFile::parse(&format!(
        r#"{{"dns": {{"address": "127.79.12.53"}}, "port_map": {{"53": 10053}},
            "zones": [{{"origin": "test"}},
                      {{"origin": "good.test", "records": ["@ TXT \"v=spf1 -all\""]}},
                      {{"origin": "refused.test", "records": ["@ TXT \"v=spf1 +all\""]{failures}}}]}}"#
    ))
    .unwrap()
}

/// One company domain whose DNS answers REFUSED must not fail every full scan and freeze
/// the old rating (docs/SECURITY.md §2): that domain's checks are not assessable, what
/// earlier scans found under it is kept, the rest is scanned and rated, and the rating
/// says what it left out; a company with no domain that answers fails its scan with the
/// reason kept for the answers (stale).
#[tokio::test]
async fn a_domain_whose_dns_fails_freezes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("r.db").display())).await.unwrap();
    let split = company(&*store, "split-co", &["good.test", "refused.test"]).await;
    let alone = company(&*store, "alone-co", &["refused.test"]).await;
    let scan = |c: &model::Company| model::JobSpec::Scan { social_id: c.social_id.clone() };

    let file = refusing_lab(false);
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    worker::process(&*store, &ctx, &scan(&split)).await.unwrap();
    worker::process(&*store, &ctx, &scan(&alone)).await.unwrap();
    lab.down().await;
    let before = store.open_findings(split.id).await.unwrap();
    let on_refused: Vec<i64> = before.iter().filter(|f| f.asset.contains("refused.test")).map(|f| f.id).collect();
    assert!(!on_refused.is_empty(), "+all is a finding: {before:#?}");

    let file = refusing_lab(true);
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    worker::process(&*store, &ctx, &scan(&split)).await.expect("one failing domain does not fail the scan");
    let failed = worker::process(&*store, &ctx, &scan(&alone)).await;
    lab.down().await;

    let after = store.open_findings(split.id).await.unwrap();
    for id in &on_refused {
        assert!(after.iter().any(|f| f.id == *id), "finding {id} under the failing domain was closed");
    }
    let rated = store.latest_score(split.id).await.unwrap().unwrap();
    assert!(rated.notes.iter().any(|n| n.starts_with("refused.test: not scanned")), "{:?}", rated.notes);
    let spf = &rated.components[&model::RiskVector::Spf];
    assert!(
        spf.checks
            .as_ref()
            .unwrap()
            .list
            .iter()
            .any(|c| c.asset == "refused.test" && c.outcome == model::CheckOutcome::NotAssessable),
        "{spf:?}"
    );
    assert!(store.scan_error(split.id).await.unwrap().is_none());

    assert!(failed.is_err(), "nothing of alone-co could be scanned");
    let (why, _) = store.scan_error(alone.id).await.unwrap().expect("the reason is kept for the answers");
    assert!(why.contains("refused.test"), "{why}");
    assert!(store.latest_score(alone.id).await.unwrap().is_some(), "the old rating is kept (and answered as stale)");
}

/// A name a key claimed and has not proved is scanned (its findings are the company's to
/// see) but not rated: a host it does not own cannot change the grade (docs/API.md,
/// "Domain ownership").
#[tokio::test]
async fn an_unproven_claim_is_scanned_but_not_rated() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("c.db").display())).await.unwrap();
    let c = company(&*store, "claim-co", &["good.test", "refused.test"]).await;
    let claimed = Domain::parse("refused.test").unwrap();
    store.claim_domain(c.id, &claimed, "added by the company (key 1): ours", false).await.unwrap();
    let file = refusing_lab(false);
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    worker::process(&*store, &ctx, &model::JobSpec::Scan { social_id: c.social_id.clone() }).await.unwrap();
    lab.down().await;
    let open = store.open_findings(c.id).await.unwrap();
    assert!(open.iter().any(|f| f.asset == "refused.test" && f.risk_vector == model::RiskVector::Spf), "{open:#?}");
    let rated = store.latest_score(c.id).await.unwrap().unwrap();
    let spf = &rated.components[&model::RiskVector::Spf];
    assert_eq!(spf.findings_count, 0, "the claim's +all is not rated: {spf:?}");
    assert_eq!(spf.assets_checked, 1, "good.test alone: {spf:?}");
    assert!(
        rated.notes.iter().any(|n| n == "refused.test: claimed by the company, not yet verified: scanned, not rated"),
        "{:?}",
        rated.notes
    );
    // Proved, it is rated.
    store.verify_domain(c.id, &claimed, "dns txt").await.unwrap();
    let file = refusing_lab(false);
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    worker::process(&*store, &ctx, &model::JobSpec::Scan { social_id: c.social_id.clone() }).await.unwrap();
    lab.down().await;
    let spf = store.latest_score(c.id).await.unwrap().unwrap().components[&model::RiskVector::Spf].clone();
    assert!(spf.findings_count >= 1 && spf.assets_checked == 2, "{spf:?}");
}

/// The lab of [`a_host_whose_name_fails_to_resolve_keeps_its_findings`]: a web host with
/// an exposed Telnet; `failing`: the zone's server refuses every question about it.
fn flaky_lab(failing: bool) -> LabFile {
    let failures = if failing { r#", "failures": [{"name": "www", "answer": "refused"}]"# } else { "" };
    LabFile::parse(&format!(
        r#"{{"dns": {{"address": "127.79.13.53"}}, "port_map": {{"53": 10053, "80": 10080, "443": 10443, "23": 10023}},
            "zones": [{{"origin": "test"}},
                      {{"origin": "flaky.test", "records": ["@ TXT \"v=spf1 -all\""]{failures}}}],
            "hosts": [{{"name": "www.flaky.test", "address": "127.79.13.2", "services": [
                {{"port": 80, "kind": "http"}}, {{"port": 23, "kind": "telnet"}}]}}]}}"#
    ))
    .unwrap()
}

/// A host whose name stops resolving (its server answers REFUSED) was not looked at: the
/// findings earlier scans saw on it stay open (docs/SECURITY.md §2).
#[tokio::test]
async fn a_host_whose_name_fails_to_resolve_keeps_its_findings() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("f.db").display())).await.unwrap();
    let c = company(&*store, "flaky-co", &["flaky.test"]).await;
    let scan = model::JobSpec::Scan { social_id: c.social_id.clone() };
    for failing in [false, true] {
        let file = flaky_lab(failing);
        let lab = Lab::up(&file).await.unwrap();
        let ctx = Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
        worker::process(&*store, &ctx, &scan).await.unwrap();
        lab.down().await;
        let open = store.open_findings(c.id).await.unwrap();
        assert!(open.iter().any(|f| f.code == "open_ports.telnet_exposed"), "failing {failing}: {open:#?}");
    }
}
