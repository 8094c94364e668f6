//! Underwriting guidelines (docs/API.md, "Underwriting guidelines"): set, read back,
//! versioned, refused by rule when malformed, and applied to a company with each rule's
//! outcome, observation and findings.

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::helpers::{GUIDELINES, TestApp};

#[tokio::test]
async fn guidelines_are_set_versioned_and_applied() {
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    let (_, none) = app.get("/portfolio-getguidelines", u).await;
    assert_eq!((&none["version"], &none["document"]), (&json!(null), &json!({"rules": []})));

    let (s, set, _) = app.call(Method::POST, "/portfolio-set-guidelines", Some(u), Some(GUIDELINES)).await;
    assert_eq!((s, &set["version"], &set["rules"]), (StatusCode::OK, &json!(1), &json!(4)), "{set}");
    let kept = app.ok("/portfolio-getguidelines", u).await;
    assert_eq!(kept["document"]["rules"][1]["id"], "no-rdp");
    assert_eq!(kept["version"], 1);

    // A malformed rule is a 400 naming it; nothing is kept.
    for (doc, said) in [
        (
            r#"{"rules": [{"id": "a", "kind": "no_kev_cve", "action": "refer"}, {"id": "no-rdp", "kind": "forbidden_finding", "action": "decline"}]}"#,
            "rule 2 (no-rdp): code is required",
        ),
        (
            r#"{"rules": [{"id": "a", "kind": "min_grade", "value": "Z", "action": "refer"}]}"#,
            "rule 1 (a): value must be a grade, A to F",
        ),
        (r#"{"rules": 3}"#, "the document must be an object with a `rules` array"),
        ("[]", "The request body must be one JSON object"),
    ] {
        let (s, v, _) = app.call(Method::POST, "/portfolio-set-guidelines", Some(u), Some(doc)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{doc}: {v}");
        assert_eq!(v["error"], said, "{doc}");
    }
    assert_eq!(app.ok("/portfolio-getguidelines", u).await["version"], 1);

    // Applied: every rule's outcome; the company's is the strongest of them.
    let e = app.ok("/underwriter-evaluate-guidelines?social_id=acme-robotics", u).await;
    assert_eq!((&e["guideline_version"], &e["social_id"]), (&json!(1), &json!("acme-robotics")));
    let rules = e["rules"].as_array().unwrap();
    assert_eq!(
        rules.iter().map(|r| r["id"].as_str().unwrap()).collect::<Vec<_>>(),
        ["min-score", "no-rdp", "no-kev", "dmarc"]
    );
    let strongest = if rules.iter().any(|r| r["outcome"] == "decline") {
        "decline"
    } else if rules.iter().any(|r| r["outcome"] == "refer") {
        "refer"
    } else {
        "pass"
    };
    assert_eq!(e["outcome"], strongest, "{e}");
    // The sample's acme-robotics scores under 80: the score rule refers, saying what it saw.
    let score = e["score"].as_f64().unwrap();
    assert!(score < 80.0);
    assert_eq!((&rules[0]["outcome"], &rules[0]["observed"]), (&json!("refer"), &json!(format!("{score:.1}"))));
    // A finding rule is broken exactly when it names findings, each with that code.
    let rdp = &rules[1];
    let named = rdp["findings"].as_array().unwrap();
    assert_eq!(rdp["outcome"] == "decline", !named.is_empty(), "{rdp}");
    assert!(named.iter().all(|f| f["code"] == "open_ports.rdp_exposed"));
    let rdp_open = app
        .ok("/underwriter-getcompanyfindings?social_id=acme-robotics&code=open_ports.rdp_exposed", u)
        .await["pagination"]["total_items"]
        .as_u64()
        .unwrap();
    assert_eq!(named.len() as u64, rdp_open);

    // A new version is in force at once.
    let relaxed = r#"{"rules": [{"id": "any", "kind": "min_grade", "value": "F", "action": "decline"}]}"#;
    let (_, v, _) = app.call(Method::POST, "/portfolio-set-guidelines", Some(u), Some(relaxed)).await;
    assert_eq!(v["version"], 2);
    let e = app.ok("/underwriter-evaluate-guidelines?social_id=acme-robotics", u).await;
    assert_eq!((&e["outcome"], &e["guideline_version"]), (&json!("pass"), &json!(2)));
}
