//! What changed in a portfolio (docs/API.md, "What changed"): each rating since a time
//! with the one before it, the findings opened and closed between the two and why, as
//! JSON and CSV; bounded and refused when asked wrongly; an organisation's own only.

use axum::http::{Method, StatusCode};
use serde_json::Value;

use super::helpers::{BOOK, TestApp, finding};

#[tokio::test]
async fn a_rating_since_is_reported_with_the_findings_that_moved_it() {
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    let now = time::OffsetDateTime::now_utc();
    let since = model::timefmt::rfc3339(now - time::Duration::hours(3));
    let path = |extra: &str| format!("/portfolio-getchanges?portfolio_id={BOOK}&since={since}{extra}");
    let quiet = app.ok(&path(""), u).await;
    assert_eq!(quiet["companies"], serde_json::json!([]), "no rating in the last three hours: {quiet}");

    // A rescan two hours ago finds RDP open on acme-robotics and rates it lower.
    let acme =
        app.store.company_by_social_id(&model::SocialId::parse("acme-robotics").unwrap()).await.unwrap().unwrap();
    let before = app.store.latest_score(acme.id).await.unwrap().expect("a rating");
    let at = now - time::Duration::hours(2);
    let mut rdp = finding("vpn.acme-robotics.example:3389", "open_ports.rdp_exposed", model::RiskVector::OpenPorts);
    rdp.last_seen = model::OffsetDateTimeText(at);
    let scope = store::ScanScope {
        risk_vectors: &[model::RiskVector::OpenPorts],
        asset: Some("vpn.acme-robotics.example"),
        below: true,
        close_missing: true,
        keep_open: &[],
    };
    app.store.record_scan(acme.id, scope, std::slice::from_ref(&rdp), at).await.unwrap();
    let lower = model::Score::from_f64(before.score.as_f64() - 12.0).unwrap();
    let after = model::ScoreSnapshot {
        scanned_at: model::OffsetDateTimeText(at),
        score: lower,
        grade: rating::grade_of(lower.as_f64()),
        reason: Some(model::RATED_BY_RESCAN.to_owned()),
        ..before.clone()
    };
    app.store.replace_rating(acme.id, &after).await.unwrap();

    let v = app.ok(&path(""), u).await;
    assert_eq!((v["portfolio_id"].as_i64(), v["truncated"].as_bool()), (Some(BOOK), Some(false)), "{v}");
    let companies = v["companies"].as_array().unwrap();
    assert_eq!(companies.len(), 1, "{v}");
    assert_eq!(companies[0]["social_id"], "acme-robotics");
    let r = &companies[0]["ratings"][0];
    assert_eq!(r["reason"], "rescan");
    assert!((r["score_before"].as_f64().unwrap() - before.score.as_f64()).abs() < 1e-9, "{r}");
    assert!((r["change"].as_f64().unwrap() + 12.0).abs() < 0.011, "{r}");
    assert_eq!(r["opened"][0]["code"], "open_ports.rdp_exposed");
    assert_eq!(r["closed"], serde_json::json!([]));
    let why = r["explanation"].as_str().unwrap();
    assert!(why.contains("by a rescan") && why.contains("1 finding opened (high open_ports.rdp_exposed"), "{why}");

    // As CSV: a header and one row per rating.
    let resp = app.client.get(app.url(&path("&format=csv"))).header("apikey", u).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    let text = resp.text().await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("social_id,company_name,tier,scanned_at,reason"), "{text}");
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[1].starts_with("acme-robotics,") && lines[1].contains("open_ports.rdp_exposed"), "{text}");

    // Since after the rating: nothing; by default the last 24 hours, which hold it.
    let later = model::timefmt::rfc3339(now - time::Duration::hours(1));
    let none = app.ok(&format!("/portfolio-getchanges?portfolio_id={BOOK}&since={later}"), u).await;
    assert_eq!(none["companies"], serde_json::json!([]));
    let day = app.ok(&format!("/portfolio-getchanges?portfolio_id={BOOK}"), u).await;
    assert_eq!(day["companies"][0]["social_id"], "acme-robotics");
}

#[tokio::test]
async fn a_change_report_asked_wrongly_is_refused_and_another_organisations_is_not_found() {
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    let err = |v: &Value| v["error"].as_str().unwrap_or_default().to_owned();
    for (query, said) in [
        ("since=yesterday", "since must be a date"),
        ("since=2999-01-01", "since is in the future"),
        ("since=2020-01-01", "since is more than 400 days ago"),
        ("format=xml", "format must be json or csv"),
    ] {
        let (s, v) = app.get(&format!("/portfolio-getchanges?portfolio_id={BOOK}&{query}"), u).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{query}: {v}");
        assert!(err(&v).starts_with(said), "{query}: {v}");
    }
    let (s, v) = app.get("/portfolio-getchanges", u).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(err(&v).contains("portfolio_id"), "{v}");
    // Another organisation's key does not see the book.
    let other = app.store.create_org("Elsewhere Mutual").await.unwrap();
    let theirs = TestApp::org_key_in(&*app.store, other.id).await;
    let (s, v, _) =
        app.call(Method::GET, &format!("/portfolio-getchanges?portfolio_id={BOOK}"), Some(&theirs), None).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(err(&v).contains("there is no portfolio"), "{v}");
    // A monitor key has no portfolio scope.
    assert_eq!(
        app.get(&format!("/portfolio-getchanges?portfolio_id={BOOK}"), &app.monitor).await.0,
        StatusCode::FORBIDDEN
    );
}
