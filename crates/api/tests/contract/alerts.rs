//! Alerts (docs/API.md, "Alerts"): a portfolio's rules set, refused by rule when
//! malformed, read back; the organisation's alerts listed by portfolio, kind and
//! acknowledgement, acknowledged once; another organisation's neither seen nor touched.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::helpers::{BOOK, ORG, TestApp};

const RULES: &str = r#"{"portfolio_id": 1, "rules": [
    {"id": "drop5", "kind": "score_drop", "points": 5, "tiers": [1, 2]},
    {"id": "high", "kind": "finding_opened", "severity": "high"}]}"#;

async fn raise(app: &TestApp, rule: &str, kind: &str, subject: &str) {
    let acme =
        app.store.company_by_social_id(&model::SocialId::parse("acme-robotics").unwrap()).await.unwrap().unwrap();
    let org = app.store.org_by_name(ORG).await.unwrap().unwrap().id;
    app.store
        .record_alerts(&[store::NewAlert {
            org,
            portfolio: BOOK,
            company: acme.id,
            rule_id: rule.into(),
            kind: kind.into(),
            subject: subject.into(),
            summary: format!("{kind} {subject}"),
            explanation: "Score 80.0 → 70.0 (−10.0), grade B → C, by a rescan: no finding opened or closed.".into(),
            created_at: time::OffsetDateTime::now_utc(),
        }])
        .await
        .unwrap();
}

#[tokio::test]
async fn alert_rules_are_set_read_and_refused_by_rule() {
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    let none = app.ok(&format!("/portfolio-getalertrules?portfolio_id={BOOK}"), u).await;
    assert_eq!((&none["count"], &none["rules"], &none["updated_at"]), (&json!(0), &json!([]), &Value::Null));
    let (s, set, _) = app.call(Method::POST, "/portfolio-set-alert-rules", Some(u), Some(RULES)).await;
    assert_eq!((s, &set["count"]), (StatusCode::OK, &json!(2)), "{set}");
    let kept = app.ok(&format!("/portfolio-getalertrules?portfolio_id={BOOK}"), u).await;
    assert_eq!(kept["rules"][0]["id"], "drop5");
    assert!(kept["updated_by"].as_str().unwrap().starts_with("key "));
    for (body, said) in [
        (r#"{"portfolio_id": 1, "rules": [{"id": "x", "kind": "score_drop"}]}"#, "rule 1 (x): points is required"),
        (r#"{"portfolio_id": 1, "rules": 3}"#, "the document must be an object with a `rules` array"),
        (r#"{"rules": []}"#, "portfolio_id"),
        (r#"{"portfolio_id": 999, "rules": []}"#, "portfolio_id: there is no portfolio 999"),
    ] {
        let (s, v, _) = app.call(Method::POST, "/portfolio-set-alert-rules", Some(u), Some(body)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert!(v["error"].as_str().unwrap().contains(said), "{body}: {v}");
    }
    assert_eq!(app.ok(&format!("/portfolio-getalertrules?portfolio_id={BOOK}"), u).await["count"], 2);
}

#[tokio::test]
async fn alerts_are_listed_filtered_and_acknowledged_once_by_their_organisation() {
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    raise(&app, "drop5", "score_drop", "").await;
    raise(&app, "high", "finding_opened", "7").await;
    let all = app.ok("/portfolio-getalerts", u).await;
    assert_eq!((all["alerts"].as_array().map(Vec::len), &all["unacknowledged"]), (Some(2), &json!(2)), "{all}");
    let first = &all["alerts"][0];
    assert_eq!((&first["social_id"], &first["acknowledged"]), (&json!("acme-robotics"), &json!(false)));
    assert!(first["explanation"].as_str().unwrap().starts_with("Score 80.0 → 70.0"));
    let kind = app.ok("/portfolio-getalerts?kind=score_drop", u).await;
    assert_eq!(kind["alerts"].as_array().map(Vec::len), Some(1));
    assert_eq!(app.ok(&format!("/portfolio-getalerts?portfolio_id={BOOK}"), u).await["pagination"]["total_items"], 2);

    // Acknowledged once: the first acknowledgement is kept; the unread count falls.
    let id = kind["alerts"][0]["alert_id"].as_i64().unwrap();
    let body = format!(r#"{{"alert_id": {id}}}"#);
    let (s, acked, _) = app.call(Method::POST, "/portfolio-ack-alert", Some(u), Some(&body)).await;
    assert_eq!((s, &acked["alert"]["acknowledged"]), (StatusCode::OK, &json!(true)), "{acked}");
    crate::shapes::check("/portfolio-ack-alert", &acked);
    let again = app.call(Method::POST, "/portfolio-ack-alert", Some(u), Some(&body)).await.1;
    assert_eq!(again["alert"]["acknowledged_at"], acked["alert"]["acknowledged_at"]);
    let unread = app.ok("/portfolio-getalerts?acknowledged=false", u).await;
    assert_eq!((unread["alerts"].as_array().map(Vec::len), &unread["unacknowledged"]), (Some(1), &json!(1)));

    // Asked wrongly: refused, naming the parameter.
    for (path, said) in [
        ("/portfolio-getalerts?acknowledged=maybe", "acknowledged must be true or false"),
        ("/portfolio-getalerts?kind=weather", "kind must be one of"),
        ("/portfolio-getalerts?portfolio_id=999", "there is no portfolio 999"),
        ("/portfolio-getalerts?page=0", "Page value should be greater than 0"),
    ] {
        let (s, v) = app.get(path, u).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{path}: {v}");
        assert!(v["error"].as_str().unwrap().contains(said), "{path}: {v}");
    }
    let (s, v, _) = app.call(Method::POST, "/portfolio-ack-alert", Some(u), Some("{}")).await;
    assert!(s == StatusCode::BAD_REQUEST && v["error"].as_str().unwrap().contains("alert_id"), "{v}");

    // Another organisation sees none of them and cannot acknowledge one.
    let other = app.store.create_org("Elsewhere Mutual").await.unwrap();
    let theirs = TestApp::org_key_in(&*app.store, other.id).await;
    let (s, v) = app.get("/portfolio-getalerts", &theirs).await;
    assert_eq!((s, &v["alerts"], &v["unacknowledged"]), (StatusCode::OK, &json!([]), &json!(0)), "{v}");
    let other_id = all["alerts"][0]["alert_id"].as_i64().unwrap();
    let body = format!(r#"{{"alert_id": {other_id}}}"#);
    let (s, v, _) = app.call(Method::POST, "/portfolio-ack-alert", Some(&theirs), Some(&body)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(app.ok("/portfolio-getalerts?acknowledged=false", u).await["unacknowledged"], 1, "untouched");
    let (s, _) = app.get(&format!("/portfolio-getalertrules?portfolio_id={BOOK}"), &theirs).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(app.get("/portfolio-getalerts", &app.monitor).await.0, StatusCode::FORBIDDEN);
}
