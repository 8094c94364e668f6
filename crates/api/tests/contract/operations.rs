//! One contract test per operation: status, every field the spec names with its JSON
//! type, values taken from the seeded data, and paging math.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{PAGED_ITEMS, PAGER, TestApp, operations};
use crate::shapes;

#[tokio::test]
async fn all_43_operations_answer_with_the_spec_shapes() {
    let app = TestApp::spawn().await;
    let ops = operations();
    assert_eq!(ops.len(), 43);
    for (method, path, monitor, body) in ops {
        let key = if monitor { &app.monitor } else { &app.underwriter };
        let (status, v, _) = app.call(method, path, Some(key), body).await;
        assert_eq!(status, StatusCode::OK, "{path}: {v}");
        shapes::check(path.split('?').next().unwrap_or(""), &v);
    }
}

/// A rating says when it is stale (docs/API.md: `stale`) — its last full scan failed
/// after it, or it is older than twice its rescan cadence — with why and when the company
/// was last scanned successfully, for underwriters and monitor keys alike.
#[tokio::test]
async fn a_stale_rating_says_so_and_why() {
    let app = TestApp::spawn().await;
    let sid = model::SocialId::parse("acme-robotics").unwrap();
    let c = app.store.company_by_social_id(&sid).await.unwrap().unwrap();
    // Rated now: fresh.
    let mut snap = app.store.latest_score(c.id).await.unwrap().unwrap();
    let now = time::OffsetDateTime::now_utc().replace_millisecond(0).unwrap();
    snap.scanned_at = model::OffsetDateTimeText(now);
    app.store.replace_rating(c.id, &snap).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let v = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", &app.underwriter).await;
    assert_eq!(v["stale"], false, "{v}");
    assert!(v.get("stale_reason").is_none(), "{v}");
    assert_eq!(v["last_successful_scan"], model::timefmt::rfc3339(now));
    // Its next full scan failed for good: stale, with the worker's reason.
    app.store.set_scan_error(c.id, Some("acme-robotics.example: REFUSED")).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    for (path, key) in [
        ("/underwriter-getcompanyscores?social_id=acme-robotics", &app.underwriter),
        ("/monitor-getcompanyscores", &app.monitor),
    ] {
        let v = app.ok(path, key).await;
        assert_eq!(v["stale"], true, "{path}: {v}");
        let why = v["stale_reason"].as_str().unwrap();
        assert!(
            why.starts_with("the last scan failed at ") && why.ends_with(": acme-robotics.example: REFUSED"),
            "{why}"
        );
    }
    // Rated three days ago on a daily cadence: stale by age.
    app.store.set_scan_error(c.id, None).await.unwrap();
    let globex =
        app.store.company_by_social_id(&model::SocialId::parse("globex-logistics").unwrap()).await.unwrap().unwrap();
    let mut old = app.store.latest_score(globex.id).await.unwrap().unwrap();
    old.scanned_at = model::OffsetDateTimeText(now - time::Duration::days(3));
    app.store.replace_rating(globex.id, &old).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let v = app.ok("/underwriter-getcompanyscores?social_id=globex-logistics", &app.underwriter).await;
    assert_eq!(v["last_successful_scan"], model::timefmt::rfc3339(now - time::Duration::days(3)), "{v}");
    assert_eq!(v["stale"], true, "{v}");
    assert_eq!(v["stale_reason"], "rated 3 d ago, more than twice its rescan cadence of 24 h");
}

#[tokio::test]
async fn the_score_history_extension_lists_ratings_newest_first() {
    let app = TestApp::spawn().await;
    let k = &app.underwriter;
    for (_, path, monitor, _) in crate::helpers::extensions().into_iter().filter(|e| e.1.contains("score-history")) {
        // The monitor key's company is acme-robotics too.
        let v = app.ok(path, if monitor { &app.monitor } else { k }).await;
        assert_eq!(v["social_id"], "acme-robotics");
        let data = v["data"].as_array().unwrap();
        assert!(!data.is_empty(), "{v}");
        let times: Vec<&str> = data.iter().map(|r| r["scanned_at"].as_str().unwrap()).collect();
        let mut sorted = times.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(times, sorted, "newest first");
        assert_eq!(data[0]["methodology"], "imported");
        assert_eq!(data[0]["components"].as_object().unwrap().len(), 12);
        assert_eq!(v["pagination"]["total_items"], data.len());
    }
    // Paging: the pager company has one rating; page 2 is empty with the same total.
    let v = app.ok(&format!("/underwriter-getcompanyscore-history?social_id={PAGER}&page=2"), k).await;
    assert_eq!((v["data"].as_array().unwrap().len(), &v["pagination"]["total_items"]), (0, &Value::from(1)));
}

#[tokio::test]
async fn general_operations() {
    let app = TestApp::spawn().await;
    let k = &app.underwriter;
    let v = app.ok("/general-getdomain-by-socialid?social_id=ACME-Robotics", k).await;
    assert_eq!(v["domain"], "acme-robotics.example");
    assert_eq!(v["website"], "https://www.acme-robotics.example");
    assert_eq!(v["social_id"], "acme-robotics");

    let v = app.ok("/general-getsocialid-by-companyname?company_name=acme%20robotics", k).await;
    let names: Vec<&str> = v["data"].as_array().unwrap().iter().map(|d| d["company_name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Acme Robotics", "Acme Robotics Labs"], "exact match first, then by name");
    assert_eq!(v["pagination"]["total_items"], 2);

    // Paging: 12 "Pager Sub" companies.
    let p2 = app.ok("/general-getsocialid-by-companyname?company_name=pager%20sub&page=2", k).await;
    assert_eq!(p2["data"].as_array().unwrap().len(), 2);
    assert_eq!(
        p2["pagination"],
        serde_json::json!({"current_page": 2, "page_size": 10, "total_pages": 2, "total_items": 12})
    );
    let past = app.ok("/general-getsocialid-by-companyname?company_name=pager%20sub&page=5", k).await;
    assert_eq!(past["data"].as_array().unwrap().len(), 0);
    assert_eq!(past["pagination"]["total_items"], 12);

    for domain in ["acme-robotics.example", "WWW.ACME-ROBOTICS.EXAMPLE", "acmebots.example"] {
        let v = app.ok(&format!("/general-getsocialid-by-domain?domain={domain}"), k).await;
        assert_eq!(v["social_id"], "acme-robotics", "{domain}");
    }
}

#[tokio::test]
async fn vulnerability_operations() {
    let app = TestApp::spawn().await;
    let k = &app.underwriter;
    let v = app.ok("/vulnerability-describe-cve-id?cve_id=cve-2021-44228", k).await;
    assert_eq!(v["id"], "CVE-2021-44228");
    assert_eq!(v["cvss3"], 10.0);
    assert_eq!(v["cvss"], 9.3);
    // Extensions: the v3 vector, which names its version; no v4.0 metric.
    assert_eq!(v["cvss3Vector"], "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H");
    assert!(v["cvss4"].is_null() && v["cvss4Vector"].is_null(), "{v}");
    assert_eq!(v["cwe"], "CWE-917");
    assert_eq!(v["published"], "2021-12-10T10:15:09.143000");
    assert_eq!(v["exploitability3"]["scope"], "CHANGED");
    assert_eq!(v["vulnerable_configuration_cpe_2_2"][0]["id"], "cpe:/a:apache:log4j:2.0");

    let v = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*", k).await;
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["vulnerable_configuration_cpe_2_2"][0], "cpe:/a:apache:log4j:2.0");
    let v = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j:2.17.1", k).await;
    assert_eq!(v.as_array().unwrap().len(), 0, "a fixed version matches nothing");
    let v = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:/a:openssl:openssl", k).await;
    assert_eq!(v.as_array().unwrap().len(), 2, "no version: every CVE of the product");
    let v = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:/a:openssl:openssl&limit=1", k).await;
    assert_eq!(v.as_array().unwrap().len(), 1);

    let v = app.ok("/vulnerability-get-last", k).await;
    let ids: Vec<&str> = v.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["CVE-2014-0160", "CVE-2016-2183", "CVE-2021-44228"], "newest lastModified first");
    assert_eq!(app.ok("/vulnerability-get-last?limit=2", k).await.as_array().unwrap().len(), 2);

    let v = app.ok("/vulnerability-get-product-by-vendor?vendor=Apache", k).await;
    assert_eq!(v, serde_json::json!({"vendor": "apache", "product": ["log4j"]}));
    let v = app.ok("/vulnerability-get-product-by-vendor?vendor=nobody", k).await;
    assert_eq!(v["product"].as_array().unwrap().len(), 0);
    let v = app.ok("/vulnerability-get-vendors", k).await;
    assert_eq!(v["vendor"], serde_json::json!(["apache", "openssl"]));
    let v = app.ok("/vulnerability-search-by-vendor?vendor=openssl&product=openssl", k).await;
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn underwriter_company_operations() {
    let app = TestApp::spawn().await;
    let k = &app.underwriter;
    let v = app.ok("/underwriter-getcompanyinfo?social_id=acme-robotics", k).await;
    assert_eq!(v["company_name"], "Acme Robotics");
    assert_eq!(v["naics_code"], 333998);
    assert_eq!(v["followers_number"], 48210);
    assert_eq!(v["employees_number"], "1,001-5,000 employees");
    assert_eq!(v["ip_addresses"], 10);
    assert_eq!(v["subsidiaries_list"], serde_json::json!(["Acme Cloud Services", "Acme Robotics Labs"]));
    assert!(v["company_id"].as_str().unwrap().starts_with("RP"));
    let score = v["score"].as_f64().unwrap();
    let first = v["searched_by"].as_i64().unwrap();
    let again = app.ok("/underwriter-getcompanyinfo?social_id=acme-robotics", k).await;
    assert_eq!(again["searched_by"].as_i64().unwrap(), first + 1, "every lookup counts");

    let v = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", k).await;
    assert_eq!(v["global_score"].as_f64().unwrap(), score, "info and scores agree");
    assert_eq!(v["subsidiaries_number"], 2);
    assert_eq!(v["score"]["dkim"]["score"], 60.0);
    assert_eq!(v["score"]["dkim"]["findings"][0]["code"], "dkim_rsa_1024");
    assert_eq!(v["score"]["vulnerabilities"]["findings"][0]["severity"], "critical", "worst first");
    assert_eq!(v["score"]["open_ports"]["findings_count"], 1);

    let v = app.ok("/underwriter-getcompanyapplicationsassets?social_id=acme-robotics", k).await;
    assert_eq!(v["number_of_applications"], 12);
    assert_eq!(v["applications"].as_array().unwrap().len(), 10);
    assert_eq!(v["pagination"]["total_pages"], 2);
    let v = app.ok("/underwriter-getcompanyinfrastructureassets?social_id=acme-robotics&page=2", k).await;
    assert_eq!(v["number_of_infrastructure_endpoint"], 12);
    assert_eq!(v["network_endpoints"].as_array().unwrap().len(), 2);

    let v = app.ok("/underwriter-getcompanysbom?social_id=acme-robotics", k).await;
    assert_eq!(v["data"].as_array().unwrap().len(), 6);
    let v = app.ok("/underwriter-getcompanysbomcve?social_id=acme-robotics", k).await;
    let cves: Vec<&str> = v["data"].as_array().unwrap().iter().map(|c| c["cves"][0]["id"].as_str().unwrap()).collect();
    assert_eq!(cves, ["CVE-2021-44228", "CVE-2014-0160"]);
    assert_eq!(v["data"][0]["cves"][0]["cvss3"], 10.0);
    assert_eq!(
        v["data"][0]["cves"][0]["severity_cvss"],
        serde_json::json!({"version": "3.1", "score": 10.0, "vector": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H"})
    );
    let v = app.ok("/underwriter-getcompanysbomcve?social_id=globex-logistics", k).await;
    assert_eq!(v["message"], "No SBOM vulnerability found");
    let v = app.ok("/underwriter-getcompanysbomdomain?social_id=acme-robotics&domain=acme-robotics.example", k).await;
    let hosts: Vec<&str> =
        v["data"]["subdomain"].as_array().unwrap().iter().map(|h| h["subdomain"].as_str().unwrap()).collect();
    assert_eq!(
        hosts,
        [
            "api.acme-robotics.example",
            "blog.acme-robotics.example",
            "legacy.acme-robotics.example",
            "www.acme-robotics.example"
        ]
    );
    assert_eq!(v["data"]["domain_name"], "acme-robotics.example");

    let v = app.ok("/underwriter-getcompanystats?social_id=acme-robotics", k).await;
    assert_eq!(v["parent_social_id"], "acme-robotics");
    let labs = v["subsidiaries_stats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["social_id"] == "acme-robotics-labs")
        .unwrap()
        .clone();
    assert_eq!(labs["findings"]["medium"], 1);
    let v = app.ok("/underwriter-getcompanysubscores?social_id=acme-robotics", k).await;
    let cloud = v["subsidiaries_scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["social_id"] == "acme-cloud-services")
        .unwrap()
        .clone();
    assert!(cloud["score"].is_null(), "a subsidiary not rated yet has no score");

    let v = app.ok("/underwriter-getcompany-history?social_id=acme-robotics", k).await;
    assert_eq!(v["incidents"][0]["incident_id"], "RP-INC-2024-0001");
    let v = app.ok("/underwriter-getcompany-history-domain?domain=acme-robotics.example", k).await;
    assert_eq!(v["incidents"].as_array().unwrap().len(), 1);
    let v = app.ok("/underwriter-getincidentdetail-by-id?incident_id=RP-INC-2024-0001", k).await;
    assert_eq!(v["data"]["date_detected"], "2024-03-11");
    assert_eq!(v["data"]["impact"]["records_affected"], 312);

    let v = app.ok("/underwriter-getlastcompaniesscanned", k).await;
    assert_eq!(v["data"][0]["social_id"], "acme-robotics", "latest rating first");
    assert_eq!(v["pagination"]["total_items"], 17);
}

#[tokio::test]
async fn paging_of_every_paged_company_operation() {
    let app = TestApp::spawn().await;
    let n = PAGED_ITEMS as u64;
    let cases: [(&str, &str); 10] = [
        ("/underwriter-getcompanyapplicationsassets", "applications"),
        ("/underwriter-getcompanyinfrastructureassets", "network_endpoints"),
        ("/underwriter-getcompanysbom", "data"),
        ("/underwriter-getcompanysbomcve", "data"),
        ("/monitor-getcompanyapplicationsassets", "applications"),
        ("/monitor-getcompanyinfrastructureassets", "network_endpoints"),
        ("/monitor-getcompanysbom", "data"),
        ("/monitor-getcompanysbomcve", "data"),
        ("/monitor-getall-subdomain-findings", "data.subdomain"),
        ("/monitor-getall-vulnerability-detection", "data"),
    ];
    for (path, list) in cases {
        let key = if path.starts_with("/monitor") { &app.pager } else { &app.underwriter };
        let q = if path.starts_with("/monitor") { String::new() } else { format!("social_id={PAGER}&") };
        let expected_total = if path.ends_with("vulnerability-detection") { 11 } else { n };
        for page in 1u64..=4 {
            let v = app.ok(&format!("{path}?{q}page={page}"), key).await;
            let items = list.split('.').fold(&v, |acc, k| &acc[k]);
            let want = expected_total.saturating_sub(10 * (page - 1)).min(10);
            assert_eq!(items.as_array().unwrap().len() as u64, want, "{path} page {page}");
            assert_eq!(v["pagination"]["current_page"], page);
            assert_eq!(v["pagination"]["total_items"], expected_total, "{path}");
            assert_eq!(v["pagination"]["total_pages"], expected_total.div_ceil(10), "{path}");
        }
    }
    for path in [
        "/underwriter-getcompanystats",
        "/underwriter-getcompanysubscores",
        "/monitor-getcompanystats",
        "/monitor-getcompanysubscores",
        "/monitor-listsubsidiaries",
    ] {
        let key = if path.starts_with("/monitor") { &app.pager } else { &app.underwriter };
        let q = if path.starts_with("/monitor") { String::new() } else { format!("social_id={PAGER}&") };
        let v = app.ok(&format!("{path}?{q}page=2"), key).await;
        assert_eq!(
            v["pagination"],
            serde_json::json!({"current_page": 2, "page_size": 10, "total_pages": 2, "total_items": 12}),
            "{path}"
        );
    }
    let v = app.ok("/monitor-getcompanysbomdomain?domain=pager.example&page=3", &app.pager).await;
    assert_eq!(v["data"]["subdomain"].as_array().unwrap().len(), 3);
    assert_eq!(v["pagination"]["total_items"], n);
}

#[tokio::test]
async fn monitor_reads() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let v = app.ok("/monitor-getcompanyinfo", k).await;
    assert_eq!(v["social_id"], "acme-robotics");
    let v = app.ok("/monitor-getcompanyscores", k).await;
    assert_eq!(v["social_id"], "acme-robotics");
    let v = app.ok("/monitor-getcompanysbom", k).await;
    assert_eq!(v["message"], "SBOM retrieved successfully");
    let subs = app.ok("/monitor-getcompanysubsidiaries", k).await;
    assert_eq!(subs.as_array().unwrap().len(), 2);
    let list = app.ok("/monitor-listsubsidiaries", k).await;
    assert_eq!(list["social_id"], "acme-robotics");
    assert_eq!(list["subsidiaries_list"][0]["company_name"], "Acme Cloud Services");
    // The lists are kept answers, yet a lookup of a subsidiary shows in them at once.
    let rated = subs.as_array().unwrap().iter().find(|s| !s["score"].is_null()).expect("a rated subsidiary");
    let sub = rated["social_id"].as_str().unwrap().to_owned();
    let count = |v: &serde_json::Value, field: &str| {
        v.as_array().unwrap().iter().find(|s| s["social_id"] == sub.as_str()).unwrap()[field].as_i64().unwrap()
    };
    let before = (count(&subs, "searched_by"), count(&list["subsidiaries_list"], "serched_by"));
    assert_eq!(before.0, before.1);
    app.ok(&format!("/underwriter-getcompanyinfo?social_id={sub}"), &app.underwriter).await;
    let subs = app.ok("/monitor-getcompanysubsidiaries", k).await;
    let list = app.ok("/monitor-listsubsidiaries", k).await;
    assert_eq!(count(&subs, "searched_by"), before.0 + 1, "the subsidiary's lookup counts in the list");
    assert_eq!(count(&list["subsidiaries_list"], "serched_by"), before.1 + 1);

    let v =
        app.ok("/monitor-get-subdomain-findings?subdomain=mail.acme-robotics.example&risk_vector_type=DKIM", k).await;
    assert_eq!(v["data"]["domain_name"], "mail.acme-robotics.example");
    assert_eq!(v["data"]["subdomain"][0]["code"], "dkim_rsa_1024");
    assert_eq!(v["pagination"]["total_items"], 1);
    let v =
        app.ok("/monitor-get-subdomain-findings?subdomain=mail.acme-robotics.example&risk_vector_type=spf", k).await;
    assert_eq!(v["pagination"]["total_items"], 0);
    let v = app.ok("/monitor-getall-subdomain-findings?subdomain=legacy.acme-robotics.example", k).await;
    assert_eq!(v["pagination"]["total_items"], 5);
    let v = app.ok("/monitor-getall-subdomain-findings", k).await;
    assert_eq!(v["data"]["domain_name"], "acme-robotics.example");
    assert_eq!(v["pagination"]["total_items"], 14);
    let v = app.ok("/monitor-getall-vulnerability-detection", k).await;
    assert_eq!(v["pagination"]["total_items"], 2);
    assert_eq!(v["data"][0]["code"], "CVE-2021-44228");

    // Predictions: computed by the model (docs/PREDICTIONS.md) when none is stored; a
    // stored one is served as it is.
    let v = app.ok("/monitor-get-tail-risk-estimation?period=6", k).await;
    assert_eq!(v["period"], 6);
    assert!(v.get("message").is_none(), "{v}");
    let tail = &v["data"][0];
    assert_eq!(
        (tail["horizon_months"].as_u64(), tail["methodology"].as_str()),
        (Some(6), Some(rating::predict::PREDICTION_METHODOLOGY))
    );
    assert!(tail["var99_usd"].as_f64().unwrap() >= tail["var95_usd"].as_f64().unwrap());
    assert!(tail["inputs"]["revenue_basis"].is_string() && tail["units"].is_string());
    let again = app.ok("/monitor-get-tail-risk-estimation?period=6", k).await;
    assert_eq!(again["data"], v["data"], "seeded: the same answer");
    let months = app.ok("/monitor-get-data-loss-prediction?period=3", k).await;
    let p: Vec<f64> =
        months["data"].as_array().unwrap().iter().map(|m| m["breach_probability"].as_f64().unwrap()).collect();
    assert!(p.len() == 3 && p[0] < p[1] && p[1] < p[2] && p[2] < 1.0, "{p:?}");
    let v = app.ok("/monitor-get-incident-prediction?period=12", k).await;
    assert_eq!(v["data"].as_array().map(Vec::len), Some(12), "one item per month");
    assert!(v.get("message").is_none());
    assert_eq!(app.ok("/monitor-get-data-loss-prediction", k).await["period"], 6, "period defaults to 6");
}

/// An exposed RDP port raises the incident prediction by its documented factor (the
/// answer names the factor, its source and the finding); the "what if" of that finding
/// is the baseline, and closing the finding restores it.
#[tokio::test]
async fn an_exposed_rdp_port_moves_the_predictions_by_its_factor() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let rate = |v: &Value| v["data"][0]["inputs"]["annual_event_rate"].as_f64().unwrap();
    let before = app.ok("/monitor-get-incident-prediction?period=12", k).await;
    let tail_before = app.ok("/monitor-get-tail-risk-estimation?period=12", k).await;
    let acme =
        app.store.company_by_social_id(&model::SocialId::parse("acme-robotics").unwrap()).await.unwrap().unwrap();
    let now = time::OffsetDateTime::now_utc();
    let rdp = crate::helpers::finding(
        "remote.acme-robotics.example:3389",
        "open_ports.rdp_exposed",
        model::RiskVector::OpenPorts,
    );
    let scope = |close_missing| store::ScanScope {
        risk_vectors: &[model::RiskVector::OpenPorts],
        asset: Some("remote.acme-robotics.example"),
        below: true,
        close_missing,
        keep_open: &[],
    };
    // (The test server keeps no read cache: the next answer reads the store.)
    app.store.record_scan(acme.id, scope(false), std::slice::from_ref(&rdp), now).await.unwrap();
    let with = app.ok("/monitor-get-incident-prediction?period=12", k).await;
    let factors = with["data"][0]["inputs"]["exposure_factors"].as_array().unwrap().clone();
    let applied = factors.iter().find(|f| f["code"] == "rdp_exposed").expect("the RDP factor");
    assert_eq!(applied["multiplier"], 2.5);
    assert_eq!(applied["assumption"], false);
    assert!(applied["source"].as_str().unwrap().contains("Coalition"));
    let id = applied["findings"][0].as_i64().unwrap();
    // Other factors may already apply: the rate moves by the documented composition of
    // the factors with RDP against those without (exactly 2.5 when RDP is alone).
    let m = |f: &Value| f["multiplier"].as_f64().unwrap();
    let others: Vec<f64> = factors.iter().filter(|f| f["code"] != "rdp_exposed").map(m).collect();
    let all: Vec<f64> = factors.iter().map(m).collect();
    let expected = rating::exposure::compose(all) / rating::exposure::compose(others);
    assert!((rate(&with) / rate(&before) - expected).abs() < 1e-9, "{} -> {}", rate(&before), rate(&with));
    let fixed = with["what_if"].as_array().unwrap().iter().find(|w| w["finding_id"] == id).expect("its what-if");
    assert!((fixed["annual_event_rate"].as_f64().unwrap() - rate(&before)).abs() < 1e-12);
    let p12 = |v: &Value| v["data"][11]["probability"].as_f64().unwrap();
    assert!((fixed["at_period"].as_f64().unwrap() - p12(&before)).abs() < 1e-12);
    assert!(p12(&with) > p12(&before));
    assert!((fixed["change"].as_f64().unwrap() - (p12(&before) - p12(&with))).abs() < 1e-12, "{fixed}");
    let why = fixed["why"].as_str().unwrap();
    assert!(why.contains("Remote Desktop") && why.contains("Net: the incident probability falls"), "{why}");
    // An underwriter reads the same prediction of the company it names.
    let named =
        app.ok("/underwriter-get-incident-prediction?social_id=acme-robotics&period=12", &app.underwriter).await;
    assert_eq!(named, with);
    let (s, v) = app.get("/underwriter-get-incident-prediction?period=12", &app.underwriter).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    // The tail risk's what-if is the exact expected loss without the finding: the answer
    // from before it was found, to the cent (no simulation, no sampling error).
    let tail_with = app.ok("/monitor-get-tail-risk-estimation?period=12", k).await;
    let loss = |v: &Value| v["data"][0]["expected_loss_usd"].as_f64().unwrap();
    let fixed = tail_with["what_if"].as_array().unwrap().iter().find(|w| w["finding_id"] == id).expect("its what-if");
    assert!((fixed["at_period"].as_f64().unwrap() / loss(&tail_before) - 1.0).abs() < 1e-12, "{fixed}");
    assert!(loss(&tail_with) > loss(&tail_before));
    // Closed by a rescan that no longer sees it: the baseline again.
    app.store.record_scan(acme.id, scope(true), &[], now).await.unwrap();
    let after = app.ok("/monitor-get-incident-prediction?period=12", k).await;
    assert_eq!(rate(&after), rate(&before));
}

/// A website is parsed at input; markup in it is refused (400), and what is stored and
/// answered is the normalised URL (docs/SECURITY.md §2).
#[tokio::test]
async fn add_subsidiary_stores_its_website_parsed_and_normalised() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let body = |social_id: &str, website: &str| {
        json!({"name": "Acme Drones", "website": website, "social_id": social_id, "parent_social_id": "acme-robotics"})
            .to_string()
    };
    for website in [
        "https://acme-drones.example/<script>alert(1)</script>",
        "https://acme-drones.example/\" onmouseover=\"alert(1)",
        "https://acme-drones.example/?q=<b>",
        "javascript:alert(1)//acme-drones.example",
        "https://acme-drones.example/a b",
    ] {
        let (s, v, _) =
            app.call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(&body("acme-drones", website))).await;
        assert_eq!((s, v), (StatusCode::BAD_REQUEST, json!({"error": "website is not valid"})), "{website}");
    }
    let id = model::SocialId::parse("acme-drones").unwrap();
    assert!(app.store.company_by_social_id(&id).await.unwrap().is_none(), "nothing stored of a refused body");

    for (social_id, sent, stored) in [
        ("acme-drones", "HTTPS://WWW.Acme-Drones.Example/About-Us", "https://www.acme-drones.example/About-Us"),
        ("acme-drones-eu", "www.Acme-Drones-EU.example", "https://www.acme-drones-eu.example"),
    ] {
        let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(&body(social_id, sent))).await;
        assert_eq!(s, StatusCode::OK, "{sent}: {v}");
        let c = app.store.company_by_social_id(&model::SocialId::parse(social_id).unwrap()).await.unwrap().unwrap();
        assert_eq!(c.website, stored, "{sent}");
        assert_eq!(c.domain.unwrap().as_str(), stored.trim_start_matches("https://www.").split('/').next().unwrap());
        // Answered as stored (the subsidiary is not rated yet: its list entry shows it).
        let subs = app.ok("/monitor-getcompanysubsidiaries", k).await;
        let listed = subs.as_array().unwrap().iter().find(|s| s["social_id"] == social_id).expect("listed");
        assert_eq!(listed["website"], stored, "{listed}");
    }
}

#[tokio::test]
async fn monitor_writes_are_durable() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let body = r#"{"name":"Acme Drones","website":"https://www.acme-drones.example/","employees":40,"followers":900,"industry":"Air Transportation","sub_industry":"Drones","social_id":"acme-drones","parent_company_name":"Acme Robotics","parent_social_id":"acme-robotics"}"#;
    let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("was added"));
    let (_, again, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(body)).await;
    assert!(again["message"].as_str().unwrap().contains("already"));
    // Stored before the answer: visible in the database and in the lists.
    let drones =
        app.store.company_by_social_id(&model::SocialId::parse("acme-drones").unwrap()).await.unwrap().unwrap();
    assert_eq!(drones.domain.unwrap().as_str(), "acme-drones.example", "www. is not part of the web domain");
    assert_eq!(drones.employees_number, "40 employees");
    // Its NAICS code from its industry text (the predictions' industry factor uses it).
    assert_eq!(drones.naics_code, Some(481));
    let subs = app.ok("/monitor-getcompanysubsidiaries", k).await;
    assert_eq!(subs.as_array().unwrap().len(), 3);
    let jobs = store::testkit::pending_jobs(&*app.store).await.unwrap();
    assert!(
        jobs.iter().any(|j| j.spec.kind() == "scan" && j.spec.company().as_str() == "acme-drones"),
        "first scan queued"
    );

    let (s, v, _) =
        app.call(Method::DELETE, "/monitor-delete-subsidiary?subsidiary_id=acme-drones", Some(k), None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["message"].as_str().unwrap().contains("was deleted"));
    assert_eq!(app.ok("/monitor-getcompanysubsidiaries", k).await.as_array().unwrap().len(), 2);
    let (s, v, _) =
        app.call(Method::DELETE, "/monitor-delete-subsidiary?subsidiary_id=acme-drones", Some(k), None).await;
    assert_eq!((s, v["error"].as_str()), (StatusCode::BAD_REQUEST, Some("Subsidiary not found")));

    let (s, v, _) = app
        .call(
            Method::PUT,
            "/monitor-rescan-subdomain-by-vectorid?risk_vector_id=DKIM&subdomain=mail.acme-robotics.example",
            Some(k),
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let msg = v["message"].as_str().unwrap();
    assert!(
        msg.contains("mail.acme-robotics.example") && msg.contains("dkim") && msg.contains("processed soon"),
        "{msg}"
    );
    app.call(
        Method::PUT,
        "/monitor-rescan-subdomain-by-vectorid?risk_vector_id=dkim&subdomain=mail.acme-robotics.example",
        Some(k),
        None,
    )
    .await;
    let rescans: Vec<_> = store::testkit::pending_jobs(&*app.store)
        .await
        .unwrap()
        .into_iter()
        .filter(|j| j.spec.kind() == "rescan")
        .collect();
    assert_eq!(rescans.len(), 1, "the same rescan is queued once");
    assert!(
        matches!(&rescans[0].spec, model::JobSpec::Rescan { risk_vector: model::RiskVector::Dkim, .. }),
        "{:?}",
        rescans[0].spec
    );
}

/// acme-robotics's row id and its latest rating.
async fn acme_rating(app: &TestApp) -> (i64, model::ScoreSnapshot) {
    let sid = model::SocialId::parse("acme-robotics").unwrap();
    let c = app.store.company_by_social_id(&sid).await.unwrap().unwrap();
    (c.id, app.store.latest_score(c.id).await.unwrap().unwrap())
}

/// What limited the scan of the latest rating is shown with it (extension fields).
#[tokio::test]
async fn scan_notes_are_shown_with_the_rating() {
    let app = TestApp::spawn().await;
    let (company, mut latest) = acme_rating(&app).await;
    let k = &app.underwriter;
    let plain = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", k).await;
    assert!(plain.get("scan_notes").is_none(), "nothing limited the scan: no field");
    latest.notes = vec!["acme-robotics.example: truncated: 500 hosts, the cap".to_owned()];
    app.store.replace_rating(company, &latest).await.unwrap();
    // (The test server's read cache lives for no time.)
    let v = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", k).await;
    assert_eq!(v["scan_notes"], serde_json::json!(["acme-robotics.example: truncated: 500 hosts, the cap"]));
    let history = app.ok("/underwriter-getcompanyscore-history?social_id=acme-robotics", k).await;
    assert_eq!(history["data"][0]["notes"][0], "acme-robotics.example: truncated: 500 hosts, the cap");
}

#[tokio::test]
async fn health_and_docs_need_no_key() {
    let app = TestApp::spawn().await;
    let r = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // Readiness asks the database.
    let r = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], "ready");
    let r = app.client.get(app.url("/docs/")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.text().await.unwrap().contains("swagger"), "the docs UI is served locally");
    let doc: Value = app.client.get(app.url("/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(doc["info"]["version"], "0.0.1-beta");
}

/// Company info served from the read cache still counts every lookup exactly, across
/// the flushes that move pending lookups into the store.
#[tokio::test]
async fn cached_company_info_counts_every_lookup() {
    let app = TestApp::spawn_with(api::Config {
        read_cache_ttl: std::time::Duration::from_secs(60),
        flush_every: std::time::Duration::from_millis(20),
        ..api::Config::default()
    })
    .await;
    let k = &app.underwriter;
    let url = "/underwriter-getcompanyinfo?social_id=acme-robotics";
    let first = app.ok(url, k).await["searched_by"].as_i64().unwrap();
    for i in 1..=12 {
        // Some calls land right after a flush, some long after.
        tokio::time::sleep(std::time::Duration::from_millis(if i % 3 == 0 { 45 } else { 3 })).await;
        let n = app.ok(url, k).await["searched_by"].as_i64().unwrap();
        assert_eq!(n, first + i, "call {i}");
    }
}

/// A read of stored plus pending lookups never overlaps a flush: with flushes running
/// back to back on another thread, every read lies between the lookups recorded before
/// it started and those recorded when it ended (a read straddling a flush would count
/// a batch twice or not at all).
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn lookup_reads_never_straddle_a_flush() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering::SeqCst};
    const FLUSHES: i64 = 300;
    let app = TestApp::spawn().await;
    let acme = model::SocialId::parse("acme-robotics").unwrap();
    let company = app.store.company_by_social_id(&acme).await.unwrap().unwrap();
    let base = company.searched_by;
    let lookups = Arc::new(api::Lookups::default());
    let recorded = Arc::new(AtomicI64::new(0));
    let flusher = {
        let (lookups, store, recorded) = (lookups.clone(), app.store.clone(), recorded.clone());
        tokio::spawn(async move {
            for _ in 0..FLUSHES {
                lookups.record(company.id);
                recorded.fetch_add(1, SeqCst);
                lookups.flush(&*store).await.unwrap();
            }
        })
    };
    let mut readers = Vec::new();
    for _ in 0..2 {
        let (lookups, store, recorded, acme) = (lookups.clone(), app.store.clone(), recorded.clone(), acme.clone());
        readers.push(tokio::spawn(async move {
            let mut reads = 0;
            loop {
                let low = recorded.load(SeqCst);
                let seen = lookups
                    .read(|| async {
                        let row = store.company_by_social_id(&acme).await.unwrap().unwrap();
                        row.searched_by + lookups.pending(row.id)
                    })
                    .await;
                let high = recorded.load(SeqCst);
                assert!((base + low..=base + high).contains(&seen), "read {seen}, recorded {low}..={high} on {base}");
                reads += 1;
                if high >= FLUSHES {
                    return reads;
                }
            }
        }));
    }
    flusher.await.unwrap();
    for r in readers {
        assert!(r.await.unwrap() > 0);
    }
}

/// A new rating for acme-robotics (99.0), written to the store directly, as a worker in
/// another process would.
async fn rate_acme_elsewhere(app: &TestApp) {
    let acme = model::SocialId::parse("acme-robotics").unwrap();
    let id = app.store.company_by_social_id(&acme).await.unwrap().unwrap().id;
    let mut rating = app.store.latest_score(id).await.unwrap().unwrap();
    rating.scanned_at = model::OffsetDateTimeText(model::timefmt::now());
    rating.score = model::Score::from_f64(99.0).unwrap();
    app.store.replace_rating(id, &rating).await.unwrap();
}

#[tokio::test]
async fn reads_are_cached_and_writes_through_the_api_clear_them_at_once() {
    let app = TestApp::spawn_with(api::Config {
        read_cache_ttl: std::time::Duration::from_secs(60),
        // Versions read once, at the start: only this process's own writes show.
        version_poll: std::time::Duration::from_secs(3600),
        ..api::Config::default()
    })
    .await;
    let k = &app.monitor;
    let before = app.ok("/monitor-getcompanyscores", k).await;
    assert_eq!(before["subsidiaries_number"], 2);
    rate_acme_elsewhere(&app).await;
    assert_eq!(app.ok("/monitor-getcompanyscores", k).await["global_score"], before["global_score"], "cached");
    // A write through this process clears the cache at once.
    let body = r#"{"name":"Acme Drones","website":"https://acme-drones.example","social_id":"acme-drones","parent_social_id":"acme-robotics"}"#;
    assert_eq!(app.call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(body)).await.0, StatusCode::OK);
    let after = app.ok("/monitor-getcompanyscores", k).await;
    assert_eq!(after["subsidiaries_number"], 3);
    assert_eq!(after["global_score"], 99.0);
}

/// Answers are kept for their TTL only while the data they were read from is unchanged:
/// a write by another process (a worker's rating, an imported CVE) is served within a
/// poll of the data versions, long before the TTL.
#[tokio::test]
async fn writes_by_other_processes_show_within_a_version_poll() {
    let poll = std::time::Duration::from_millis(50);
    let app = TestApp::spawn_with(api::Config {
        read_cache_ttl: std::time::Duration::from_secs(600),
        cve_cache_ttl: std::time::Duration::from_secs(600),
        version_poll: poll,
        ..api::Config::default()
    })
    .await;
    let k = &app.monitor;
    let u = &app.underwriter;
    let scores = "/underwriter-getcompanyscores?social_id=acme-robotics";
    let cves = "/vulnerability-get-cve-from-cpe-id?cpe=cpe:/a:openssl:openssl";
    let (before, found) = (app.ok(scores, u).await, app.ok(cves, u).await);
    let history = app.ok("/monitor-getcompanyscores", k).await;
    tokio::time::sleep(poll * 3).await;
    assert_eq!(app.ok(scores, u).await, before, "nothing was written: kept");
    // Until the versions move, kept answers are served; after, within a poll or two.
    rate_acme_elsewhere(&app).await;
    let waited = std::time::Instant::now();
    loop {
        let now = app.ok(scores, u).await;
        if now["global_score"] == 99.0 {
            break;
        }
        assert!(waited.elapsed() < poll * 20, "a rating written elsewhere was not seen in {:?}", waited.elapsed());
        tokio::time::sleep(poll / 5).await;
    }
    assert_ne!(app.ok("/monitor-getcompanyscores", k).await, history, "every answer about the company moved on");
    // CVE data: a record imported for the product shows in the CPE search.
    assert_eq!(found.as_array().unwrap().len(), 2);
    let line = vulndb::import::SAMPLE.lines().find(|l| l.contains("\"id\": \"CVE-") && l.contains("openssl")).unwrap();
    let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
    record["id"] = json!("CVE-2027-0999");
    let jsonl = format!("{record}\n");
    vulndb::import::cve_search_jsonl(&*app.store, jsonl.as_bytes(), "a test").await.unwrap();
    let waited = std::time::Instant::now();
    while app.ok(cves, u).await.as_array().unwrap().len() != 3 {
        assert!(waited.elapsed() < poll * 20, "an imported CVE was not seen in {:?}", waited.elapsed());
        tokio::time::sleep(poll / 5).await;
    }
}

#[tokio::test]
async fn vulnerability_operations_over_real_nvd_records() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if !data.is_dir() {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        eprintln!("skipped: {} is absent", data.display());
        return;
    }
    let app = TestApp::spawn().await;
    for entry in std::fs::read_dir(data.join("nvd-2.0")).unwrap() {
        vulndb::import::nvd_file(&*app.store, &entry.unwrap().path()).await.unwrap();
    }
    vulndb::import::kev_file(&*app.store, &data.join("kev/known_exploited_vulnerabilities.json")).await.unwrap();
    vulndb::import::cwe_file(&*app.store, &data.join("cwe-capec/cwec_v4.15.xml")).await.unwrap();
    for entry in std::fs::read_dir(data.join("cwe-capec/capec-stix")).unwrap() {
        vulndb::import::capec_file(&*app.store, &entry.unwrap().path()).await.unwrap();
    }
    let k = &app.underwriter;

    let v = app.ok("/vulnerability-describe-cve-id?cve_id=CVE-2021-44228", k).await;
    assert_eq!(v["cvss3"], 10.0);
    assert_eq!(v["cvss3Vector"], "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", "NVD's primary v3.1 vector");
    assert_eq!(v["kev"]["dateAdded"], "2021-12-10", "KEV joined");
    assert!(v["vulnerable_configuration_cpe_2_2"][0]["id"].as_str().unwrap().starts_with("cpe:/"));
    let traversal = app.ok("/vulnerability-describe-cve-id?cve_id=CVE-2021-41773", k).await;
    assert_eq!(traversal["cwe"], "CWE-22");
    assert!(!traversal["capec"].as_array().unwrap().is_empty(), "CAPEC from CWE-22");
    assert!(traversal["capec"][0]["id"].is_string() && traversal["capec"][0]["name"].is_string());

    let ids = |v: &Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
    };
    let hit = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*", k).await;
    assert!(ids(&hit).contains(&"CVE-2021-44228".to_owned()) && ids(&hit).contains(&"CVE-2021-45046".to_owned()));
    let fixed = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:apache:log4j:2.17.1", k).await;
    assert!(!ids(&fixed).contains(&"CVE-2021-44228".to_owned()));
    let httpd = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:/a:apache:http_server:2.4.49", k).await;
    assert!(ids(&httpd).contains(&"CVE-2021-41773".to_owned()), "{:?}", ids(&httpd));
    let fixed = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:/a:apache:http_server:2.4.51", k).await;
    assert!(!ids(&fixed).contains(&"CVE-2021-41773".to_owned()));
    let searched = app.ok("/vulnerability-search-by-vendor?vendor=apache&product=http_server", k).await;
    assert!(searched["results"].as_array().unwrap().len() >= ids(&httpd).len());
    let last = app.ok("/vulnerability-get-last?limit=5", k).await;
    assert_eq!(last.as_array().unwrap().len(), 5);
    assert!(last[0].get("kev").is_none(), "the reduced record carries only its fourteen fields");
    assert!(hit[0].get("conditions").is_none(), "log4j holds alone: no conditions");

    // "Acrobat AND (Windows or macOS)", the platform marked vulnerable too (the 2014
    // feed): the CVE is returned for Acrobat, with the platform as its condition.
    vulndb::import::nvd_file(&*app.store, &data.join("nvd-1.1/nvdcve-1.1-2014.json.gz")).await.unwrap();
    let acrobat = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:adobe:acrobat:10.1.11", k).await;
    for id in ["CVE-2014-8445", "CVE-2014-8446", "CVE-2014-8447", "CVE-2014-8448"] {
        let rec = acrobat.as_array().unwrap().iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("{id}"));
        let conditions = rec["conditions"].as_array().unwrap_or_else(|| panic!("{id}: {rec}"));
        assert!(conditions.iter().any(|c| c.as_str().unwrap().contains("microsoft:windows")), "{id}: {conditions:?}");
    }
}

/// The served form that list responses splice (rendered by vulndb at import) and the
/// typed record the API documents must be the same JSON.
async fn served_equals_typed(app: &TestApp, list: &Value) {
    let items = list.as_array().expect("array");
    assert!(!items.is_empty());
    for item in items {
        let id = model::CveId::parse(item["id"].as_str().unwrap()).unwrap();
        let mut rec = app.store.cve(&id).await.unwrap().unwrap();
        rec.capec = app.store.capec_for_cwes(&[&rec.cwe]).await.unwrap().remove(&rec.cwe).unwrap_or_default();
        let typed = serde_json::to_value(api::responses::CveOut::new(rec, false)).unwrap();
        assert_eq!(item, &typed, "{id}");
    }
}

#[tokio::test]
async fn served_records_equal_the_typed_record() {
    let app = TestApp::spawn().await;
    let list = app.ok("/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:openssl:openssl", &app.underwriter).await;
    served_equals_typed(&app, &list).await;
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if !data.is_dir() {
        // With CI set the data is always there: its absence is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI is set and the shared data folder is absent");
        eprintln!("skipped the real records: {} is absent", data.display());
        return;
    }
    for entry in std::fs::read_dir(data.join("nvd-2.0")).unwrap() {
        vulndb::import::nvd_file(&*app.store, &entry.unwrap().path()).await.unwrap();
    }
    vulndb::import::kev_file(&*app.store, &data.join("kev/known_exploited_vulnerabilities.json")).await.unwrap();
    vulndb::import::epss_file(&*app.store, &data.join("epss/epss_scores_sample_first100.csv")).await.unwrap();
    vulndb::import::cwe_file(&*app.store, &data.join("cwe-capec/cwec_v4.15.xml")).await.unwrap();
    for entry in std::fs::read_dir(data.join("cwe-capec/capec-stix")).unwrap() {
        vulndb::import::capec_file(&*app.store, &entry.unwrap().path()).await.unwrap();
    }
    for cpe in ["cpe:2.3:a:apache:http_server", "cpe:2.3:a:apache:log4j", "cpe:2.3:a:openbsd:openssh"] {
        let list = app.ok(&format!("/vulnerability-get-cve-from-cpe-id?cpe={cpe}"), &app.underwriter).await;
        served_equals_typed(&app, &list).await;
    }
    let searched = app.ok("/vulnerability-search-by-vendor?vendor=apache&product=struts", &app.underwriter).await;
    served_equals_typed(&app, &searched["results"]).await;
}

#[tokio::test]
async fn cve_search_answers_are_reused_while_the_versions_stand() {
    let app = TestApp::spawn_with(api::Config {
        cve_cache_ttl: std::time::Duration::from_secs(60),
        // Versions read once, at the start (writes by others show within a poll:
        // writes_by_other_processes_show_within_a_version_poll).
        version_poll: std::time::Duration::from_secs(3600),
        ..api::Config::default()
    })
    .await;
    let k = &app.underwriter;
    let path = "/vulnerability-get-cve-from-cpe-id?cpe=cpe:2.3:a:openssl:openssl";
    let first = app.ok(path, k).await;
    assert_eq!(first.as_array().unwrap().len(), 2);
    // A feed import in another process adds a CVE of the product.
    let line = r#"{"id":"CVE-2026-0001","summary":"new","published":"2026-11-01T00:00:00","modified":"2026-11-01T00:00:00","cvssTime":"2026-11-01T00:00:00","cvss3":7.5,"vulnerable_product":["cpe:2.3:a:openssl:openssl:3.0.0:*:*:*:*:*:*:*"]}"#;
    vulndb::import::cve_search_jsonl(&*app.store, line.as_bytes(), "test").await.unwrap();
    assert_eq!(app.ok(path, k).await, first, "the same query, versions unread: the kept answer");
    let other = app.ok(&format!("{path}&limit=10"), k).await;
    assert_eq!(other.as_array().unwrap().len(), 3, "another query is answered afresh");
}

/// add-subsidiary takes the subsidiary's DKIM selectors as an optional extension field:
/// stored (lower case) with the new company, replaced when its own subsidiary is added
/// again, and refused with 400 when not selectors.
#[tokio::test]
async fn add_subsidiary_takes_the_dkim_selectors() {
    let app = TestApp::spawn().await;
    let k = &app.monitor;
    let body = |selectors: &str| {
        format!(
            r#"{{"name":"Acme \"Mail\" \u00e9","website":"https://acme-mail.example","social_id":"acme-mail","parent_social_id":"acme-robotics"{selectors}}}"#
        )
    };
    for bad in [r#","dkim_selectors":"sel1""#, r#","dkim_selectors":["a b"]"#, r#","dkim_selectors":[1]"#] {
        let (s, v, _) = app.call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(&body(bad))).await;
        assert_eq!((s, v), (StatusCode::BAD_REQUEST, json!({"error": "dkim_selectors is not valid"})), "{bad}");
    }
    let (s, v, _) = app
        .call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(&body(r#","dkim_selectors":["Sel1","k_2"]"#)))
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let created = app.store.company_by_social_id(&model::SocialId::parse("acme-mail").unwrap()).await.unwrap().unwrap();
    assert_eq!(created.company_name, "Acme \"Mail\" é", "escapes are read");
    let id = created.id;
    assert_eq!(app.store.dkim_selectors(id).await.unwrap(), ["sel1", "k_2"]);
    let (s, _, _) = app
        .call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(&body(r#","dkim_selectors":["mx2025"]"#)))
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(app.store.dkim_selectors(id).await.unwrap(), ["mx2025"]);
    // Absent: left as it is.
    app.call(Method::POST, "/monitor-add-subsidiary", Some(k), Some(&body(""))).await;
    assert_eq!(app.store.dkim_selectors(id).await.unwrap(), ["mx2025"]);
}

/// The checks a scan made are shown with each component of the scores (extension
/// field `checks`): the counts and the list, those not assessable first; a component
/// (or an imported rating) without checks has no such field.
#[tokio::test]
async fn the_checks_of_a_rating_are_shown_with_its_components() {
    let app = TestApp::spawn().await;
    let (company, mut latest) = acme_rating(&app).await;
    let k = &app.underwriter;
    let plain = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", k).await;
    assert!(plain["score"]["dkim"].get("checks").is_none(), "an imported rating has no checks");
    let v = model::RiskVector::Dkim;
    let checks = [
        model::Check::pass(v, "dkim keys", "acme-robotics.example", "keys at s1"),
        model::Check::not_assessable(v, "dkim keys", "acme-mail.example", "no key at the 30 selectors tried"),
    ];
    latest.components.get_mut(&v).unwrap().checks = model::ComponentChecks::of(&checks, v);
    app.store.replace_rating(company, &latest).await.unwrap();
    let scores = app.ok("/underwriter-getcompanyscores?social_id=acme-robotics", k).await;
    let dkim = &scores["score"]["dkim"]["checks"];
    assert_eq!((&dkim["pass"], &dkim["finding"], &dkim["not_assessable"]), (&json!(1), &json!(0), &json!(1)));
    assert_eq!(
        dkim["list"][0],
        json!({"check": "dkim keys", "asset": "acme-mail.example", "outcome": "not_assessable",
               "detail": "no key at the 30 selectors tried"})
    );
    assert_eq!(dkim["list"][1]["outcome"], "pass");
    assert!(scores["score"]["spf"].get("checks").is_none());
}

/// The events extension: a monitor key sees its company's events and its subsidiaries',
/// newest first; the underwriter operation one company's; paging as everywhere.
#[tokio::test]
async fn events_are_listed_newest_first_for_the_company_and_its_subsidiaries() {
    use model::{EventKind, EventLink, NewEvent};
    let app = TestApp::spawn().await;
    let id =
        async |s: &str| app.store.company_by_social_id(&model::SocialId::parse(s).unwrap()).await.unwrap().unwrap().id;
    let (own, sub, other) = (id("acme-robotics").await, id("acme-robotics-labs").await, id("initech").await);
    let t0 = time::OffsetDateTime::from_unix_timestamp(1_764_000_000).unwrap();
    let event = |company: i64, kind: EventKind, subject: &str, minutes: i64| NewEvent {
        company,
        kind,
        subject: subject.into(),
        occurred_at: t0 + time::Duration::minutes(minutes),
        summary: format!("{kind} {subject}"),
        data: json!({"code": subject}),
        links: vec![EventLink { rel: "scores".into(), href: "/underwriter-getcompanyscores?social_id=x".into() }],
    };
    let mut all = vec![
        event(sub, EventKind::AssetAttributed, "dev.acme-labs.example", 30),
        event(other, EventKind::ScanFailed, "", 5),
    ];
    for i in 0..11 {
        all.push(event(own, EventKind::FindingOpened, &format!("f{i:02}"), i));
    }
    app.store.record_events(&all).await.unwrap();

    let v = app.ok("/monitor-getevents", &app.monitor).await;
    assert_eq!(v["social_id"], "acme-robotics");
    assert_eq!(v["pagination"]["total_items"], 12, "own and the subsidiary's, not initech's: {v}");
    let data = v["data"].as_array().unwrap();
    assert_eq!(data.len(), 10);
    assert_eq!(
        (data[0]["type"].as_str(), data[0]["social_id"].as_str()),
        (Some("asset_attributed"), Some("acme-robotics-labs"))
    );
    assert_eq!(data[1]["data"]["code"], "f10");
    assert_eq!(data[0]["occurred_at"], "2025-11-24T16:30:00Z");
    let page2 = app.ok("/monitor-getevents?page=2", &app.monitor).await;
    assert_eq!(page2["data"].as_array().unwrap().len(), 2);
    assert_eq!(page2["data"][1]["data"]["code"], "f00");
    let (status, _) = app.get("/monitor-getevents?page=0", &app.monitor).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let v = app.ok("/underwriter-getevents?social_id=initech", &app.underwriter).await;
    assert_eq!(v["pagination"]["total_items"], 1);
    assert_eq!(v["data"][0]["type"], "scan_failed");
    let v = app.ok("/underwriter-getevents?social_id=acme-robotics-labs", &app.underwriter).await;
    assert_eq!(v["pagination"]["total_items"], 1);
    // A key bound to acme-robotics does not see initech's; an unknown company is the
    // spec's 400 as everywhere.
    let (status, _) = app.get("/underwriter-getevents?social_id=initech", &app.monitor).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = app.get("/underwriter-getevents?social_id=no-such-company", &app.underwriter).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // Monitor scope is needed for the monitor operation.
    let (status, _) = app.get("/monitor-getevents", &app.underwriter).await;
    assert!(status == StatusCode::FORBIDDEN || status == StatusCode::UNAUTHORIZED, "{status}");
}

/// A rescan asked again within a second of the same rescan, before the company's data
/// moves, is the one already asked for: no store call, so no second job even where the
/// store would queue one (the first has just ended without a result). Once the data
/// moves (a worker's result), or a second later, it is queued anew.
#[tokio::test]
async fn a_repeated_rescan_within_a_second_is_the_one_asked_for() {
    let config = api::Config {
        key_cache_ttl: std::time::Duration::ZERO,
        read_cache_ttl: std::time::Duration::from_secs(60),
        version_poll: std::time::Duration::from_millis(50),
        ..Default::default()
    };
    let app = TestApp::spawn_with(config).await;
    let k = &app.monitor;
    let path = "/monitor-rescan-subdomain-by-vectorid?risk_vector_id=dkim&subdomain=mail.acme-robotics.example";
    let rescans = |app: &TestApp| {
        let store = app.store.clone();
        async move { store.jobs(None, 1000).await.unwrap().iter().filter(|j| j.spec.kind() == "rescan").count() }
    };
    let run_one = |app: &TestApp| {
        let store = app.store.clone();
        async move {
            let job = store.lease_job("w", std::time::Duration::from_secs(60), 3).await.unwrap().expect("a job");
            assert!(store.complete_job(job.id, job.lease_token.as_deref().unwrap()).await.unwrap());
        }
    };
    assert_eq!(app.call(Method::PUT, path, Some(k), None).await.0, StatusCode::OK);
    assert_eq!(rescans(&app).await, 1);
    // The job ends without writing anything: the store would queue a new one; asked
    // again at once, the process folds it into the one just asked for.
    run_one(&app).await;
    assert_eq!(app.call(Method::PUT, path, Some(k), None).await.0, StatusCode::OK);
    assert_eq!(rescans(&app).await, 1, "folded into the one just asked for");
    // A result moves the company's data: queued anew at once.
    let acme =
        app.store.company_by_social_id(&model::SocialId::parse("acme-robotics").unwrap()).await.unwrap().unwrap();
    app.store.set_scan_error(acme.id, Some("a result")).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(app.call(Method::PUT, path, Some(k), None).await.0, StatusCode::OK);
    assert_eq!(rescans(&app).await, 2, "the data moved: queued anew");
    // Or a second later.
    run_one(&app).await;
    tokio::time::sleep(api::RECENT_JOB + std::time::Duration::from_millis(100)).await;
    assert_eq!(app.call(Method::PUT, path, Some(k), None).await.0, StatusCode::OK);
    assert_eq!(rescans(&app).await, 3, "a second later: queued anew");
}
