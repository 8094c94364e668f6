//! DKIM in the rating (docs/FINDINGS.md, "dkim"): a company whose mail domain has no key
//! at the curated selectors is not judged on DKIM (the component is not assessable, with
//! the reason), not given `dkim.missing`; once the company names its selector, a scan
//! finds the key there, and a named selector without a key is `dkim.missing`.

use std::sync::Arc;

use lab::{Lab, LabFile};
use model::{CompanyProfile, Domain, DomainAsset, RiskVector, SocialId};
use scanner::probes::Context;
use store::{CompanySnapshot, Store};

#[tokio::test]
async fn dkim_is_judged_only_where_rampart_can_see_the_keys() {
    let file = LabFile::parse(
        r#"{"dns": {"address": "127.79.13.53"}, "port_map": {"53": 10053},
            "zones": [{"origin": "quiet.test", "records": [
              "@ MX 10 mail", "@ TXT \"v=spf1 mx -all\"", "mail A 127.79.13.2",
              "_dmarc TXT \"v=DMARC1; p=reject; rua=mailto:d@quiet.test\"",
              "corp1._domainkey TXT \"v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\""]}]}"#,
    )
    .unwrap();
    let lab = Lab::up(&file).await.unwrap();
    let ctx = Arc::new(Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", dir.path().join("d.db").display())).await.unwrap();
    let profile = CompanyProfile {
        social_id: Some(SocialId::parse("quiet-co").unwrap()),
        company_name: "Quiet Co".into(),
        website: "https://www.quiet.test".into(),
        domain: Some(Domain::parse("quiet.test").unwrap()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: Domain::parse("quiet.test").unwrap(), attribution: "test".into() }];
    let c =
        store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap();
    let scan = model::JobSpec::Scan { social_id: model::SocialId::parse("quiet-co").unwrap() };
    let dkim_of = |s: &model::ScoreSnapshot| s.components[&RiskVector::Dkim].clone();

    // No selector named: the key at corp1 is invisible, and DKIM is not judged.
    worker::process(&*store, &ctx, &scan).await.unwrap();
    let rated = store.latest_score(c.id).await.unwrap().unwrap();
    let dkim = dkim_of(&rated);
    assert_eq!(dkim.assets_checked, 0, "{dkim:?}");
    let why = dkim.not_assessable.clone().unwrap();
    assert!(why.contains("quiet.test (dkim keys): no key at the") && why.contains("selectors tried"), "{why}");
    let open = store.open_findings(c.id).await.unwrap();
    assert!(!open.iter().any(|f| f.code == "dkim.missing"), "{open:?}");
    // The rating keeps the checks: DKIM could not be made, SPF and DMARC passed.
    let checks = dkim.checks.clone().expect("the DKIM checks are kept");
    assert_eq!((checks.pass, checks.finding, checks.not_assessable), (0, 0, 1));
    assert!(checks.list[0].detail.starts_with("no key at the"), "{checks:?}");
    for v in [RiskVector::Spf, RiskVector::Dmarc] {
        let kept = rated.components[&v].checks.clone().expect("checks");
        assert_eq!((kept.pass, kept.finding, kept.not_assessable), (1, 0, 0), "{v:?}: {kept:?}");
    }

    // The company names corp1: the key is found and DKIM is judged (and passes).
    store.set_dkim_selectors(c.id, &["corp1".to_owned()]).await.unwrap();
    worker::process(&*store, &ctx, &scan).await.unwrap();
    let dkim = dkim_of(&store.latest_score(c.id).await.unwrap().unwrap());
    assert_eq!((dkim.assets_checked, dkim.findings_count, dkim.not_assessable.as_deref()), (1, 0, None));

    // A named selector without a key: dkim.missing, and a DKIM score below 100.
    store.set_dkim_selectors(c.id, &["gone2023".to_owned()]).await.unwrap();
    worker::process(&*store, &ctx, &scan).await.unwrap();
    let dkim = dkim_of(&store.latest_score(c.id).await.unwrap().unwrap());
    assert_eq!((dkim.assets_checked, dkim.findings_count), (1, 1), "{dkim:?}");
    assert!(store.open_findings(c.id).await.unwrap().iter().any(|f| f.code == "dkim.missing"));
    lab.down().await;
}
