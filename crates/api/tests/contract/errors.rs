//! Every error of docs/API.md ("Errors"), table-driven, plus auth, scopes,
//! both 429s, the 500 that leaks nothing, and hostile input that must not crash.

use std::time::Duration;

use model::Scope;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{TestApp, operations};

const B: StatusCode = StatusCode::BAD_REQUEST;

#[tokio::test]
async fn bad_requests_of_the_spec_and_the_design() {
    let app = TestApp::spawn().await;
    let u = app.underwriter.clone();
    let m = app.monitor.clone();
    let rows: Vec<(&str, &String, &str)> = vec![
        // getdomain-by-socialid: a social_id missing, empty, malformed, unknown, not rated
        ("/general-getdomain-by-socialid", &u, "social_id is a required parameter"),
        ("/general-getdomain-by-socialid?social_id=", &u, "social_id is a required parameter"),
        ("/general-getdomain-by-socialid?social_id=not%20valid!", &u, "social_id is not valid"),
        ("/general-getdomain-by-socialid?social_id=no-such-company", &u, "Company not found"),
        (
            "/general-getdomain-by-socialid?social_id=acme-cloud-services",
            &u,
            "social_id not processed yet, a scan will start soon",
        ),
        // getsocialid by company name and by domain: missing, malformed, unknown; bad pages
        ("/general-getsocialid-by-companyname", &u, "company_name is a required parameter"),
        ("/general-getsocialid-by-companyname?company_name=zzzz", &u, "Company not found"),
        ("/general-getsocialid-by-companyname?company_name=acme&page=0", &u, "Page value should be greater than 0"),
        ("/general-getsocialid-by-companyname?company_name=acme&page=-3", &u, "Page value should be greater than 0"),
        ("/general-getsocialid-by-companyname?company_name=acme&page=abc", &u, "Invalid request"),
        ("/general-getsocialid-by-domain", &u, "domain is a required parameter"),
        ("/general-getsocialid-by-domain?domain=not_a_domain", &u, "domain is not valid"),
        ("/general-getsocialid-by-domain?domain=nobody.example", &u, "Company not found"),
        // the same rules on every operation that names a company
        ("/underwriter-getcompanyscores?social_id=bad%20id", &u, "social_id is not valid"),
        ("/underwriter-getcompanyinfo", &u, "social_id is a required parameter"),
        ("/underwriter-getcompanysbom?social_id=acme-robotics&page=0", &u, "Page value should be greater than 0"),
        ("/underwriter-getcompanysbomdomain?social_id=acme-robotics", &u, "domain is a required parameter"),
        ("/underwriter-getcompanystats?social_id=nobody", &u, "Company not found"),
        ("/underwriter-getincidentdetail-by-id", &u, "incident_id is a required parameter"),
        ("/underwriter-getincidentdetail-by-id?incident_id=nope", &u, "Incident not found"),
        ("/underwriter-getcompany-history-domain?domain=-x-.example", &u, "domain is not valid"),
        // vulnerability
        ("/vulnerability-describe-cve-id", &u, "cve_id is a required parameter"),
        (
            "/vulnerability-describe-cve-id?cve_id=CVE-21-1",
            &u,
            "cve_id is not valid: expected CVE-YYYY-NNNN (4 to 19 digits)",
        ),
        ("/vulnerability-describe-cve-id?cve_id=CVE-2099-99999", &u, "CVE not found"),
        (
            "/vulnerability-get-cve-from-cpe-id?cpe=apache:log4j",
            &u,
            "cpe is not valid: expected cpe:2.3:PART:VENDOR:PRODUCT[:VERSION...] or cpe:/PART:VENDOR:PRODUCT[:VERSION...]",
        ),
        (
            "/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:x:a:b",
            &u,
            "cpe is not valid: the part must be a (application), o (operating system) or h (hardware)",
        ),
        (
            "/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a::b",
            &u,
            "cpe is not valid: an attribute is empty (use * for any)",
        ),
        ("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:*:*", &u, "cpe must name a vendor and a product"),
        (
            "/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j&limit=0",
            &u,
            "limit must be a positive integer",
        ),
        ("/vulnerability-get-last?limit=ten", &u, "limit must be a positive integer"),
        ("/vulnerability-search-by-vendor?vendor=apache", &u, "product is a required parameter"),
        ("/vulnerability-get-product-by-vendor", &u, "vendor is a required parameter"),
        // monitor
        (
            "/monitor-get-subdomain-findings?subdomain=mail.acme-robotics.example",
            &m,
            "risk_vector_type is a required parameter",
        ),
        ("/monitor-get-tail-risk-estimation?period=0", &m, "period must be an integer from 1 to 60 (months)"),
        ("/monitor-get-data-loss-prediction?period=61", &m, "period must be an integer from 1 to 60 (months)"),
        ("/monitor-get-incident-prediction?period=six", &m, "period must be an integer from 1 to 60 (months)"),
        ("/monitor-getall-subdomain-findings?subdomain=a..b", &m, "subdomain is not valid"),
        ("/monitor-getcompanysbomdomain", &m, "domain is a required parameter"),
        ("/monitor-listsubsidiaries?page=0", &m, "Page value should be greater than 0"),
    ];
    for (path, key, msg) in rows {
        let (s, v) = app.get(path, key).await;
        assert_eq!((s, v.clone()), (B, json!({"error": msg})), "{path}");
    }

    // risk vectors: anything else lists the twelve names.
    let (s, v) =
        app.get("/monitor-get-subdomain-findings?subdomain=mail.acme-robotics.example&risk_vector_type=dns", &m).await;
    assert_eq!(s, B);
    assert_eq!(
        v["error"],
        "risk_vector_type must be one of: spf, dkim, certificate_conf, certificate_info, open_ports, web_headers, dmarc, it_standardization, digitalization, certificate_cve, vulnerabilities, sbom"
    );
}

#[tokio::test]
async fn an_unprocessed_company_queues_one_scan() {
    let app = TestApp::spawn().await;
    for _ in 0..3 {
        let (s, v) = app.get("/underwriter-getcompanyscores?social_id=acme-cloud-services", &app.underwriter).await;
        assert_eq!((s, v["error"].as_str()), (B, Some("social_id not processed yet, a scan will start soon")));
    }
    let scans: Vec<_> = store::testkit::pending_jobs(&*app.store)
        .await
        .unwrap()
        .into_iter()
        .filter(|j| j.spec.company().as_str() == "acme-cloud-services")
        .collect();
    assert_eq!(scans.len(), 1);
}

/// A company whose last scan found that its domain does not exist is not "about to be
/// scanned": the answer says why it is not rated, and no scan is queued again the same
/// day.
#[tokio::test]
async fn a_company_whose_domain_does_not_exist_is_told_so() {
    let app = TestApp::spawn().await;
    let sid = model::SocialId::parse("acme-cloud-services").unwrap();
    let c = app.store.company_by_social_id(&sid).await.unwrap().unwrap();
    let why = "the domain acme-cloud.example does not exist (NXDOMAIN): nothing to rate; check the company's domain";
    app.store.set_scan_error(c.id, Some(why)).await.unwrap();
    let (s, v) = app.get("/underwriter-getcompanyscores?social_id=acme-cloud-services", &app.underwriter).await;
    assert_eq!((s, v["error"].as_str()), (B, Some(format!("social_id not rated: {why}").as_str())));
    assert!(
        !store::testkit::pending_jobs(&*app.store)
            .await
            .unwrap()
            .iter()
            .any(|j| j.spec.company().as_str() == "acme-cloud-services"),
        "no scan queued again within a day"
    );
    // Cleared (a later scan rated it, or the domain was fixed): back to the usual answer.
    app.store.set_scan_error(c.id, None).await.unwrap();
    let (s, v) = app.get("/underwriter-getcompanyscores?social_id=acme-cloud-services", &app.underwriter).await;
    assert_eq!((s, v["error"].as_str()), (B, Some("social_id not processed yet, a scan will start soon")));
}

#[tokio::test]
async fn writes_validate_their_input() {
    let app = TestApp::spawn().await;
    let m = app.monitor.clone();
    let good = json!({"name":"Acme Drones","website":"https://acme-drones.example","employees":40,"followers":900,"industry":"Aviation","sub_industry":"Drones","social_id":"acme-drones","parent_company_name":"Acme Robotics","parent_social_id":"acme-robotics"});
    let with = |k: &str, v: serde_json::Value| {
        let mut b = good.clone();
        b[k] = v;
        b.to_string()
    };
    let without = |k: &str| {
        let mut b = good.clone();
        b.as_object_mut().unwrap().remove(k);
        b.to_string()
    };
    let rows: Vec<(String, &str)> = vec![
        ("not json".into(), "Invalid request"),
        ("[1,2]".into(), "Invalid request"),
        (" \n[\"Acme\"]".into(), "Invalid request"),
        (r#"{"name":"A","name":"B"}"#.into(), "Invalid request"),
        (without("name"), "name is a required parameter"),
        (with("name", json!("")), "name is a required parameter"),
        (with("name", json!(5)), "name is not valid"),
        (with("name", json!(null)), "name is a required parameter"),
        (with("name", json!("Acme\u{1}Drones")), "name is not valid"),
        (with("name", json!(" \t ")), "name is a required parameter"),
        (with("employees", json!(1e30)), "employees is not valid"),
        (with("employees", json!(true)), "employees is not valid"),
        (with("dkim_selectors", json!([["s1"]])), "dkim_selectors is not valid"),
        (with("dkim_selectors", json!("s1")), "dkim_selectors is not valid"),
        (
            with("dkim_selectors", json!((0..17).map(|i| format!("s{i}")).collect::<Vec<_>>())),
            "dkim_selectors is not valid",
        ),
        (with("dkim_selectors", json!(vec![0; 20_000])), "dkim_selectors is not valid"),
        (without("website"), "website is a required parameter"),
        (with("website", json!("ftp://x.example")), "website is not valid"),
        (with("website", json!("https://x.example/<script>alert(1)</script>")), "website is not valid"),
        (with("website", json!("https://x.example/#'><img src=x>")), "website is not valid"),
        (with("employees", json!(-5)), "employees is not valid"),
        (with("employees", json!("many")), "employees is not valid"),
        (with("followers", json!(1.5)), "followers is not valid"),
        (with("industry", json!(["x"])), "industry is not valid"),
        (with("sub_industry", json!({})), "sub_industry is not valid"),
        (without("social_id"), "social_id is a required parameter"),
        (with("social_id", json!("bad id")), "social_id is not valid"),
        (with("parent_company_name", json!(1)), "parent_company_name is not valid"),
        (without("parent_social_id"), "parent_social_id is a required parameter"),
        (with("parent_social_id", json!("globex-logistics")), "parent_social_id is not the company of this API key"),
        (with("social_id", json!("acme-robotics")), "social_id must differ from parent_social_id"),
    ];
    for (body, msg) in rows {
        let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&m), Some(&body)).await;
        assert_eq!((s, v), (B, json!({"error": msg})), "{body}");
    }
    let rescan = [
        (
            "/monitor-rescan-subdomain-by-vectorid?subdomain=mail.acme-robotics.example",
            "risk_vector_id is a required parameter",
        ),
        ("/monitor-rescan-subdomain-by-vectorid?risk_vector_id=dkim", "subdomain is a required parameter"),
        (
            "/monitor-rescan-subdomain-by-vectorid?risk_vector_id=dkim&subdomain=evil.example",
            "evil.example is not an asset of this company",
        ),
    ];
    for (path, msg) in rescan {
        let (s, v, _) = app.call(Method::PUT, path, Some(&m), None).await;
        assert_eq!((s, v), (B, json!({"error": msg})), "{path}");
    }
    let (s, v, _) =
        app.call(Method::DELETE, "/monitor-delete-subsidiary?subsidiary_id=globex-logistics", Some(&m), None).await;
    assert_eq!((s, v), (B, json!({"error": "Subsidiary not found"})));
    let (s, v, _) = app.call(Method::DELETE, "/monitor-delete-subsidiary", Some(&m), None).await;
    assert_eq!((s, v), (B, json!({"error": "subsidiary_id is a required parameter"})));
    // A body over 64 KB is refused in the API's error shape, on every operation that
    // reads one; one at the limit is read (and judged on its content).
    let over = format!("{{\"name\":\"{}\"}}", "a".repeat(api::BODY_LIMIT));
    for path in ["/monitor-add-subsidiary", "/monitor-dispute-finding", "/monitor-add-asset", "/monitor-remove-asset"] {
        let (s, v, _) = app.call(Method::POST, path, Some(&m), Some(&over)).await;
        assert_eq!(
            (s, v),
            (StatusCode::PAYLOAD_TOO_LARGE, json!({"error": "The request body is over 64 KB"})),
            "{path}"
        );
    }
    let at = format!("{{\"x\":\"{}\"}}", "a".repeat(api::BODY_LIMIT - 8));
    assert_eq!(at.len(), api::BODY_LIMIT);
    let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(&m), Some(&at)).await;
    assert_eq!((s, v), (B, json!({"error": "name is a required parameter"})));
    assert!(store::testkit::pending_jobs(&*app.store).await.unwrap().is_empty(), "no rejected write queued anything");
}

#[tokio::test]
async fn authentication_and_scopes() {
    let app = TestApp::spawn().await;
    let path = "/underwriter-getcompanyscores?social_id=acme-robotics";
    let (s, v, _) = app.call(Method::GET, path, None, None).await;
    assert_eq!((s, v), (StatusCode::UNAUTHORIZED, json!({"error": "API Key is required"})));
    let (s, v, _) = app.call(Method::GET, path, Some("  "), None).await;
    assert_eq!((s, v), (StatusCode::UNAUTHORIZED, json!({"error": "API Key is required"})));
    let (s, v, _) = app.call(Method::GET, path, Some("rk_0000"), None).await;
    assert_eq!((s, v), (StatusCode::UNAUTHORIZED, json!({"error": "Invalid API key"})));
    let (s, v, _) = app.call(Method::GET, path, Some(&"x".repeat(5000)), None).await;
    assert_eq!((s, v), (StatusCode::UNAUTHORIZED, json!({"error": "Invalid API key"})));

    // Deactivated, by the same store call `rampart keys deactivate` makes.
    let key = app.key(vec![Scope::Underwriter], None, 0, 0).await;
    assert_eq!(app.get(path, &key).await.0, StatusCode::OK);
    let prefix = &key[..11];
    assert!(app.store.set_key_active(prefix, false).await.unwrap());
    let (s, v) = app.get(path, &key).await;
    assert_eq!((s, v), (StatusCode::UNAUTHORIZED, json!({"error": "API key is deactivated"})));

    // Wrong scope.
    let forbidden = json!({"error": "API key is not allowed to call this operation"});
    let vuln_only = app.key(vec![Scope::Vulnerability], None, 0, 0).await;
    assert_eq!(app.get(path, &vuln_only).await, (StatusCode::FORBIDDEN, forbidden.clone()));
    assert_eq!(app.get("/vulnerability-get-vendors", &vuln_only).await.0, StatusCode::OK);
    assert_eq!(app.get("/monitor-getcompanyinfo", &app.underwriter).await, (StatusCode::FORBIDDEN, forbidden.clone()));

    // A key bound to acme-robotics sees acme and its subsidiaries, nothing else.
    let m = &app.monitor;
    assert_eq!(
        app.get("/underwriter-getcompanyinfo?social_id=globex-logistics", m).await,
        (StatusCode::FORBIDDEN, forbidden.clone())
    );
    assert_eq!(
        app.get("/general-getsocialid-by-domain?domain=globex-logistics.example", m).await,
        (StatusCode::FORBIDDEN, forbidden.clone())
    );
    assert_eq!(app.get("/underwriter-getcompanyinfo?social_id=acme-robotics-labs", m).await.0, StatusCode::OK);
    let (_, v) = app.get("/general-getsocialid-by-companyname?company_name=a", m).await;
    let seen: Vec<&str> = v["data"].as_array().unwrap().iter().map(|d| d["social_id"].as_str().unwrap()).collect();
    assert_eq!(seen, ["acme-robotics", "acme-cloud-services", "acme-robotics-labs"]);
    let (_, v) = app.get("/underwriter-getlastcompaniesscanned", m).await;
    assert_eq!(v["pagination"]["total_items"], 2, "acme and its rated subsidiary");
    // Another company's monitor key reports on that company only.
    let globex = app.key(vec![Scope::Monitor], Some("globex-logistics"), 0, 0).await;
    assert_eq!(app.ok("/monitor-getcompanyinfo", &globex).await["social_id"], "globex-logistics");
}

#[tokio::test]
async fn unknown_routes_and_methods() {
    let app = TestApp::spawn().await;
    let nf = json!({"error_msg": "404 Route Not Found"});
    for (method, path, key) in [
        (Method::GET, "/nope", None),
        (Method::GET, "/nope", Some(app.underwriter.as_str())),
        (Method::GET, "/general-getdomain-by-socialid/extra", None),
        (Method::TRACE, "/nope", None),
    ] {
        let (s, v, _) = app.call(method.clone(), path, key, None).await;
        assert_eq!((s, v), (StatusCode::NOT_FOUND, nf.clone()), "{method} {path}");
    }
    // A known path with another method: 405 naming the methods it takes. TRACE is one
    // of them, and echoes nothing of the request.
    let na = json!({"error_msg": "405 Method Not Allowed"});
    for (method, path, key, allow) in [
        (
            Method::POST,
            "/general-getdomain-by-socialid?social_id=acme-robotics",
            Some(app.underwriter.as_str()),
            "GET,HEAD",
        ),
        (Method::GET, "/monitor-add-subsidiary", Some(app.monitor.as_str()), "POST"),
        (Method::DELETE, "/monitor-rescan-subdomain-by-vectorid", Some(app.monitor.as_str()), "PUT"),
        (
            Method::TRACE,
            "/underwriter-getcompanyscores?social_id=acme-robotics",
            Some(app.underwriter.as_str()),
            "GET,HEAD",
        ),
        (Method::TRACE, "/healthz", None, "GET,HEAD"),
    ] {
        let (s, v, h) = app.call(method.clone(), path, key, Some("echo-me")).await;
        assert_eq!((s, v.clone()), (StatusCode::METHOD_NOT_ALLOWED, na.clone()), "{method} {path}");
        assert_eq!(h.get("allow").and_then(|v| v.to_str().ok()), Some(allow), "{method} {path}");
        assert!(!v.to_string().contains("echo-me") && !v.to_string().contains("apikey"));
    }
    // HEAD is served by an operation's GET, and is checked as it is: a key, its scope.
    let head = async |path: &str, key: Option<&str>| {
        let mut req = app.client.head(app.url(path));
        if let Some(k) = key {
            req = req.header("apikey", k);
        }
        let resp = req.send().await.expect("request");
        (resp.status(), resp.headers().contains_key("x-request-id"))
    };
    for path in [
        "/general-getdomain-by-socialid?social_id=acme-robotics",
        "/vulnerability-get-vendors",
        "/monitor-getcompanyinfo",
    ] {
        assert_eq!(head(path, None).await, (StatusCode::UNAUTHORIZED, true), "HEAD {path} without a key");
    }
    assert_eq!(
        head("/monitor-getcompanyinfo", Some(app.underwriter.as_str())).await,
        (StatusCode::FORBIDDEN, true),
        "HEAD of a monitor operation with an underwriter key"
    );
    assert_eq!(
        head("/general-getdomain-by-socialid?social_id=acme-robotics", Some(app.underwriter.as_str())).await,
        (StatusCode::OK, true)
    );
}

#[tokio::test]
async fn both_rate_limits_answer_429_with_retry_after() {
    let app = TestApp::spawn().await;
    let path = "/vulnerability-get-vendors";
    let per_minute = app.key(vec![Scope::Vulnerability], None, 2, 0).await;
    assert_eq!(app.get(path, &per_minute).await.0, StatusCode::OK);
    assert_eq!(app.get(path, &per_minute).await.0, StatusCode::OK);
    let (s, v, h) = app.call(Method::GET, path, Some(&per_minute), None).await;
    if s == StatusCode::OK {
        // The calendar minute turned between the calls: the limit starts over, once.
        let (s2, _, _) = app.call(Method::GET, path, Some(&per_minute), None).await;
        assert_eq!(s2, StatusCode::OK);
    } else {
        assert_eq!((s, v), (StatusCode::TOO_MANY_REQUESTS, json!({"error": "Too many API requests per minute"})));
        let retry: u64 = h["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry), "{retry}");
    }

    let monthly = app.key(vec![Scope::Vulnerability], None, 0, 3).await;
    for _ in 0..3 {
        assert_eq!(app.get(path, &monthly).await.0, StatusCode::OK);
    }
    let (s, v, h) = app.call(Method::GET, path, Some(&monthly), None).await;
    assert_eq!((s, v), (StatusCode::TOO_MANY_REQUESTS, json!({"error": "API rate limit exceeded"})));
    let retry: u64 = h["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=31 * 86_400).contains(&retry), "{retry}");

    // The monthly count is persisted: a new process over the same database still refuses.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let month = model::timefmt::month(model::timefmt::now());
    let keys = app.store.keys().await.unwrap();
    let id = keys.iter().find(|k| k.monthly == 3).unwrap().id;
    assert_eq!(app.store.usage(id, &month).await.unwrap(), 3);
}

#[tokio::test]
async fn internal_failures_leak_nothing() {
    let app = TestApp::spawn().await;
    // Corrupt one row behind the store's back, as a broken migration or disk might.
    app.execute_raw("UPDATE companies SET domain = 'not a domain!' WHERE social_id = 'initech'").await;
    let (s, v) = app.get("/underwriter-getcompanyinfo?social_id=initech", &app.underwriter).await;
    assert_eq!(
        (s, v),
        (StatusCode::INTERNAL_SERVER_ERROR, json!({"error": "Something went wrong, please contact support"}))
    );
    // The server is still up.
    assert_eq!(app.get("/vulnerability-get-vendors", &app.underwriter).await.0, StatusCode::OK);
}

#[tokio::test]
async fn hostile_input_never_crashes_the_server() {
    let app = TestApp::spawn().await;
    let nasty = [
        "%00",
        "%FF%FE",
        "'%20OR%201=1--",
        "%25",
        "..%2F..%2Fetc%2Fpasswd",
        "%F0%9F%92%A3",
        "-1",
        "99999999999999999999999999",
        "cpe:2.3:a:%5C",
        "a%0Ab",
        "1e308",
        &"a".repeat(3000),
    ];
    // Each operation with every parameter it takes (an unknown one is refused before
    // its handler sees the query: `unknown_parameters_are_refused_by_name`).
    let taken = documented_parameters();
    for (method, path, monitor, _) in operations() {
        let key = if monitor { &app.monitor } else { &app.underwriter };
        let base = path.split('?').next().unwrap();
        let params = &taken[&(method.to_string(), base.to_owned())];
        for n in nasty {
            let query: Vec<String> = params.iter().map(|p| format!("{p}={n}")).collect();
            let (s, v, _) = app.call(method.clone(), &format!("{base}?{}", query.join("&")), Some(key), Some(n)).await;
            assert!(
                [StatusCode::OK, StatusCode::BAD_REQUEST, StatusCode::FORBIDDEN].contains(&s),
                "{method} {base} with {n:?}: {s} {v}"
            );
            assert!(v.get("error").is_some() || s == StatusCode::OK, "{v}");
        }
    }
    assert_eq!(app.get("/vulnerability-get-vendors", &app.underwriter).await.0, StatusCode::OK);
}

/// `page` is what the OpenAPI document says (1 to 2^31−1); anything else is a 400 with
/// the spec's text, never a saturated page number echoed back.
#[tokio::test]
async fn page_numbers_outside_the_schema_are_refused() {
    let app = TestApp::spawn().await;
    let path = "/underwriter-getlastcompaniesscanned";
    let (s, v) = app.get(&format!("{path}?page=2147483647"), &app.underwriter).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["pagination"]["current_page"], 2147483647u64);
    for bad in ["2147483648", "18446744073709551616", "99999999999999999999999999", "%2B2", "%202", "1e3"] {
        let (s, v) = app.get(&format!("{path}?page={bad}"), &app.underwriter).await;
        assert_eq!((s, v), (StatusCode::BAD_REQUEST, json!({"error": "Invalid request"})), "page={bad}");
    }
    let (s, v) = app.get(&format!("{path}?page=1&page=2"), &app.underwriter).await;
    assert_eq!((s, v), (StatusCode::BAD_REQUEST, json!({"error": "Invalid request"})), "a parameter given twice");
    for zero in ["0", "-1", "-99999999999999999999"] {
        let (s, v) = app.get(&format!("{path}?page={zero}"), &app.underwriter).await;
        assert_eq!((s, v), (StatusCode::BAD_REQUEST, json!({"error": "Page value should be greater than 0"})));
    }
}

/// Many connections that send a header one byte a second (slowloris) neither delay a
/// normal client nor stay open: each is closed once the header read timeout passes.
#[tokio::test]
async fn slow_header_senders_are_cut_off_and_starve_nobody() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn().await;
    let mut slow = Vec::new();
    for _ in 0..200 {
        let mut s = tokio::net::TcpStream::connect(app.addr).await.unwrap();
        s.write_all(b"G").await.unwrap();
        slow.push(s);
    }
    let dripping = tokio::spawn(async move {
        let started = std::time::Instant::now();
        let mut closed_at = None;
        for second in 0..30 {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let mut alive = 0;
            for s in &mut slow {
                if s.write_all(b"E").await.is_ok() {
                    alive += 1;
                }
            }
            // A closed connection answers the next read with EOF (or a reset).
            let mut buf = [0u8; 256];
            let first = &mut slow[0];
            let ended = matches!(
                tokio::time::timeout(std::time::Duration::from_millis(10), first.read(&mut buf)).await,
                Ok(Ok(0) | Err(_))
            );
            if ended && closed_at.is_none() {
                closed_at = Some(started.elapsed());
                let _ = (second, alive);
                break;
            }
        }
        closed_at
    });
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let started = std::time::Instant::now();
    let (s, _) = app.get("/vulnerability-get-vendors", &app.underwriter).await;
    let took = started.elapsed();
    assert_eq!(s, StatusCode::OK);
    assert!(took < std::time::Duration::from_secs(1), "a normal request took {took:?} beside 200 slow ones");
    let closed = dripping.await.unwrap().expect("a slow header sender was never cut off");
    let limit = api::HEADER_READ_TIMEOUT + std::time::Duration::from_secs(3);
    assert!(closed <= limit, "cut off after {closed:?}");
}

/// A client that keeps failing authentication (guessing keys) is answered 429 past the
/// per-address limit, before any key lookup; a key that authenticated before, from the
/// same address, still works; a key never seen does not get through.
#[tokio::test]
async fn key_guessing_is_rate_limited_per_address() {
    // Keys are read from the store on every request here (no key cache): the known key
    // is let through because it authenticated before, not because it is cached.
    let app = TestApp::spawn().await;
    let path = "/vulnerability-get-vendors";
    assert_eq!(app.get(path, &app.underwriter).await.0, StatusCode::OK);
    for i in 0..api::FAILURES_PER_MINUTE {
        let (s, v) = app.get(path, &format!("rk_guess{i:04}")).await;
        if s == StatusCode::TOO_MANY_REQUESTS {
            // The calendar minute turned: the count started over (at most once).
            continue;
        }
        assert_eq!((s, v), (StatusCode::UNAUTHORIZED, json!({"error": "Invalid API key"})), "guess {i}");
    }
    let (mut s, mut v, mut h) = app.call(Method::GET, path, Some("rk_one-more"), None).await;
    if s == StatusCode::UNAUTHORIZED {
        // The minute turned during the loop: spend the new minute's budget too.
        for i in 0..api::FAILURES_PER_MINUTE {
            app.get(path, &format!("rk_again{i:04}")).await;
        }
        (s, v, h) = app.call(Method::GET, path, Some("rk_one-more"), None).await;
    }
    assert_eq!((s, v), (StatusCode::TOO_MANY_REQUESTS, json!({"error": "Too many API requests per minute"})));
    let retry: u64 = h["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));
    assert_eq!(app.get(path, &app.underwriter).await.0, StatusCode::OK, "a known key still works");
    let fresh = app.key(vec![Scope::Vulnerability], None, 0, 0).await;
    assert_eq!(app.get(path, &fresh).await.0, StatusCode::TOO_MANY_REQUESTS, "a key never seen waits for the minute");
}

/// A client that sends its request body a byte at a time (its header complete, so the
/// header read timeout does not apply) holds the request only for the request time:
/// it is answered 503 with Retry-After, and a normal client is answered meanwhile. The
/// default time is 30 seconds; the test gives the server two.
#[tokio::test]
async fn a_request_over_its_time_is_answered_503() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    assert_eq!(api::Config::default().request_timeout, std::time::Duration::from_secs(30));
    let app = TestApp::spawn_with(api::Config {
        key_cache_ttl: std::time::Duration::ZERO,
        request_timeout: std::time::Duration::from_secs(2),
        ..api::Config::default()
    })
    .await;
    let mut slow = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let head = format!(
        "POST /monitor-add-subsidiary HTTP/1.1\r\nhost: x\r\napikey: {}\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n{{",
        app.monitor
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let started = std::time::Instant::now();
    let dripping = tokio::spawn(async move {
        let mut answer = Vec::new();
        for _ in 0..20 {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            if slow.write_all(b" ").await.is_err() {
                break;
            }
            let mut buf = [0u8; 1024];
            if let Ok(Ok(n)) = tokio::time::timeout(std::time::Duration::from_millis(10), slow.read(&mut buf)).await {
                answer.extend_from_slice(&buf[..n]);
                if n == 0 || answer.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
        }
        (started.elapsed(), String::from_utf8_lossy(&answer).into_owned())
    });
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let (s, _) = app.get("/vulnerability-get-vendors", &app.underwriter).await;
    assert_eq!(s, StatusCode::OK, "a normal client beside the slow one");
    let (took, answer) = dripping.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer:?}");
    assert!(took >= std::time::Duration::from_secs(2) && took < std::time::Duration::from_secs(6), "{took:?}");
}

/// The query parameters every operation takes, from the OpenAPI document.
fn documented_parameters() -> std::collections::HashMap<(String, String), Vec<String>> {
    let doc = serde_json::to_value(api::openapi::document()).unwrap();
    let mut taken = std::collections::HashMap::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let names = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query")
                .map(|p| p["name"].as_str().unwrap().to_owned())
                .collect();
            taken.insert((method.to_uppercase(), path.clone()), names);
        }
    }
    taken
}

#[tokio::test]
async fn unknown_parameters_are_refused_by_name() {
    // Before, an unknown parameter was ignored: `?period=6&x=1` was another cached answer,
    // and a misspelt parameter went unnoticed. Now every operation takes exactly the
    // parameters its OpenAPI entry lists.
    let app = TestApp::spawn().await;
    let taken = documented_parameters();
    for (method, path, monitor, body) in operations().into_iter().chain(crate::helpers::extensions()) {
        let key = if monitor { &app.monitor } else { &app.underwriter };
        let base = path.split('?').next().unwrap();
        let listed = &taken[&(method.to_string(), base.to_owned())];
        let joiner = if path.contains('?') { '&' } else { '?' };
        let (s, v, _) = app.call(method.clone(), &format!("{path}{joiner}colour=red"), Some(key), body).await;
        assert_eq!((s, v), (B, json!({"error": "Unknown parameter: colour"})), "{method} {path} (takes {listed:?})");
        // A parameter of another operation is as unknown.
        if !listed.iter().any(|p| p == "social_id") {
            let (s, v, _) =
                app.call(method.clone(), &format!("{path}{joiner}social_id=acme-robotics"), Some(key), body).await;
            assert_eq!((s, v), (B, json!({"error": "Unknown parameter: social_id"})), "{method} {path}");
        }
    }
    // Names are compared as sent (case matters), and a long one is cut in the message.
    let (s, v) = app.get("/monitor-get-tail-risk-estimation?Period=6", &app.monitor).await;
    assert_eq!((s, v), (B, json!({"error": "Unknown parameter: Period"})));
    let long = "n".repeat(500);
    let (s, v) = app.get(&format!("/vulnerability-get-vendors?{long}=1"), &app.underwriter).await;
    assert_eq!((s, v), (B, json!({"error": format!("Unknown parameter: {}…", "n".repeat(64))})));
    // The key is checked first: no key, no word about the parameters.
    let (s, _, _) = app.call(Method::GET, "/vulnerability-get-vendors?colour=red", None, None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    // The documented parameters are all accepted.
    assert_eq!(
        app.get("/general-getsocialid-by-companyname?company_name=acme&page=1", &app.underwriter).await.0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn control_characters_in_parameters_are_refused() {
    // Before, `company_name=%00` listed all the companies the key may see.
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    let rows = [
        ("/general-getsocialid-by-companyname?company_name=%00", "company_name is not valid"),
        ("/general-getsocialid-by-companyname?company_name=acme%00", "company_name is not valid"),
        ("/general-getsocialid-by-companyname?company_name=ac%0Ame", "company_name is not valid"),
        ("/general-getsocialid-by-companyname?company_name=%09acme", "company_name is not valid"),
        ("/general-getsocialid-by-companyname?company_name=acme&page=1%7F", "page is not valid"),
        ("/general-getdomain-by-socialid?social_id=acme-robotics%1F", "social_id is not valid"),
        ("/general-getsocialid-by-domain?domain=acme-robotics.example%0D", "domain is not valid"),
        ("/vulnerability-search-by-vendor?vendor=apache&product=log4j%C2%85", "product is not valid"),
        ("/underwriter-getincidentdetail-by-id?incident_id=RP-INC-2024-0001%00", "incident_id is not valid"),
    ];
    for (path, msg) in rows {
        let (s, v) = app.get(path, u).await;
        assert_eq!((s, v), (B, json!({"error": msg})), "{path}");
    }
    let (s, v) = app.get("/monitor-get-tail-risk-estimation?period=6%00", &app.monitor).await;
    assert_eq!((s, v), (B, json!({"error": "period is not valid"})));
    // The document says so: every text parameter has a pattern without them.
    let doc = serde_json::to_value(api::openapi::document()).unwrap();
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            for p in op["parameters"].as_array().into_iter().flatten().filter(|p| p["schema"]["type"] == "string") {
                let pattern = p["schema"]["pattern"].as_str().unwrap_or_else(|| panic!("{p}"));
                assert!(pattern == api::openapi::TEXT_PATTERN || pattern.starts_with("^[A-Za-z0-9]"), "{p}");
            }
        }
    }
    // Text that is not a control character is still read as before.
    let (s, v) = app.get("/general-getsocialid-by-companyname?company_name=%20acme%20", u).await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

#[tokio::test]
async fn two_apikey_headers_are_an_invalid_key() {
    // Before, the first of two `apikey` headers was used.
    let app = TestApp::spawn().await;
    let path = "/underwriter-getcompanyscores?social_id=acme-robotics";
    for (first, second) in [(&app.underwriter, &app.underwriter), (&app.underwriter, &app.monitor)] {
        let resp = app
            .client
            .get(app.url(path))
            .header("apikey", first.as_str())
            .header("apikey", second.as_str())
            .send()
            .await;
        let resp = resp.unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(resp.json::<serde_json::Value>().await.unwrap(), json!({"error": "Invalid API key"}));
    }
    assert_eq!(app.get(path, &app.underwriter).await.0, StatusCode::OK, "one header is still fine");
}

#[tokio::test]
async fn one_key_cannot_take_the_simulations() {
    // Twelve tail-risk requests at once from one key (no read cache: each one simulates):
    // past two in flight the key is told to come back (429, Retry-After), and another
    // key's cheap requests are answered meanwhile, off the simulations' threads.
    let app = TestApp::spawn().await;
    let flood = futures_util::future::join_all(
        (0..12).map(|_| app.call(Method::GET, "/monitor-get-tail-risk-estimation?period=60", Some(&app.monitor), None)),
    );
    let cheap = async {
        let mut took = Vec::new();
        for _ in 0..5 {
            let started = std::time::Instant::now();
            let (s, _) = app.get("/underwriter-getcompanyscores?social_id=initech", &app.underwriter).await;
            assert_eq!(s, StatusCode::OK);
            took.push(started.elapsed());
        }
        took
    };
    let (answers, took) = tokio::join!(flood, cheap);
    let refused: Vec<_> = answers.iter().filter(|(s, _, _)| *s == StatusCode::TOO_MANY_REQUESTS).collect();
    assert!(!refused.is_empty(), "{:?}", answers.iter().map(|a| a.0).collect::<Vec<_>>());
    for (_, v, h) in &refused {
        assert_eq!(*v, json!({"error": "Too many predictions in flight for this API key"}));
        assert_eq!(h["retry-after"], "1");
    }
    assert!(answers.iter().any(|(s, _, _)| *s == StatusCode::OK));
    // The others were answered, or (a loaded machine) found no thread within the wait.
    assert!(answers.iter().all(|(s, _, _)| [200, 429, 503].contains(&s.as_u16())));
    assert!(took.iter().all(|t| *t < Duration::from_secs(3)), "{took:?}");
    // The key's places come back: it is answered again.
    assert_eq!(app.ok("/monitor-get-tail-risk-estimation?period=60", &app.monitor).await["period"], 60);
}

#[tokio::test]
async fn a_prediction_is_kept_by_its_inputs_not_their_spelling() {
    // With a read cache: `?period=6` is simulated once; `?period=06`, `?period=%2B6`, no
    // period (6 by default) are the same inputs, served from that answer — twelve at once
    // need no simulation, so none is refused (keyed by the query string, each spelling
    // simulated again, and past two in flight they were 429s).
    let app = TestApp::spawn_with(api::Config {
        key_cache_ttl: Duration::ZERO,
        read_cache_ttl: Duration::from_secs(600),
        ..api::Config::default()
    })
    .await;
    let first = app.ok("/monitor-get-tail-risk-estimation?period=6", &app.monitor).await;
    let spellings = ["?period=06", "?period=006", "?period=%2B6", "", "?period=0006", "?period=6"];
    let urls: Vec<String> =
        spellings.iter().cycle().take(12).map(|q| format!("/monitor-get-tail-risk-estimation{q}")).collect();
    let answers =
        futures_util::future::join_all(urls.iter().map(|u| app.call(Method::GET, u, Some(&app.monitor), None))).await;
    for (s, v, _) in answers {
        assert_eq!(s, StatusCode::OK, "{v}");
        assert_eq!(v, first);
    }
}
