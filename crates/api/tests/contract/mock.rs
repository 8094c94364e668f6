//! Mock mode: every path answers with sample responses built by the same serialisers,
//! with the same error behaviour for bad input, and no key management.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{TestApp, operations};
use crate::shapes;

async fn spawn_mock() -> TestApp {
    let mock = api::MockData {
        company: model::SocialId::parse(intel::sample::MOCK_COMPANY).unwrap(),
        cve: model::CveId::parse(vulndb::import::SAMPLE_CVE).unwrap(),
        incident: intel::sample::MOCK_INCIDENT.to_owned(),
    };
    TestApp::spawn_with(api::Config {
        key_cache_ttl: Duration::ZERO,
        read_cache_ttl: Duration::ZERO,
        cve_cache_ttl: Duration::ZERO,
        version_poll: Duration::from_millis(50),
        flush_every: Duration::from_millis(50),
        mock: Some(mock),
        auth_failures_per_minute: api::FAILURES_PER_MINUTE,
        request_timeout: api::REQUEST_TIMEOUT,
        trusted_proxies: Vec::new(),
        metrics: Some(std::sync::Arc::new(api::metrics::Metrics::new(Default::default()))),
        metrics_on_api: true,
        lab_addresses: false,
        default_cadence: api::DEFAULT_CADENCE,
    })
    .await
}

#[tokio::test]
async fn every_path_answers_with_spec_shapes_for_any_key() {
    let app = spawn_mock().await;
    for (method, path, _, body) in operations() {
        // Identifiers the sample does not hold still get the sample answer.
        let path = path
            .replace("social_id=acme-robotics", "social_id=any-company")
            .replace("domain=acme-robotics.example", "domain=anything.example")
            .replace("CVE-2021-44228", "CVE-2020-0001")
            .replace("RP-INC-2024-0001", "INC-1");
        let (s, v, _) = app.call(method, &path, Some("any-key-at-all"), body).await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
        shapes::check(path.split('?').next().unwrap(), &v);
    }
}

#[tokio::test]
async fn mock_keeps_the_error_behaviour() {
    let app = spawn_mock().await;
    let (s, v, _) = app.call(reqwest::Method::GET, "/underwriter-getcompanyscores?social_id=x", None, None).await;
    assert_eq!((s, v), (StatusCode::UNAUTHORIZED, json!({"error": "API Key is required"})));
    let k = "whatever";
    assert_eq!(
        app.get("/underwriter-getcompanyscores?social_id=bad%20id", k).await,
        (StatusCode::BAD_REQUEST, json!({"error": "social_id is not valid"}))
    );
    assert_eq!(
        app.get("/general-getsocialid-by-companyname?company_name=a&page=0", k).await,
        (StatusCode::BAD_REQUEST, json!({"error": "Page value should be greater than 0"}))
    );
    assert_eq!(app.get("/nope", k).await, (StatusCode::NOT_FOUND, json!({"error_msg": "404 Route Not Found"})));
}
