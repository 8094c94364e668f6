//! The conformance suite every backend must pass: one check per area, each run on a
//! fresh, empty store of every backend (`main.rs`).

use std::collections::BTreeMap;
use std::time::Duration;

use model::timefmt::parse_datetime;
use model::{
    Application, CompanyProfile, ComponentScore, CveId, CveRecord, Domain, DomainAsset, Finding, Grade, Incident,
    NetworkEndpoint, NewApiKey, OffsetDateTimeText, Page, RiskVector, SbomComponent, Scope, Score, ScoreSnapshot,
    Severity, SocialId,
};

use store::cve::{CandidateQuery, CapecRow, CpeMatchRow, CveCandidate, CweRow, EpssRow, KevRow, ProductRow, StoredCve};
use store::{CompanySnapshot, FindingFilter, Store};

/// A candidate query without served forms.
fn cq<'a>(
    part: Option<&'a str>,
    vendor: &'a str,
    product: &'a str,
    version_key: Option<&'a str>,
    all_configurations: bool,
    after: Option<&'a (String, CveId)>,
    batch: u32,
) -> CandidateQuery<'a> {
    CandidateQuery { part, vendor, product, version_key, all_configurations, after, batch, served: false }
}

fn at(s: &str) -> OffsetDateTimeText {
    OffsetDateTimeText(parse_datetime(s).expect("test timestamp"))
}

fn sid(s: &str) -> SocialId {
    SocialId::parse(s).expect("test social_id")
}

fn dom(s: &str) -> Domain {
    Domain::parse(s).expect("test domain")
}

fn profile(social_id: &str, name: &str, domain: &str) -> CompanyProfile {
    CompanyProfile {
        social_id: Some(sid(social_id)),
        company_name: name.into(),
        website: format!("https://{domain}"),
        domain: Some(dom(domain)),
        industry: "Software Development".into(),
        description: format!("{name} makes things"),
        funding_id: format!("https://funding.example/{social_id}"),
        employees_number: "51-200 employees".into(),
        followers_number: Some(1200),
        naics_code: Some(541511),
        ..Default::default()
    }
}

fn finding(rv: RiskVector, asset: &str, sev: Severity, code: &str) -> Finding {
    Finding {
        id: 0,
        risk_vector: rv,
        asset: asset.into(),
        severity: sev,
        code: code.into(),
        title: format!("{code} on {asset}"),
        evidence: "observed".into(),
        remediation: "fix it".into(),
        references: vec!["RFC 7208".into()],
        cve: None,
        component: None,
        first_seen: at("2026-01-01T00:00:00Z"),
        last_seen: at("2026-02-01T00:00:00Z"),
        disputed: false,
        no_weight: false,
    }
}

fn snapshot(score: f64, when: &str) -> ScoreSnapshot {
    let components: BTreeMap<RiskVector, ComponentScore> = RiskVector::ALL
        .iter()
        .map(|rv| {
            (
                *rv,
                ComponentScore {
                    score: Score::from_f64(score).expect("score"),
                    grade: Grade::B,
                    weight: Score::from_f64(100.0 / 12.0).expect("weight"),
                    assets_checked: 3,
                    findings_count: 1,
                    not_assessable: None,
                    // The checks are kept with the rating (one component has some).
                    checks: (*rv == RiskVector::Spf).then(|| {
                        let list = vec![
                            model::Check::not_assessable(*rv, "spf record", "a.example", "SERVFAIL"),
                            model::Check::pass(*rv, "spf record", "b.example", "v=spf1 -all"),
                        ];
                        model::ComponentChecks::of(&list, *rv).expect("checks")
                    }),
                },
            )
        })
        .collect();
    ScoreSnapshot {
        scanned_at: at(when),
        score: Score::from_f64(score).expect("score"),
        grade: Grade::B,
        components,
        methodology: None,
        notes: Vec::new(),
        reason: Some(model::RATED_BY_SCAN.to_owned()),
        quick: false,
    }
}

fn cve(id: &str, modified: &str, products: &[&str]) -> CveRecord {
    let json = serde_json::json!({
        "id": id,
        "summary": format!("summary of {id}"),
        "published": "2021-12-10T10:15:09.143000",
        "modified": modified,
        "lastModified": modified,
        "vulnerable_product": products,
    });
    serde_json::from_value(json).expect("test cve")
}

/// Companies are found by the normalised form of their name (`model::normalise_name`):
/// punctuation, `&` and legal forms do not hide a company; a similar name is not it.
pub async fn normalised_names(store: &dyn Store) {
    for (id, name) in [("norm-att", "AT&T Inc."), ("norm-pg", "Procter & Gamble"), ("norm-jpm", "J.P. Morgan")] {
        let p = profile(id, name, &format!("{id}.example"));
        store.save_company(&CompanySnapshot { profile: p, ..Default::default() }).await.unwrap();
    }
    let found = |name: &'static str| async move {
        store
            .companies_by_normalised_name(&model::normalise_name(name), 10)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.social_id.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(found("AT&T").await, ["norm-att"]);
    assert_eq!(found("at & t corp.").await, ["norm-att"]);
    assert_eq!(found("Procter and Gamble Co.").await, ["norm-pg"]);
    assert_eq!(found("JP Morgan").await, ["norm-jpm"]);
    assert!(found("Procter").await.is_empty(), "equality, not containment");
    assert!(store.companies_by_normalised_name("", 10).await.unwrap().is_empty());
    // Why a scan could not rate a company: set, read back with its time, cleared.
    let att = store.company_by_social_id(&sid("norm-att")).await.unwrap().unwrap();
    assert!(store.scan_error(att.id).await.unwrap().is_none());
    let before = time::OffsetDateTime::now_utc() - Duration::from_secs(1);
    store.set_scan_error(att.id, Some("the domain x.example does not exist")).await.unwrap();
    let (why, at) = store.scan_error(att.id).await.unwrap().unwrap();
    assert_eq!(why, "the domain x.example does not exist");
    assert!(at >= before, "{at}");
    store.set_scan_error(att.id, None).await.unwrap();
    assert!(store.scan_error(att.id).await.unwrap().is_none());
    // The DKIM selectors a company names: none, set (in order), replaced, cleared.
    assert!(store.dkim_selectors(att.id).await.unwrap().is_empty());
    let named = vec!["sel1".to_owned(), "mail-2024".to_owned()];
    store.set_dkim_selectors(att.id, &named).await.unwrap();
    assert_eq!(store.dkim_selectors(att.id).await.unwrap(), named);
    store.set_dkim_selectors(att.id, &named[1..]).await.unwrap();
    assert_eq!(store.dkim_selectors(att.id).await.unwrap(), ["mail-2024"]);
    store.set_dkim_selectors(att.id, &[]).await.unwrap();
    assert!(store.dkim_selectors(att.id).await.unwrap().is_empty());
    // A renamed company is found by its new name only.
    let p = profile("norm-pg", "P&G", "norm-pg.example");
    store.save_company(&CompanySnapshot { profile: p, ..Default::default() }).await.unwrap();
    assert!(found("Procter & Gamble").await.is_empty());
    assert_eq!(found("P & G").await, ["norm-pg"]);
}

/// add-subsidiary's record: a created company is linked at once and counted for its key;
/// a pending one is not linked until approved; asked twice, one request; a rejected one
/// is never linked.
pub async fn subsidiary_requests(store: &dyn Store) {
    use store::SubsidiaryState as S;
    let save = |id: &'static str| async move {
        store
            .save_company(&CompanySnapshot { profile: profile(id, id, &format!("{id}.example")), ..Default::default() })
            .await
            .unwrap()
    };
    let (parent, made, stranger, other) =
        (save("req-parent").await, save("req-made").await, save("req-stranger").await, save("req-other").await);
    let ids = |companies: Vec<model::Company>| companies.into_iter().map(|c| c.id).collect::<Vec<_>>();
    let since = time::OffsetDateTime::now_utc() - Duration::from_secs(60);
    assert_eq!(store.companies_created_by_key(7, since).await.unwrap(), 0);
    store.record_subsidiary_request(parent.id, made.id, Some(7), S::Created).await.unwrap();
    assert_eq!(ids(store.subsidiaries(parent.id, None).await.unwrap().items), [made.id], "created: linked at once");
    assert_eq!(store.companies_created_by_key(7, since).await.unwrap(), 1);
    assert_eq!(store.companies_created_by_key(8, since).await.unwrap(), 0);
    let future = time::OffsetDateTime::now_utc() + Duration::from_secs(60);
    assert_eq!(store.companies_created_by_key(7, future).await.unwrap(), 0);

    let pending = store.record_subsidiary_request(parent.id, stranger.id, Some(7), S::Pending).await.unwrap();
    assert_eq!(store.record_subsidiary_request(parent.id, stranger.id, Some(7), S::Pending).await.unwrap(), pending);
    assert_eq!(ids(store.subsidiaries(parent.id, None).await.unwrap().items), [made.id], "pending: not linked");
    let open = store.subsidiary_requests(Some(S::Pending)).await.unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].parent.as_str(), open[0].child.as_str(), open[0].key_id),
        ("req-parent", "req-stranger", Some(7))
    );
    let approved =
        store.decide_subsidiary_request(pending, true, "checked the group's filings").await.unwrap().unwrap();
    assert_eq!((approved.state, approved.note.as_deref()), (S::Approved, Some("checked the group's filings")));
    assert!(approved.decided_at.is_some());
    let mut linked = ids(store.subsidiaries(parent.id, None).await.unwrap().items);
    linked.sort_unstable();
    assert_eq!(linked, [made.id, stranger.id]);
    assert!(store.decide_subsidiary_request(pending, false, "").await.unwrap().is_none(), "decided once");

    let rejected = store.record_subsidiary_request(parent.id, other.id, None, S::Pending).await.unwrap();
    assert_eq!(
        store.decide_subsidiary_request(rejected, false, "not theirs").await.unwrap().unwrap().state,
        S::Rejected
    );
    assert!(!ids(store.subsidiaries(parent.id, None).await.unwrap().items).contains(&other.id));
    assert!(store.subsidiary_requests(Some(S::Pending)).await.unwrap().is_empty());
    assert_eq!(store.subsidiary_requests(None).await.unwrap().len(), 3);
    assert!(store.record_subsidiary_request(parent.id, parent.id, None, S::Pending).await.is_err());

    // Asked for at the same moment (several API processes on one database): one pending
    // request, and every caller is told its id.
    let raced = save("req-raced").await;
    let asks = (0..8).map(|_| store.record_subsidiary_request(parent.id, raced.id, Some(9), S::Pending));
    let answers: Vec<i64> = futures_util::future::join_all(asks).await.into_iter().map(Result::unwrap).collect();
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    let pending = store.subsidiary_requests(Some(S::Pending)).await.unwrap();
    assert_eq!(pending.iter().filter(|r| r.child.as_str() == "req-raced").count(), 1);
}

/// Batches written several to a transaction end as one `upsert_cves` after the other
/// would leave them: a record given again in a later batch counts once, the newest kept.
pub async fn cve_batches(store: &dyn Store) {
    const NO_RANGE: [Option<&str>; 4] = [None; 4];
    let at = |id: &str, modified: &str, version: &str| {
        stored(id, modified, vec![row("batchco", "gadget", version, Some(version), NO_RANGE)])
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(8);
    let batches = vec![
        vec![at("CVE-2027-0001", "2027-01-01T00:00:00", "k1"), at("CVE-2027-0002", "2027-01-01T00:00:00", "k1")],
        vec![at("CVE-2027-0001", "2027-02-01T00:00:00", "k2")],
        vec![at("CVE-2027-0002", "2026-12-01T00:00:00", "k0"), at("CVE-2027-0003", "2027-01-01T00:00:00", "k1")],
    ];
    for b in batches {
        tx.send(b).await.unwrap();
    }
    drop(tx);
    assert_eq!(store.upsert_cve_batches(&mut rx, 2).await.unwrap(), 4, "three records, one of them twice");
    let found = |key: &'static str| async move {
        let q = cq(None, "batchco", "gadget", Some(key), false, None, 10);
        let mut ids: Vec<String> = store.cve_candidates(&q).await.unwrap().iter().map(|c| c.id.to_string()).collect();
        ids.sort();
        ids
    };
    assert_eq!(found("k1").await, ["CVE-2027-0002", "CVE-2027-0003"]);
    assert_eq!(found("k2").await, ["CVE-2027-0001"], "the newer version's rows");
    assert!(found("k0").await.is_empty(), "an older version is not written");
}

/// Served forms read with the candidates follow the stored record: after `writer`
/// stores a newer version, `reader` (the same store, or one another process opened on
/// the same database) serves the new form, however often it served the old one.
pub async fn served_forms_follow_their_record(writer: &dyn Store, reader: &dyn Store) {
    const NO_RANGE: [Option<&str>; 4] = [None; 4];
    let version = |modified: &str, served: &str| {
        let mut c = stored("CVE-2026-0001", modified, vec![row("acme", "widget", "1.0", Some("k10"), NO_RANGE)]);
        c.served = served.into();
        c
    };
    let q = CandidateQuery { served: true, ..cq(None, "acme", "widget", Some("k10"), false, None, 10) };
    let forms =
        |c: Vec<CveCandidate>| c.iter().map(|c| c.served.as_ref().map(|s| s.json.to_string())).collect::<Vec<_>>();
    let first = r#"{"id":"CVE-2026-0001","v":1}"#;
    assert_eq!(writer.upsert_cves(&[version("2026-01-01T00:00:00", first)]).await.unwrap(), 1);
    for _ in 0..2 {
        assert_eq!(forms(reader.cve_candidates(&q).await.unwrap()), [Some(first.to_owned())]);
    }
    let second = r#"{"id":"CVE-2026-0001","v":2}"#;
    assert_eq!(writer.upsert_cves(&[version("2026-02-01T00:00:00", second)]).await.unwrap(), 1);
    for _ in 0..2 {
        assert_eq!(forms(reader.cve_candidates(&q).await.unwrap()), [Some(second.to_owned())]);
    }
    // An older version is not written, and the newer form stays.
    assert_eq!(writer.upsert_cves(&[version("2026-01-15T00:00:00", first)]).await.unwrap(), 0);
    assert_eq!(forms(reader.cve_candidates(&q).await.unwrap()), [Some(second.to_owned())]);
}

/// Findings of one code on one host stay apart by CVE or component; a scan's software
/// replaces the company's inventory, keeping first_seen of what was seen before;
/// imported fingerprints and lifecycle data read back by name.
pub async fn software(store: &dyn Store) {
    use model::{Application, SbomComponent};
    use store::ScanScope;
    let c = store
        .save_company(&CompanySnapshot {
            profile: profile("softco", "Soft Co", "softco.example"),
            ..Default::default()
        })
        .await
        .unwrap();
    let vectors = [RiskVector::Sbom, RiskVector::Vulnerabilities];
    let scope = ScanScope { risk_vectors: &vectors, asset: None, below: false, close_missing: true, keep_open: &[] };
    let mut a = finding(RiskVector::Vulnerabilities, "www.softco.example", Severity::High, "vulnerabilities.cve");
    a.cve = Some(CveId::parse("CVE-2021-23017").unwrap());
    a.component = Some("Nginx 1.18.0".into());
    let mut b = a.clone();
    b.cve = Some(CveId::parse("CVE-2022-41741").unwrap());
    let mut eol1 = finding(RiskVector::Sbom, "www.softco.example", Severity::Medium, "sbom.end_of_life");
    eol1.component = Some("PHP 7.4.3".into());
    let mut eol2 = eol1.clone();
    eol2.component = Some("jQuery 1.12.4".into());
    let when = at("2026-03-01T00:00:00Z").0;
    let out = store.record_scan(c.id, scope, &[a.clone(), b.clone(), eol1.clone(), eol2], when).await.unwrap();
    assert_eq!(out.opened, 4, "one finding per CVE and per component");
    let open = open_findings(store, c.id).await;
    assert_eq!(open.len(), 4);
    assert!(open.iter().any(|f| f.component.as_deref() == Some("jQuery 1.12.4")));
    // The next scan without one CVE and one component closes just those.
    let out = store.record_scan(c.id, scope, &[a, eol1], at("2026-04-01T00:00:00Z").0).await.unwrap();
    assert_eq!((out.seen_again, out.closed), (2, 2));

    let app = |name: &str, version: &str, host: &str| Application {
        name: name.into(),
        version: Some(version.into()),
        categories: vec!["Web servers".into()],
        host: host.into(),
        cpe: None,
        evidence: "header server".into(),
        confidence: Some(100),
        first_seen: at("2026-05-01T00:00:00Z"),
        last_seen: at("2026-05-01T00:00:00Z"),
    };
    let comp = |name: &str, version: &str, cves: &[&str]| SbomComponent {
        name: name.into(),
        version: Some(version.into()),
        purl: Some(format!("pkg:generic/{}@{version}", name.to_ascii_lowercase())),
        cpe: None,
        hosts: vec![Domain::parse("www.softco.example").unwrap()],
        evidence: "header server".into(),
        end_of_life: Some(true),
        latest_version: None,
        cves: cves
            .iter()
            .map(|c| model::AttributedCve::new(CveId::parse(c).unwrap(), model::CveBasis::NvdRange))
            .collect(),
        confidence: Some(90),
        first_seen: at("2026-05-01T00:00:00Z"),
        last_seen: at("2026-05-01T00:00:00Z"),
    };
    let first = at("2026-05-01T00:00:00Z").0;
    store
        .record_software(
            c.id,
            &[app("Nginx", "1.18.0", "www.softco.example"), app("PHP", "7.4.3", "www.softco.example")],
            &[comp("Nginx", "1.18.0", &["CVE-2021-23017"]), comp("PHP", "7.4.3", &[])],
            first,
        )
        .await
        .unwrap();
    let later = at("2026-06-01T00:00:00Z").0;
    store
        .record_software(
            c.id,
            &[app("Nginx", "1.18.0", "www.softco.example")],
            &[comp("Nginx", "1.18.0", &["CVE-2021-23017"])],
            later,
        )
        .await
        .unwrap();
    let apps = store.applications(c.id, Page::FIRST).await.unwrap();
    assert_eq!(apps.total, 1, "what the scan did not see again is gone");
    assert_eq!(
        (apps.items[0].first_seen, apps.items[0].last_seen),
        (at("2026-05-01T00:00:00Z"), at("2026-06-01T00:00:00Z"))
    );
    assert_eq!(apps.items[0].confidence, Some(100));
    let sbom = store.sbom(c.id, Page::FIRST, true).await.unwrap();
    assert_eq!(sbom.total, 1);
    assert_eq!(sbom.items[0].first_seen, at("2026-05-01T00:00:00Z"));
    assert_eq!(
        sbom.items[0].cves,
        vec![model::AttributedCve::new(CveId::parse("CVE-2021-23017").unwrap(), model::CveBasis::NvdRange)]
    );
    assert_eq!(sbom.items[0].confidence, Some(90));

    assert_eq!(
        store.save_fingerprints("test", &[("Nginx".into(), "{}".into()), ("PHP".into(), "{}".into())]).await.unwrap(),
        2
    );
    store.save_fingerprints("test", &[("Nginx".into(), r#"{"cats": [22]}"#.into())]).await.unwrap();
    let rules = store.fingerprints().await.unwrap();
    assert_eq!(rules, vec![("Nginx".into(), r#"{"cats": [22]}"#.into()), ("PHP".into(), "{}".into())]);
    store.save_eol_products(&[("nginx".into(), r#"{"releases": []}"#.into())]).await.unwrap();
    assert_eq!(store.eol_products().await.unwrap().len(), 1);
}

/// Discovered hosts and observed endpoints keep their first_seen and take the latest
/// scan's addresses, attribution and software; they read back with their attribution.
pub async fn discovery(store: &dyn Store) {
    use model::{Attribution, DiscoveredHost};
    let c = store
        .save_company(&CompanySnapshot {
            profile: profile("discovered", "Discovered Ltd", "discovered.example"),
            ..Default::default()
        })
        .await
        .unwrap();
    let why = |source: &str, evidence: &str| Attribution { source: source.into(), evidence: evidence.into() };
    let host = |name: &str, ip: &str, a: Attribution| DiscoveredHost {
        name: name.into(),
        addresses: vec![ip.parse().unwrap()],
        attribution: a,
        first_seen: at("2026-01-01T00:00:00Z"),
        last_seen: at("2026-01-01T00:00:00Z"),
    };
    let endpoint = |version: &str, a: Attribution| NetworkEndpoint {
        ip: "192.0.2.7".parse().unwrap(),
        port: 443,
        protocol: "tcp".into(),
        host: Some("www.discovered.example".into()),
        service: Some("https".into()),
        product: Some("nginx".into()),
        version: Some(version.into()),
        banner: format!("nginx/{version}"),
        attribution: Some(a),
        first_seen: at("2000-01-01T00:00:00Z"),
        last_seen: at("2000-01-01T00:00:00Z"),
    };
    let www = why("wordlist", "A 192.0.2.7");
    let hosts = [
        host("www.discovered.example", "192.0.2.7", www.clone()),
        host("shop.discovered.example", "192.0.2.8", why("link", "linked from https://www.discovered.example/")),
    ];
    store
        .record_discovery(c.id, &hosts, &[endpoint("1.18.0", www.clone())], at("2026-03-01T00:00:00Z").0)
        .await
        .unwrap();
    let moved = host(
        "www.discovered.example",
        "192.0.2.9",
        why("certificate", "named by the certificate of discovered.example:443"),
    );
    store
        .record_discovery(c.id, &[moved], &[endpoint("1.24.0", www.clone())], at("2026-04-01T00:00:00Z").0)
        .await
        .unwrap();

    let listed = store.hosts(c.id).await.unwrap();
    let rows: Vec<(&str, &str, String)> =
        listed.iter().map(|h| (h.name.as_str(), h.attribution.source.as_str(), h.addresses[0].to_string())).collect();
    assert_eq!(
        rows,
        [
            ("shop.discovered.example", "link", "192.0.2.8".to_owned()),
            ("www.discovered.example", "certificate", "192.0.2.9".to_owned()),
        ]
    );
    let www_row = &listed[1];
    assert_eq!((www_row.first_seen, www_row.last_seen), (at("2026-03-01T00:00:00Z"), at("2026-04-01T00:00:00Z")));
    let eps = store.network_endpoints(c.id, Page::FIRST).await.unwrap();
    assert_eq!(eps.total, 1, "the same ip, port and protocol is one endpoint");
    let e = &eps.items[0];
    assert_eq!(e.version.as_deref(), Some("1.24.0"));
    assert_eq!(e.attribution.as_ref(), Some(&www));
    assert_eq!((e.first_seen, e.last_seen), (at("2026-03-01T00:00:00Z"), at("2026-04-01T00:00:00Z")));
    assert!(store.owns_host(c.id, &dom("shop.discovered.example")).await.unwrap());
    // IP addresses: every address the hosts resolve to (192.0.2.8 and .9, no open port
    // needed) and every endpoint's (192.0.2.7, where www was before), once each.
    assert_eq!(store.counts(c.id).await.unwrap().ip_addresses, 3);

    // A follower count no source gave is kept as unknown, a real 0 as 0, and a count
    // read back as it was written.
    for (social_id, followers) in [("nofollow", None), ("zerofollow", Some(0)), ("somefollow", Some(1200))] {
        let p = CompanyProfile {
            followers_number: followers,
            ..profile(social_id, social_id, &format!("{social_id}.example"))
        };
        store.save_company(&CompanySnapshot { profile: p, ..Default::default() }).await.unwrap();
        let read = store.company_by_social_id(&sid(social_id)).await.unwrap().unwrap();
        assert_eq!(read.followers_number, followers, "{social_id}");
    }
}

async fn open_findings(store: &dyn Store, company: i64) -> Vec<Finding> {
    store.findings(company, FindingFilter::default(), Page::FIRST).await.unwrap().items
}

/// Scans record findings within their scope: new ones open, repeated ones keep their id
/// and first_seen, missing ones close (and reopen when seen again); findings outside the
/// scope are untouched.
pub async fn scans(store: &dyn Store) {
    use store::{ScanOutcome, ScanScope};
    let c = store
        .save_company(&CompanySnapshot {
            profile: profile("scanned", "Scanned Ltd", "scanned.example"),
            ..Default::default()
        })
        .await
        .unwrap();
    let mail = [RiskVector::Spf, RiskVector::Dmarc];
    let scope = ScanScope { risk_vectors: &mail, asset: None, below: false, close_missing: true, keep_open: &[] };
    let when = |s: &str| at(s).0;
    let mut spf = finding(RiskVector::Spf, "scanned.example", Severity::Low, "spf.softfail_all");
    spf.first_seen = at("2026-03-01T00:00:00Z");
    spf.last_seen = at("2026-03-01T00:00:00Z");
    let mut dmarc = finding(RiskVector::Dmarc, "scanned.example", Severity::Medium, "dmarc.policy_none");
    dmarc.first_seen = spf.first_seen;
    dmarc.last_seen = spf.last_seen;
    let first =
        store.record_scan(c.id, scope, &[spf.clone(), dmarc.clone()], when("2026-03-01T00:00:00Z")).await.unwrap();
    assert_eq!(first, ScanOutcome { opened: 2, seen_again: 0, closed: 0 });
    let before = open_findings(store, c.id).await;
    let spf_id = before.iter().find(|f| f.code == "spf.softfail_all").unwrap().id;

    // Second scan: SPF seen again, DMARC fixed.
    spf.first_seen = at("2026-04-01T00:00:00Z");
    spf.last_seen = at("2026-04-01T00:00:00Z");
    let second = store.record_scan(c.id, scope, &[spf.clone()], when("2026-04-01T00:00:00Z")).await.unwrap();
    assert_eq!(second, ScanOutcome { opened: 0, seen_again: 1, closed: 1 });
    let after = open_findings(store, c.id).await;
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].id, spf_id, "the same finding, the same id");
    assert_eq!(after[0].first_seen, at("2026-03-01T00:00:00Z"), "first_seen is kept");
    assert_eq!(after[0].last_seen, at("2026-04-01T00:00:00Z"));
    let closed = store.closed_findings(c.id).await.unwrap();
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].0.code, "dmarc.policy_none");
    assert_eq!(closed[0].1, at("2026-04-01T00:00:00Z"));

    // A scan of one asset and one vector leaves everything else alone.
    let other = finding(RiskVector::Spf, "other.scanned.example", Severity::High, "spf.missing");
    let narrow = ScanScope {
        risk_vectors: &[RiskVector::Spf],
        asset: Some("other.scanned.example"),
        below: false,
        close_missing: true,
        keep_open: &[],
    };
    let third =
        store.record_scan(c.id, narrow, std::slice::from_ref(&other), when("2026-05-01T00:00:00Z")).await.unwrap();
    assert_eq!(third, ScanOutcome { opened: 1, seen_again: 0, closed: 0 });
    assert_eq!(open_findings(store, c.id).await.len(), 2, "the softfail finding on the domain is untouched");
    // A truncated scan (close_missing false) that did not see it closes nothing.
    let truncated = ScanScope { close_missing: false, ..narrow };
    let partial = store.record_scan(c.id, truncated, &[], when("2026-05-02T00:00:00Z")).await.unwrap();
    assert_eq!(partial, ScanOutcome { opened: 0, seen_again: 0, closed: 0 });
    assert_eq!(open_findings(store, c.id).await.len(), 2, "a truncated scan closes nothing");
    let empty = store.record_scan(c.id, narrow, &[], when("2026-05-02T00:00:00Z")).await.unwrap();
    assert_eq!(empty.closed, 1);
    // A finding outside the scope is refused, and nothing is written.
    assert!(store.record_scan(c.id, narrow, &[spf.clone()], when("2026-05-03T00:00:00Z")).await.is_err());
    // The fixed DMARC finding comes back: it reopens with its old id.
    dmarc.last_seen = at("2026-06-01T00:00:00Z");
    let back = store.record_scan(c.id, scope, &[spf, dmarc], when("2026-06-01T00:00:00Z")).await.unwrap();
    assert_eq!(back, ScanOutcome { opened: 1, seen_again: 1, closed: 0 });
    assert!(store.closed_findings(c.id).await.unwrap().iter().all(|(f, _)| f.code != "dmarc.policy_none"));

    // A scan whose DMARC check could not be made keeps that finding open (a probe that
    // could not run is not a pass: docs/SECURITY.md §2), and closes the rest it did not see.
    let open = open_findings(store, c.id).await;
    let dmarc_id = open.iter().find(|f| f.code == "dmarc.policy_none").unwrap().id;
    let unreached = ScanScope { keep_open: &[dmarc_id], ..scope };
    let kept = store.record_scan(c.id, unreached, &[], when("2026-07-01T00:00:00Z")).await.unwrap();
    assert_eq!(kept, ScanOutcome { opened: 0, seen_again: 0, closed: 1 }, "the SPF finding closes, DMARC is kept");
    let left = open_findings(store, c.id).await;
    assert_eq!(left.iter().map(|f| f.id).collect::<Vec<_>>(), vec![dmarc_id]);
    assert_eq!(left[0].last_seen, at("2026-06-01T00:00:00Z"), "a kept finding was not seen: last_seen stays");
}

pub async fn companies(store: &dyn Store) {
    assert!(store.company_by_social_id(&sid("acme")).await.unwrap().is_none());
    let mut snap = CompanySnapshot { profile: profile("acme", "Acme Corp", "acme.example"), ..Default::default() };
    let c = store.save_company(&snap).await.unwrap();
    assert_eq!(c.social_id.as_str(), "acme");
    assert!(c.company_id.starts_with("RP"), "{}", c.company_id);
    assert!(c.score.is_none() && c.last_scanned_at.is_none());

    snap.domains = Some(vec![DomainAsset { name: dom("acme-mail.example"), attribution: "MX of acme.example".into() }]);
    snap.applications = Some(vec![Application {
        name: "nginx".into(),
        version: Some("1.18.0".into()),
        categories: vec!["Web servers".into()],
        host: "www.acme.example".into(),
        cpe: Some("cpe:2.3:a:f5:nginx:1.18.0:*:*:*:*:*:*:*".into()),
        evidence: "Server: nginx/1.18.0".into(),
        confidence: None,
        first_seen: at("2026-01-01T00:00:00Z"),
        last_seen: at("2026-02-01T00:00:00Z"),
    }]);
    snap.network_endpoints = Some(
        (0..12)
            .map(|i| NetworkEndpoint {
                ip: format!("192.0.2.{}", i % 3).parse().unwrap(),
                port: 8000 + i,
                protocol: "tcp".into(),
                host: Some("www.acme.example".into()),
                service: Some("http".into()),
                product: None,
                version: None,
                banner: String::new(),
                attribution: None,
                first_seen: at("2026-01-01T00:00:00Z"),
                last_seen: at("2026-02-01T00:00:00Z"),
            })
            .collect(),
    );
    snap.sbom = Some(vec![
        SbomComponent {
            name: "log4j".into(),
            version: Some("2.14.1".into()),
            purl: Some("pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1".into()),
            cpe: Some("cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*".into()),
            hosts: vec![dom("api.acme.example"), dom("www.acme.example")],
            evidence: "banner".into(),
            end_of_life: Some(true),
            latest_version: Some("2.24.0".into()),
            cves: vec![model::AttributedCve::new(CveId::parse("CVE-2021-44228").unwrap(), model::CveBasis::Vendor)],
            confidence: None,
            first_seen: at("2026-01-01T00:00:00Z"),
            last_seen: at("2026-02-01T00:00:00Z"),
        },
        SbomComponent {
            name: "jquery".into(),
            version: Some("3.7.1".into()),
            purl: None,
            cpe: None,
            hosts: vec![dom("www.acme.example")],
            evidence: "script src".into(),
            end_of_life: None,
            latest_version: None,
            cves: vec![],
            confidence: None,
            first_seen: at("2026-01-01T00:00:00Z"),
            last_seen: at("2026-02-01T00:00:00Z"),
        },
    ]);
    snap.findings = Some(vec![
        finding(RiskVector::Spf, "acme.example", Severity::High, "spf_softfail"),
        finding(RiskVector::Dkim, "acme.example", Severity::Medium, "dkim_weak_key"),
        finding(RiskVector::Dkim, "mail.acme.example", Severity::Critical, "dkim_rsa_512"),
    ]);
    snap.scores = vec![snapshot(71.5, "2026-01-01T00:00:00Z"), snapshot(82.25, "2026-02-01T00:00:00Z")];
    snap.incidents = vec![
        serde_json::from_value::<Incident>(serde_json::json!({
            "incident_id": "INC-1", "title": "Breach", "date_detected": "2025-03-04", "type": "hacking"
        }))
        .unwrap(),
    ];
    let c = store.save_company(&snap).await.unwrap();
    assert_eq!(c.score, Some(Score::from_f64(82.25).unwrap()), "latest score is current");
    assert_eq!(c.last_scanned_at, Some(at("2026-02-01T00:00:00Z").0));

    // Saving the same snapshot again changes nothing (idempotent import).
    let again = store.save_company(&snap).await.unwrap();
    assert_eq!(again, c);
    assert_eq!(store.score_history(c.id, 10).await.unwrap().len(), 2);
    let latest = store.latest_score(c.id).await.unwrap().unwrap();
    assert_eq!(latest.components.len(), 12);
    assert_eq!(latest.components[&RiskVector::Sbom].weight, Score::from_f64(8.33).unwrap());
    assert_eq!(latest.methodology, None, "an imported rating names no methodology");

    // A computed rating: its methodology and a not-assessable component come back; it
    // becomes the company's score and last scan; the same time again is not added.
    let mut rated = snapshot(64.5, "2026-03-01T00:00:00Z");
    rated.methodology = Some("2026.11".into());
    if let Some(c) = rated.components.get_mut(&RiskVector::Dkim) {
        c.not_assessable = Some("the company's domains receive no mail".into());
    }
    store.replace_rating(c.id, &rated).await.unwrap();
    store.replace_rating(c.id, &rated).await.unwrap();
    assert_eq!(store.latest_score(c.id).await.unwrap().as_ref(), Some(&rated));
    let now = store.company_by_social_id(&c.social_id).await.unwrap().unwrap();
    assert_eq!(
        (now.score, now.last_scanned_at),
        (Some(Score::from_f64(64.5).unwrap()), Some(at("2026-03-01T00:00:00Z").0))
    );
    assert_eq!(store.score_history(c.id, 10).await.unwrap().len(), 3);
    // Paged in the store: the page's ratings only, newest first, and the total.
    let first = store.score_history_page(c.id, Page::FIRST).await.unwrap();
    assert_eq!((first.items, first.total), (store.score_history(c.id, 10).await.unwrap(), 3));
    let beyond = store.score_history_page(c.id, Page::parse(Some("2")).unwrap()).await.unwrap();
    assert_eq!((beyond.items.len(), beyond.total), (0, 3));
    // Recomputed under another methodology: replaced in place, components included.
    let mut again = rated.clone();
    again.score = Score::from_f64(61.25).unwrap();
    again.methodology = Some("2027.01".into());
    if let Some(c) = again.components.get_mut(&RiskVector::Dkim) {
        c.not_assessable = None;
    }
    store.replace_rating(c.id, &again).await.unwrap();
    let history = store.score_history(c.id, 10).await.unwrap();
    assert_eq!((history.len(), &history[0]), (3, &again));
    // What limited the scan is kept with the rating.
    again.notes = vec!["acme.example: truncated: 500 hosts, the cap".to_owned()];
    store.replace_rating(c.id, &again).await.unwrap();
    assert_eq!(store.latest_score(c.id).await.unwrap().unwrap().notes, again.notes);
    // Incidents saved apart (an incident feed): linked, then relinked; unlinked ones
    // are found by id only.
    let inc: Incident = serde_json::from_value(serde_json::json!({
        "incident_id": "VCDB-1", "title": "Breach at Acme", "date_detected": "2024-05-01", "type": "hacking"
    }))
    .unwrap();
    store.save_incident(&inc, Some(c.id), Some(&dom("acme.example")), Some("name:acme")).await.unwrap();
    assert!(store.incidents_for_company(c.id).await.unwrap().iter().any(|i| i.incident_id == "VCDB-1"));
    store.save_incident(&inc, None, None, None).await.unwrap();
    assert!(!store.incidents_for_company(c.id).await.unwrap().iter().any(|i| i.incident_id == "VCDB-1"));
    assert_eq!(store.incident("VCDB-1").await.unwrap().map(|i| i.title), Some("Breach at Acme".to_owned()));
    // VERIS writes ids in lower case: a lookup ignores ASCII case.
    assert_eq!(store.incident("vcdb-1").await.unwrap().map(|i| i.incident_id), Some("VCDB-1".to_owned()));
    assert!(store.incident_company("vcdb-1").await.unwrap().is_none(), "unlinked");
    let open = store.open_findings(c.id).await.unwrap();
    let paged = store.findings(c.id, FindingFilter::default(), Page::FIRST).await.unwrap();
    assert_eq!(open.len() as u64, paged.total);
    let mut a: Vec<i64> = open.iter().map(|f| f.id).collect();
    let mut b: Vec<i64> = paged.items.iter().map(|f| f.id).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b, "every open finding, nothing else");

    // Domains: profile domain is always attributed; lookups walk up to parents.
    let names: Vec<String> = store.domains(c.id).await.unwrap().into_iter().map(|d| d.name.to_string()).collect();
    assert_eq!(names, ["acme-mail.example", "acme.example"]);
    for q in ["acme.example", "www.acme.example", "acme-mail.example"] {
        assert_eq!(store.company_by_domain(&dom(q)).await.unwrap().map(|c| c.id), Some(c.id), "{q}");
    }
    assert!(store.company_by_domain(&dom("other.example")).await.unwrap().is_none());
    assert!(store.owns_host(c.id, &dom("mail.acme.example")).await.unwrap());
    assert!(!store.owns_host(c.id, &dom("evil.example")).await.unwrap());

    // Paging of assets.
    let p2 = store.network_endpoints(c.id, Page::parse(Some("2")).unwrap()).await.unwrap();
    assert_eq!((p2.items.len(), p2.total), (2, 12));
    let far = store.network_endpoints(c.id, Page::parse(Some("99")).unwrap()).await.unwrap();
    assert_eq!((far.items.len(), far.total), (0, 12));
    let counts = store.counts(c.id).await.unwrap();
    assert_eq!((counts.applications, counts.network_endpoints, counts.ip_addresses), (1, 12, 3));
    assert_eq!(counts.findings[&Severity::Critical], 1);
    let apps = store.applications(c.id, Page::FIRST).await.unwrap();
    assert_eq!(apps.items[0].version.as_deref(), Some("1.18.0"));

    // SBOM, with CVEs only, and by domain.
    assert_eq!(store.sbom(c.id, Page::FIRST, false).await.unwrap().total, 2);
    let with = store.sbom(c.id, Page::FIRST, true).await.unwrap();
    assert_eq!((with.total, with.items[0].name.as_str()), (1, "log4j"));
    assert_eq!(with.items[0].cves[0].id.as_str(), "CVE-2021-44228");
    assert_eq!(with.items[0].cves[0].basis, model::CveBasis::Vendor, "the basis is kept");
    let by = store.sbom_by_domain(c.id, &dom("acme.example"), Page::FIRST).await.unwrap();
    assert_eq!(by.total, 2);
    assert_eq!(by.items[0].host, "api.acme.example");
    assert_eq!(by.items[1].components.len(), 2);

    // Findings: worst first, filters, and fixed findings disappear on the next snapshot.
    let all = store.findings(c.id, FindingFilter::default(), Page::FIRST).await.unwrap();
    assert_eq!(
        all.items.iter().map(|f| f.severity).collect::<Vec<_>>(),
        [Severity::Critical, Severity::High, Severity::Medium]
    );
    let dkim = store
        .findings(c.id, FindingFilter { asset: Some("acme.example"), risk_vector: Some(RiskVector::Dkim) }, Page::FIRST)
        .await
        .unwrap();
    assert_eq!((dkim.total, dkim.items[0].code.as_str()), (1, "dkim_weak_key"));
    let top = store.top_findings(c.id, 1).await.unwrap();
    assert_eq!(top.len(), 2);
    assert!(top.iter().any(|f| f.code == "dkim_rsa_512"));
    let first_id = all.items[0].id;
    let mut later = finding(RiskVector::Dkim, "mail.acme.example", Severity::Critical, "dkim_rsa_512");
    later.first_seen = at("2026-03-01T00:00:00Z");
    later.last_seen = at("2026-03-01T00:00:00Z");
    let fix = CompanySnapshot { profile: snap.profile.clone(), findings: Some(vec![later]), ..Default::default() };
    store.save_company(&fix).await.unwrap();
    let after = store.findings(c.id, FindingFilter::default(), Page::FIRST).await.unwrap();
    assert_eq!(after.total, 1);
    assert_eq!(after.items[0].id, first_id, "a finding keeps its identity across scans");
    assert_eq!(after.items[0].first_seen, at("2026-01-01T00:00:00Z"), "first_seen is the earliest sighting");
    assert_eq!(after.items[0].last_seen, at("2026-03-01T00:00:00Z"));

    // Incidents.
    assert_eq!(store.incidents_for_company(c.id).await.unwrap().len(), 1);
    assert_eq!(store.incidents_for_domain(&dom("acme.example")).await.unwrap()[0].incident_id, "INC-1");
    assert!(store.incident("INC-1").await.unwrap().is_some());
    assert!(store.incident("INC-404").await.unwrap().is_none());

    // Lookup counters.
    store.add_lookups(&[(c.id, 3)]).await.unwrap();
    store.add_lookups(&[(c.id, 2)]).await.unwrap();
    assert_eq!(store.company_by_social_id(&sid("ACME".to_lowercase().as_str())).await.unwrap().unwrap().searched_by, 5);

    // Last scanned.
    let last = store.last_scanned(Page::FIRST).await.unwrap();
    assert_eq!(last.items[0].social_id.as_str(), "acme");

    // Every company, a page at a time by id.
    for name in ["walk-b", "walk-a", "walk-c"] {
        store
            .save_company(&CompanySnapshot {
                profile: profile(name, name, &format!("{name}.example")),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let first = store.company_ids(0, 2).await.unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first[0], (c.id, sid("acme")));
    let rest = store.company_ids(first[1].0, 10).await.unwrap();
    let walked: Vec<&str> = first.iter().chain(&rest).map(|(_, s)| s.as_str()).collect();
    assert_eq!(walked, ["acme", "walk-b", "walk-a", "walk-c"], "in the order they were made");
    assert!(store.company_ids(rest[rest.len() - 1].0, 10).await.unwrap().is_empty());
    assert_eq!(store.company_count().await.unwrap(), 4);
}

pub async fn subsidiaries_and_search(store: &dyn Store) {
    let acme = CompanySnapshot { profile: profile("acme", "Acme Corp", "acme.example"), ..Default::default() };
    let parent = store.save_company(&acme).await.unwrap();
    let mut kids = Vec::new();
    for (s, n) in [("acme-labs", "Acme Labs"), ("acme-cloud", "Acme Cloud"), ("zeta_inc", "Zeta 100% Inc")] {
        let snap = CompanySnapshot {
            profile: profile(s, n, &format!("{}.example", s.replace('_', "-"))),
            ..Default::default()
        };
        kids.push(store.save_company(&snap).await.unwrap());
    }
    assert!(store.link_subsidiary(parent.id, kids[0].id).await.unwrap());
    assert!(!store.link_subsidiary(parent.id, kids[0].id).await.unwrap(), "linking twice is a no-op");
    assert!(store.link_subsidiary(parent.id, kids[1].id).await.unwrap());
    assert!(store.link_subsidiary(parent.id, parent.id).await.is_err());
    let subs = store.subsidiaries(parent.id, None).await.unwrap();
    assert_eq!(subs.items.iter().map(|c| c.company_name.as_str()).collect::<Vec<_>>(), ["Acme Cloud", "Acme Labs"]);
    assert!(store.unlink_subsidiary(parent.id, kids[1].id).await.unwrap());
    assert!(!store.unlink_subsidiary(parent.id, kids[1].id).await.unwrap());
    assert_eq!(store.subsidiaries(parent.id, Some(Page::FIRST)).await.unwrap().total, 1);

    let found = store.search_companies("ACME", Page::FIRST).await.unwrap();
    assert_eq!(found.total, 3);
    assert_eq!(found.items[0].company_name, "Acme Cloud", "prefix matches sorted by name");
    let exact = store.search_companies("acme labs", Page::FIRST).await.unwrap();
    assert_eq!(exact.items[0].company_name, "Acme Labs");
    // LIKE wildcards in the needle are literal.
    assert_eq!(store.search_companies("100%", Page::FIRST).await.unwrap().total, 1);
    assert_eq!(store.search_companies("%", Page::FIRST).await.unwrap().total, 1);
    assert_eq!(store.search_companies("_", Page::FIRST).await.unwrap().total, 0);
}

fn row(vendor: &str, product: &str, version: &str, key: Option<&str>, range: [Option<&str>; 4]) -> CpeMatchRow {
    CpeMatchRow {
        part: "a".into(),
        vendor: vendor.into(),
        product: product.into(),
        version: version.into(),
        version_key: key.map(str::to_owned),
        start_incl: range[0].map(str::to_owned),
        start_excl: range[1].map(str::to_owned),
        end_incl: range[2].map(str::to_owned),
        end_excl: range[3].map(str::to_owned),
        vulnerable: true,
        criteria: format!("cpe:2.3:a:{vendor}:{product}:{version}:*:*:*:*:*:*:*"),
    }
}

fn stored(id: &str, modified: &str, matches: Vec<CpeMatchRow>) -> StoredCve {
    let products: Vec<String> = matches.iter().map(|m| m.criteria.clone()).collect();
    let record = cve(id, modified, &products.iter().map(String::as_str).collect::<Vec<_>>());
    StoredCve {
        record_json: Some(serde_json::to_string(&record).unwrap()),
        record,
        configurations: "[]".into(),
        needs_eval: false,
        served: format!("{{\"id\":\"{id}\"}}"),
        products: matches
            .iter()
            .map(|m| ProductRow {
                vendor: m.vendor.clone(),
                product: m.product.clone(),
                parts: m.part.clone(),
                applies_any_version: true,
            })
            .collect(),
        matches,
    }
}

pub async fn cves(store: &dyn Store) {
    const NONE: [Option<&str>; 4] = [None; 4];
    let log4j_old = stored(
        "CVE-2021-44228",
        "2021-12-10T10:15:09.143000",
        vec![row("apache", "log4j", "2.14.1", Some("k214"), NONE)],
    );
    let log4j_new = stored(
        "CVE-2021-44228",
        "2023-04-03T20:15:08.000000",
        vec![row("apache", "log4j", "*", None, [Some("k200"), None, None, Some("k215")])],
    );
    assert_eq!(store.upsert_cves(std::slice::from_ref(&log4j_new)).await.unwrap(), 1);
    assert_eq!(store.upsert_cves(&[log4j_old]).await.unwrap(), 0, "an older record never replaces a newer one");
    assert_eq!(store.upsert_cves(&[log4j_new]).await.unwrap(), 0, "the same record twice writes once");
    let batch = [
        stored("CVE-2014-0160", "2024-01-01T00:00:00", vec![row("openssl", "openssl", "1.0.1f", Some("k101f"), NONE)]),
        stored("CVE-2020-0001", "2020-01-01T00:00:00", vec![row("apache", "http_server", "*", None, NONE)]),
        stored("CVE-2020-0002", "2020-01-01T00:00:00", vec![row("apache", "http_server", "2.4.1", Some("k241"), NONE)]),
    ];
    assert_eq!(store.upsert_cves(&batch).await.unwrap(), 3);

    let id = |s: &str| CveId::parse(s).unwrap();
    let got = store.cve(&id("cve-2021-44228")).await.unwrap().unwrap();
    assert_eq!(got.modified, OffsetDateTimeText(parse_datetime("2023-04-03T20:15:08").unwrap()));
    let served = store.served_cves(&[id("CVE-2014-0160"), id("CVE-1999-0001"), id("CVE-2021-44228")]).await.unwrap();
    assert_eq!(
        served.iter().map(|c| c.json.as_str()).collect::<Vec<_>>(),
        ["{\"id\":\"CVE-2014-0160\"}", "{\"id\":\"CVE-2021-44228\"}"]
    );
    assert_eq!(served[0].cwe, "Unknown");
    let some = store.cves(&[id("CVE-2014-0160"), id("CVE-1999-0001"), id("CVE-2021-44228")]).await.unwrap();
    assert_eq!(some.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["CVE-2014-0160", "CVE-2021-44228"]);
    assert_eq!(store.vendors().await.unwrap(), ["apache", "openssl"]);
    assert_eq!(store.products("apache").await.unwrap(), ["http_server", "log4j"]);

    // Candidates: by product, by exact version key, by range of keys, newest first.
    let ids = |c: Vec<CveCandidate>| c.into_iter().map(|c| c.id.to_string()).collect::<Vec<_>>();
    assert_eq!(
        ids(store.cve_candidates(&cq(None, "apache", "log4j", Some("k210"), false, None, 10)).await.unwrap()),
        ["CVE-2021-44228"]
    );
    assert!(
        store.cve_candidates(&cq(None, "apache", "log4j", Some("k216"), false, None, 10)).await.unwrap().is_empty(),
        "past the range end"
    );
    assert!(
        store.cve_candidates(&cq(None, "apache", "log4j", Some("k199"), false, None, 10)).await.unwrap().is_empty(),
        "before the range"
    );
    assert_eq!(
        ids(store.cve_candidates(&cq(None, "apache", "http_server", Some("k241"), false, None, 10)).await.unwrap()),
        ["CVE-2020-0002", "CVE-2020-0001"],
        "an exact version and an open criteria; ties by id, descending"
    );
    assert_eq!(
        ids(store.cve_candidates(&cq(None, "apache", "http_server", Some("k300"), false, None, 10)).await.unwrap()),
        ["CVE-2020-0001"]
    );
    let first = store.cve_candidates(&cq(None, "apache", "http_server", None, false, None, 1)).await.unwrap();
    assert!(first[0].configurations.is_none(), "not needed for evaluation, not asked for");
    let with = store.cve_candidates(&cq(Some("a"), "apache", "http_server", None, true, None, 1)).await.unwrap();
    assert_eq!(with[0].configurations.as_deref(), Some("[]"));
    assert!(
        store.cve_candidates(&cq(Some("o"), "apache", "http_server", None, false, None, 1)).await.unwrap().is_empty(),
        "part"
    );
    let after = (first[0].last_modified.to_string(), first[0].id.clone());
    assert_eq!(
        ids(store.cve_candidates(&cq(None, "apache", "http_server", None, false, Some(&after), 10)).await.unwrap()),
        ["CVE-2020-0001"]
    );
    // By version: configurations only where the record needs them or the query asks,
    // and batches that go on after the last one.
    let mut evaluated =
        stored("CVE-2020-0003", "2019-06-01T00:00:00", vec![row("apache", "http_server", "2.4.1", Some("k241"), NONE)]);
    (evaluated.needs_eval, evaluated.configurations) = (true, "[{\"nodes\":[]}]".into());
    assert_eq!(store.upsert_cves(&[evaluated]).await.unwrap(), 1);
    let configurations = |c: Vec<CveCandidate>| {
        c.into_iter().map(|c| (c.id.to_string(), c.configurations.map(|s| s.to_string()))).collect::<Vec<_>>()
    };
    let (two, one, three) = ("CVE-2020-0002".to_owned(), "CVE-2020-0001".to_owned(), "CVE-2020-0003".to_owned());
    let first = store.cve_candidates(&cq(None, "apache", "http_server", Some("k241"), false, None, 2)).await.unwrap();
    assert_eq!(configurations(first.clone()), [(two.clone(), None), (one.clone(), None)]);
    let after = (first[1].last_modified.to_string(), first[1].id.clone());
    assert_eq!(
        configurations(
            store
                .cve_candidates(&cq(None, "apache", "http_server", Some("k241"), false, Some(&after), 2))
                .await
                .unwrap()
        ),
        [(three.clone(), Some("[{\"nodes\":[]}]".to_owned()))],
        "the record that needs evaluation brings its configurations"
    );
    assert_eq!(
        configurations(
            store.cve_candidates(&cq(None, "apache", "http_server", Some("k241"), true, None, 10)).await.unwrap()
        ),
        [(two, Some("[]".to_owned())), (one, Some("[]".to_owned())), (three, Some("[{\"nodes\":[]}]".to_owned()))],
        "asked for, every candidate brings them"
    );

    let last = store.last_cves(2).await.unwrap();
    assert_eq!(last.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["CVE-2014-0160", "CVE-2021-44228"]);

    // A record kept only in its served form reads back from it, alone and in lists, and
    // does not match a non-vulnerable entry.
    let mut lean = stored("CVE-2025-0001", "2025-06-01T00:00:00.250000", vec![]);
    lean.record.access = Some(model::CvssAccess { vector: "NETWORK".into(), ..Default::default() });
    lean.record.cvss = Some(7.5);
    assert!(lean.record.served_form_reproduces());
    lean.served = serde_json::to_string(&lean.record).unwrap();
    lean.record_json = None;
    let mut platform = row("acme", "router", "1.0", Some("k10"), NONE);
    platform.vulnerable = false;
    lean.matches = vec![platform];
    assert_eq!(store.upsert_cves(std::slice::from_ref(&lean)).await.unwrap(), 1);
    assert_eq!(store.cve(&id("CVE-2025-0001")).await.unwrap().as_ref(), Some(&lean.record));
    assert_eq!(store.last_cves(1).await.unwrap(), [lean.record.clone()]);
    assert!(store.cve_candidates(&cq(None, "acme", "router", Some("k10"), false, None, 10)).await.unwrap().is_empty());

    // Side feeds are joined at read time.
    store
        .save_kev(&[KevRow {
            cve_id: id("CVE-2021-44228"),
            date_added: "2021-12-10".into(),
            entry: serde_json::json!({"dateAdded": "2021-12-10"}),
        }])
        .await
        .unwrap();
    store
        .save_epss(&[EpssRow { cve_id: id("CVE-2021-44228"), epss: 0.97, percentile: 0.999 }], "2026-01-01")
        .await
        .unwrap();
    let got = store.cve(&id("CVE-2021-44228")).await.unwrap().unwrap();
    assert_eq!(got.kev, Some(serde_json::json!({"dateAdded": "2021-12-10"})));
    assert_eq!((got.epss, got.percentile), (Some(0.97), Some(0.999)));
    let served = store.served_cves(&[id("CVE-2021-44228")]).await.unwrap();
    assert_eq!((served[0].kev.as_deref(), served[0].epss), (Some("{\"dateAdded\":\"2021-12-10\"}"), Some(0.97)));
    assert!(store.cve(&id("CVE-2014-0160")).await.unwrap().unwrap().kev.is_none());
    // Candidates come with the same served forms when asked, by version and by product.
    for (key, want) in [(Some("k210"), &["CVE-2021-44228"][..]), (None, &["CVE-2021-44228"][..])] {
        let q = CandidateQuery { served: true, ..cq(None, "apache", "log4j", key, false, None, 10) };
        let got = store.cve_candidates(&q).await.unwrap();
        assert_eq!(ids(got.clone()), want);
        let s = got[0].served.as_ref().expect("served form asked for");
        assert_eq!(
            (s.id.as_str(), s.json.as_str(), s.cwe.as_str(), s.kev.as_deref(), s.epss, s.percentile),
            (
                "CVE-2021-44228",
                "{\"id\":\"CVE-2021-44228\"}",
                "Unknown",
                Some("{\"dateAdded\":\"2021-12-10\"}"),
                Some(0.97),
                Some(0.999)
            )
        );
    }
    let q = CandidateQuery { served: true, ..cq(None, "apache", "http_server", Some("k241"), false, None, 10) };
    let got = store.cve_candidates(&q).await.unwrap();
    assert_eq!(ids(got.clone()), ["CVE-2020-0002", "CVE-2020-0001", "CVE-2020-0003"], "newest first, then by id");
    assert_eq!(
        got.iter().map(|c| c.served.as_ref().map(|s| s.json.to_string())).collect::<Vec<_>>(),
        ["CVE-2020-0002", "CVE-2020-0001", "CVE-2020-0003"].map(|id| Some(format!("{{\"id\":\"{id}\"}}")))
    );
    assert!(got.iter().all(|c| c.served.as_ref().is_some_and(|s| s.kev.is_none() && s.epss.is_none())));

    store.save_cwe(&[CweRow { id: 79, name: "XSS".into(), capec_ids: vec![63, 588] }]).await.unwrap();
    store
        .save_capec(&[
            CapecRow { id: 63, record: serde_json::json!({"id": "63"}), related_weaknesses: vec!["CWE-79".into()] },
            CapecRow { id: 588, record: serde_json::json!({"id": "588"}), related_weaknesses: vec!["CWE-79".into()] },
            CapecRow { id: 7, record: serde_json::json!({"id": "7"}), related_weaknesses: vec!["CWE-80".into()] },
        ])
        .await
        .unwrap();
    assert_eq!(
        store.capec_for_cwes(&["CWE-79"]).await.unwrap().remove("CWE-79").unwrap_or_default(),
        [serde_json::json!({"id": "63"}), serde_json::json!({"id": "588"})]
    );
    assert_eq!(
        store.capec_for_cwes(&["CWE-80"]).await.unwrap().remove("CWE-80").unwrap_or_default(),
        [serde_json::json!({"id": "7"})],
        "fallback by relation"
    );
    assert!(store.capec_for_cwes(&["Unknown"]).await.unwrap().remove("Unknown").unwrap_or_default().is_empty());
    let both = store.capec_for_cwes(&["CWE-79", "CWE-80", "CWE-1", "NVD-CWE-Other"]).await.unwrap();
    assert_eq!(both.keys().collect::<Vec<_>>(), ["CWE-79", "CWE-80"]);
    assert_eq!(both["CWE-79"].len(), 2);

    assert!(store.feed_state("nvd").await.unwrap().is_none());
    store.set_feed_state("nvd", "2026-01-01T00:00:00Z").await.unwrap();
    store.set_feed_state("nvd", "2026-02-01T00:00:00Z").await.unwrap();
    assert_eq!(store.feed_state("nvd").await.unwrap().as_deref(), Some("2026-02-01T00:00:00Z"));

    // One record twice in a batch (feeds overlap): the newest is kept, whichever comes
    // first, and counts once; the index rows are the newest record's.
    const NO_RANGE: [Option<&str>; 4] = [None; 4];
    for (id, newest_first) in [("CVE-2019-0003", false), ("CVE-2019-0004", true)] {
        let old = stored(id, "2019-01-01T00:00:00", vec![row("nginx", "nginx", "1.0", Some("k10"), NO_RANGE)]);
        let new = stored(id, "2019-06-01T00:00:00", vec![row("nginx", "nginx", "2.0", Some("k20"), NO_RANGE)]);
        let twice = if newest_first { [new, old] } else { [old, new] };
        assert_eq!(store.upsert_cves(&twice).await.unwrap(), 1, "{id}");
        let got = store.cve(&CveId::parse(id).unwrap()).await.unwrap().unwrap();
        assert_eq!(got.modified, OffsetDateTimeText(parse_datetime("2019-06-01T00:00:00").unwrap()), "{id}");
    }
    let (k20, k10) = (
        cq(None, "nginx", "nginx", Some("k20"), false, None, 10),
        cq(None, "nginx", "nginx", Some("k10"), false, None, 10),
    );
    assert_eq!(store.cve_candidates(&k20).await.unwrap().len(), 2);
    assert!(store.cve_candidates(&k10).await.unwrap().is_empty(), "the older records' rows are not kept");
}

/// Every write of company data moves the company version, every write of vulnerability
/// data the CVE version; lookups, keys, usage and jobs move neither. Read caches are
/// keyed by these, so a write that did not move them would be served stale.
pub async fn data_versions(store: &dyn Store) {
    let v = || async { store.data_versions().await.unwrap() };
    let start = v().await;
    let c = store
        .save_company(&CompanySnapshot { profile: profile("acme", "Acme", "acme.example"), ..Default::default() })
        .await
        .unwrap();
    let d = store
        .save_company(&CompanySnapshot { profile: profile("acme-de", "Acme DE", "acme.de"), ..Default::default() })
        .await
        .unwrap();
    let mut last = v().await;
    assert!(last.company > start.company && last.cve == start.cve, "{start:?} then {last:?}");
    // What moves the company version, one write at a time.
    let mut moved = |what: &str, now: store::DataVersions| {
        assert!(now.company > last.company && now.cve == last.cve, "{what}: {last:?} then {now:?}");
        last = now;
    };
    store.set_scan_error(c.id, Some("no answer")).await.unwrap();
    moved("a scan error", v().await);
    store.set_dkim_selectors(c.id, &["s1".to_owned()]).await.unwrap();
    moved("DKIM selectors", v().await);
    assert!(!store.is_subsidiary(c.id, d.id).await.unwrap());
    store.link_subsidiary(c.id, d.id).await.unwrap();
    moved("a subsidiary linked", v().await);
    assert!(store.is_subsidiary(c.id, d.id).await.unwrap() && !store.is_subsidiary(d.id, c.id).await.unwrap());
    store.replace_rating(c.id, &snapshot(71.0, "2026-03-01T00:00:00Z")).await.unwrap();
    moved("a rating", v().await);
    assert!(store.unlink_subsidiary(c.id, d.id).await.unwrap());
    moved("a subsidiary unlinked", v().await);
    assert!(!store.unlink_subsidiary(c.id, d.id).await.unwrap(), "gone: nothing to unlink");
    assert_eq!(v().await, last, "and nothing written");
    // What does not.
    store.add_lookups(&[(c.id, 3)]).await.unwrap();
    store
        .create_key(&NewApiKey {
            name: "k".into(),
            prefix: "rk_dv0001".into(),
            hash: "ef".repeat(32),
            scopes: vec![Scope::General],
            company: None,
            org: None,
            per_minute: 60,
            monthly: 10_000,
        })
        .await
        .unwrap();
    store.enqueue(&model::JobSpec::Scan { social_id: sid("acme") }).await.unwrap();
    store.set_feed_state("nvd", "2026-11-01").await.unwrap();
    assert_eq!(v().await, last, "lookups, keys, jobs and feed state move no version");
    assert_eq!(store.company_by_social_id(&sid("acme")).await.unwrap().unwrap().searched_by, 3);
    // Vulnerability data moves the CVE version only.
    store.upsert_cves(&[stored("CVE-2027-0100", "2027-01-01T00:00:00", Vec::new())]).await.unwrap();
    let now = v().await;
    assert!(now.cve > last.cve && now.company == last.company, "a CVE: {last:?} then {now:?}");
    // So does the reference data workers read again when it moves.
    store.save_fingerprints("test", &[("Acme Server".to_owned(), "{}".to_owned())]).await.unwrap();
    let then = v().await;
    assert!(then.cve > now.cve && then.company == now.company, "fingerprints: {now:?} then {then:?}");
    store.save_eol_products(&[("acme-server".to_owned(), "[]".to_owned())]).await.unwrap();
    let last = v().await;
    assert!(last.cve > then.cve && last.company == then.company, "end-of-life data: {then:?} then {last:?}");
}

pub async fn keys_and_usage(store: &dyn Store) {
    let k = store
        .create_key(&NewApiKey {
            name: "monitor of acme".into(),
            prefix: "rk_abcdef".into(),
            hash: "ab".repeat(32),
            scopes: vec![Scope::General, Scope::Monitor],
            company: Some(sid("acme")),
            org: None,
            per_minute: 60,
            monthly: 10_000,
        })
        .await
        .unwrap();
    assert!(k.active);
    let found = store.key_by_hash(&"ab".repeat(32)).await.unwrap().unwrap();
    assert_eq!(found, k);
    assert!(store.key_by_hash(&"cd".repeat(32)).await.unwrap().is_none());
    assert!(store.set_key_active("rk_abcdef", false).await.unwrap());
    assert!(!store.key_by_hash(&"ab".repeat(32)).await.unwrap().unwrap().active);
    assert!(!store.set_key_active("nope", false).await.unwrap());
    assert!(store.set_key_active(&k.id.to_string(), true).await.unwrap());
    assert_eq!(store.keys().await.unwrap().len(), 1);

    assert_eq!(store.usage(k.id, "2026-11").await.unwrap(), 0);
    store.add_usage(k.id, "2026-11", 5).await.unwrap();
    store.add_usage(k.id, "2026-11", 7).await.unwrap();
    assert_eq!(store.usage(k.id, "2026-11").await.unwrap(), 12);
    assert_eq!(store.usage(k.id, "2026-12").await.unwrap(), 0);
}

pub async fn jobs(store: &dyn Store) {
    use model::JobStatus;
    let minute = Duration::from_secs(60);
    let payload = model::JobSpec::Scan { social_id: sid("acme") };
    assert!(store.enqueue(&payload).await.unwrap());
    assert!(!store.enqueue(&payload).await.unwrap(), "deduplicated while queued");
    let rescan = model::JobSpec::Rescan {
        social_id: sid("acme"),
        subdomain: dom("www.acme.test"),
        risk_vector: RiskVector::Spf,
    };
    // At background priority, behind the scan.
    let now = time::OffsetDateTime::now_utc();
    assert!(store.enqueue_with(&rescan, model::JobSpec::BACKGROUND, now).await.unwrap(), "another job of the company");
    assert_eq!(pending(store).await.len(), 2);

    let job = store.lease_job("w1", minute, 5).await.unwrap().unwrap();
    assert_eq!((&job.spec, job.attempts, job.status), (&payload, 1, JobStatus::Running));
    let token = job.lease_token.clone().expect("a leased job has a token");
    assert_eq!(job.worker.as_deref(), Some("w1"));
    assert!(!store.enqueue(&payload).await.unwrap(), "deduplicated while running");
    let second = store.lease_job("w2", minute, 5).await.unwrap().unwrap();
    assert_eq!(second.spec, rescan, "the job comes back as it was queued");
    assert_ne!(second.id, job.id, "a leased job is not handed out twice");
    assert_ne!(second.lease_token, job.lease_token, "every lease has its own token");
    assert!(store.lease_job("w3", minute, 5).await.unwrap().is_none());

    // Only the lease's token ends or renews it.
    assert!(!store.complete_job(job.id, "not-the-token").await.unwrap());
    assert!(store.renew_lease(job.id, &token, minute).await.unwrap());
    assert!(store.complete_job(job.id, &token).await.unwrap());
    assert!(!store.complete_job(job.id, &token).await.unwrap(), "a job completes once");
    assert!(!store.renew_lease(job.id, &token, minute).await.unwrap());
    assert!(store.enqueue(&payload).await.unwrap(), "queued again once done");

    // A failed job is retried after its delay; an expired lease is taken over, and the
    // worker whose lease lapsed can neither complete, fail nor renew it.
    let second_token = second.lease_token.clone().unwrap();
    assert!(store.fail_job(second.id, &second_token, "boom", Duration::from_secs(0), false).await.unwrap());
    let mut seen = Vec::new();
    while let Some(j) = store.lease_job("w4", Duration::from_secs(0), 5).await.unwrap() {
        seen.push(j.id);
        if seen.len() > 10 {
            break;
        }
        let stale = j.lease_token.clone().unwrap();
        // The lease (0 s) has lapsed: another worker takes the job over.
        let taken = store.lease_job("w5", minute, 5).await.unwrap().unwrap();
        assert_eq!(taken.id, j.id);
        assert!(!store.complete_job(j.id, &stale).await.unwrap(), "a stale worker's completion is refused");
        assert!(!store.fail_job(j.id, &stale, "late", Duration::ZERO, true).await.unwrap());
        assert!(!store.renew_lease(j.id, &stale, minute).await.unwrap());
        assert!(store.complete_job(j.id, &taken.lease_token.unwrap()).await.unwrap());
    }
    assert!(seen.contains(&second.id));
    assert!(pending(store).await.is_empty());
    let done = store.jobs(Some(JobStatus::Done), 10).await.unwrap();
    assert_eq!(done.len(), 3, "{done:?}");
    assert!(done.windows(2).all(|w| w[0].id > w[1].id), "newest first");

    // A job whose lease lapses on every attempt (it crashes its worker) is dead after
    // the last one, with why; an operator can queue it again.
    assert!(store.enqueue(&model::JobSpec::Scan { social_id: sid("crash") }).await.unwrap());
    for attempt in 1..=3 {
        let j = store.lease_job("w6", Duration::ZERO, 3).await.unwrap().unwrap();
        assert_eq!(j.attempts, attempt);
    }
    assert!(store.lease_job("w6", Duration::ZERO, 3).await.unwrap().is_none(), "not handed out a fourth time");
    let dead = store.jobs(Some(JobStatus::Dead), 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    let why = dead[0].last_error.clone().unwrap_or_default();
    assert!(why.contains("lease expired on attempt 3 of 3"), "{why}");
    assert!(store.retry_job(dead[0].id).await.unwrap());
    assert!(!store.retry_job(dead[0].id).await.unwrap(), "only a dead or cancelled job is retried");
    let again = store.lease_job("w7", minute, 3).await.unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (dead[0].id, 1), "attempts start over");

    // Released by a worker shutting down: back in the queue, the attempt not counted.
    assert!(store.release_job(again.id, again.lease_token.as_deref().unwrap()).await.unwrap());
    let back = store.lease_job("w8", minute, 3).await.unwrap().unwrap();
    assert_eq!((back.id, back.attempts), (again.id, 1));

    // Cancelled while running: its worker's lease is gone.
    assert!(store.cancel_job(back.id).await.unwrap());
    assert!(!store.renew_lease(back.id, back.lease_token.as_deref().unwrap(), minute).await.unwrap());
    assert!(!store.complete_job(back.id, back.lease_token.as_deref().unwrap()).await.unwrap());
    assert_eq!(store.jobs(Some(JobStatus::Cancelled), 10).await.unwrap().len(), 1);
    assert!(!store.cancel_job(back.id).await.unwrap());
    assert!(pending(store).await.is_empty());
}

/// Which ready job is leased first: priority, then `run_after`, then age; a delayed
/// job waits for its time; asking again for waiting work brings it forward.
pub async fn job_order(store: &dyn Store) {
    use model::JobSpec;
    let minute = Duration::from_secs(60);
    let now = time::OffsetDateTime::now_utc();
    let scan = |name: &str| JobSpec::Scan { social_id: sid(name) };
    let rescan = JobSpec::Rescan { social_id: sid("r"), subdomain: dom("www.r.test"), risk_vector: RiskVector::Dmarc };
    assert!(store.enqueue_with(&scan("old-background"), JobSpec::BACKGROUND, now - minute).await.unwrap());
    assert!(store.enqueue_with(&scan("background"), JobSpec::BACKGROUND, now).await.unwrap());
    assert!(store.enqueue(&scan("asked")).await.unwrap());
    assert!(store.enqueue(&rescan).await.unwrap());
    assert!(store.enqueue_with(&scan("tomorrow"), 100, now + Duration::from_secs(86_400)).await.unwrap());
    let queued = store.jobs(Some(model::JobStatus::Queued), 10).await.unwrap();
    let tomorrow = queued.iter().find(|j| j.spec == scan("tomorrow")).unwrap();
    assert_eq!(tomorrow.priority, 100);
    assert!(
        tomorrow.run_after
            > time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap()
    );

    let mut order = Vec::new();
    while let Some(job) = store.lease_job("w", minute, 3).await.unwrap() {
        order.push(job.spec.company().to_string());
        assert!(store.complete_job(job.id, job.lease_token.as_deref().unwrap()).await.unwrap());
        assert!(order.len() <= 5, "{order:?}");
    }
    // A rescan (someone waits on it) before a scan asked for, before background work,
    // the older first; the job delayed to tomorrow is not ready, whatever its priority.
    assert_eq!(order, ["r", "asked", "old-background", "background"]);

    // Asking now for the work delayed to tomorrow: no second job, the waiting one is
    // brought forward and keeps the higher priority.
    assert!(!store.enqueue(&scan("tomorrow")).await.unwrap());
    assert!(store.enqueue_with(&scan("later"), 50, now).await.unwrap());
    let first = store.lease_job("w", minute, 3).await.unwrap().expect("brought forward");
    assert_eq!((first.spec.company().as_str(), first.priority), ("tomorrow", 100));
    // Asking again at a lower priority or a later time changes nothing: not even the
    // job's row is written (a repeated ask is a read).
    let row = |jobs: Vec<model::Job>| jobs.into_iter().find(|j| j.spec == scan("later")).unwrap();
    let before = row(store.jobs(Some(model::JobStatus::Queued), 10).await.unwrap());
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(!store.enqueue_with(&scan("later"), 0, now + minute).await.unwrap());
    assert!(!store.enqueue_with(&scan("later"), 50, now).await.unwrap());
    let after = row(store.jobs(Some(model::JobStatus::Queued), 10).await.unwrap());
    assert_eq!(after.updated_at, before.updated_at, "a repeated ask writes nothing");
    let second = store.lease_job("w", minute, 3).await.unwrap().unwrap();
    assert_eq!((second.spec.company().as_str(), second.priority), ("later", 50));
    assert!(store.lease_job("w", minute, 3).await.unwrap().is_none());
    // Asked while it runs: not queued twice.
    assert!(!store.enqueue_with(&scan("later"), 100, now).await.unwrap());

    // The first lease's time stays the job's start on every attempt; an operator's
    // retry is a new run.
    assert!(store.enqueue(&scan("restarted")).await.unwrap());
    let first = store.lease_job("w", Duration::ZERO, 3).await.unwrap().unwrap();
    let started = first.started_at.clone().expect("started when first leased");
    tokio::time::sleep(Duration::from_millis(5)).await;
    let again = store.lease_job("w2", minute, 3).await.unwrap().unwrap();
    assert_eq!((again.id, again.attempts, again.started_at.as_deref()), (first.id, 2, Some(started.as_str())));
    assert!(store.fail_job(again.id, again.lease_token.as_deref().unwrap(), "x", Duration::ZERO, true).await.unwrap());
    assert!(store.retry_job(again.id).await.unwrap());
    let retried = store.jobs(Some(model::JobStatus::Queued), 1).await.unwrap();
    assert_eq!(retried[0].started_at, None, "a retried job starts afresh");
}

/// Jobs waiting or running.
async fn pending(store: &dyn Store) -> Vec<model::Job> {
    let mut jobs = store.jobs(None, u32::MAX).await.unwrap();
    jobs.retain(|j| matches!(j.status, model::JobStatus::Queued | model::JobStatus::Running));
    jobs
}

/// The scheduler's reads and writes: candidates in order (watched, never scanned,
/// unplanned, soonest due), plans kept, cadences, the lease one process holds, and the
/// counts `rampart status` prints. None of it moves a data version.
pub async fn schedule(store: &dyn Store) {
    use store::RescanPlan;
    let day = Duration::from_secs(86_400);
    let hour = time::Duration::hours(1);
    let mut ids = BTreeMap::new();
    for (s, domain) in [
        ("sch-a", "a.example"),
        ("sch-b", "b.example"),
        ("sch-c", "c.example"),
        ("sch-d", "d.example"),
        ("sch-e", "e.example"),
    ] {
        let c = store
            .save_company(&CompanySnapshot { profile: profile(s, s, domain), ..Default::default() })
            .await
            .unwrap();
        ids.insert(s, c.id);
    }
    let id = |s: &str| ids[s];
    // a is watched by a monitor key bound to it, b as a's subsidiary; a and c are rated,
    // e's scan failed, b and d were never scanned.
    store.link_subsidiary(id("sch-a"), id("sch-b")).await.unwrap();
    store
        .create_key(&NewApiKey {
            name: "monitor of a".into(),
            prefix: "rk_sch001".into(),
            hash: "5c".repeat(32),
            scopes: vec![Scope::Monitor],
            company: Some(sid("sch-a")),
            org: None,
            per_minute: 60,
            monthly: 10_000,
        })
        .await
        .unwrap();
    store.replace_rating(id("sch-a"), &snapshot(71.0, "2026-03-01T00:00:00Z")).await.unwrap();
    store.replace_rating(id("sch-c"), &snapshot(64.0, "2026-02-01T00:00:00Z")).await.unwrap();
    store.set_scan_error(id("sch-e"), Some("no such domain")).await.unwrap();
    let versions = store.data_versions().await.unwrap();
    let now = time::OffsetDateTime::now_utc();
    let names = |rows: &[store::ScheduleRow]| rows.iter().map(|r| r.social_id.to_string()).collect::<Vec<_>>();

    let rows = store.rescan_candidates(now, day, 10).await.unwrap();
    assert_eq!(names(&rows), ["sch-b", "sch-a", "sch-d", "sch-c", "sch-e"], "watched, never scanned, then by id");
    let row = |s: &str| rows.iter().find(|r| r.social_id.as_str() == s).unwrap().clone();
    assert!(row("sch-a").watched && row("sch-b").watched && !row("sch-c").watched);
    assert_eq!(row("sch-a").last_scan, Some(parse_datetime("2026-03-01T00:00:00Z").unwrap()));
    assert!(
        row("sch-e").last_scan.is_some_and(|t| (now - t).abs() < time::Duration::minutes(5)),
        "a failed scan counts"
    );
    assert!(row("sch-b").never_scanned() && row("sch-d").never_scanned() && !row("sch-e").never_scanned());
    assert!(row("sch-c").next_at.is_none() && row("sch-c").every.is_none());
    assert_eq!(names(&store.rescan_candidates(now, day, 2).await.unwrap()), ["sch-b", "sch-a"], "at most the limit");

    let plan = |s: &str, next_at: time::OffsetDateTime, queued: bool| RescanPlan {
        company: id(s),
        next_at,
        every: day,
        queued_at: queued.then_some(now),
    };
    store
        .plan_rescans(&[
            plan("sch-a", now + time::Duration::hours(2), true),
            plan("sch-b", now + time::Duration::hours(12), true),
            plan("sch-c", now + hour, false),
            plan("sch-d", now + hour, false),
            plan("sch-e", now - time::Duration::seconds(1), false),
        ])
        .await
        .unwrap();
    assert_eq!(names(&store.rescan_candidates(now, day, 10).await.unwrap()), ["sch-e"], "only what is due");
    let later = store.rescan_candidates(now + time::Duration::minutes(90), day, 10).await.unwrap();
    assert_eq!(names(&later), ["sch-d", "sch-e", "sch-c"], "never scanned first, then soonest due");
    assert_eq!(later[2].planned_every, Some(day));
    // A plan without a queue time keeps the one recorded.
    store.plan_rescans(&[plan("sch-a", now + time::Duration::hours(3), false)]).await.unwrap();
    let all = store.rescan_candidates(now, Duration::from_secs(3_600), 10).await.unwrap();
    assert_eq!(all.len(), 5, "planned with another cadence than the default now: all planned again");
    let a = all.iter().find(|r| r.social_id.as_str() == "sch-a").unwrap();
    assert_eq!(a.queued_at.map(|t| t.unix_timestamp()), Some(now.unix_timestamp()));
    assert_eq!(a.next_at.map(|t| t.unix_timestamp()), Some((now + time::Duration::hours(3)).unix_timestamp()));
    assert_eq!(
        store.next_rescans(3).await.unwrap().iter().map(|(s, _)| s.to_string()).collect::<Vec<_>>(),
        ["sch-e", "sch-c", "sch-d"]
    );

    // A company's own cadence: kept, and its next rescan is planned again.
    assert_eq!(store.cadence(id("sch-c")).await.unwrap(), None);
    store.set_cadence(id("sch-c"), Some(Duration::from_secs(6 * 3_600))).await.unwrap();
    assert_eq!(store.cadence(id("sch-c")).await.unwrap(), Some(Duration::from_secs(6 * 3_600)));
    let due = store.rescan_candidates(now, day, 10).await.unwrap();
    assert_eq!(names(&due), ["sch-c", "sch-e"], "unplanned before due");
    assert_eq!(due[0].every, Some(Duration::from_secs(6 * 3_600)));
    store.set_cadence(id("sch-c"), None).await.unwrap();
    assert_eq!(store.cadence(id("sch-c")).await.unwrap(), None);
    store.set_cadence(id("sch-d"), Some(Duration::from_secs(600))).await.unwrap();
    assert_eq!(store.cadence(id("sch-d")).await.unwrap(), Some(Duration::from_secs(600)));

    let times = store.rating_times().await.unwrap();
    assert_eq!(
        times,
        [parse_datetime("2026-02-01T00:00:00Z").unwrap(), parse_datetime("2026-03-01T00:00:00Z").unwrap()]
    );

    // The scheduler's lease: one holder at a time, renewed by it, taken when it lapses.
    let ttl = Duration::from_secs(30);
    assert!(store.hold_lease("scheduler", "w1", ttl, now).await.unwrap());
    assert!(!store.hold_lease("scheduler", "w2", ttl, now).await.unwrap(), "held by w1");
    assert!(store.hold_lease("scheduler", "w1", ttl, now + time::Duration::seconds(20)).await.unwrap(), "renewed");
    assert!(!store.hold_lease("scheduler", "w2", ttl, now + time::Duration::seconds(40)).await.unwrap());
    assert!(store.hold_lease("scheduler", "w2", ttl, now + time::Duration::seconds(51)).await.unwrap(), "lapsed");
    assert!(store.hold_lease("other-role", "w1", ttl, now).await.unwrap(), "leases are per name");
    store.drop_lease("scheduler", "w1").await.unwrap();
    assert!(
        !store.hold_lease("scheduler", "w1", ttl, now + time::Duration::seconds(52)).await.unwrap(),
        "not w1's to drop"
    );
    store.drop_lease("scheduler", "w2").await.unwrap();
    assert!(store.hold_lease("scheduler", "w1", ttl, now + time::Duration::seconds(52)).await.unwrap(), "dropped");

    // Waiting work by rank, and the counts by kind.
    store
        .enqueue_with(&model::JobSpec::Scan { social_id: sid("sch-c") }, model::JobSpec::BACKGROUND, now)
        .await
        .unwrap();
    store.enqueue(&model::JobSpec::Scan { social_id: sid("sch-d") }).await.unwrap();
    store
        .enqueue_with(
            &model::JobSpec::Scan { social_id: sid("sch-e") },
            model::JobSpec::BACKGROUND,
            now + time::Duration::hours(2),
        )
        .await
        .unwrap();
    store
        .enqueue(&model::JobSpec::Rescan {
            social_id: sid("sch-a"),
            subdomain: dom("www.a.example"),
            risk_vector: RiskVector::WebHeaders,
        })
        .await
        .unwrap();
    let soon = time::OffsetDateTime::now_utc();
    assert_eq!(store.waiting_jobs(model::JobSpec::BACKGROUND, soon).await.unwrap(), 1, "background work ready");
    assert_eq!(store.waiting_jobs(10, soon).await.unwrap(), 2);
    assert_eq!(store.waiting_jobs(i16::MAX, soon).await.unwrap(), 3, "the delayed job waits for its time");
    assert_eq!(store.waiting_jobs(i16::MAX, now + time::Duration::hours(3)).await.unwrap(), 4);
    let counts = store.job_counts().await.unwrap();
    let got: Vec<(&str, &str, u64)> = counts.iter().map(|c| (c.kind.as_str(), c.status.as_str(), c.count)).collect();
    assert_eq!(got, [("rescan", "queued", 1), ("scan", "queued", 3)]);
    assert!(counts.iter().all(|c| (c.oldest - now).abs() < time::Duration::minutes(5)));

    store.set_feed_state("kev", "{}").await.unwrap();
    let feeds = store.feed_ages().await.unwrap();
    assert_eq!(feeds.len(), 1);
    assert!(feeds[0].0 == "kev" && (feeds[0].1 - now).abs() < time::Duration::minutes(5));

    assert_eq!(store.data_versions().await.unwrap(), versions, "schedules, leases, jobs and feeds move no version");
}

/// The change log the feeds leave for matching again: a CVE written (again only when it
/// changed), a KEV entry added, changed or removed (an unchanged catalogue writes
/// nothing); the companies a change concerns (by detected products, and by open
/// findings); the kept detections; component CVEs set alone; a rating's reason.
pub async fn feed_changes(store: &dyn Store) {
    const NONE: [Option<&str>; 4] = [None; 4];
    let ids = |changes: &[(i64, CveId)]| changes.iter().map(|(_, c)| c.to_string()).collect::<Vec<_>>();
    let forget_all = async || {
        let all = store.cve_changes(1_000).await.unwrap();
        if let Some((last, _)) = all.last() {
            assert_eq!(store.forget_cve_changes(*last).await.unwrap(), all.len() as u64);
        }
    };
    let a = store
        .save_company(&CompanySnapshot { profile: profile("feed-a", "Feed A", "a.example"), ..Default::default() })
        .await
        .unwrap();
    let b = store
        .save_company(&CompanySnapshot { profile: profile("feed-b", "Feed B", "b.example"), ..Default::default() })
        .await
        .unwrap();
    let ssh = stored("CVE-2026-1001", "2026-01-01T00:00:00", vec![row("openbsd", "openssh", "", None, NONE)]);
    let web = stored("CVE-2026-1002", "2026-01-01T00:00:00", vec![row("nginx", "nginx", "1.18.0", Some("k118"), NONE)]);
    store.upsert_cves(&[ssh.clone(), web.clone()]).await.unwrap();
    assert_eq!(ids(&store.cve_changes(10).await.unwrap()), ["CVE-2026-1001", "CVE-2026-1002"]);
    assert_eq!(ids(&store.cve_changes(1).await.unwrap()), ["CVE-2026-1001"], "oldest first, at most the limit");
    forget_all().await;
    store.upsert_cves(std::slice::from_ref(&ssh)).await.unwrap();
    assert!(store.cve_changes(10).await.unwrap().is_empty(), "the same record again: no change");
    let ssh2 = stored("CVE-2026-1001", "2026-02-01T00:00:00", vec![row("openbsd", "openssh", "", None, NONE)]);
    store.upsert_cves(&[ssh2]).await.unwrap();
    assert_eq!(ids(&store.cve_changes(10).await.unwrap()), ["CVE-2026-1001"], "a newer record");
    forget_all().await;

    let kev = |id: &str, note: &str| store::cve::KevRow {
        cve_id: CveId::parse(id).unwrap(),
        date_added: "2026-11-27".into(),
        entry: serde_json::json!({ "cveID": id, "notes": note }),
    };
    store.save_kev(&[kev("CVE-2026-1001", ""), kev("CVE-2026-1002", "")]).await.unwrap();
    assert_eq!(ids(&store.cve_changes(10).await.unwrap()), ["CVE-2026-1001", "CVE-2026-1002"]);
    forget_all().await;
    store.save_kev(&[kev("CVE-2026-1001", ""), kev("CVE-2026-1002", "")]).await.unwrap();
    assert!(store.cve_changes(10).await.unwrap().is_empty(), "the same catalogue: nothing written");
    store.save_kev(&[kev("CVE-2026-1002", "ransomware")]).await.unwrap();
    let mut changed = ids(&store.cve_changes(10).await.unwrap());
    changed.sort();
    assert_eq!(changed, ["CVE-2026-1001", "CVE-2026-1002"], "one removed, one changed");
    assert_eq!(store.served_cves(&[CveId::parse("CVE-2026-1001").unwrap()]).await.unwrap()[0].kev, None);
    forget_all().await;

    // a runs OpenSSH; b has an open finding naming the nginx CVE.
    let detected = r#"[{"host":"ssh.a.example","name":"OpenSSH"}]"#;
    let now = time::OffsetDateTime::now_utc();
    store.save_detected_software(a.id, detected, &[("openbsd".into(), "openssh".into())], now).await.unwrap();
    assert_eq!(store.detected_software(a.id).await.unwrap().as_deref(), Some(detected));
    assert_eq!(store.detected_software(b.id).await.unwrap(), None);
    let mut f = finding(RiskVector::Vulnerabilities, "www.b.example", Severity::High, "vulnerabilities.cve");
    f.cve = Some(CveId::parse("CVE-2026-1002").unwrap());
    store
        .record_scan(
            b.id,
            store::ScanScope {
                risk_vectors: &[RiskVector::Vulnerabilities],
                asset: None,
                below: false,
                close_missing: true,
                keep_open: &[],
            },
            &[f],
            now,
        )
        .await
        .unwrap();
    let affected = |cves: &[&str]| {
        let cves: Vec<CveId> = cves.iter().map(|c| CveId::parse(c).unwrap()).collect();
        async move {
            store
                .companies_affected_by(&cves)
                .await
                .unwrap()
                .into_iter()
                .map(|(_, s)| s.to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(affected(&["CVE-2026-1001"]).await, ["feed-a"]);
    assert_eq!(affected(&["CVE-2026-1002"]).await, ["feed-b"]);
    assert_eq!(affected(&["CVE-2026-1001", "CVE-2026-1002"]).await, ["feed-a", "feed-b"]);
    assert!(affected(&["CVE-2026-9999"]).await.is_empty() && affected(&[]).await.is_empty());
    // A publisher's statement: kept by CVE and key, found by product, followed by the
    // change log; a company running the product it speaks of is affected by it.
    forget_all().await;
    let advisory = |cve: &str, key: &str, statement: &str| store::cve::AdvisoryRow {
        cve_id: CveId::parse(cve).unwrap(),
        key: key.into(),
        vendor: Some("openbsd".into()),
        product: Some("openssh".into()),
        package: (key == "ubuntu").then(|| "openssh".to_owned()),
        statement: statement.into(),
    };
    let first = [advisory("CVE-2026-1003", "openssh", "{}"), advisory("CVE-2026-1003", "ubuntu", "{}")];
    assert_eq!(store.save_advisories(&first).await.unwrap(), 2);
    assert_eq!(store.advisories_for("openbsd", "openssh").await.unwrap(), first);
    assert!(store.advisories_for("openbsd", "openssl").await.unwrap().is_empty());
    assert_eq!(ids(&store.cve_changes(10).await.unwrap()), ["CVE-2026-1003", "CVE-2026-1003"]);
    forget_all().await;
    store.save_advisories(&first).await.unwrap();
    assert!(store.cve_changes(10).await.unwrap().is_empty(), "the same statements: no change");
    let changed = advisory("CVE-2026-1003", "ubuntu", r#"{"otherwise":false}"#);
    store.save_advisories(std::slice::from_ref(&changed)).await.unwrap();
    assert_eq!(ids(&store.cve_changes(10).await.unwrap()), ["CVE-2026-1003"], "a changed statement");
    assert_eq!(store.advisories_for("openbsd", "openssh").await.unwrap(), [first[0].clone(), changed]);
    forget_all().await;
    assert_eq!(affected(&["CVE-2026-1003"]).await, ["feed-a"], "NVD does not know it; the vendor does");

    // Kept detections are replaced whole, products too.
    store.save_detected_software(a.id, "[]", &[], now).await.unwrap();
    assert!(affected(&["CVE-2026-1001"]).await.is_empty());

    // Component CVEs set alone.
    let comp = SbomComponent {
        name: "nginx".into(),
        version: Some("1.18.0".into()),
        purl: None,
        cpe: Some("cpe:2.3:a:nginx:nginx:1.18.0:*:*:*:*:*:*:*".into()),
        hosts: vec![dom("www.b.example")],
        evidence: "server header".into(),
        end_of_life: None,
        latest_version: None,
        cves: Vec::new(),
        confidence: Some(90),
        first_seen: at("2026-05-01T00:00:00Z"),
        last_seen: at("2026-05-01T00:00:00Z"),
    };
    store.record_software(b.id, &[], std::slice::from_ref(&comp), now).await.unwrap();
    let kept = store.sbom(b.id, Page::FIRST, false).await.unwrap().items;
    let unbounded = model::AttributedCve::new(CveId::parse("CVE-2026-1002").unwrap(), model::CveBasis::Unbounded);
    let with = SbomComponent { cves: vec![unbounded.clone()], ..comp.clone() };
    store.set_component_cves(b.id, &[with]).await.unwrap();
    let sbom = store.sbom(b.id, Page::FIRST, false).await.unwrap().items;
    assert_eq!(sbom.len(), 1);
    assert_eq!(sbom[0].cves, [unbounded], "an unscored attribution is kept with its basis");
    assert_eq!(
        (&sbom[0].first_seen, &sbom[0].last_seen),
        (&kept[0].first_seen, &kept[0].last_seen),
        "nothing else moves"
    );
    assert!(kept[0].cves.is_empty());

    // A rating keeps its reason.
    let mut rated = snapshot(80.0, "2026-06-01T00:00:00Z");
    rated.reason = Some(model::RATED_BY_FEED_UPDATE.to_owned());
    store.replace_rating(b.id, &rated).await.unwrap();
    assert_eq!(store.latest_score(b.id).await.unwrap().unwrap().reason.as_deref(), Some(model::RATED_BY_FEED_UPDATE));
}

/// Events (kept once, listed newest first for a set of companies), webhooks (their own
/// company's events and its subsidiaries'), the delivery log.
pub async fn events(store: &dyn Store) {
    use model::{Delivery, EventKind, EventLink, NewEvent, NewWebhook};
    let mut ids = BTreeMap::new();
    for (s, domain) in [("ev-parent", "p.example"), ("ev-child", "c.example"), ("ev-other", "o.example")] {
        let c = store
            .save_company(&CompanySnapshot { profile: profile(s, s, domain), ..Default::default() })
            .await
            .unwrap();
        ids.insert(s, c.id);
    }
    let id = |s: &str| ids[s];
    store.link_subsidiary(id("ev-parent"), id("ev-child")).await.unwrap();
    let t0 = parse_datetime("2026-11-20T10:00:00.250Z").unwrap();
    let event = |company: i64, kind: EventKind, subject: &str, minutes: i64| NewEvent {
        company,
        kind,
        subject: subject.into(),
        occurred_at: t0 + time::Duration::minutes(minutes),
        summary: format!("{kind} {subject}"),
        data: serde_json::json!({"subject": subject, "n": minutes}),
        links: vec![EventLink {
            rel: "scores".into(),
            href: format!("/underwriter-getcompanyscores?social_id={company}"),
        }],
    };
    let first = vec![
        event(id("ev-parent"), EventKind::RatingChanged, "", 0),
        event(id("ev-parent"), EventKind::FindingOpened, "dmarc|p.example|dmarc.missing|", 0),
        event(id("ev-child"), EventKind::AssetAttributed, "www.c.example", 1),
        event(id("ev-other"), EventKind::ScanFailed, "", 2),
    ];
    let kept = store.record_events(&first).await.unwrap();
    assert_eq!(kept.len(), 4);
    assert_eq!(kept[1].kind, EventKind::FindingOpened);
    assert_eq!(kept[1].social_id, sid("ev-parent"));
    assert_eq!(kept[1].company_name, "ev-parent");
    assert_eq!(kept[1].occurred_at, t0);
    assert_eq!(kept[1].data["subject"], "dmarc|p.example|dmarc.missing|");
    assert_eq!(kept[1].links[0].rel, "scores");
    // The same events again (a job run a second time) are not kept twice; a new one is.
    let mut again = first.clone();
    again.push(event(id("ev-parent"), EventKind::FindingClosed, "spf|p.example|spf.softfail|", 3));
    let kept_again = store.record_events(&again).await.unwrap();
    assert_eq!(kept_again.len(), 1);
    assert_eq!(kept_again[0].kind, EventKind::FindingClosed);
    assert_eq!(store.event(kept_again[0].id).await.unwrap().unwrap(), kept_again[0]);
    assert!(store.event(i64::MAX).await.unwrap().is_none());

    // Listed newest first for the companies asked, paged.
    let family = [id("ev-parent"), id("ev-child")];
    let all = store.events(&family, Page::FIRST).await.unwrap();
    assert_eq!(all.total, 4);
    let kinds: Vec<EventKind> = all.items.iter().map(|e| e.kind).collect();
    assert_eq!(kinds[0], EventKind::FindingClosed);
    assert_eq!(kinds[1], EventKind::AssetAttributed);
    // Two at one time: the later kept first.
    assert_eq!(&kinds[2..], &[EventKind::FindingOpened, EventKind::RatingChanged]);
    assert!(store.events(&family, Page::parse(Some("2")).unwrap()).await.unwrap().items.is_empty());
    assert_eq!(store.events(&[id("ev-other")], Page::FIRST).await.unwrap().total, 1);
    assert_eq!(store.events(&[], Page::FIRST).await.unwrap().total, 0);

    // Webhooks: the parent's follows the child too; the other's only its own.
    let hook = store
        .add_webhook(&NewWebhook {
            company: id("ev-parent"),
            url: "https://hooks.example/rampart".into(),
            secret: "whsec_00".into(),
            kinds: vec![EventKind::FindingOpened, EventKind::RatingChanged],
        })
        .await
        .unwrap();
    assert_eq!(hook.social_id, sid("ev-parent"));
    assert!(hook.wants(EventKind::RatingChanged) && !hook.wants(EventKind::AssetAttributed));
    let other = store
        .add_webhook(&NewWebhook {
            company: id("ev-other"),
            url: "https://hooks.example/other".into(),
            secret: "whsec_01".into(),
            kinds: vec![],
        })
        .await
        .unwrap();
    assert!(other.wants(EventKind::AssetAttributed));
    assert_eq!(store.webhooks().await.unwrap(), vec![hook.clone(), other.clone()]);
    assert_eq!(store.webhook(hook.id).await.unwrap().as_ref(), Some(&hook));
    let following = |c: &'static str| async move {
        store.webhooks_for(id(c)).await.unwrap().iter().map(|w| w.id).collect::<Vec<_>>()
    };
    assert_eq!(following("ev-parent").await, vec![hook.id]);
    assert_eq!(following("ev-child").await, vec![hook.id]);
    assert_eq!(following("ev-other").await, vec![other.id]);

    // The delivery log, newest first; nothing is logged for a webhook that is gone.
    let at = t0 + time::Duration::minutes(5);
    for (attempt, status, outcome) in [(1, Some(500), "failed"), (2, None, "failed"), (3, Some(204), "delivered")] {
        let delivery = Delivery {
            webhook: hook.id,
            event: kept[1].id,
            attempt,
            at: at + time::Duration::seconds(attempt),
            status,
            outcome: outcome.into(),
            error: (outcome == "failed").then(|| format!("attempt {attempt} failed")),
            millis: 12,
        };
        store.record_delivery(&delivery).await.unwrap();
    }
    let log = store.deliveries(hook.id, 10).await.unwrap();
    assert_eq!(log.iter().map(|d| d.attempt).collect::<Vec<_>>(), vec![3, 2, 1]);
    assert_eq!((log[0].status, log[0].outcome.as_str(), log[0].error.as_deref()), (Some(204), "delivered", None));
    assert_eq!((log[1].status, log[1].error.as_deref()), (None, Some("attempt 2 failed")));
    assert_eq!(log[2].at, at + time::Duration::seconds(1));
    assert_eq!(store.deliveries(hook.id, 1).await.unwrap().len(), 1);
    assert!(store.remove_webhook(hook.id).await.unwrap());
    assert!(!store.remove_webhook(hook.id).await.unwrap());
    assert!(store.deliveries(hook.id, 10).await.unwrap().is_empty());
    store
        .record_delivery(&Delivery {
            webhook: hook.id,
            event: kept[1].id,
            attempt: 4,
            at,
            status: Some(200),
            outcome: "delivered".into(),
            error: None,
            millis: 1,
        })
        .await
        .unwrap();
    assert!(store.deliveries(hook.id, 10).await.unwrap().is_empty());
    assert_eq!(following("ev-child").await, Vec::<i64>::new());
}

/// Small writes from many callers at once (SQLite groups them into shared commits;
/// PostgreSQL runs them side by side): each lands exactly once, a failing one fails
/// alone, and a queue worked by many leases hands each job out once.
pub async fn concurrent_writes(store: &dyn Store) {
    let parent = store
        .save_company(&CompanySnapshot { profile: profile("acme", "Acme Corp", "acme.example"), ..Default::default() })
        .await
        .unwrap();
    let mut kids = Vec::new();
    for i in 0..8 {
        let snap = CompanySnapshot {
            profile: profile(&format!("kid{i}"), &format!("Kid {i}"), &format!("kid{i}.example")),
            ..Default::default()
        };
        kids.push(store.save_company(&snap).await.unwrap());
    }
    let key = store
        .create_key(&NewApiKey {
            name: "busy".into(),
            prefix: "rk_busy00".into(),
            hash: "ef".repeat(32),
            scopes: vec![Scope::General],
            company: None,
            org: None,
            per_minute: 0,
            monthly: 0,
        })
        .await
        .unwrap();
    let missing = kids.iter().map(|k| k.id).max().unwrap() + 1_000;
    // 100 usage increments, 8 links, 8 links to a company that does not exist (each
    // fails on its foreign key), 50 distinct jobs each asked for twice: all at once.
    let usage = (0..100).map(|_| async { store.add_usage(key.id, "2026-11", 1).await.map(|()| true) });
    let links = kids.iter().map(|k| store.link_subsidiary(parent.id, k.id));
    let broken = (0..8).map(|_| store.link_subsidiary(parent.id, missing));
    let jobs = (0..100)
        .map(|i| async move { store.enqueue(&model::JobSpec::Scan { social_id: sid(&format!("c{}", i % 50)) }).await });
    let (usage, links, broken, jobs) = tokio::join!(
        futures_util::future::join_all(usage),
        futures_util::future::join_all(links),
        futures_util::future::join_all(broken),
        futures_util::future::join_all(jobs),
    );
    assert!(usage.into_iter().all(|r| r.unwrap()));
    assert!(links.into_iter().all(|r| r.unwrap()), "each link is new");
    assert!(broken.iter().all(Result::is_err), "a link to a missing company fails: {broken:?}");
    assert_eq!(jobs.iter().filter(|r| *r.as_ref().unwrap()).count(), 50, "each job queued once");
    assert_eq!(store.usage(key.id, "2026-11").await.unwrap(), 100);
    assert_eq!(store.subsidiaries(parent.id, None).await.unwrap().total, 8);
    assert_eq!(pending(store).await.len(), 50);

    // Eight workers lease and complete until the queue is empty: each job once.
    let worker = |w: usize| async move {
        let mut done = Vec::new();
        while let Some(job) = store.lease_job(&format!("w{w}"), Duration::from_secs(60), 3).await.unwrap() {
            assert!(store.complete_job(job.id, job.lease_token.as_deref().unwrap()).await.unwrap());
            done.push(job.id);
        }
        done
    };
    let mut done: Vec<i64> = futures_util::future::join_all((0..8).map(worker)).await.concat();
    done.sort_unstable();
    let n = done.len();
    done.dedup();
    assert_eq!((n, done.len()), (50, 50), "every job leased and completed exactly once");
    assert!(pending(store).await.is_empty());
}

/// Disputes (docs/API.md, "Disputes"): each reason opened and decided with its effect on
/// the finding, an `incorrect` finding kept closed by a later scan that sees it, a
/// `not_ours` asset gone with its host, endpoint and findings, the footprint,
/// false-positive counts and the rated population.
pub async fn disputes(store: &dyn Store) {
    use model::{Attribution, DiscoveredHost, DisputeReason, DisputeState, FootprintAsset};
    use store::{Decision, NewDispute, Opened};
    let c = store
        .save_company(&CompanySnapshot {
            profile: profile("disputed", "Disputed Ltd", "disputed.example"),
            ..Default::default()
        })
        .await
        .unwrap();
    let why = Attribution { source: "wordlist".into(), evidence: "A 192.0.2.7".into() };
    let host = DiscoveredHost {
        name: "old.disputed.example".into(),
        addresses: vec!["192.0.2.7".parse().unwrap()],
        attribution: why.clone(),
        first_seen: at("2026-01-01T00:00:00Z"),
        last_seen: at("2026-01-01T00:00:00Z"),
    };
    let endpoint = NetworkEndpoint {
        ip: "192.0.2.7".parse().unwrap(),
        port: 3389,
        protocol: "tcp".into(),
        host: Some("old.disputed.example".into()),
        service: Some("rdp".into()),
        product: None,
        version: None,
        banner: String::new(),
        attribution: Some(why),
        first_seen: at("2026-01-01T00:00:00Z"),
        last_seen: at("2026-01-01T00:00:00Z"),
    };
    store.record_discovery(c.id, &[host], &[endpoint], at("2026-01-01T00:00:00Z").0).await.unwrap();
    let found = [
        finding(RiskVector::OpenPorts, "old.disputed.example:3389", Severity::High, "open_ports.rdp_exposed"),
        finding(RiskVector::OpenPorts, "www.disputed.example:6379", Severity::Critical, "open_ports.redis_exposed"),
        finding(RiskVector::WebHeaders, "www.disputed.example", Severity::Low, "web_headers.hsts_missing"),
    ];
    let scan = |found: Vec<Finding>| async move {
        let scope = store::ScanScope {
            risk_vectors: &[RiskVector::OpenPorts, RiskVector::WebHeaders],
            asset: None,
            below: false,
            close_missing: false,
            keep_open: &[],
        };
        store.record_scan(c.id, scope, &found, at("2026-02-01T00:00:00Z").0).await.unwrap();
    };
    scan(found.to_vec()).await;
    let open = store.open_findings(c.id).await.unwrap();
    let id = |code: &str| open.iter().find(|f| f.code == code).unwrap().id;
    let new = |finding: i64, reason| NewDispute {
        company: c.id,
        finding: Some(finding),
        asset: "",
        reason,
        explanation: "we disagree",
        by: "key 9",
        at: at("2026-02-02T00:00:00Z").0,
        max_open: 200,
    };
    let opened = |o: Opened| match o {
        Opened::Opened(d) => d,
        other => panic!("{other:?}"),
    };
    let decide = |id: i64, accept: bool| async move {
        store
            .decide_dispute(id, &Decision { accept, note: "checked", by: "ops", at: at("2026-02-03T00:00:00Z").0 })
            .await
            .unwrap()
            .unwrap()
    };

    let hsts = opened(
        store.open_dispute(&new(id("web_headers.hsts_missing"), DisputeReason::CompensatingControl)).await.unwrap(),
    );
    assert_eq!((hsts.state, hsts.company.as_str(), hsts.opened_by.as_str()), (DisputeState::Open, "disputed", "key 9"));
    assert_eq!(store.disputed_vectors(c.id).await.unwrap(), vec![RiskVector::WebHeaders]);
    assert!(
        matches!(store.open_dispute(&new(id("web_headers.hsts_missing"), DisputeReason::Fixed)).await.unwrap(), Opened::AlreadyOpen(d) if d.id == hsts.id)
    );
    let decided = decide(hsts.id, true).await;
    assert_eq!(
        (decided.state, decided.decided_by.as_deref(), decided.note.as_deref()),
        (DisputeState::Accepted, Some("ops"), Some("checked"))
    );
    let kept = store.finding_by_id(id("web_headers.hsts_missing")).await.unwrap().unwrap();
    assert!(kept.finding.no_weight && !kept.finding.disputed && kept.closed_at.is_none());
    assert!(matches!(
        store
            .decide_dispute(hsts.id, &Decision { accept: false, note: "", by: "ops", at: at("2026-02-04T00:00:00Z").0 })
            .await,
        Err(store::StoreError::Invalid(_))
    ));
    assert!(
        store
            .decide_dispute(987_654, &Decision { accept: true, note: "", by: "ops", at: at("2026-02-04T00:00:00Z").0 })
            .await
            .unwrap()
            .is_none()
    );

    // incorrect: closed as a false positive, and kept closed when a scan sees it again.
    let redis =
        opened(store.open_dispute(&new(id("open_ports.redis_exposed"), DisputeReason::Incorrect)).await.unwrap());
    decide(redis.id, true).await;
    scan(found.to_vec()).await;
    let stored = store.finding_by_id(id("open_ports.redis_exposed")).await.unwrap().unwrap();
    assert!(stored.false_positive && stored.closed_at.is_some(), "{stored:?}");
    assert_eq!(store.false_positives().await.unwrap(), vec![("open_ports.redis_exposed".to_owned(), 1)]);
    assert!(matches!(
        store.open_dispute(&new(id("open_ports.redis_exposed"), DisputeReason::Fixed)).await.unwrap(),
        Opened::FindingClosed { .. }
    ));
    assert!(matches!(store.open_dispute(&new(999_999, DisputeReason::Fixed)).await.unwrap(), Opened::NoSuchFinding));

    // not_ours: the host, its endpoint and its findings leave the company; kept as removed.
    let rdp = opened(store.open_dispute(&new(id("open_ports.rdp_exposed"), DisputeReason::NotOurs)).await.unwrap());
    decide(rdp.id, true).await;
    assert!(store.hosts(c.id).await.unwrap().is_empty());
    assert_eq!(store.network_endpoints(c.id, Page::FIRST).await.unwrap().total, 0);
    assert!(!store.open_findings(c.id).await.unwrap().iter().any(|f| f.asset.starts_with("old.")));
    let footprint = store.footprint(c.id).await.unwrap();
    assert_eq!(footprint.len(), 1);
    assert_eq!(
        (footprint[0].asset.as_str(), footprint[0].change.as_str(), footprint[0].dispute_id),
        ("old.disputed.example", "removed", Some(rdp.id))
    );

    // A removal asked for an asset, and the company's additions (a name outside its
    // domains becomes one of them).
    let asset = NewDispute {
        finding: None,
        asset: "192.0.2.0/28",
        reason: DisputeReason::NotOurs,
        ..new(0, DisputeReason::NotOurs)
    };
    let removal = opened(store.open_dispute(&asset).await.unwrap());
    assert_eq!((removal.finding_id, removal.asset.as_str()), (None, "192.0.2.0/28"));
    assert!(matches!(store.open_dispute(&asset).await.unwrap(), Opened::AlreadyOpen(d) if d.id == removal.id));
    decide(removal.id, false).await;
    let shop = FootprintAsset::parse("shop.elsewhere.example").unwrap();
    store
        .add_to_footprint(
            c.id,
            &shop,
            "our shop",
            "key 9",
            at("2026-02-05T00:00:00Z").0,
            true,
            store::FootprintCaps { per_day: 20, total: 100 },
        )
        .await
        .unwrap();
    let domains: Vec<String> = store.domains(c.id).await.unwrap().iter().map(|d| d.name.to_string()).collect();
    assert!(domains.contains(&"shop.elsewhere.example".to_owned()), "{domains:?}");
    assert_eq!(store.footprint(c.id).await.unwrap().len(), 2);

    // The caps are the store's: the same asset again is `Already`, past the day's or
    // the total cap nothing is added (docs/SECURITY.md §2).
    let tight = store::FootprintCaps { per_day: 2, total: 3 };
    let day = at("2026-02-05T10:00:00Z").0;
    let add = |name: &'static str, caps| async move {
        store
            .add_to_footprint(c.id, &FootprintAsset::parse(name).unwrap(), "ours", "key 9", day, false, caps)
            .await
            .unwrap()
    };
    assert_eq!(add("shop.elsewhere.example", tight).await, store::Added::Already);
    assert_eq!(add("b.disputed.example", tight).await, store::Added::Added);
    assert_eq!(add("c.disputed.example", tight).await, store::Added::DayFull, "two today already");
    let roomy = store::FootprintCaps { per_day: 10, total: 2 };
    assert_eq!(add("d.disputed.example", roomy).await, store::Added::TotalFull, "two in all already");
    // Ownership: an unverified claim holds nothing and answers no look-up; verified, it does.
    let claimed = model::Domain::parse("claimed-elsewhere.example").unwrap();
    assert_eq!(
        add("claimed-elsewhere.example", store::FootprintCaps { per_day: 10, total: 10 }).await,
        store::Added::Added
    );
    let claims = store.domain_claims(c.id).await.unwrap();
    let claim = claims.iter().find(|d| d.name == claimed).unwrap();
    assert!(!claim.verified && claim.challenge.is_none(), "{claim:?}");
    assert!(store.holders_of(&claimed, &[]).await.unwrap().is_empty(), "a claim is no evidence");
    assert!(store.company_by_domain(&claimed).await.unwrap().is_none());
    assert_eq!(store.challenge_domain(c.id, &claimed, "t1").await.unwrap().as_deref(), Some("t1"));
    assert_eq!(store.challenge_domain(c.id, &claimed, "t2").await.unwrap().as_deref(), Some("t1"), "issued once");
    assert!(store.verify_domain(c.id, &claimed, "dns txt").await.unwrap());
    assert_eq!(store.company_by_domain(&claimed).await.unwrap().map(|f| f.id), Some(c.id));
    let under = model::Domain::parse("www.claimed-elsewhere.example").unwrap();
    assert_eq!(store.holders_of(&under, &[]).await.unwrap(), vec![c.id], "a name below a verified domain is held");
    assert!(store.holders_of(&under, &[c.id]).await.unwrap().is_empty(), "the family is left out");
    assert!(
        store.holders_of(&model::Domain::parse("xclaimed-elsewhere.example").unwrap(), &[]).await.unwrap().is_empty()
    );
    // A key's creations are counted against its cap in one step.
    let since = at("2026-02-05T00:00:00Z").0;
    for i in 0..3 {
        assert_eq!(store.reserve_creation(77, since, day, 2).await.unwrap(), i < 2, "{i}");
    }

    let listed = store.disputes(Some(&[c.id]), None, Page::FIRST).await.unwrap();
    assert_eq!(listed.total, 4);
    assert_eq!(listed.items[0].id, removal.id, "newest first");
    assert_eq!(store.disputes(Some(&[c.id]), Some(DisputeState::Rejected), Page::FIRST).await.unwrap().total, 1);
    assert_eq!(store.disputes(Some(&[]), None, Page::FIRST).await.unwrap().total, 0);

    // The rated population: each rated company once, with its latest score.
    store.replace_rating(c.id, &snapshot(62.5, "2026-02-01T00:00:00Z")).await.unwrap();
    store.replace_rating(c.id, &snapshot(70.0, "2026-03-01T00:00:00Z")).await.unwrap();
    let population = store.rated_population().await.unwrap();
    let me: Vec<_> = population.iter().filter(|r| r.id == c.id).collect();
    assert_eq!(me.len(), 1);
    assert_eq!(me[0].score, 7000);
}

/// The asset lists and counts show what the rating counts (docs/API.md, "Domain
/// ownership"). What a scan finds under a company's unproven claim (a key's word,
/// beside a verified domain) is left out of applications, endpoints, addresses, the
/// SBOM and the finding counts; verified, it is the company's like the rest.
pub async fn rated_assets(store: &dyn Store) {
    use model::{Attribution, DiscoveredHost};
    use store::ScanScope;
    let c = store
        .save_company(&CompanySnapshot {
            profile: profile("rated", "Rated Ltd", "rated.example"),
            ..Default::default()
        })
        .await
        .unwrap();
    let claim = dom("claimed-by-rated.example");
    store.claim_domain(c.id, &claim, "added by key 1", false).await.unwrap();
    let seen = at("2026-05-01T00:00:00Z");
    let why = Attribution { source: "wordlist".into(), evidence: "A".into() };
    let host = |name: &str, ip: &str| DiscoveredHost {
        name: name.into(),
        addresses: vec![ip.parse().unwrap()],
        attribution: why.clone(),
        first_seen: seen,
        last_seen: seen,
    };
    let endpoint = |ip: &str, host: Option<&str>| NetworkEndpoint {
        ip: ip.parse().unwrap(),
        port: 443,
        protocol: "tcp".into(),
        host: host.map(Into::into),
        service: Some("https".into()),
        product: None,
        version: None,
        banner: String::new(),
        attribution: None,
        first_seen: seen,
        last_seen: seen,
    };
    store
        .record_discovery(
            c.id,
            &[host("www.rated.example", "192.0.2.10"), host("shop.claimed-by-rated.example", "198.51.100.20")],
            &[
                endpoint("192.0.2.10", Some("www.rated.example")),
                endpoint("198.51.100.20", Some("shop.claimed-by-rated.example")),
                endpoint("203.0.113.5", None),
            ],
            seen.0,
        )
        .await
        .unwrap();
    let app = |host: &str| Application {
        name: "Nginx".into(),
        version: Some("1.18.0".into()),
        categories: vec![],
        host: host.into(),
        cpe: None,
        evidence: "header server".into(),
        confidence: Some(100),
        first_seen: seen,
        last_seen: seen,
    };
    let comp = |name: &str, hosts: &[&str]| SbomComponent {
        name: name.into(),
        version: Some("1.0".into()),
        purl: None,
        cpe: None,
        hosts: hosts.iter().map(|h| dom(h)).collect(),
        evidence: "header server".into(),
        end_of_life: None,
        latest_version: None,
        cves: vec![model::AttributedCve::new(CveId::parse("CVE-2021-23017").unwrap(), model::CveBasis::NvdRange)],
        confidence: Some(90),
        first_seen: seen,
        last_seen: seen,
    };
    store
        .record_software(
            c.id,
            &[app("www.rated.example"), app("shop.claimed-by-rated.example")],
            &[
                comp("Both", &["www.rated.example", "shop.claimed-by-rated.example"]),
                comp("OnClaim", &["shop.claimed-by-rated.example"]),
                comp("Nowhere", &[]),
            ],
            seen.0,
        )
        .await
        .unwrap();
    let all = [RiskVector::OpenPorts];
    let scope = ScanScope { risk_vectors: &all, asset: None, below: false, close_missing: true, keep_open: &[] };
    let findings = [
        finding(RiskVector::OpenPorts, "www.rated.example:443", Severity::Low, "open_ports.a"),
        finding(RiskVector::OpenPorts, "shop.claimed-by-rated.example:3389", Severity::Critical, "open_ports.b"),
        finding(RiskVector::OpenPorts, "https://shop.claimed-by-rated.example/admin", Severity::High, "open_ports.c"),
    ];
    store.record_scan(c.id, scope, &findings, seen.0).await.unwrap();

    let listed = || async {
        let apps = store.applications(c.id, Page::FIRST).await.unwrap();
        let eps = store.network_endpoints(c.id, Page::FIRST).await.unwrap();
        let sbom = store.sbom(c.id, Page::FIRST, false).await.unwrap();
        let with_cves = store.sbom(c.id, Page::FIRST, true).await.unwrap();
        let by_domain = store.sbom_by_domain(c.id, &dom("claimed-by-rated.example"), Page::FIRST).await.unwrap();
        let counts = store.counts(c.id).await.unwrap();
        (apps, eps, sbom, with_cves, by_domain, counts)
    };
    let (apps, eps, sbom, with_cves, by_domain, counts) = listed().await;
    assert_eq!(apps.total, 1);
    assert_eq!(apps.items.iter().map(|a| a.host.as_str()).collect::<Vec<_>>(), ["www.rated.example"]);
    assert_eq!(eps.total, 2, "the rated host's endpoint and the address without a name");
    assert!(eps.items.iter().all(|e| e.host.as_deref() != Some("shop.claimed-by-rated.example")), "{:?}", eps.items);
    let names: Vec<&str> = sbom.items.iter().map(|s| s.name.as_str()).collect();
    assert_eq!((sbom.total, names), (2, vec!["Both", "Nowhere"]));
    let both = &sbom.items[0];
    assert_eq!(both.hosts, [dom("www.rated.example")], "a component lists the rated hosts only");
    assert_eq!(with_cves.total, 2);
    assert_eq!(by_domain.total, 0, "{:?}", by_domain.items);
    assert_eq!((counts.applications, counts.network_endpoints, counts.sbom_components), (1, 2, 2));
    assert_eq!(counts.ip_addresses, 2, "192.0.2.10 and 203.0.113.5");
    assert_eq!(counts.findings[&Severity::Low], 1);
    assert_eq!((counts.findings[&Severity::Critical], counts.findings[&Severity::High]), (0, 0));

    // Verified, the claim is the company's: everything on it is listed and counted.
    assert!(store.verify_domain(c.id, &claim, "dns txt").await.unwrap());
    let (apps, eps, sbom, _, by_domain, counts) = listed().await;
    assert_eq!((apps.total, eps.total, sbom.total, by_domain.total), (2, 3, 3, 1));
    assert_eq!(sbom.items[0].hosts.len(), 2);
    assert_eq!(counts.ip_addresses, 3);
    assert_eq!((counts.findings[&Severity::Critical], counts.findings[&Severity::High]), (1, 1));
}

pub async fn portfolios(store: &dyn Store) {
    use model::{Relationship, Stage, Tier, VendorRecord};
    use store::{FindingQuery, FindingStatus, FindingsOf, ScanScope};
    let acme = store.create_org("Acme Insurance").await.unwrap();
    let other = store.create_org("Other Risk").await.unwrap();
    assert!(store.create_org("Acme Insurance").await.is_err(), "a taken name is refused");
    assert_eq!(store.org_by_name("Acme Insurance").await.unwrap().unwrap().id, acme.id);
    assert_eq!(store.orgs().await.unwrap().len(), 2);

    // A key belongs to its organisation.
    let key = store
        .create_key(&NewApiKey {
            name: "uw".into(),
            prefix: "rk_p".into(),
            hash: "portfolio-key-hash".into(),
            scopes: vec![Scope::Underwriter, Scope::Portfolio],
            company: None,
            org: Some(acme.id),
            per_minute: 60,
            monthly: 0,
        })
        .await
        .unwrap();
    assert_eq!(store.key_by_hash("portfolio-key-hash").await.unwrap().unwrap().org, Some(acme.id));
    assert_eq!(key.org, Some(acme.id));

    let book = store.create_portfolio(acme.id, "Cyber book", 3).await.unwrap().unwrap();
    assert!(store.create_portfolio(acme.id, "Cyber book", 3).await.unwrap().is_none(), "one name per organisation");
    let theirs = store.create_portfolio(other.id, "Cyber book", 3).await.unwrap().unwrap();
    store.create_portfolio(acme.id, "Two", 3).await.unwrap().unwrap();
    store.create_portfolio(acme.id, "Three", 3).await.unwrap().unwrap();
    assert!(store.create_portfolio(acme.id, "Four", 3).await.unwrap().is_none(), "the cap holds");
    // No organisation reaches another's portfolio.
    assert!(store.portfolio(other.id, book.id).await.unwrap().is_none());
    assert!(store.rename_portfolio(other.id, book.id, "Mine").await.unwrap().is_none());
    assert!(!store.delete_portfolio(other.id, book.id).await.unwrap());
    assert!(store.rename_portfolio(acme.id, book.id, "Two").await.is_err(), "a taken name is refused");
    let renamed = store.rename_portfolio(acme.id, book.id, "Main book").await.unwrap().unwrap();
    assert_eq!(renamed.name, "Main book");
    assert_eq!(
        store.portfolios(acme.id).await.unwrap().iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["Main book", "Three", "Two"]
    );

    let a = store
        .save_company(&CompanySnapshot { profile: profile("pf-a", "Alpha", "alpha.example"), ..Default::default() })
        .await
        .unwrap();
    let b = store
        .save_company(&CompanySnapshot { profile: profile("pf-b", "Beta", "beta.example"), ..Default::default() })
        .await
        .unwrap();
    let record = VendorRecord {
        tier: Some(Tier::new(1).unwrap()),
        tags: vec!["cloud".into(), "eu".into()],
        custom_id: Some("V-001".into()),
        relationship: Relationship::Insured,
        stage: Stage::Onboarding,
        owner: "ana@acme.example".into(),
        note: "renewal in May".into(),
    };
    let added =
        store.add_to_portfolio(book.id, &[(a.id, record.clone()), (b.id, VendorRecord::default())]).await.unwrap();
    assert_eq!(added, [true, true]);
    assert_eq!(store.add_to_portfolio(book.id, &[(a.id, VendorRecord::default())]).await.unwrap(), [false]);
    assert_eq!(store.member(book.id, a.id).await.unwrap().unwrap(), record, "a member keeps its record");
    store.add_to_portfolio(theirs.id, &[(a.id, VendorRecord::default())]).await.unwrap();
    assert_eq!(store.portfolio(acme.id, book.id).await.unwrap().unwrap().companies, 2);

    // Ratings: 70 four months ago, 80 ten days ago, 90 now; findings, one KEV-listed.
    let now = at("2026-06-01T00:00:00Z").0;
    for (score, when) in
        [(70.0, "2026-02-01T00:00:00Z"), (80.0, "2026-05-22T00:00:00Z"), (90.0, "2026-06-01T00:00:00Z")]
    {
        store.replace_rating(a.id, &snapshot(score, when)).await.unwrap();
    }
    let vectors = RiskVector::ALL.to_vec();
    let scope = ScanScope { risk_vectors: &vectors, asset: None, below: false, close_missing: true, keep_open: &[] };
    let mut kev =
        finding(RiskVector::Vulnerabilities, "https://www.alpha.example/", Severity::Critical, "vulnerabilities.cve");
    kev.cve = Some(CveId::parse("CVE-2021-44228").unwrap());
    kev.component = Some("Log4j 2.14".into());
    let spf = finding(RiskVector::Spf, "alpha.example", Severity::Medium, "spf.softfail_all");
    let port = finding(RiskVector::OpenPorts, "vpn.alpha.example:3389", Severity::High, "open_ports.rdp_exposed");
    let gone = finding(RiskVector::Dmarc, "alpha.example", Severity::Low, "dmarc.none");
    store.record_scan(a.id, scope, &[kev.clone(), spf.clone(), port.clone(), gone], now).await.unwrap();
    store.record_scan(a.id, scope, &[kev, spf, port], now + time::Duration::seconds(1)).await.unwrap();
    store
        .save_kev(&[KevRow {
            cve_id: CveId::parse("CVE-2021-44228").unwrap(),
            date_added: "2021-12-10".into(),
            entry: serde_json::json!({"cveID": "CVE-2021-44228"}),
        }])
        .await
        .unwrap();

    let rows = store.portfolio_rows(book.id, now).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.social_id.as_str()).collect::<Vec<_>>(), ["pf-a", "pf-b"]);
    let ra = &rows[0];
    assert_eq!(ra.record, record);
    let rating = ra.rating.as_ref().unwrap();
    assert_eq!((rating.score.hundredths(), rating.depth.as_str()), (9000, "full"));
    // 7 days ago: the rating of ten days ago; 30 days: the one of four months ago, as at 90.
    let before: Vec<Option<i64>> = ra.score_before.iter().map(|s| s.map(Score::hundredths)).collect();
    assert_eq!(before, [Some(8000), Some(7000), Some(7000)]);
    assert_eq!(ra.open, [0, 0, 1, 1, 1], "info, low, medium, high, critical: the closed DMARC one is not counted");
    assert_eq!(ra.kev, 1);
    let ports = RiskVector::ALL.iter().position(|v| *v == RiskVector::OpenPorts).unwrap();
    assert_eq!(ra.open_by_vector[ports], [0, 0, 0, 1, 0]);
    assert_eq!(ra.open_by_vector.iter().flatten().sum::<u32>(), 3);
    let rb = &rows[1];
    assert!(rb.rating.is_none() && rb.score_before == [None; 3] && rb.open == [0; 5]);

    // Findings searches, over a company or a portfolio.
    let find = async |of, q: FindingQuery| {
        let found = store.search_findings(of, &q, Page::FIRST).await.unwrap();
        (found.total, found.items.iter().map(|f| f.finding.code.clone()).collect::<Vec<_>>())
    };
    let all = FindingQuery::default();
    let (n, codes) = find(FindingsOf::Portfolio(book.id), all.clone()).await;
    assert_eq!((n, codes[0].as_str()), (3, "vulnerabilities.cve"), "worst first");
    let (n, _) = find(FindingsOf::Portfolio(theirs.id), all.clone()).await;
    assert_eq!(n, 3, "the same company in another portfolio");
    let (n, codes) =
        find(FindingsOf::Company(a.id), FindingQuery { status: FindingStatus::Closed, ..all.clone() }).await;
    assert_eq!((n, codes), (1, vec!["dmarc.none".to_owned()]));
    let found = store
        .all_findings(FindingsOf::Company(a.id), &FindingQuery { status: FindingStatus::Closed, ..all.clone() }, 10)
        .await
        .unwrap();
    assert!(found[0].closed_at.is_some() && found[0].social_id.as_str() == "pf-a");
    let host = |h: &str| FindingQuery { host: Some(dom(h)), ..all.clone() };
    assert_eq!(find(FindingsOf::Company(a.id), host("www.alpha.example")).await.0, 1, "an origin of the host");
    assert_eq!(find(FindingsOf::Company(a.id), host("vpn.alpha.example")).await.0, 1, "a port of the host");
    assert_eq!(find(FindingsOf::Company(a.id), host("alpha.example")).await.0, 3, "the names below it");
    assert_eq!(find(FindingsOf::Company(a.id), host("lpha.example")).await.0, 0, "not a suffix of a label");
    let q = FindingQuery { severity: Some(Severity::High), risk_vector: Some(RiskVector::OpenPorts), ..all.clone() };
    assert_eq!(find(FindingsOf::Company(a.id), q).await.0, 1);
    let q = FindingQuery { code: Some("spf.softfail_all".into()), disputed: Some(false), ..all.clone() };
    assert_eq!(find(FindingsOf::Company(a.id), q).await.0, 1);
    let q = FindingQuery { since: Some(now), ..all.clone() };
    assert_eq!(find(FindingsOf::Company(a.id), q).await.0, 0, "first seen before");
    assert_eq!(find(FindingsOf::Company(a.id), FindingQuery { disputed: Some(true), ..all.clone() }).await.0, 0);

    // Records are updated, removed; a deleted portfolio takes its records with it.
    let mut changed = record.clone();
    changed.tier = None;
    changed.tags.clear();
    assert!(store.update_member(book.id, a.id, &changed).await.unwrap());
    assert_eq!(store.member(book.id, a.id).await.unwrap().unwrap(), changed);
    assert!(!store.update_member(book.id, 999_999, &changed).await.unwrap());
    assert!(store.remove_member(book.id, b.id).await.unwrap());
    assert!(!store.remove_member(book.id, b.id).await.unwrap());
    assert!(store.delete_portfolio(acme.id, book.id).await.unwrap());
    assert!(store.portfolio(acme.id, book.id).await.unwrap().is_none());
    assert_eq!(store.portfolio_rows(theirs.id, now).await.unwrap().len(), 1, "another organisation's is untouched");
    let day = at("2026-03-01T00:00:00Z").0;
    let row = |name: &str| {
        let domain = model::Domain::parse(name).unwrap();
        store::Onboarding {
            profile: model::CompanyProfile {
                social_id: Some(SocialId::parse(name).unwrap()),
                company_name: name.to_owned(),
                website: format!("https://{name}"),
                domain: Some(domain.clone()),
                ..Default::default()
            },
            name_derived: true,
            domain: Some((domain, "onboarded".to_owned())),
            job: Some(model::JobSpec::Quick { social_id: SocialId::parse(name).unwrap() }),
        }
    };
    // A company onboarded by its domain (no job: the quick jobs are counted below).
    let derived = store::Onboarding { job: None, ..row("pf-beta.example") };
    let id = store.onboard(None, day, day, 0, &[derived]).await.unwrap()[0];
    let d = store.company_by_social_id(&SocialId::parse("pf-beta.example").unwrap()).await.unwrap().unwrap();
    assert_eq!(id, Some(d.id));
    store.add_to_portfolio(theirs.id, &[(d.id, VendorRecord::default())]).await.unwrap();
    let rows = store.portfolio_rows(theirs.id, now).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.name_derived).collect::<Vec<_>>(), [false, true]);

    // A derived name follows the site; a name someone gave is never replaced.
    assert!(store.name_from_site(d.id, "Beta Holdings Ltd").await.unwrap());
    assert!(!store.name_from_site(d.id, "Beta Holdings Ltd").await.unwrap(), "unchanged");
    let renamed = store.company_by_social_id(&d.social_id).await.unwrap().unwrap();
    assert_eq!(renamed.company_name, "Beta Holdings Ltd");
    let found = store.search_companies("beta holdings", model::Page::FIRST).await.unwrap();
    assert_eq!(found.items.iter().map(|c| c.id).collect::<Vec<_>>(), [d.id], "searched by its new name");
    let norm = model::normalise_name("Beta Holdings Ltd");
    assert_eq!(store.companies_by_normalised_name(&norm, 5).await.unwrap().len(), 1);
    assert!(!store.name_from_site(a.id, "Not Alpha").await.unwrap(), "a given name stays");
    let site = model::Website::parse("https://www.beta.example").unwrap();
    assert!(store.website_from_site(d.id, &site).await.unwrap());
    assert!(!store.website_from_site(d.id, &site).await.unwrap(), "unchanged");
    assert_eq!(store.company_by_social_id(&d.social_id).await.unwrap().unwrap().website, "https://www.beta.example");
    assert!(!store.website_from_site(a.id, &site).await.unwrap(), "a given website stays");

    // Onboarding in one transaction, counted against the key's cap: the third row of
    // three with room for two writes nothing.
    let rows = [row("on1.example"), row("on2.example"), row("on3.example")];
    let ids = store.onboard(Some(78), day, day, 2, &rows).await.unwrap();
    assert!(ids[0].is_some() && ids[1].is_some() && ids[2].is_none(), "{ids:?}");
    assert!(!store.reserve_creation(78, day, day, 2).await.unwrap(), "the key's day is spent");
    let on1 = store.company_by_domain(&model::Domain::parse("www.on1.example").unwrap()).await.unwrap().unwrap();
    assert_eq!((Some(on1.id), on1.domain_verified), (ids[0], true));
    assert!(store.company_by_social_id(&SocialId::parse("on3.example").unwrap()).await.unwrap().is_none());
    let jobs = store.jobs(None, 100).await.unwrap();
    let mut quick: Vec<(&str, i16)> =
        jobs.iter().filter(|j| j.spec.kind() == "quick").map(|j| (j.spec.company().as_str(), j.priority)).collect();
    quick.sort();
    assert_eq!(quick, [("on1.example", 40), ("on2.example", 40)], "each created company's quick job, at its priority");
    assert!(store.name_from_site(on1.id, "On One Ltd").await.unwrap(), "its name is derived");
    let free = store.onboard(None, day, day, 0, &[row("on4.example")]).await.unwrap();
    assert!(free[0].is_some(), "no key, no cap");
    let leased = store.lease_job("w", Duration::from_secs(60), 5).await.unwrap().unwrap();
    assert_eq!(leased.spec.kind(), "quick", "a quick job is leased first");
    assert_ne!(store.company_by_social_id(&a.social_id).await.unwrap().unwrap().company_name, "Not Alpha");
}

pub async fn guidelines(store: &dyn Store) {
    let acme = store.create_org("Guided").await.unwrap();
    let other = store.create_org("Unguided").await.unwrap();
    assert_eq!(store.guidelines(acme.id).await.unwrap(), None);
    let at = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
    assert_eq!(store.save_guidelines(acme.id, r#"{"rules":[]}"#, "uw", at).await.unwrap(), 1);
    let v2 = r#"{"rules":[{"id":"k","kind":"no_kev_cve","action":"decline"}]}"#;
    assert_eq!(store.save_guidelines(acme.id, v2, "uw2", at).await.unwrap(), 2);
    // The latest version is in force, with who set it and when; versions are per
    // organisation.
    let kept = store.guidelines(acme.id).await.unwrap().unwrap();
    assert_eq!((kept.version, kept.document.as_str(), kept.created_by.as_str()), (2, v2, "uw2"));
    assert_eq!(kept.created_at.0, at);
    assert_eq!(store.guidelines(other.id).await.unwrap(), None);
    assert_eq!(store.save_guidelines(other.id, "{}", "x", at).await.unwrap(), 1);
}

/// The ratings since a time, each with the one before it and the findings that opened
/// (new, or back after closing) and closed between the two; a company's or a
/// portfolio's; the findings bounded.
pub async fn rating_changes(store: &dyn Store) {
    use store::{FindingsOf, ScanScope};
    let org = store.create_org("Changes Mutual").await.unwrap();
    let book = store.create_portfolio(org.id, "Watched", 3).await.unwrap().unwrap();
    let c = store
        .save_company(&CompanySnapshot {
            profile: profile("ch-a", "Change Co", "change.example"),
            ..Default::default()
        })
        .await
        .unwrap();
    let quiet = store
        .save_company(&CompanySnapshot { profile: profile("ch-b", "Quiet Co", "quiet.example"), ..Default::default() })
        .await
        .unwrap();
    store
        .add_to_portfolio(book.id, &[(c.id, model::VendorRecord::default()), (quiet.id, Default::default())])
        .await
        .unwrap();
    let vectors = RiskVector::ALL.to_vec();
    let scope = ScanScope { risk_vectors: &vectors, asset: None, below: false, close_missing: true, keep_open: &[] };
    let seen = |f: &Finding, when: &str| Finding { first_seen: at(when), last_seen: at(when), ..f.clone() };
    let x = finding(RiskVector::Spf, "change.example", Severity::Medium, "spf.softfail_all");
    let y = finding(RiskVector::OpenPorts, "vpn.change.example:3389", Severity::High, "open_ports.rdp_exposed");
    let z = finding(RiskVector::Dmarc, "change.example", Severity::Low, "dmarc.policy_none");
    let w = finding(RiskVector::WebHeaders, "https://change.example/", Severity::Low, "web_headers.hsts_missing");
    let times = ["2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z"];
    // y closes and stays closed; z opens, then closes; w closes, then comes back.
    let scans = [vec![&x, &y, &w], vec![&x, &z], vec![&x, &w]];
    for ((when, seen_then), score) in times.iter().zip(&scans).zip([60.0, 75.0, 65.0]) {
        let found: Vec<Finding> = seen_then.iter().map(|f| seen(f, when)).collect();
        store.record_scan(c.id, scope, &found, at(when).0).await.unwrap();
        store.replace_rating(c.id, &snapshot(score, when)).await.unwrap();
    }
    store.replace_rating(quiet.id, &snapshot(50.0, "2026-02-01T00:00:00Z")).await.unwrap();
    let since = at("2026-03-01T12:00:00Z").0;
    let codes = |fs: &[Finding]| fs.iter().map(|f| f.code.clone()).collect::<Vec<_>>();

    let got = store.rating_changes(FindingsOf::Portfolio(book.id), since, 100).await.unwrap();
    assert!(!got.truncated);
    assert_eq!(got.changes.len(), 2, "two ratings since; the quiet company has none: {got:?}");
    let (first, second) = (&got.changes[0], &got.changes[1]);
    assert_eq!(first.company, c.id);
    assert_eq!(first.before.as_ref().map(|b| b.score.hundredths()), Some(6000), "the rating before `since`");
    assert_eq!((first.after.score.hundredths(), first.reason.as_deref()), (7500, Some(model::RATED_BY_SCAN)));
    // (w's closing is not kept once it opened again: a finding keeps its last opening and
    // closing only, docs/API.md "What changed".)
    assert_eq!((codes(&first.opened), codes(&first.closed)), (vec![z.code.clone()], vec![y.code.clone()]));
    assert_eq!(second.before.as_ref().map(|b| b.score.hundredths()), Some(7500));
    assert_eq!(second.after.score.hundredths(), 6500);
    assert_eq!(codes(&second.opened), vec![w.code.clone()], "a finding back after closing opened again");
    assert_eq!(codes(&second.closed), vec![z.code.clone()]);

    // One company's: the same; nothing since the last rating; the findings bounded.
    assert_eq!(store.rating_changes(FindingsOf::Company(c.id), since, 100).await.unwrap(), got);
    let later = at("2026-03-03T00:00:00Z").0;
    assert!(store.rating_changes(FindingsOf::Portfolio(book.id), later, 100).await.unwrap().changes.is_empty());
    let cut = store.rating_changes(FindingsOf::Portfolio(book.id), since, 1).await.unwrap();
    assert!(cut.truncated && cut.changes.len() == 2);
    assert_eq!(cut.changes.iter().map(|c| c.opened.len() + c.closed.len()).sum::<usize>(), 1);
    // The first rating ever has no rating before it.
    let all = store.rating_changes(FindingsOf::Company(c.id), at("2026-01-01T00:00:00Z").0, 100).await.unwrap();
    assert_eq!(all.changes.len(), 3);
    assert!(all.changes[0].before.is_none() && all.changes[0].opened.len() == 2, "{:?}", all.changes[0]);
    assert_eq!(codes(&all.changes[0].opened), vec![y.code.clone(), x.code.clone()], "worst first");
}

/// Alert rules per portfolio; the portfolios that watch a company; alerts kept once,
/// listed newest first by portfolio, kind and acknowledgement, acknowledged once and
/// only by their organisation.
pub async fn alerts(store: &dyn Store) {
    use store::{AlertQuery, NewAlert};
    let org = store.create_org("Alerting Mutual").await.unwrap();
    let other = store.create_org("Elsewhere").await.unwrap();
    let book = store.create_portfolio(org.id, "Watched", 3).await.unwrap().unwrap();
    let quiet = store.create_portfolio(org.id, "Unwatched", 3).await.unwrap().unwrap();
    let c = store
        .save_company(&CompanySnapshot { profile: profile("al-a", "Alert Co", "alert.example"), ..Default::default() })
        .await
        .unwrap();
    let record = model::VendorRecord { tier: Some(model::Tier::new(2).unwrap()), ..Default::default() };
    store.add_to_portfolio(book.id, &[(c.id, record)]).await.unwrap();
    store.add_to_portfolio(quiet.id, &[(c.id, Default::default())]).await.unwrap();
    assert!(store.alert_rules(book.id).await.unwrap().is_none());
    assert!(store.alert_watches(c.id).await.unwrap().is_empty(), "no rules, no watch");
    let now = at("2026-04-01T00:00:00Z").0;
    store.set_alert_rules(book.id, r#"{"rules":[]}"#, "ana", now).await.unwrap();
    store.set_alert_rules(book.id, r#"{"rules":[{"id":"g","kind":"grade_drop"}]}"#, "bo", now).await.unwrap();
    let kept = store.alert_rules(book.id).await.unwrap().unwrap();
    assert_eq!((kept.updated_by.as_str(), kept.document.contains("grade_drop")), ("bo", true));
    let watches = store.alert_watches(c.id).await.unwrap();
    assert_eq!(watches.len(), 1, "the portfolio without rules does not watch");
    assert_eq!((watches[0].org, watches[0].portfolio, watches[0].tier), (org.id, book.id, Some(2)));

    let alert = |rule: &str, kind: &str, subject: &str, minutes: i64| NewAlert {
        org: org.id,
        portfolio: book.id,
        company: c.id,
        rule_id: rule.into(),
        kind: kind.into(),
        subject: subject.into(),
        summary: format!("{kind} {subject}"),
        explanation: "Score 80.0 → 70.0".into(),
        created_at: now + time::Duration::minutes(minutes),
    };
    let batch =
        [alert("g", "grade_drop", "", 1), alert("h", "finding_opened", "7", 2), alert("h", "finding_opened", "8", 2)];
    assert_eq!(store.record_alerts(&batch).await.unwrap(), 3);
    assert_eq!(store.record_alerts(&batch[..1]).await.unwrap(), 0, "kept once");
    let all = store.alerts(org.id, &AlertQuery::default(), Page::FIRST).await.unwrap();
    assert_eq!(all.total, 3);
    assert_eq!(all.items[2].kind, "grade_drop", "newest first");
    assert_eq!((all.items[0].social_id.as_str(), all.items[0].portfolio_name.as_str()), ("al-a", "Watched"));
    let opened = AlertQuery { kind: Some("finding_opened".into()), ..Default::default() };
    assert_eq!(store.alerts(org.id, &opened, Page::FIRST).await.unwrap().total, 2);
    let elsewhere = AlertQuery { portfolio: Some(quiet.id), ..Default::default() };
    assert_eq!(store.alerts(org.id, &elsewhere, Page::FIRST).await.unwrap().total, 0);
    assert_eq!(store.alerts(other.id, &AlertQuery::default(), Page::FIRST).await.unwrap().total, 0);

    // Acknowledged once, by the organisation only.
    let id = all.items[2].id;
    assert!(store.ack_alert(other.id, id, "mallory", now).await.unwrap().is_none());
    let acked = store.ack_alert(org.id, id, "ana", now).await.unwrap().unwrap();
    assert_eq!(acked.acknowledged_by.as_deref(), Some("ana"));
    let again = store.ack_alert(org.id, id, "bo", now + time::Duration::hours(1)).await.unwrap().unwrap();
    assert_eq!(
        (again.acknowledged_by.as_deref(), again.acknowledged_at),
        (Some("ana"), Some(at("2026-04-01T00:00:00Z")))
    );
    let unread = AlertQuery { acknowledged: Some(false), ..Default::default() };
    assert_eq!(store.alerts(org.id, &unread, Page::FIRST).await.unwrap().total, 2);
    assert!(store.ack_alert(org.id, 999_999, "ana", now).await.unwrap().is_none());
}
