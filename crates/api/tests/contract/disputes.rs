//! Disputes, footprint corrections and peer benchmarks through the API (docs/API.md,
//! "Disputes"), on both backends.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::{PAGER, TestApp, finding};

/// The object with `"id": id` anywhere in an answer.
fn with_id(v: &Value, id: i64) -> Option<&Value> {
    match v {
        Value::Object(m) if m.get("id").and_then(Value::as_i64) == Some(id) && m.contains_key("code") => Some(v),
        Value::Object(m) => m.values().find_map(|x| with_id(x, id)),
        Value::Array(a) => a.iter().find_map(|x| with_id(x, id)),
        _ => None,
    }
}

/// Records `f` as seen by a scan of its host and returns its id.
async fn seen(app: &TestApp, company: i64, host: &str, f: &model::Finding) -> i64 {
    let scope = store::ScanScope {
        risk_vectors: &[f.risk_vector],
        asset: Some(host),
        below: true,
        close_missing: true,
        keep_open: &[],
    };
    app.store.record_scan(company, scope, std::slice::from_ref(f), time::OffsetDateTime::now_utc()).await.unwrap();
    let open = app.store.open_findings(company).await.unwrap();
    open.iter().find(|o| o.asset == f.asset && o.code == f.code).unwrap().id
}

async fn company(app: &TestApp, sid: &str) -> model::Company {
    app.store.company_by_social_id(&model::SocialId::parse(sid).unwrap()).await.unwrap().unwrap()
}

async fn post(app: &TestApp, path: &str, key: &str, body: &str) -> (StatusCode, Value) {
    let (s, v, _) = app.call(Method::POST, path, Some(key), Some(body)).await;
    (s, v)
}

fn dispute_body(id: i64, reason: &str) -> String {
    format!(r#"{{"finding_id":{id},"reason":"{reason}","explanation":"RDP is only reachable through our VPN"}}"#)
}

#[tokio::test]
async fn a_finding_is_disputed_marked_and_decided() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let acme = company(&app, "acme-robotics").await;
    let hsts = finding("remote.acme-robotics.example", "web_headers.hsts_missing", model::RiskVector::WebHeaders);
    let id = seen(&app, acme.id, "remote.acme-robotics.example", &hsts).await;

    let (s, v) = post(&app, "/monitor-dispute-finding", k, &dispute_body(id, "compensating_control")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("an operator will decide"), "{v}");
    let d = &v["dispute"];
    assert_eq!(
        (d["state"].as_str(), d["reason"].as_str(), d["finding_id"].as_i64()),
        (Some("open"), Some("compensating_control"), Some(id))
    );
    assert_eq!(
        (d["social_id"].as_str(), d["code"].as_str()),
        (Some("acme-robotics"), Some("web_headers.hsts_missing"))
    );
    let dispute_id = d["id"].as_i64().unwrap();

    // Marked in every answer that shows it: the finding and its component, for the
    // monitor and for underwriters.
    let sub = app
        .ok("/monitor-get-subdomain-findings?subdomain=remote.acme-robotics.example&risk_vector_type=web_headers", k)
        .await;
    assert_eq!(with_id(&sub, id).expect("the finding")["disputed"], true, "{sub}");
    for (path, key) in [
        ("/monitor-getcompanyscores".to_owned(), k.clone()),
        ("/underwriter-getcompanyscores?social_id=acme-robotics".to_owned(), app.underwriter.clone()),
    ] {
        let scores = app.ok(&path, &key).await;
        assert_eq!(scores["score"]["web_headers"]["disputed"], true, "{path}: {}", scores["score"]["web_headers"]);
        assert!(scores["score"]["spf"].get("disputed").is_none(), "only the disputed component");
    }

    // Asked again: the open dispute, not a second one.
    let (s, v) = post(&app, "/monitor-dispute-finding", k, &dispute_body(id, "incorrect")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["dispute"]["id"].as_i64(), Some(dispute_id));
    assert!(v["message"].as_str().unwrap().contains("disputed already"));
    let list = app.ok("/monitor-getdisputes", k).await;
    assert_eq!(list["pagination"]["total_items"], 1);
    assert_eq!(list["disputes"][0]["id"].as_i64(), Some(dispute_id));
    assert_eq!(app.ok("/monitor-getdisputes?state=accepted", k).await["disputes"].as_array().unwrap().len(), 0);

    // An operator accepts it: no longer disputed, shown with its compensating control.
    let decided = app
        .store
        .decide_dispute(
            dispute_id,
            &store::Decision { accept: true, note: "VPN seen", by: "ops", at: time::OffsetDateTime::now_utc() },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decided.state, model::DisputeState::Accepted);
    let sub = app
        .ok("/monitor-get-subdomain-findings?subdomain=remote.acme-robotics.example&risk_vector_type=web_headers", k)
        .await;
    let shown = with_id(&sub, id).expect("still shown");
    assert!(shown.get("disputed").is_none() && shown["compensating_control"] == true, "{shown}");
    let list = app.ok("/monitor-getdisputes?state=accepted", k).await;
    assert_eq!(
        (list["disputes"][0]["decided_by"].as_str(), list["disputes"][0]["note"].as_str()),
        (Some("ops"), Some("VPN seen"))
    );

    // `fixed` queues a rescan of the finding's host and vector at once.
    let web = finding("www.acme-robotics.example:443", "open_ports.rdp_exposed", model::RiskVector::OpenPorts);
    let web_id = seen(&app, acme.id, "www.acme-robotics.example", &web).await;
    let (s, v) = post(&app, "/monitor-dispute-finding", k, &dispute_body(web_id, "fixed")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("rescan of www.acme-robotics.example for open_ports is queued"),
        "{v}"
    );
    let jobs = store::testkit::pending_jobs(&*app.store).await.unwrap();
    assert!(
        jobs.iter().any(|j| matches!(&j.spec, model::JobSpec::Rescan { subdomain, risk_vector, .. }
        if subdomain.as_str() == "www.acme-robotics.example" && *risk_vector == model::RiskVector::OpenPorts)),
        "{jobs:?}"
    );
}

#[tokio::test]
async fn disputes_are_checked_and_kept_to_the_keys_companies() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let acme = company(&app, "acme-robotics").await;
    let pager = company(&app, PAGER).await;
    // Another company's finding is answered as one that does not exist.
    let theirs = finding("remote.pager.example:3389", "open_ports.rdp_exposed", model::RiskVector::OpenPorts);
    let their_id = seen(&app, pager.id, "remote.pager.example", &theirs).await;
    for id in [their_id, 999_999_999] {
        let (s, v) = post(&app, "/monitor-dispute-finding", k, &dispute_body(id, "not_ours")).await;
        assert_eq!(
            (s, v["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some(format!("Finding {id} not found").as_str()))
        );
    }
    assert_eq!(app.ok("/monitor-getdisputes", &app.pager).await["pagination"]["total_items"], 0, "nothing was opened");
    // An underwriter key has no Monitor scope.
    let (s, _) = post(&app, "/monitor-dispute-finding", &app.underwriter, &dispute_body(their_id, "fixed")).await;
    assert_eq!(s, StatusCode::FORBIDDEN);

    // A finding that closed meanwhile: said so, with when.
    let gone = finding("old.acme-robotics.example:3389", "open_ports.rdp_exposed", model::RiskVector::OpenPorts);
    let gone_id = seen(&app, acme.id, "old.acme-robotics.example", &gone).await;
    let scope = store::ScanScope {
        risk_vectors: &[model::RiskVector::OpenPorts],
        asset: Some("old.acme-robotics.example"),
        below: true,
        close_missing: true,
        keep_open: &[],
    };
    app.store.record_scan(acme.id, scope, &[], time::OffsetDateTime::now_utc()).await.unwrap();
    let (s, v) = post(&app, "/monitor-dispute-finding", k, &dispute_body(gone_id, "fixed")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let e = v["error"].as_str().unwrap();
    assert!(e.starts_with(&format!("Finding {gone_id} was closed at ")) && e.contains("nothing to dispute"), "{e}");

    // Bodies checked field by field.
    let mine = finding("vpn.acme-robotics.example:3389", "open_ports.rdp_exposed", model::RiskVector::OpenPorts);
    let mine = seen(&app, acme.id, "vpn.acme-robotics.example", &mine).await;
    let long = "x".repeat(2001);
    for (body, error) in [
        ("[]".to_owned(), "The request body must be one JSON object, each field at most once"),
        (r#"{"reason":"fixed","explanation":"x"}"#.to_owned(), "finding_id is a required parameter"),
        (format!(r#"{{"finding_id":"{mine}","reason":"fixed","explanation":"x"}}"#), "finding_id is not valid"),
        (r#"{"finding_id":null,"reason":"fixed","explanation":"x"}"#.to_owned(), "finding_id is a required parameter"),
        (r#"{"finding_id":-3,"reason":"fixed","explanation":"x"}"#.to_owned(), "finding_id is not valid"),
        (r#"{"finding_id":0,"reason":"fixed","explanation":"x"}"#.to_owned(), "finding_id is not valid"),
        (format!(r#"{{"finding_id":{mine}.0,"reason":"fixed","explanation":"x"}}"#), "finding_id is not valid"),
        // Past i64: not an id (it is a u64).
        (
            r#"{"finding_id":9223372036854775808,"reason":"fixed","explanation":"x"}"#.to_owned(),
            "finding_id is not valid",
        ),
        (format!(r#"{{"finding_id":{mine},"reason":["fixed"],"explanation":"x"}}"#), "reason is not valid"),
        (format!(r#"{{"finding_id":{mine},"reason":"fixed","explanation":{{"a":1}}}}"#), "explanation is not valid"),
        (
            format!(r#"{{"finding_id":{mine},"reason":"fixed","explanation":"  "}}"#),
            "explanation is a required parameter",
        ),
        // A field twice, trailing bytes, not JSON: not one object.
        (
            format!(r#"{{"finding_id":{mine},"finding_id":{mine},"reason":"fixed","explanation":"x"}}"#),
            "The request body must be one JSON object, each field at most once",
        ),
        (
            format!(r#"{{"finding_id":{mine},"reason":"fixed","explanation":"x"}} {{}}"#),
            "The request body must be one JSON object, each field at most once",
        ),
        (r#"{"finding_id":"#.to_owned(), "The request body must be one JSON object, each field at most once"),
        (
            format!(r#"{{"finding_id":{mine},"reason":"wrong","explanation":"x"}}"#),
            "reason must be one of: fixed, compensating_control, not_ours, incorrect",
        ),
        (format!(r#"{{"finding_id":{mine},"reason":"fixed"}}"#), "explanation is a required parameter"),
        (
            format!(r#"{{"finding_id":{mine},"reason":"fixed","explanation":"{long}"}}"#),
            "explanation: the explanation is longer than 2000 characters",
        ),
    ] {
        let (s, v) = post(&app, "/monitor-dispute-finding", k, &body).await;
        assert_eq!((s, v["error"].as_str()), (StatusCode::BAD_REQUEST, Some(error)), "{body}");
    }
    assert_eq!(app.ok("/monitor-getdisputes", k).await["pagination"]["total_items"], 0);
    let (s, v) = app.get("/monitor-getdisputes?state=maybe", k).await;
    assert_eq!(
        (s, v["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("state must be one of: open, accepted, rejected"))
    );
}

#[tokio::test]
async fn the_company_adds_assets_and_asks_for_removals() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let acme = company(&app, "acme-robotics").await;
    let add = |asset: &str| format!(r#"{{"asset":"{asset}","reason":"our shop, hosted by a partner"}}"#);
    let (s, v) = post(&app, "/monitor-add-asset", k, &add("shop.acme-robotics.example")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("its scan is queued"), "{v}");
    let jobs = store::testkit::pending_jobs(&*app.store).await.unwrap();
    assert!(jobs.iter().any(|j| j.spec.kind() == "scan" && j.spec.company().as_str() == "acme-robotics"), "{jobs:?}");
    let (_, v) = post(&app, "/monitor-add-asset", k, &add("shop.acme-robotics.example")).await;
    assert!(v["message"].as_str().unwrap().contains("already"), "{v}");
    // An address range of the lab (this server runs in lab mode).
    let (s, v) = post(&app, "/monitor-add-asset", k, &add("127.83.7.0/28")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let kept = app.store.footprint(acme.id).await.unwrap();
    let assets: Vec<(&str, &str)> = kept.iter().map(|c| (c.asset.as_str(), c.change.as_str())).collect();
    assert_eq!(assets, vec![("shop.acme-robotics.example", "added"), ("127.83.7.0/28", "added")]);
    assert!(kept.iter().all(|c| c.by.starts_with("key ") && c.reason == "our shop, hosted by a partner"), "{kept:?}");
    // A name outside the company's domains becomes one of its domains.
    post(&app, "/monitor-add-asset", k, &add("acme-shop.example")).await;
    let domains: Vec<String> = app.store.domains(acme.id).await.unwrap().iter().map(|d| d.name.to_string()).collect();
    assert!(domains.contains(&"acme-shop.example".to_owned()), "{domains:?}");
    // A reason with escapes is kept as the text it stands for.
    let escaped = r#"{"asset":"esc.acme-robotics.example","reason":"ours \"really\" \u00e9\/x"}"#;
    let (s, v) = post(&app, "/monitor-add-asset", k, escaped).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let kept = app.store.footprint(acme.id).await.unwrap();
    let esc = kept.iter().find(|c| c.asset == "esc.acme-robotics.example").unwrap();
    assert_eq!(esc.reason, "ours \"really\" é/x");
    for (body, error) in [
        (r#"{"asset":["a.example"],"reason":"r"}"#, "asset is not valid"),
        (r#"{"asset":"b.acme-robotics.example","reason":7}"#, "reason is not valid"),
        (r#"{"asset":"b.acme-robotics.example","reason":"r","social_id":5}"#, "social_id is not valid"),
        (r#"{"asset":"b.acme-robotics.example","reason":"r","social_id":"Not An Id"}"#, "social_id is not valid"),
        (r#"{"reason":"r"}"#, "asset is a required parameter"),
        (r#"["b.acme-robotics.example","r"]"#, "The request body must be one JSON object, each field at most once"),
    ] {
        let (s, v) = post(&app, "/monitor-add-asset", k, body).await;
        assert_eq!((s, v["error"].as_str()), (StatusCode::BAD_REQUEST, Some(error)), "{body}");
    }

    for (asset, error) in [
        ("192.0.2.7", "asset: 192.0.2.7 is a documentation (RFC 5737) address; the scanner does not connect to it"),
        ("10.0.0.0/8", "asset: \"10.0.0.0/8\": a range may hold at most 256 addresses (/24, /120)"),
        // Lab mode admits the lab's loopback addresses, no other special one.
        ("10.1.2.3", "asset: 10.1.2.3 is a private (RFC 1918) address; the scanner does not connect to it"),
        ("not a host", ""),
    ] {
        let (s, v) = post(&app, "/monitor-add-asset", k, &add(asset)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{asset}: {v}");
        let e = v["error"].as_str().unwrap();
        assert!(if error.is_empty() { e.starts_with("asset: ") } else { e == error }, "{asset}: {e}");
    }
    // Another company's footprint is out of reach.
    let (s, v) = post(
        &app,
        "/monitor-add-asset",
        k,
        &format!(r#"{{"asset":"x.pager.example","reason":"r","social_id":"{PAGER}"}}"#),
    )
    .await;
    assert_eq!((s, v["error"].as_str()), (StatusCode::BAD_REQUEST, Some("Company not found")));

    // A removal is a not_ours dispute of the asset, for an operator.
    let rdp = finding("legacy.acme-robotics.example:3389", "open_ports.rdp_exposed", model::RiskVector::OpenPorts);
    let rdp_id = seen(&app, acme.id, "legacy.acme-robotics.example", &rdp).await;
    let (s, v) =
        post(&app, "/monitor-remove-asset", k, r#"{"asset":"legacy.acme-robotics.example","reason":"sold in 2024"}"#)
            .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let d = &v["dispute"];
    assert_eq!(
        (d["reason"].as_str(), d["finding_id"].is_null(), d["asset"].as_str()),
        (Some("not_ours"), true, Some("legacy.acme-robotics.example"))
    );
    let id = d["id"].as_i64().unwrap();
    app.store
        .decide_dispute(
            id,
            &store::Decision {
                accept: true,
                note: "registry shows the sale",
                by: "ops",
                at: time::OffsetDateTime::now_utc(),
            },
        )
        .await
        .unwrap();
    assert!(!app.store.open_findings(acme.id).await.unwrap().iter().any(|f| f.id == rdp_id), "its findings closed");
    let kept = app.store.footprint(acme.id).await.unwrap();
    let removed = kept.iter().find(|c| c.change == "removed").expect("kept as removed");
    assert_eq!((removed.asset.as_str(), removed.dispute_id), ("legacy.acme-robotics.example", Some(id)));
    // At most 20 additions a day per company (each queues a scan): four so far.
    for i in 0..16 {
        let (s, v) = post(&app, "/monitor-add-asset", k, &add(&format!("h{i}.acme-robotics.example"))).await;
        assert_eq!(s, StatusCode::OK, "{i}: {v}");
    }
    let (s, v) = post(&app, "/monitor-add-asset", k, &add("one-too-many.acme-robotics.example")).await;
    assert_eq!(
        (s, v["error"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("Too many assets added to this company's footprint today"))
    );
    // At most 200 open disputes per company: a key cannot flood the operators' queue.
    for i in 0..200 {
        let (s, v) = post(
            &app,
            "/monitor-remove-asset",
            k,
            &format!(r#"{{"asset":"gone{i}.acme-robotics.example","reason":"r"}}"#),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{i}: {v}");
    }
    let (s, v) =
        post(&app, "/monitor-remove-asset", k, r#"{"asset":"gone-too-many.acme-robotics.example","reason":"r"}"#).await;
    assert_eq!(
        (s, v["error"].as_str()),
        (
            StatusCode::TOO_MANY_REQUESTS,
            Some("Too many open disputes for this company: wait for the decisions of those open")
        )
    );
    // Added again after its removal: refused, with why.
    let (s, v) = post(&app, "/monitor-add-asset", k, &add("legacy.acme-robotics.example")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["error"].as_str().unwrap().contains("removed from the footprint"), "{v}");
}

/// Outside lab mode, a private address is refused.
#[tokio::test]
async fn private_addresses_are_refused_outside_lab_mode() {
    let config = api::Config {
        key_cache_ttl: std::time::Duration::ZERO,
        read_cache_ttl: std::time::Duration::ZERO,
        cve_cache_ttl: std::time::Duration::ZERO,
        lab_addresses: false,
        ..Default::default()
    };
    let app = TestApp::spawn_with(config).await;
    let (s, v) = post(&app, "/monitor-add-asset", &app.monitor, r#"{"asset":"10.1.2.3","reason":"ours"}"#).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(v["error"], "asset: 10.1.2.3 is a private (RFC 1918) address; the scanner does not connect to it");
}

/// Peer benchmarks on a generated population: twelve peers of one sector and size band
/// (mining, which the sample companies are not in)
/// give a percentile; a group of three gives none, and says so.
#[tokio::test]
async fn score_answers_rank_the_company_among_its_peers() {
    let app = TestApp::spawn().await;
    let acme = company(&app, "acme-robotics").await;
    let template = app.store.latest_score(acme.id).await.unwrap().expect("acme is rated");
    let rated = |sid: String, naics: i64, employees: &str, score: f64| {
        let store = app.store.clone();
        let mut snap = template.clone();
        snap.score = model::Score::from_f64(score).unwrap();
        let employees = employees.to_owned();
        async move {
            let profile = model::CompanyProfile {
                social_id: Some(model::SocialId::parse(&sid).unwrap()),
                company_name: sid.clone(),
                website: format!("https://{sid}.example"),
                domain: Some(model::Domain::parse(&format!("{sid}.example")).unwrap()),
                naics_code: Some(naics),
                employees_number: employees,
                ..Default::default()
            };
            let c = store.save_company(&store::CompanySnapshot { profile, ..Default::default() }).await.unwrap();
            store.replace_rating(c.id, &snap).await.unwrap();
        }
    };
    for i in 0..12 {
        rated(format!("mine-{i}"), 212114, "1001-5000", 50.0 + 2.0 * f64::from(i)).await;
    }
    for i in 0..3 {
        rated(format!("farm-{i}"), 111110, "20", 70.0).await;
    }
    rated("peer-me".into(), 21, "2000 employees", 61.0).await;
    rated("farm-me".into(), 11, "15", 80.0).await;

    let v = app.ok("/underwriter-getcompanyscores?social_id=peer-me", &app.underwriter).await;
    let peers = &v["peer_benchmarks"];
    // 50, 52, …, 60 score lower: 6 of 12.
    assert_eq!(peers["sector_and_size"]["percentile"], 50.0, "{peers}");
    assert_eq!(peers["sector_and_size"]["peers"], 12);
    assert_eq!(
        peers["sector_and_size"]["group"],
        "NAICS 21 Mining, Quarrying, and Oil and Gas Extraction, 1,000-4,999 employees"
    );
    let overall = peers["overall"]["peers"].as_u64().unwrap();
    assert!(overall >= 16, "{peers}");
    assert!(peers["overall"]["percentile"].as_f64().is_some());

    let v = app.ok("/underwriter-getcompanyscores?social_id=farm-me", &app.underwriter).await;
    let small = &v["peer_benchmarks"]["sector_and_size"];
    assert_eq!((small["peers"].as_u64(), small["percentile"].is_null()), (Some(3), true), "{small}");
    assert!(small["note"].as_str().unwrap().contains("fewer than 10 rated peers"));
}
