//! The Portfolio group and the findings searches (docs/API.md, "Portfolios"): a real
//! server, the underwriter key's organisation and its portfolio `BOOK` (acme-robotics
//! and the paging company).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::helpers::{BOOK, PAGER, TestApp};

const B: StatusCode = StatusCode::BAD_REQUEST;

async fn post(app: &TestApp, path: &str, body: &str) -> (StatusCode, Value) {
    let (s, v, _) = app.call(Method::POST, path, Some(&app.underwriter), Some(body)).await;
    (s, v)
}

/// A raw answer: status, content type and text.
async fn raw(
    app: &TestApp,
    method: Method,
    path: &str,
    content_type: &str,
    body: &str,
) -> (StatusCode, String, String) {
    let resp = app
        .client
        .request(method, app.url(path))
        .header("apikey", &app.underwriter)
        .header("content-type", content_type)
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (status, ct, resp.text().await.unwrap())
}

fn sids(v: &Value) -> Vec<String> {
    v["companies"].as_array().unwrap().iter().map(|c| c["social_id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn portfolios_are_made_renamed_listed_and_deleted() {
    let app = TestApp::spawn().await;
    let (s, v) = post(&app, "/portfolio-create", r#"{"name":"  Vendors 2027 "}"#).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!((v["name"].as_str(), v["companies"].as_u64()), (Some("Vendors 2027"), Some(0)));
    let id = v["portfolio_id"].as_i64().unwrap();
    assert!(
        post(&app, "/portfolio-create", r#"{"name":"Vendors 2027"}"#).await.1["error"]
            .as_str()
            .unwrap()
            .contains("already")
    );
    for (body, error) in [
        (r#"{"name":"  "}"#, "name must not be empty"),
        (r#"{}"#, "name is a required parameter"),
        (r#"{"name":5}"#, "name is not valid"),
        (r#"[1]"#, "The request body must be one JSON object"),
    ] {
        let (s, v) = post(&app, "/portfolio-create", body).await;
        assert_eq!((s, v["error"].as_str().unwrap_or("")), (B, error), "{body}");
    }
    let (s, v) = post(&app, "/portfolio-rename", &format!(r#"{{"portfolio_id":{id},"name":"Book"}}"#)).await;
    assert_eq!(
        (s, v["error"].as_str().unwrap_or("")),
        (B, "name: the organisation has a portfolio named \"Book\" already")
    );
    let (s, v) = post(&app, "/portfolio-rename", &format!(r#"{{"portfolio_id":"{id}","name":"Suppliers"}}"#)).await;
    assert_eq!((s, v["name"].as_str()), (StatusCode::OK, Some("Suppliers")), "{v}");
    let list = app.ok("/portfolio-list", &app.underwriter).await;
    let names: Vec<&str> = list["portfolios"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Book", "Suppliers"]);
    assert_eq!(list["portfolios"][0]["companies"], 2);
    let (s, v, _) =
        app.call(Method::DELETE, &format!("/portfolio-delete?portfolio_id={id}"), Some(&app.underwriter), None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v, _) =
        app.call(Method::DELETE, &format!("/portfolio-delete?portfolio_id={id}"), Some(&app.underwriter), None).await;
    assert_eq!(
        (s, v["error"].as_str().unwrap()),
        (B, format!("portfolio_id: there is no portfolio {id} in this organisation").as_str())
    );
    for bad in ["0", "-1", "x", "1.5"] {
        let (s, v) = app.get(&format!("/portfolio-getsummary?portfolio_id={bad}"), &app.underwriter).await;
        assert_eq!((s, v["error"].as_str().unwrap()), (B, "portfolio_id is not valid"), "{bad}");
    }
    let (s, v) = app.get("/portfolio-getsummary", &app.underwriter).await;
    assert_eq!((s, v["error"].as_str().unwrap()), (B, "portfolio_id is a required parameter"));
}

#[tokio::test]
async fn companies_are_onboarded_by_domain_each_row_with_its_status() {
    let app = TestApp::spawn().await;
    let body = json!({"portfolio_id": BOOK, "companies": [
        {"domain": "globex-logistics.example", "tier": 2, "tags": ["EU", "logistics"], "custom_id": "V-7", "relationship": "insured"},
        {"domain": "https://www.initech.example/about", "tier": "1"},
        {"domain": "harbor-new.test", "industry": "Software Development", "employees": 120},
        {"domain": "named-new.test", "social_id": "named-co", "name": "Named Co"},
        {"domain": "10.0.0.1"},
        {"domain": "printer.local"},
        {"domain": "tiered.test", "tier": 9},
        {"domain": "globex-logistics.example", "social_id": "acme-robotics"},
        {"domain": "x.test", "colour": "red"},
        "just text",
        {"domain": "globex-logistics.example"},
        {"domain": "https://www.Harbor-New.test/"}
    ]});
    let (s, v) = post(&app, "/portfolio-add-companies", &body.to_string()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let rows = v["results"].as_array().unwrap();
    let status: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["status"].as_str().unwrap(), r["social_id"].as_str().unwrap_or("-"))).collect();
    assert_eq!(
        status,
        [
            ("rated", "globex-logistics"),
            ("rated", "initech"),
            ("queued", "harbor-new.test"),
            ("queued", "named-co"),
            ("refused", "-"),
            ("refused", "-"),
            ("refused", "-"),
            ("refused", "-"),
            ("refused", "-"),
            ("refused", "-"),
            ("rated", "globex-logistics"),
            ("queued", "harbor-new.test"),
        ],
        "{v}"
    );
    // A new company named twice is created once.
    assert_eq!((rows[11]["created"].as_bool(), rows[2]["created"].as_bool()), (Some(false), Some(true)));
    assert!(rows[11]["message"].as_str().unwrap().contains("the company of row 3"), "{}", rows[11]);
    let why = |i: usize| rows[i]["message"].as_str().unwrap().to_owned();
    assert!(why(4).contains("IP address"), "{}", why(4));
    assert!(why(5).contains("not a registrable domain"), "{}", why(5));
    assert!(why(6).contains("tier must be 1, 2, 3 or 4"), "{}", why(6));
    assert!(
        why(7).contains("social_id acme-robotics is the company of the domain acme-robotics.example"),
        "{}",
        why(7)
    );
    assert!(why(8).contains("unknown field \"colour\""), "{}", why(8));
    assert_eq!(rows[0]["depth"], "full");
    assert_eq!((rows[2]["created"].as_bool(), rows[0]["created"].as_bool()), (Some(true), Some(false)));
    assert_eq!(v["added"], 4, "globex, initech and the two new ones; globex twice is added once");
    assert_eq!(v["counts"], json!({"rated": 3, "queued": 3, "pending": 0, "refused": 6}));

    // The new company: created from its domain, its quick rating queued at top priority.
    let jobs = app.store.jobs(None, 100).await.unwrap();
    let job = jobs.iter().find(|j| j.spec.company().as_str() == "harbor-new.test").expect("its scan is queued");
    assert_eq!((job.spec.kind(), job.priority), ("quick", 40));
    let (s, v) = app.get("/underwriter-getcompanyscores?social_id=harbor-new.test", &app.underwriter).await;
    assert_eq!((s, v["error"].as_str().unwrap()), (B, api::error::NOT_PROCESSED));
    let (_, v) = app.get("/general-getsocialid-by-domain?domain=harbor-new.test", &app.underwriter).await;
    assert_eq!(v["social_id"], "harbor-new.test", "the onboarded domain answers by-domain");

    let list = app.ok(&format!("/portfolio-getcompanies?portfolio_id={BOOK}"), &app.underwriter).await;
    assert_eq!(sids(&list), ["acme-robotics", "globex-logistics", "harbor-new.test", "initech", "named-co", PAGER]);
    let row = |sid: &str| list["companies"].as_array().unwrap().iter().find(|c| c["social_id"] == sid).unwrap().clone();
    let harbor = row("harbor-new.test");
    assert_eq!((harbor["status"].as_str(), harbor["name_derived"].as_bool()), (Some("queued"), Some(true)), "{harbor}");
    assert_eq!(
        (harbor["name"].as_str(), harbor["industry"].as_str()),
        (Some("harbor-new.test"), Some("Software Development"))
    );
    assert_eq!(row("named-co")["name_derived"], false);
    let globex = row("globex-logistics");
    assert_eq!((globex["tier"].as_u64(), globex["custom_id"].as_str()), (Some(2), Some("V-7")));
    assert_eq!(
        (globex["tags"].clone(), globex["relationship"].clone()),
        (json!(["eu", "logistics"]), json!("insured"))
    );
    assert_eq!(row("initech")["tier"], 1);

    // CSV: the same columns, the portfolio in the query; a company there already keeps its record.
    let csv = "domain,tier,tags,name\r\nglobex-logistics.example,3,a;b,\r\n\"csv-new.test\",4,,\"Csv, Inc\"\r\n";
    let (s, _, text) =
        raw(&app, Method::POST, &format!("/portfolio-add-companies?portfolio_id={BOOK}"), "text/csv", csv).await;
    assert_eq!(s, StatusCode::OK, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!((v["added"].as_u64(), v["results"][1]["social_id"].as_str()), (Some(1), Some("csv-new.test")), "{v}");
    let list = app.ok(&format!("/portfolio-getcompanies?portfolio_id={BOOK}&q=csv"), &app.underwriter).await;
    assert_eq!(
        (list["companies"][0]["name"].as_str(), list["companies"][0]["tier"].as_u64()),
        (Some("Csv, Inc"), Some(4))
    );
    let list = app.ok(&format!("/portfolio-getcompanies?portfolio_id={BOOK}&q=globex"), &app.underwriter).await;
    assert_eq!(list["companies"][0]["tier"], 2, "kept");

    // Whole-request errors.
    for (ct, body, error) in [
        ("text/csv", "domain,colour\nx.test,red\n".to_owned(), "is not one of: domain, social_id"),
        ("text/csv", "name\nHarbor\n".to_owned(), "The CSV must have a domain column"),
        ("application/json", r#"{"portfolio_id":1}"#.to_owned(), "companies must be a list"),
        (
            "application/json",
            json!({"portfolio_id": 1, "companies": vec![json!({"domain": "a.test"}); 1001]}).to_string(),
            "at most 1000 per request",
        ),
        ("application/json", r#"{"portfolio_id":999,"companies":[]}"#.to_owned(), "there is no portfolio 999"),
    ] {
        let (s, _, text) =
            raw(&app, Method::POST, &format!("/portfolio-add-companies?portfolio_id={BOOK}"), ct, &body).await;
        assert_eq!(s, B, "{text}");
        assert!(text.contains(error), "{error}: {text}");
    }
    let big = format!("domain\n{}", "x".repeat(1_100_000));
    let (s, _, text) =
        raw(&app, Method::POST, &format!("/portfolio-add-companies?portfolio_id={BOOK}"), "text/csv", &big).await;
    assert_eq!((s, text.as_str()), (StatusCode::PAYLOAD_TOO_LARGE, r#"{"error":"The request body is over 1 MB"}"#));
}

#[tokio::test]
async fn vendor_records_are_updated_and_companies_removed() {
    let app = TestApp::spawn().await;
    let path = format!("/portfolio-update-company?portfolio_id={BOOK}&social_id=acme-robotics");
    let put = async |body: &str| {
        let (s, v, _) = app.call(Method::PUT, &path, Some(&app.underwriter), Some(body)).await;
        (s, v)
    };
    let (s, v) =
        put(r#"{"tier":3,"tags":["Critical","eu"],"stage":"review","owner":"ana@insurer.example","note":"renewal"}"#)
            .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (v["tier"].clone(), v["tags"].clone(), v["stage"].clone(), v["relationship"].clone()),
        (json!(3), json!(["critical", "eu"]), json!("review"), json!("vendor"))
    );
    let (s, v) = put(r#"{"tier":null,"note":""}"#).await;
    assert_eq!(
        (s, v["tier"].clone(), v["note"].clone(), v["owner"].clone()),
        (StatusCode::OK, Value::Null, json!(""), json!("ana@insurer.example"))
    );
    for (body, error) in [
        (r#"{"tier":0}"#, "tier must be 1, 2, 3 or 4"),
        (r#"{"stage":"dormant"}"#, "stage must be one of"),
        (r#"{"tags":["a;b"]}"#, "a tag is 1 to 40"),
        (r#"{"colour":"red"}"#, "Unknown field \"colour\""),
        (r#"{"owner":null}"#, "owner is not valid"),
    ] {
        let (s, v) = put(body).await;
        assert_eq!(s, B, "{body}: {v}");
        assert!(v["error"].as_str().unwrap().contains(error), "{body}: {v}");
    }
    let (s, v) = app.get(&format!("/portfolio-getcompanies?portfolio_id={BOOK}&tag=critical"), &app.underwriter).await;
    assert_eq!((s, sids(&v)), (StatusCode::OK, vec!["acme-robotics".to_owned()]));
    let remove = format!("/portfolio-remove-company?portfolio_id={BOOK}&social_id=acme-robotics");
    let (s, v, _) = app.call(Method::DELETE, &remove, Some(&app.underwriter), None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v, _) = app.call(Method::DELETE, &remove, Some(&app.underwriter), None).await;
    assert_eq!((s, v["error"].as_str().unwrap()), (B, "social_id: acme-robotics is not in portfolio 1"));
    let (s, v) = put(r#"{"tier":1}"#).await;
    assert_eq!((s, v["error"].as_str().unwrap()), (B, "social_id: acme-robotics is not in portfolio 1"));
    // The company and its rating stay.
    app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", &app.underwriter).await;
}

/// initech's ratings set 100, 40 and 5 days ago (50, 60, 80).
async fn rated_over_time(app: &TestApp) {
    let initech = app.store.company_by_social_id(&model::SocialId::parse("initech").unwrap()).await.unwrap().unwrap();
    let latest = app.store.latest_score(initech.id).await.unwrap().unwrap();
    let now = time::OffsetDateTime::now_utc();
    for (days, score) in [(100, 50.0), (40, 60.0), (5, 80.0)] {
        let mut r = latest.clone();
        r.scanned_at = model::OffsetDateTimeText(now - time::Duration::days(days));
        r.score = model::Score::from_f64(score).unwrap();
        r.grade = model::Grade::parse(if score >= 80.0 { "B" } else { "D" }).unwrap();
        app.store.replace_rating(initech.id, &r).await.unwrap();
    }
    // The sample's own rating of initech (November 2026) would be the latest: gone.
    app.execute_raw("DELETE FROM scores WHERE scanned_at = '2026-11-15T09:30:00Z'").await;
}

#[tokio::test]
async fn the_list_sorts_filters_pages_and_exports() {
    let app = TestApp::spawn().await;
    let body = json!({"portfolio_id": BOOK, "companies": [
        {"domain": "globex-logistics.example", "tier": 2, "tags": ["eu"]},
        {"domain": "initech.example", "tier": 1},
        {"domain": "queued-new.test"}
    ]});
    assert_eq!(post(&app, "/portfolio-add-companies", &body.to_string()).await.0, StatusCode::OK);
    let app = &app;
    rated_over_time(app).await;
    let list =
        async |q: &str| app.ok(&format!("/portfolio-getcompanies?portfolio_id={BOOK}{q}"), &app.underwriter).await;
    let all = list("").await;
    assert_eq!(all["pagination"]["total_items"], 5);
    let initech = all["companies"].as_array().unwrap().iter().find(|c| c["social_id"] == "initech").unwrap().clone();
    assert_eq!(
        (
            initech["score"].as_f64(),
            initech["change_7d"].as_f64(),
            initech["change_30d"].as_f64(),
            initech["change_90d"].as_f64()
        ),
        (Some(80.0), Some(20.0), Some(20.0), Some(30.0)),
        "{initech}"
    );
    // Rated 5 days ago: more than twice the default cadence (a day).
    assert_eq!((initech["depth"].as_str(), initech["stale"].as_bool()), (Some("full"), Some(true)));

    // Sorted by score, descending: unrated last, whichever the direction.
    let by_score = list("&sort=-score").await;
    let scores: Vec<Option<f64>> =
        by_score["companies"].as_array().unwrap().iter().map(|c| c["score"].as_f64()).collect();
    let rated: Vec<f64> = scores.iter().flatten().copied().collect();
    assert!(rated.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(scores.last().unwrap(), &None);
    assert_eq!(list("&sort=score").await["companies"][4]["social_id"], "queued-new.test");
    assert_eq!(sids(&list("&sort=-change_90d").await)[0], "initech");

    assert_eq!(sids(&list("&tier=1").await), ["initech"]);
    assert_eq!(sids(&list("&tier=1,2").await), ["globex-logistics", "initech"]);
    assert_eq!(sids(&list("&tier=none").await), ["acme-robotics", "pager-co", "queued-new.test"]);
    assert_eq!(sids(&list("&tag=EU").await), ["globex-logistics"]);
    assert_eq!(sids(&list("&q=INIT").await), ["initech"]);
    assert_eq!(sids(&list("&status=queued").await), ["queued-new.test"]);
    assert_eq!(sids(&list("&social_id=initech,%20queued-new.test,nobody").await), ["initech", "queued-new.test"]);
    let many: Vec<String> = (0..=100).map(|i| format!("c{i}")).collect();
    let too_many = format!("&social_id={}", many.join(","));
    assert_eq!(sids(&list("&grade=B").await), ["initech"]);
    let since = (time::OffsetDateTime::now_utc() - time::Duration::days(10)).date();
    assert_eq!(sids(&list(&format!("&changed_since={since}")).await), ["initech"], "moved since 10 days ago");
    assert_eq!(sids(&list("&industry=financial%20services").await), ["initech"]);
    for (q, error) in [
        ("&sort=colour", "sort must be one of"),
        ("&grade=Z", "grade: grade must be one of"),
        ("&tier=7", "tier must be"),
        ("&changed_since=yesterday", "changed_since must be"),
        ("&status=gone", "status must be one of"),
        (too_many.as_str(), "social_id names at most 100 companies"),
        ("&format=xml", "format must be json or csv"),
        ("&page=0", "Page value should be greater than 0"),
    ] {
        let (s, v) = app.get(&format!("/portfolio-getcompanies?portfolio_id={BOOK}{q}"), &app.underwriter).await;
        assert_eq!(s, B, "{q}: {v}");
        assert!(v["error"].as_str().unwrap().contains(error), "{q}: {v}");
    }

    // CSV: every matching row, in the same order, with a header.
    let (s, ct, text) = raw(
        app,
        Method::GET,
        &format!("/portfolio-getcompanies?portfolio_id={BOOK}&sort=-score&format=csv"),
        "text/plain",
        "",
    )
    .await;
    assert_eq!((s, ct.as_str()), (StatusCode::OK, "text/csv; charset=utf-8"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[0].starts_with("social_id,name,domain,industry,status,score,grade,change_7d"), "{}", lines[0]);
    let first: Vec<String> = sids(&by_score);
    for (line, sid) in lines[1..].iter().zip(&first) {
        assert!(line.starts_with(&format!("{sid},")), "{line} / {sid}");
    }

    // The summary agrees with the list.
    let sum = app.ok(&format!("/portfolio-getsummary?portfolio_id={BOOK}"), &app.underwriter).await;
    assert_eq!((sum["companies"].as_u64(), sum["rated"].as_u64()), (Some(5), Some(4)), "{sum}");
    let graded: u64 = sum["grades"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(graded, 4);
    assert!(sum["grades"]["B"].as_u64().unwrap() >= 1);
    let tier1 = sum["tiers"].as_array().unwrap().iter().find(|t| t["tier"] == 1).unwrap();
    assert_eq!((tier1["companies"].as_u64(), tier1["grades"]["B"].as_u64()), (Some(1), Some(1)), "{sum}");
    assert_eq!(sum["movers_up"][0]["social_id"], "initech");
    assert_eq!(sum["movers_up"][0]["change_30d"], 20.0);
    let listed_findings: u64 = all["companies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["findings"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum::<u64>())
        .sum();
    let summed: u64 = sum["findings"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    let by_component: u64 = sum["findings_by_component"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c.as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum::<u64>())
        .sum();
    assert_eq!((summed, by_component), (listed_findings, listed_findings));
    assert!(listed_findings > 0);

    // Pages of 10 (the paging company alone has 23 findings).
    let page2 = app.ok(&format!("/portfolio-getfindings?portfolio_id={BOOK}&page=2"), &app.underwriter).await;
    assert_eq!(page2["pagination"]["current_page"], 2);
}

#[tokio::test]
async fn findings_are_searched_by_company_and_by_portfolio() {
    let app = TestApp::spawn().await;
    let u = &app.underwriter;
    let all = app.ok("/underwriter-getcompanyfindings?social_id=acme-robotics", u).await;
    let total = all["pagination"]["total_items"].as_u64().unwrap();
    assert_eq!(total, 14, "every open finding of the sample's acme-robotics");
    assert_eq!(all["social_id"], "acme-robotics");
    let own = app.ok("/monitor-getcompanyfindings", &app.monitor).await;
    assert_eq!(own["pagination"]["total_items"], total);
    let sev: Vec<&str> = all["findings"].as_array().unwrap().iter().map(|f| f["severity"].as_str().unwrap()).collect();
    let rank = |s: &str| ["info", "low", "medium", "high", "critical"].iter().position(|x| *x == s).unwrap();
    assert!(sev.windows(2).all(|w| rank(w[0]) >= rank(w[1])), "worst first: {sev:?}");
    assert!(all["findings"].as_array().unwrap().iter().all(|f| f["status"] == "open" && f["id"].as_i64().unwrap() > 0));

    let count = async |q: &str| {
        app.ok(&format!("/underwriter-getcompanyfindings?social_id=acme-robotics{q}"), u).await["pagination"]["total_items"]
            .as_u64()
            .unwrap()
    };
    let critical = count("&severity=critical").await;
    assert!(critical >= 2 && critical < total);
    let on_legacy = all["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["asset"].as_str().unwrap().contains("legacy.acme-robotics.example"))
        .count() as u64;
    assert!(on_legacy >= 3);
    assert_eq!(count("&host=legacy.acme-robotics.example").await, on_legacy);
    assert!(count("&host=acme-robotics.example").await >= total - 1, "names below the domain");
    assert_eq!(count("&risk_vector=open_ports&code=open_ports.nonexistent").await, 0);
    assert_eq!(count("&status=closed").await, 0);
    assert_eq!(count("&status=all").await, total);
    assert_eq!(count("&disputed=true").await, 0);
    assert_eq!(count("&since=2100-01-01").await, 0);
    for (q, error) in [
        ("&severity=grave", "severity: severity must be one of"),
        ("&host=not%20a%20host", "host is not valid"),
        ("&risk_vector=dns", "risk_vector must be one of"),
        ("&status=gone", "status must be open, closed or all"),
        ("&code=DROP%20TABLE", "code is not valid"),
        ("&disputed=maybe", "disputed must be true or false"),
    ] {
        let (s, v) = app.get(&format!("/underwriter-getcompanyfindings?social_id=acme-robotics{q}"), u).await;
        assert_eq!(s, B, "{q}: {v}");
        assert!(v["error"].as_str().unwrap().contains(error), "{q}: {v}");
    }
    let (s, ct, text) =
        raw(&app, Method::GET, "/underwriter-getcompanyfindings?social_id=acme-robotics&format=csv", "text/plain", "")
            .await;
    assert_eq!((s, ct.as_str()), (StatusCode::OK, "text/csv; charset=utf-8"));
    assert_eq!(
        text.lines().next().unwrap(),
        "social_id,id,status,risk_vector,severity,code,asset,title,cve,component,first_seen,last_seen,closed_at,disputed,evidence,remediation"
    );
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.records().count() as u64, total);

    // Across the portfolio: acme-robotics's and the paging company's.
    let pager = app.ok(&format!("/underwriter-getcompanyfindings?social_id={PAGER}"), u).await;
    let both = app.ok(&format!("/portfolio-getfindings?portfolio_id={BOOK}"), u).await;
    assert_eq!(
        both["pagination"]["total_items"].as_u64().unwrap(),
        total + pager["pagination"]["total_items"].as_u64().unwrap()
    );
    assert_eq!(both["portfolio_id"], BOOK);
    let one = app.ok(&format!("/portfolio-getfindings?portfolio_id={BOOK}&severity=critical"), u).await;
    assert!(
        one["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["severity"] == "critical" && f["social_id"] == "acme-robotics")
    );
}

#[tokio::test]
async fn a_kept_list_follows_writes_of_other_processes() {
    let app = TestApp::spawn_with(api::Config {
        read_cache_ttl: std::time::Duration::from_secs(60),
        version_poll: std::time::Duration::from_millis(50),
        lab_addresses: true,
        ..api::Config::default()
    })
    .await;
    let path = format!("/portfolio-getcompanies?portfolio_id={BOOK}");
    assert_eq!(app.ok(&path, &app.underwriter).await["pagination"]["total_items"], 2);
    // Another process (here: the store, behind the server's back) adds a company and
    // changes a record: the kept list follows within a poll of the data versions.
    let initech = app.store.company_by_social_id(&model::SocialId::parse("initech").unwrap()).await.unwrap().unwrap();
    let tiered = model::VendorRecord { tier: Some(model::Tier::new(3).unwrap()), ..Default::default() };
    app.store.add_to_portfolio(BOOK, &[(initech.id, tiered)]).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let v = app.ok(&format!("{path}&tier=3"), &app.underwriter).await;
        if sids(&v) == ["initech"] {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the kept list never followed: {v}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // A write through the server is seen at once.
    let (s, _) = post(&app, "/portfolio-rename", &format!(r#"{{"portfolio_id":{BOOK},"name":"Renamed"}}"#)).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        app.ok(&format!("/portfolio-getsummary?portfolio_id={BOOK}"), &app.underwriter).await["name"],
        "Renamed"
    );
}
