//! Tenancy (docs/API.md, "Tenancy"; docs/SECURITY.md §2): what a key sees of each company,
//! operation by operation.
//!
//! Companies: `acme-robotics` (the bound keys' own), `acme-robotics-labs` (its
//! subsidiary), `globex-logistics` (a stranger), `initech` (a stranger the monitor key
//! asked add-subsidiary to link: pending an operator's approval). Keys: the monitor key
//! (every scope, bound to acme), a bound key with the underwriter scopes only, and an
//! unbound underwriter key. Every cell is an exact status.

use reqwest::{Method, StatusCode};

use super::helpers::TestApp;

const OWN: &str = "acme-robotics";
const SUB: &str = "acme-robotics-labs";
const STRANGER: &str = "globex-logistics";
const PENDING: &str = "initech";

/// The web domain of each company of the matrix (the sample's).
fn domain_of(company: &str) -> &'static str {
    match company {
        OWN => "acme-robotics.example",
        SUB => "acme-labs.example",
        STRANGER => "globex-logistics.example",
        _ => "initech.example",
    }
}

/// An incident linked to each company.
fn incident_of(company: &str) -> String {
    match company {
        OWN => "RP-INC-2024-0001".into(),
        other => format!("RP-INC-T-{other}"),
    }
}

async fn setup() -> (TestApp, [String; 3]) {
    setup_with(TestApp::spawn().await).await
}

async fn setup_with(app: TestApp) -> (TestApp, [String; 3]) {
    for company in [SUB, STRANGER, PENDING] {
        let c = app.store.company_by_social_id(&model::SocialId::parse(company).unwrap()).await.unwrap().unwrap();
        let incident: model::Incident = serde_json::from_value(serde_json::json!({
            "incident_id": incident_of(company), "title": format!("An incident of {company}")
        }))
        .unwrap();
        app.store.save_incident(&incident, Some(c.id), None, Some("test")).await.unwrap();
    }
    let body = r#"{"name":"Initech","website":"https://initech.example","social_id":"initech","parent_social_id":"acme-robotics"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&app.monitor), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("pending approval"), "{v}");
    let bound = app
        .key(vec![model::Scope::General, model::Scope::Vulnerability, model::Scope::Underwriter], Some(OWN), 0, 0)
        .await;
    let keys = [app.monitor.clone(), bound, app.underwriter.clone()];
    (app, keys)
}

/// The Underwriter (and General) operations that name a company, for `company`.
fn underwriter_paths(company: &str) -> Vec<String> {
    let d = domain_of(company);
    let mut paths: Vec<String> = [
        "underwriter-getcompanyinfo",
        "underwriter-getcompanyapplicationsassets",
        "underwriter-getcompanyinfrastructureassets",
        "underwriter-getcompanysbom",
        "underwriter-getcompanysbomcve",
        "underwriter-getcompanyscores",
        "underwriter-getcompanystats",
        "underwriter-getcompanysubscores",
        "underwriter-getcompany-history",
        "underwriter-getcompanyscore-history",
        "underwriter-getevents",
        "underwriter-getcompanyfindings",
        "general-getdomain-by-socialid",
    ]
    .iter()
    .map(|op| format!("/{op}?social_id={company}"))
    .collect();
    paths.push(format!("/underwriter-getcompanysbomdomain?social_id={company}&domain={d}"));
    paths.push(format!("/underwriter-getimprovementplan?social_id={company}&target_grade=A"));
    for op in ["get-incident-prediction", "get-data-loss-prediction", "get-tail-risk-estimation"] {
        paths.push(format!("/underwriter-{op}?social_id={company}&period=6"));
    }
    paths.push(format!("/underwriter-getcompany-history-domain?domain={d}"));
    paths.push(format!("/general-getsocialid-by-domain?domain={d}"));
    paths.push(format!("/underwriter-getincidentdetail-by-id?incident_id={}", incident_of(company)));
    paths
}

#[tokio::test]
async fn every_underwriter_operation_shows_a_bound_key_its_own_tree_only() {
    let (app, keys) = setup().await;
    bound_keys_see_their_tree_only(&app, &keys, [0, 1, 2]).await;
}

/// The same with answers kept: the unbound key asks first, and what it was answered
/// (kept for everyone allowed to see it) never reaches a bound key outside its tree.
#[tokio::test]
async fn kept_answers_reach_a_bound_key_only_in_its_tree() {
    let app = TestApp::spawn_with(api::Config {
        read_cache_ttl: std::time::Duration::from_secs(60),
        ..api::Config::default()
    })
    .await;
    let (app, keys) = setup_with(app).await;
    bound_keys_see_their_tree_only(&app, &keys, [2, 0, 1]).await;
}

/// Every Underwriter path about every company, asked with the keys in `order` (0 and 1
/// bound to acme-robotics, 2 unbound).
async fn bound_keys_see_their_tree_only(app: &TestApp, keys: &[String; 3], order: [usize; 3]) {
    let mut wrong = Vec::new();
    for company in [OWN, SUB, STRANGER, PENDING] {
        for path in underwriter_paths(company) {
            for k in order {
                let key = &keys[k];
                let bound = k < 2;
                let visible = !bound || company == OWN || company == SUB;
                let want = if visible {
                    StatusCode::OK
                } else if path.starts_with("/underwriter-getincidentdetail-by-id") {
                    // Answered as an incident that does not exist: nothing leaks.
                    StatusCode::BAD_REQUEST
                } else {
                    StatusCode::FORBIDDEN
                };
                let (got, body) = app.get(&path, key).await;
                if got != want {
                    wrong.push(format!("key {k} {path}: {got} (want {want}) {body}"));
                }
                if want == StatusCode::BAD_REQUEST {
                    assert_eq!(body["error"], "Incident not found", "{path}");
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} cells wrong:\n{}", wrong.len(), wrong.join("\n"));
}

#[tokio::test]
async fn lists_never_name_a_stranger_to_a_bound_key() {
    let (app, keys) = setup().await;
    for key in &keys[..2] {
        let (s, v) = app.get("/underwriter-getlastcompaniesscanned", key).await;
        assert_eq!(s, StatusCode::OK);
        let text = v.to_string();
        assert!(!text.contains(STRANGER) && !text.contains(PENDING), "{text}");
        let (s, v) = app.get("/general-getsocialid-by-companyname?company_name=initech", key).await;
        assert!(s != StatusCode::OK || !v.to_string().contains(PENDING), "{s} {v}");
    }
}

/// Monitor operations need the monitor scope, and act on the key's own company; the
/// ones that name a domain, subdomain or subsidiary refuse a stranger's.
#[tokio::test]
async fn monitor_operations_reach_the_keys_tree_only() {
    let (app, keys) = setup().await;
    let own_only = [
        "/monitor-getcompanyinfo",
        "/monitor-getcompanyscores",
        "/monitor-getcompanysubsidiaries",
        "/monitor-getcompany-history",
        "/monitor-get-incident-prediction?period=6",
    ];
    for path in own_only {
        assert_eq!(app.get(path, &keys[0]).await.0, StatusCode::OK, "{path}");
        assert_eq!(app.get(path, &keys[1]).await.0, StatusCode::FORBIDDEN, "{path}: no monitor scope");
        assert_eq!(app.get(path, &keys[2]).await.0, StatusCode::FORBIDDEN, "{path}: unbound");
    }
    let subs = app.get("/monitor-getcompanysubsidiaries", &keys[0]).await.1.to_string();
    assert!(subs.contains(SUB) && !subs.contains(PENDING), "pending is not a subsidiary yet: {subs}");
    for company in [STRANGER, PENDING] {
        let d = domain_of(company);
        for path in [
            format!("/monitor-getcompanysbomdomain?domain={d}"),
            format!("/monitor-getall-subdomain-findings?subdomain=www.{d}"),
            format!("/monitor-get-subdomain-findings?subdomain=www.{d}&risk_vector_type=DKIM"),
        ] {
            // These report on the key's own company only: a stranger's name is refused,
            // or answered with what the key's company has there (nothing).
            let (s, v) = app.get(&path, &keys[0]).await;
            match s {
                StatusCode::BAD_REQUEST | StatusCode::FORBIDDEN => {}
                StatusCode::OK => {
                    let items = v["data"]["subdomain"].as_array().or(v["data"].as_array()).or(v.as_array());
                    assert!(items.is_some_and(|i| i.is_empty()), "{path}: {v}");
                }
                other => panic!("{path}: {other} {v}"),
            }
        }
        let rescan = format!("/monitor-rescan-subdomain-by-vectorid?risk_vector_id=dkim&subdomain=mail.{d}");
        let (s, v, _) = app.call(Method::PUT, &rescan, Some(&keys[0]), None).await;
        assert!(s == StatusCode::BAD_REQUEST || s == StatusCode::FORBIDDEN, "{rescan}: {s} {v}");
        let delete = format!("/monitor-delete-subsidiary?subsidiary_id={company}");
        let (s, v, _) = app.call(Method::DELETE, &delete, Some(&keys[0]), None).await;
        assert_eq!((s, v["error"].as_str()), (StatusCode::BAD_REQUEST, Some("Subsidiary not found")), "{delete}");
    }
    let rescans = store::testkit::pending_jobs(&*app.store).await.unwrap();
    assert!(rescans.iter().all(|j| j.spec.kind() != "rescan"), "no rescan of a stranger was queued: {rescans:?}");
}

/// The pending link: invisible until an operator approves it, visible after; a rejected
/// one stays invisible. Asking again does not open a second request.
#[tokio::test]
async fn a_pending_link_is_visible_only_once_approved() {
    let (app, keys) = setup().await;
    let scores = format!("/underwriter-getcompanyscores?social_id={PENDING}");
    assert_eq!(app.get(&scores, &keys[1]).await.0, StatusCode::FORBIDDEN);
    let body = r#"{"name":"Initech","website":"https://initech.example","social_id":"initech","parent_social_id":"acme-robotics"}"#;
    let (_, again, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&keys[0]), Some(body)).await;
    assert!(again["message"].as_str().unwrap().contains("pending approval"), "{again}");
    let pending = app.store.subsidiary_requests(Some(store::SubsidiaryState::Pending)).await.unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    app.store.decide_subsidiary_request(pending[0].id, true, "group structure checked").await.unwrap().unwrap();
    assert_eq!(app.get(&scores, &keys[1]).await.0, StatusCode::OK);
    assert_eq!(app.get(&scores, &keys[0]).await.0, StatusCode::OK);
    let subs = app.get("/monitor-getcompanysubsidiaries", &keys[0]).await.1.to_string();
    assert!(subs.contains(PENDING), "{subs}");

    // Rejected: the stranger stays out of reach.
    let body = r#"{"name":"Globex","website":"https://globex-logistics.example","social_id":"globex-logistics","parent_social_id":"acme-robotics"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&keys[0]), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let pending = app.store.subsidiary_requests(Some(store::SubsidiaryState::Pending)).await.unwrap();
    app.store.decide_subsidiary_request(pending[0].id, false, "not theirs").await.unwrap().unwrap();
    let globex = format!("/underwriter-getcompanyscores?social_id={STRANGER}");
    assert_eq!(app.get(&globex, &keys[1]).await.0, StatusCode::FORBIDDEN);
}

/// A key creates at most `MAX_CREATIONS_PER_DAY` companies a day through add-subsidiary;
/// the next is a 429 with Retry-After, and nothing is created.
#[tokio::test]
async fn company_creations_per_key_are_capped() {
    let app = TestApp::spawn().await;
    let cap = api::MAX_CREATIONS_PER_DAY;
    for i in 0..=cap {
        let body = format!(
            r#"{{"name":"Sub {i}","website":"https://sub{i}.acme-new.example","social_id":"acme-new-{i}","parent_social_id":"acme-robotics"}}"#
        );
        let (s, v, headers) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&app.monitor), Some(&body)).await;
        if i < cap {
            assert_eq!(s, StatusCode::OK, "{i}: {v}");
        } else {
            assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{v}");
            assert_eq!(v["error"], "Too many companies created by this API key today");
            let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
            assert!((1..=86_400).contains(&retry), "{retry}");
            let id = model::SocialId::parse(&format!("acme-new-{i}")).unwrap();
            assert!(app.store.company_by_social_id(&id).await.unwrap().is_none());
        }
    }
}

/// A monitor key names another company's domain as a "subsidiary"'s website (the `www.`
/// of it), or adds it as an asset: neither reaches that company (docs/API.md, "Domain
/// ownership").
#[tokio::test]
async fn another_companys_domain_is_never_taken_on_a_keys_word() {
    let app = TestApp::spawn().await;
    let stranger = domain_of(STRANGER);
    let body = format!(
        r#"{{"name":"Not Globex","website":"https://www.{stranger}/","social_id":"not-globex","parent_social_id":"acme-robotics"}}"#
    );
    let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&app.monitor), Some(&body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let message = v["message"].as_str().unwrap();
    assert!(message.contains("pending approval"), "{v}");
    assert!(!message.contains("exists"), "the answer tells nothing of who holds what: {v}");
    // Nothing of it is the key's, and nothing is scanned for it.
    let (s, _) = app.get("/underwriter-getcompanyinfo?social_id=not-globex", &app.monitor).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let pending = store::testkit::pending_jobs(&*app.store).await.unwrap();
    assert!(pending.iter().all(|j| j.spec.company().as_str() != "not-globex"), "{pending:?}");
    // The domain still answers for its owner.
    let v = app.ok(&format!("/general-getsocialid-by-domain?domain={stranger}"), &app.underwriter).await;
    assert_eq!(v["social_id"], STRANGER);
    // add-asset of the stranger's domain or a name under it: pending an operator.
    let own = app.store.company_by_social_id(&model::SocialId::parse(OWN).unwrap()).await.unwrap().unwrap();
    let scans_before = store::testkit::pending_jobs(&*app.store).await.unwrap().len();
    for asset in [stranger.to_owned(), format!("shop.{stranger}")] {
        let body = format!(r#"{{"asset":"{asset}","reason":"ours, honestly"}}"#);
        let (s, v, _) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(&body)).await;
        assert_eq!(s, StatusCode::OK, "{asset}: {v}");
        assert!(v["message"].as_str().unwrap().contains("pending approval"), "{v}");
    }
    assert!(app.store.footprint(own.id).await.unwrap().iter().all(|c| !c.asset.contains(stranger)));
    assert_eq!(store::testkit::pending_jobs(&*app.store).await.unwrap().len(), scans_before, "nothing is scanned");
    let requests = app.store.asset_requests(false).await.unwrap();
    assert_eq!(requests.len(), 2, "{requests:?}");
    // The same request again is the one pending.
    let body = format!(r#"{{"asset":"{stranger}","reason":"again"}}"#);
    let (_, v, _) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(&body)).await;
    assert!(v["message"].as_str().unwrap().contains(&format!("request {}", requests[0].id)), "{v}");
    // An operator rejects one and approves the other: the approved name joins, verified.
    let rejected = app
        .store
        .decide_asset_request(requests[0].id, false, "not theirs", time::OffsetDateTime::now_utc())
        .await
        .unwrap();
    assert_eq!(rejected.unwrap().state, "rejected");
    let approved = app
        .store
        .decide_asset_request(requests[1].id, true, "a shared shop", time::OffsetDateTime::now_utc())
        .await
        .unwrap();
    assert_eq!(approved.unwrap().state, "approved");
    assert!(
        app.store
            .decide_asset_request(requests[1].id, true, "twice", time::OffsetDateTime::now_utc())
            .await
            .unwrap()
            .is_none()
    );
    let footprint = app.store.footprint(own.id).await.unwrap();
    assert!(footprint.iter().any(|c| c.asset == format!("shop.{stranger}") && c.change == "added"), "{footprint:?}");
    assert!(footprint.iter().all(|c| c.asset != stranger), "{footprint:?}");
    // An address range where the stranger's scans saw a service waits for an operator too.
    let globex = app.store.company_by_social_id(&model::SocialId::parse(STRANGER).unwrap()).await.unwrap().unwrap();
    let now = model::OffsetDateTimeText(time::OffsetDateTime::now_utc());
    let endpoint = model::NetworkEndpoint {
        ip: "93.184.216.34".parse().unwrap(),
        port: 443,
        protocol: "tcp".into(),
        host: Some(format!("www.{stranger}")),
        service: Some("https".into()),
        product: None,
        version: None,
        banner: String::new(),
        attribution: None,
        first_seen: now,
        last_seen: now,
    };
    app.store.record_discovery(globex.id, &[], &[endpoint], now.0).await.unwrap();
    let body = r#"{"asset":"93.184.216.0/24","reason":"our range"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("pending approval"), "{v}");
    let body = r#"{"asset":"93.184.217.0/24","reason":"our other range"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("was added"), "a range nobody holds is added: {v}");
    // At most MAX_PENDING_ASSETS wait for an operator at once (one waits already).
    for i in 1..api::MAX_PENDING_ASSETS {
        let body = format!(r#"{{"asset":"h{i}.{stranger}","reason":"ours"}}"#);
        let (s, v, _) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(&body)).await;
        assert_eq!(s, StatusCode::OK, "{i}: {v}");
    }
    let body = format!(r#"{{"asset":"one-more.{stranger}","reason":"ours"}}"#);
    let (s, v, headers) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(&body)).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{v}");
    assert!(headers.contains_key("retry-after"));
}

/// A domain nobody holds becomes a key's claim, not its property (docs/API.md, "Domain
/// ownership"): scanned, seen by the key, never the answer of
/// general-getsocialid-by-domain, never shown to an underwriter; the token that proves
/// control is issued and its check queued.
#[tokio::test]
async fn an_unverified_claim_answers_nobody_but_its_own_tree() {
    let app = TestApp::spawn().await;
    let body = r#"{"name":"Claimed Co","website":"https://claimed-co.example","social_id":"claimed-co","parent_social_id":"acme-robotics"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&app.monitor), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("not yet verified"), "{v}");
    let (s, v) = app.get("/general-getsocialid-by-domain?domain=claimed-co.example", &app.underwriter).await;
    assert_eq!((s, &v["error"]), (StatusCode::BAD_REQUEST, &serde_json::json!("Company not found")), "{v}");
    let (s, v) = app.get("/underwriter-getcompanyinfo?social_id=claimed-co", &app.underwriter).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["error"].as_str().unwrap().contains("not yet verified"), "{v}");
    // Its own tree sees it (not rated yet: its scan is queued).
    let (s, v) = app.get("/underwriter-getcompanyinfo?social_id=claimed-co", &app.monitor).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"], "social_id not processed yet, a scan will start soon");
    // A name under the key's own verified domain is the tree's at once.
    let body = r#"{"asset":"shop.acme-robotics.example","reason":"our shop"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(!v["message"].as_str().unwrap().contains("not yet verified"), "{v}");
    // A new domain added as an asset is a claim too.
    let body = r#"{"asset":"acme-shop.example","reason":"our other shop"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-asset", Some(&app.monitor), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("not yet verified"), "{v}");
    let (s, _) = app.get("/general-getsocialid-by-domain?domain=acme-shop.example", &app.underwriter).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    // What a scan finds on the claim is the company's to see, not a finding of its score.
    let own = app.store.company_by_social_id(&model::SocialId::parse(OWN).unwrap()).await.unwrap().unwrap();
    let on_claim =
        super::helpers::finding("rdp.acme-shop.example:3389", "open_ports.rdp_exposed", model::RiskVector::OpenPorts);
    let scope = store::ScanScope {
        risk_vectors: &[model::RiskVector::OpenPorts],
        asset: Some("rdp.acme-shop.example:3389"),
        below: false,
        close_missing: false,
        keep_open: &[],
    };
    app.store.record_scan(own.id, scope, &[on_claim], time::OffsetDateTime::now_utc()).await.unwrap();
    assert!(app.store.open_findings(own.id).await.unwrap().iter().any(|f| f.asset.contains("acme-shop.example")));
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let v = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", &app.underwriter).await;
    assert!(!v["score"].to_string().contains("acme-shop.example"), "a claim's finding in the score answer: {v}");

    // Proof of control: a token, issued once, and a check queued per call.
    let body = r#"{"domain":"claimed-co.example","social_id":"claimed-co"}"#;
    let (s, first, _) = app.call(Method::POST, "/monitor-verify-domain", Some(&app.monitor), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    assert_eq!(first["state"], "unverified");
    assert_eq!(first["txt_record"], "_rampart-challenge.claimed-co.example");
    let token = first["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("rampart-verify=") && token.len() == 15 + 32, "{token}");
    let (_, again, _) = app.call(Method::POST, "/monitor-verify-domain", Some(&app.monitor), Some(body)).await;
    assert_eq!(again["token"], first["token"], "the same token until it is found");
    let jobs = store::testkit::pending_jobs(&*app.store).await.unwrap();
    assert!(jobs.iter().any(|j| j.spec.kind() == "verify"), "{jobs:?}");
    // Another company's domain cannot be verified by this key.
    let body = format!(r#"{{"domain":"{}"}}"#, domain_of(STRANGER));
    let (s, v, _) = app.call(Method::POST, "/monitor-verify-domain", Some(&app.monitor), Some(&body)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    // Verified (as the worker's check would), the domain is the company's for everyone.
    let c = app.store.company_by_social_id(&model::SocialId::parse("claimed-co").unwrap()).await.unwrap().unwrap();
    assert!(
        app.store.verify_domain(c.id, &model::Domain::parse("claimed-co.example").unwrap(), "dns txt").await.unwrap()
    );
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let v = app.ok("/general-getsocialid-by-domain?domain=claimed-co.example", &app.underwriter).await;
    assert_eq!(v["social_id"], "claimed-co");
}

/// The caps (docs/SECURITY.md §2) hold under concurrency, from two API processes on one
/// database: 30 creations at once from one key make 20 companies; 60 additions at once
/// to one footprint make 20.
#[tokio::test]
async fn caps_hold_under_concurrent_requests_from_two_processes() {
    let app = TestApp::spawn().await;
    let second = app.second_server().await;
    let client = reqwest::Client::new();
    let post = |addr: std::net::SocketAddr, path: &'static str, body: String| {
        let client = client.clone();
        let key = app.monitor.clone();
        async move {
            client
                .post(format!("http://{addr}{path}"))
                .header("apikey", key)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map(|r| r.status())
        }
    };
    let creations = (0..30).map(|i| {
        let body = format!(
            r#"{{"name":"Sub {i}","website":"https://sub{i}.acme-robotics.example","social_id":"acme-par-{i}","parent_social_id":"acme-robotics"}}"#
        );
        post(if i % 2 == 0 { app.addr } else { second }, "/monitor-add-subsidiary", body)
    });
    let statuses: Vec<StatusCode> =
        futures_util::future::join_all(creations).await.into_iter().map(|r| r.unwrap()).collect();
    let ok = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    assert_eq!(ok as u64, api::MAX_CREATIONS_PER_DAY, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == StatusCode::OK || *s == StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");

    let additions = (0..60).map(|i| {
        let body = format!(r#"{{"asset":"h{i}.acme-robotics.example","reason":"ours"}}"#);
        post(if i % 2 == 0 { app.addr } else { second }, "/monitor-add-asset", body)
    });
    let statuses: Vec<StatusCode> =
        futures_util::future::join_all(additions).await.into_iter().map(|r| r.unwrap()).collect();
    let ok = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    assert_eq!(ok, api::MAX_ADDED_PER_DAY, "{statuses:?}");
    let own = app.store.company_by_social_id(&model::SocialId::parse(OWN).unwrap()).await.unwrap().unwrap();
    let added = app.store.footprint(own.id).await.unwrap().iter().filter(|c| c.change == "added").count();
    assert_eq!(added, api::MAX_ADDED_PER_DAY);
}

/// A bound key learns nothing of whether a company exists (docs/SECURITY.md §2): a
/// stranger and a company that does not exist are answered alike (403), while an unbound
/// key is told "Company not found".
#[tokio::test]
async fn a_bound_key_cannot_tell_a_stranger_from_nobody() {
    let app = TestApp::spawn().await;
    for path in ["/underwriter-getcompanyscores", "/underwriter-getcompanyinfo", "/general-getdomain-by-socialid"] {
        let (stranger, a) = app.get(&format!("{path}?social_id={STRANGER}"), &app.monitor).await;
        let (nobody, b) = app.get(&format!("{path}?social_id=no-such-company-at-all"), &app.monitor).await;
        assert_eq!((stranger, &a), (nobody, &b), "{path}");
        assert_eq!(stranger, StatusCode::FORBIDDEN, "{path}: {a}");
        let (s, v) = app.get(&format!("{path}?social_id=no-such-company-at-all"), &app.underwriter).await;
        assert_eq!((s, &v["error"]), (StatusCode::BAD_REQUEST, &serde_json::json!("Company not found")), "{path}");
    }
}

/// Every Portfolio operation, on the underwriter key's portfolio (`BOOK`), with a body
/// where it takes one; the deletion last.
fn portfolio_operations() -> Vec<(Method, String, Option<&'static str>)> {
    let b = super::helpers::BOOK;
    vec![
        (Method::GET, format!("/portfolio-getcompanies?portfolio_id={b}"), None),
        (Method::GET, format!("/portfolio-getcompanies?portfolio_id={b}&format=csv"), None),
        (Method::GET, format!("/portfolio-getsummary?portfolio_id={b}"), None),
        (Method::GET, format!("/portfolio-getfindings?portfolio_id={b}"), None),
        (Method::POST, "/portfolio-rename".into(), Some(r#"{"portfolio_id":1,"name":"Renamed"}"#)),
        (
            Method::POST,
            format!("/portfolio-add-companies?portfolio_id={b}"),
            Some(r#"{"companies":[{"domain":"initech.example"}]}"#),
        ),
        (
            Method::PUT,
            format!("/portfolio-update-company?portfolio_id={b}&social_id=acme-robotics"),
            Some(r#"{"tier":1}"#),
        ),
        (Method::DELETE, format!("/portfolio-remove-company?portfolio_id={b}&social_id=acme-robotics"), None),
        (Method::DELETE, format!("/portfolio-delete?portfolio_id={b}"), None),
    ]
}

/// Guidelines are the organisation's own: another's are never read, set or applied, and
/// a key without an organisation has none.
#[tokio::test]
async fn guidelines_are_the_organisations_own() {
    let app = TestApp::spawn().await;
    let other_org = app.store.create_org("Another Insurer").await.unwrap();
    let other = TestApp::org_key_in(&*app.store, other_org.id).await;
    let orgless = app.key(vec![model::Scope::Underwriter, model::Scope::Portfolio], None, 0, 0).await;
    let g = super::helpers::GUIDELINES;
    let (s, v, _) = app.call(Method::POST, "/portfolio-set-guidelines", Some(&app.underwriter), Some(g)).await;
    assert_eq!((s, &v["version"]), (StatusCode::OK, &serde_json::json!(1)), "{v}");
    let (_, theirs) = app.get("/portfolio-getguidelines", &other).await;
    assert_eq!((&theirs["version"], &theirs["rules"]), (&serde_json::Value::Null, &serde_json::json!(0)));
    let (s, v) = app.get("/underwriter-evaluate-guidelines?social_id=acme-robotics", &other).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["error"].as_str().unwrap().contains("no guidelines yet"), "{v}");
    let (s, v) = app.get("/underwriter-evaluate-guidelines?social_id=acme-robotics", &app.underwriter).await;
    assert_eq!((s, &v["guideline_version"]), (StatusCode::OK, &serde_json::json!(1)), "{v}");
    // Another organisation's version starts at 1 and leaves ours.
    let (_, v, _) = app.call(Method::POST, "/portfolio-set-guidelines", Some(&other), Some(g)).await;
    assert_eq!(v["version"], 1);
    let (_, ours) = app.get("/portfolio-getguidelines", &app.underwriter).await;
    assert_eq!(ours["version"], 1);
    for (m, p, b) in [
        (Method::GET, "/portfolio-getguidelines", None),
        (Method::POST, "/portfolio-set-guidelines", Some(g)),
        (Method::GET, "/underwriter-evaluate-guidelines?social_id=acme-robotics", None),
    ] {
        for key in [&orgless, &app.monitor] {
            let (s, v, _) = app.call(m.clone(), p, Some(key), b).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{m} {p}: {v}");
        }
    }
}

#[tokio::test]
async fn every_portfolio_operation_is_the_organisations_own() {
    let app = TestApp::spawn().await;
    let other_org = app.store.create_org("Another Insurer").await.unwrap();
    let other = TestApp::org_key_in(&*app.store, other_org.id).await;
    // The portfolio scope without an organisation, and the monitor key (every scope,
    // bound to a company, no organisation).
    let orgless = app.key(vec![model::Scope::Underwriter, model::Scope::Portfolio], None, 0, 0).await;
    let mut wrong = Vec::new();
    let raw = async |method: Method, path: &str, key: &str, body: Option<&str>| {
        let mut req = app.client.request(method, app.url(path)).header("apikey", key);
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b.to_owned());
        }
        let resp = req.send().await.unwrap();
        (resp.status(), resp.text().await.unwrap())
    };
    for (method, path, body) in portfolio_operations() {
        for (who, key) in [("orgless", &orgless), ("monitor", &app.monitor)] {
            let (s, text) = raw(method.clone(), &path, key, body).await;
            if s != StatusCode::FORBIDDEN {
                wrong.push(format!("{who} {method} {path}: {s} {text}"));
            }
        }
        // Another organisation's key is told the portfolio does not exist.
        let (s, text) = raw(method.clone(), &path, &other, body).await;
        if s != StatusCode::BAD_REQUEST || !text.contains("there is no portfolio 1 in this organisation") {
            wrong.push(format!("other {method} {path}: {s} {text}"));
        }
        let (s, text) = raw(method.clone(), &path, &app.underwriter, body).await;
        if s != StatusCode::OK {
            wrong.push(format!("own {method} {path}: {s} {text}"));
        }
    }
    // Lists and new portfolios are the organisation's own.
    let (s, v) = app.get("/portfolio-list", &other).await;
    assert_eq!((s, v), (StatusCode::OK, serde_json::json!({"portfolios": []})));
    let (s, v, _) = app.call(Method::POST, "/portfolio-create", Some(&other), Some(r#"{"name":"Book"}"#)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, mine) = app.get("/portfolio-list", &app.underwriter).await;
    assert!(mine["portfolios"].as_array().unwrap().iter().all(|p| p["portfolio_id"] != v["portfolio_id"]), "{mine}");
    for (who, key) in [("orgless", &orgless), ("monitor", &app.monitor)] {
        for (m, p, b) in
            [(Method::GET, "/portfolio-list", None), (Method::POST, "/portfolio-create", Some(r#"{"name":"X"}"#))]
        {
            let (s, text) = raw(m.clone(), p, key, b).await;
            if s != StatusCode::FORBIDDEN {
                wrong.push(format!("{who} {m} {p}: {s} {text}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{} cells wrong:\n{}", wrong.len(), wrong.join("\n"));
}
