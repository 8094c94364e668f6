//! The spec's shapes, operation by operation: every field the spec names, with its
//! JSON type. Used by the contract tests against the real server and by the mock tests.

use serde_json::Value;

#[derive(Clone, Copy, Debug)]
pub enum T {
    Str,
    Int,
    Num,
    Bool,
    Arr,
    Obj,
    /// A number, or null where the value is unknown (documented in docs/API.md).
    NumOrNull,
    IntOrNull,
    StrOrNull,
}

fn is(t: T, v: &Value) -> bool {
    match t {
        T::Str => v.is_string(),
        T::Int => v.is_i64() || v.is_u64(),
        T::Num => v.is_number(),
        T::Bool => v.is_boolean(),
        T::Arr => v.is_array(),
        T::Obj => v.is_object(),
        T::NumOrNull => v.is_number() || v.is_null(),
        T::IntOrNull => v.is_i64() || v.is_u64() || v.is_null(),
        T::StrOrNull => v.is_string() || v.is_null(),
    }
}

pub fn fields(v: &Value, want: &[(&str, T)]) {
    assert!(v.is_object(), "expected an object, got {v}");
    for (name, t) in want {
        let got = v.get(*name).unwrap_or_else(|| panic!("missing field {name:?} in {v}"));
        assert!(is(*t, got), "field {name:?} should be {t:?}, is {got}");
    }
}

/// Exactly these members, no more.
pub fn exact(v: &Value, want: &[(&str, T)]) {
    fields(v, want);
    let obj = v.as_object().expect("object");
    for k in obj.keys() {
        assert!(want.iter().any(|(n, _)| n == k), "unexpected member {k:?}");
    }
    assert_eq!(obj.len(), want.len());
}

fn each(v: &Value, check: impl Fn(&Value)) {
    for item in v.as_array().unwrap_or_else(|| panic!("expected an array, got {v}")) {
        check(item);
    }
}

pub fn pagination(v: &Value) {
    exact(v, &[("current_page", T::Int), ("page_size", T::Int), ("total_pages", T::Int), ("total_items", T::Int)]);
    assert_eq!(v["page_size"], 10);
}

const IDENTITY: &[(&str, T)] = &[
    ("social_id", T::Str),
    ("company_name", T::Str),
    ("website", T::Str),
    ("industry", T::Str),
    ("description", T::Str),
];

pub fn company_record(v: &Value, searched_key: &str, rated: bool) {
    let score = if rated { T::Num } else { T::NumOrNull };
    fields(v, IDENTITY);
    fields(
        v,
        &[
            ("company_id", T::Str),
            ("funding_id", T::Str),
            ("employees_number", T::Str),
            ("followers_number", T::IntOrNull),
            ("score", score),
            ("naics_code", if rated { T::Int } else { T::IntOrNull }),
            (searched_key, T::Int),
            ("ip_addresses", T::Int),
        ],
    );
}

fn portfolio(v: &Value) {
    exact(
        v,
        &[
            ("portfolio_id", T::Int),
            ("name", T::Str),
            ("companies", T::Int),
            ("created_at", T::Str),
            ("updated_at", T::Str),
        ],
    );
}

fn portfolio_company(v: &Value) {
    exact(
        v,
        &[
            ("social_id", T::Str),
            ("name", T::Str),
            ("name_derived", T::Bool),
            ("domain", T::StrOrNull),
            ("industry", T::Str),
            ("status", T::Str),
            ("status_message", T::StrOrNull),
            ("score", T::NumOrNull),
            ("grade", T::StrOrNull),
            ("change_7d", T::NumOrNull),
            ("change_30d", T::NumOrNull),
            ("change_90d", T::NumOrNull),
            ("findings", T::Obj),
            ("kev_findings", T::Int),
            ("last_scan", T::StrOrNull),
            ("depth", T::StrOrNull),
            ("stale", T::Bool),
            ("added_at", T::Str),
            ("tier", T::IntOrNull),
            ("tags", T::Arr),
            ("custom_id", T::StrOrNull),
            ("relationship", T::Str),
            ("stage", T::Str),
            ("owner", T::Str),
            ("note", T::Str),
        ],
    );
    exact(
        &v["findings"],
        &[("critical", T::Int), ("high", T::Int), ("medium", T::Int), ("low", T::Int), ("info", T::Int)],
    );
    assert!(["rated", "queued", "pending", "refused"].contains(&v["status"].as_str().unwrap_or("")), "{v}");
}

pub fn finding(v: &Value) {
    fields(
        v,
        &[
            ("id", T::Int),
            ("risk_vector", T::Str),
            ("asset", T::Str),
            ("severity", T::Str),
            ("title", T::Str),
            ("evidence", T::Str),
            ("remediation", T::Str),
            ("references", T::Arr),
            ("first_seen", T::Str),
            ("last_seen", T::Str),
        ],
    );
    assert!(["info", "low", "medium", "high", "critical"].contains(&v["severity"].as_str().unwrap_or("")));
    // Extensions: present (true) only while disputed / with an accepted control.
    for mark in ["disputed", "compensating_control"] {
        assert!(v.get(mark).is_none_or(|m| m == true), "{mark}: {v}");
    }
}

/// A dispute (extension, docs/API.md "Disputes").
pub fn dispute(v: &Value) {
    exact(
        v,
        &[
            ("id", T::Int),
            ("social_id", T::Str),
            ("finding_id", T::IntOrNull),
            ("asset", T::Str),
            ("risk_vector", T::StrOrNull),
            ("code", T::StrOrNull),
            ("title", T::StrOrNull),
            ("reason", T::Str),
            ("explanation", T::Str),
            ("state", T::Str),
            ("opened_at", T::Str),
            ("opened_by", T::Str),
            ("decided_at", T::StrOrNull),
            ("decided_by", T::StrOrNull),
            ("note", T::StrOrNull),
        ],
    );
    assert!(["open", "accepted", "rejected"].contains(&v["state"].as_str().unwrap_or("")));
}

fn benchmark(v: &Value) {
    fields(v, &[("group", T::Str), ("peers", T::Int), ("percentile", T::NumOrNull)]);
    if v["percentile"].is_null() {
        fields(v, &[("note", T::Str)]);
    }
}

pub const COMPONENTS: [&str; 12] = [
    "spf",
    "dkim",
    "certificate_conf",
    "certificate_info",
    "open_ports",
    "web_headers",
    "dmarc",
    "it_standardization",
    "digitalization",
    "certificate_cve",
    "vulnerabilities",
    "sbom",
];

fn scores(v: &Value) {
    fields(v, IDENTITY);
    fields(v, &[("domain", T::Str), ("subsidiaries_number", T::Int)]);
    if v.get("scan_notes").is_some() {
        fields(v, &[("scan_notes", T::Arr)]);
    }
    if let Some(p) = v.get("peer_benchmarks") {
        exact(p, &[("sector_and_size", T::Obj), ("overall", T::Obj)]);
        benchmark(&p["sector_and_size"]);
        benchmark(&p["overall"]);
    }
    if v.get("message").is_some() && v.get("score").is_none() {
        fields(v, &[("message", T::Str)]);
        return;
    }
    let score = &v["score"];
    let want: Vec<(&str, T)> = COMPONENTS.iter().map(|c| (*c, T::Obj)).collect();
    exact(score, &want);
    for c in COMPONENTS {
        let comp = &score[c];
        fields(
            comp,
            &[
                ("score", T::NumOrNull),
                ("grade", T::StrOrNull),
                ("weight", T::Num),
                ("assets_checked", T::Int),
                ("findings_count", T::Int),
                ("methodology", T::Str),
                ("findings", T::Arr),
            ],
        );
        match comp["score"].as_f64() {
            Some(s) => assert!((0.0..=100.0).contains(&s) && comp["grade"].is_string(), "{c} score {s}"),
            // Not assessable: no grade, no weight, and the reason.
            None => assert!(
                comp["grade"].is_null() && comp["weight"] == 0.0 && comp["not_assessable"].is_string(),
                "{c}: {comp}"
            ),
        }
        each(&comp["findings"], finding);
        assert!(comp.get("disputed").is_none_or(|m| m == true), "{c}: {comp}");
        // Extension: the checks of the component, when the rating kept them.
        if let Some(checks) = comp.get("checks") {
            exact(checks, &[("pass", T::Int), ("finding", T::Int), ("not_assessable", T::Int), ("list", T::Arr)]);
            each(&checks["list"], |k| {
                exact(k, &[("check", T::Str), ("asset", T::Str), ("outcome", T::Str), ("detail", T::Str)]);
                assert!(["pass", "finding", "not_assessable"].contains(&k["outcome"].as_str().unwrap_or("")), "{k}");
            });
        }
    }
}

fn sbom_item(v: &Value) {
    fields(
        v,
        &[("name", T::Str), ("hosts", T::Arr), ("evidence", T::Str), ("first_seen", T::Str), ("last_seen", T::Str)],
    );
}

fn sbom_page(v: &Value, with_cves: bool) {
    fields(v, &[("data", T::Arr), ("pagination", T::Obj)]);
    pagination(&v["pagination"]);
    if let Some(m) = v.get("message") {
        assert!(m.is_string());
    }
    each(&v["data"], |c| {
        sbom_item(c);
        if with_cves {
            fields(c, &[("cves", T::Arr)]);
            each(&c["cves"], |x| {
                fields(x, &[("id", T::Str), ("basis", T::Str), ("scored", T::Bool), ("kev", T::Bool)])
            });
        }
    });
}

const CVE_COMMON: &[(&str, T)] = &[
    ("id", T::Str),
    ("summary", T::Str),
    ("published", T::Str),
    ("modified", T::Str),
    ("lastModified", T::Str),
    ("cvssTime", T::Str),
    ("assigner", T::Str),
    ("cwe", T::Str),
    // CVSS figures are null for a record without a metric of that version (docs/API.md).
    ("cvss", T::NumOrNull),
    ("impactScore", T::NumOrNull),
    ("exploitabilityScore", T::NumOrNull),
    ("cvssVector", T::StrOrNull),
    ("cvss3", T::NumOrNull),
    ("impactScore3", T::NumOrNull),
    ("exploitabilityScore3", T::NumOrNull),
    ("access", T::Obj),
    ("impact", T::Obj),
    ("impact3", T::Obj),
    ("exploitability3", T::Obj),
    ("refmap", T::Obj),
    ("vulnerable_configuration", T::Arr),
    ("vulnerable_configuration_cpe_2_2", T::Arr),
    ("vulnerable_product", T::Arr),
    ("msbulletin", T::Arr),
    ("capec", T::Arr),
    ("references", T::Arr),
];

fn cia(v: &Value) {
    exact(v, &[("availability", T::Str), ("confidentiality", T::Str), ("integrity", T::Str)]);
}

fn exploitability3(v: &Value) {
    exact(
        v,
        &[
            ("attackvector", T::Str),
            ("attackcomplexity", T::Str),
            ("privilegesrequired", T::Str),
            ("userinteraction", T::Str),
            ("scope", T::Str),
        ],
    );
}

/// ISO 8601 without zone, microseconds: `2021-12-10T10:15:09.143000`.
fn cve_date(v: &Value) {
    let s = v.as_str().unwrap_or("");
    assert_eq!(s.len(), 26, "{s}");
    assert_eq!(&s[10..11], "T");
    assert_eq!(&s[19..20], ".");
}

pub fn cve(v: &Value, describe: bool) {
    fields(v, CVE_COMMON);
    exact(&v["access"], &[("authentication", T::Str), ("complexity", T::Str), ("vector", T::Str)]);
    cia(&v["impact"]);
    cia(&v["impact3"]);
    exploitability3(&v["exploitability3"]);
    for d in ["published", "modified", "lastModified", "cvssTime"] {
        cve_date(&v[d]);
    }
    // A record has a CVSS figure of at least one version.
    assert!(v["cvss"].is_number() || v["cvss3"].is_number(), "no CVSS at all: {}", v["id"]);
    each(&v["vulnerable_configuration"], |c| assert!(c.is_object()));
    each(&v["vulnerable_product"], |c| assert!(c.as_str().unwrap_or("").starts_with("cpe:2.3:")));
    each(&v["references"], |c| assert!(c.is_string()));
    each(&v["vulnerable_configuration_cpe_2_2"], |c| {
        if describe {
            assert!(c.is_object(), "describe gives objects: {c}");
        } else {
            assert!(c.is_string(), "other responses give names: {c}");
        }
    });
}

pub fn cve_last(v: &Value) {
    exact(
        v,
        &[
            ("vulnerable_configuration_cpe_2_2", T::Arr),
            ("modified", T::Str),
            ("published", T::Str),
            ("assigner", T::Str),
            ("cwe", T::Str),
            ("id", T::Str),
            ("impact3", T::Obj),
            ("exploitability3", T::Obj),
            ("cvss3", T::NumOrNull),
            ("impactScore3", T::NumOrNull),
            ("exploitabilityScore3", T::NumOrNull),
            ("lastModified", T::Str),
            ("references", T::Arr),
            ("summary", T::Str),
        ],
    );
    each(&v["vulnerable_configuration_cpe_2_2"], |c| assert!(c.is_string()));
}

fn history(v: &Value, key: &str) {
    exact(v, &[(key, T::Str), ("incidents", T::Arr)]);
    each(&v["incidents"], |i| fields(i, &[("incident_id", T::Str), ("title", T::Str)]));
}

fn prediction(v: &Value) {
    fields(v, &[("social_id", T::Str), ("period", T::Int), ("data", T::Arr)]);
    each(&v["data"], |d| assert!(d.is_object()));
    if let Some(w) = v.get("what_if") {
        each(w, |w| {
            exact(
                w,
                &[
                    ("finding_id", T::Int),
                    ("code", T::Str),
                    ("asset", T::Str),
                    ("annual_event_rate", T::Num),
                    ("at_period", T::Num),
                    ("change", T::Num),
                    ("why", T::Str),
                ],
            )
        });
    }
}

fn alert(a: &Value) {
    exact(
        a,
        &[
            ("alert_id", T::Int),
            ("portfolio_id", T::Int),
            ("portfolio_name", T::Str),
            ("social_id", T::Str),
            ("company_name", T::Str),
            ("rule_id", T::Str),
            ("kind", T::Str),
            ("summary", T::Str),
            ("explanation", T::Str),
            ("created_at", T::Str),
            ("acknowledged", T::Bool),
            ("acknowledged_at", T::StrOrNull),
            ("acknowledged_by", T::StrOrNull),
        ],
    );
}

fn subdomain_findings(v: &Value) {
    fields(v, &[("data", T::Obj), ("pagination", T::Obj)]);
    exact(&v["data"], &[("domain_name", T::Str), ("subdomain", T::Arr)]);
    each(&v["data"]["subdomain"], finding);
    pagination(&v["pagination"]);
}

/// Checks a 200 body of the operation at `path`.
pub fn check(path: &str, v: &Value) {
    match path {
        "/general-getdomain-by-socialid" => {
            exact(v, &[("social_id", T::Str), ("company_name", T::Str), ("website", T::Str), ("domain", T::Str)])
        }
        "/general-getsocialid-by-companyname" => {
            exact(v, &[("data", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["data"], |d| exact(d, &[("company_name", T::Str), ("social_id", T::Str)]));
        }
        "/general-getsocialid-by-domain" => exact(v, &[("social_id", T::Str)]),
        "/vulnerability-describe-cve-id" => cve(v, true),
        "/vulnerability-get-cve-from-cpe-id" => each(v, |r| cve(r, false)),
        "/vulnerability-get-last" => each(v, cve_last),
        "/vulnerability-get-product-by-vendor" => {
            exact(v, &[("vendor", T::Str), ("product", T::Arr)]);
            each(&v["product"], |p| assert!(p.is_string()));
        }
        "/vulnerability-get-vendors" => {
            exact(v, &[("vendor", T::Arr)]);
            each(&v["vendor"], |p| assert!(p.is_string()));
        }
        "/vulnerability-search-by-vendor" => {
            exact(v, &[("results", T::Arr)]);
            each(&v["results"], |r| cve(r, false));
        }
        "/underwriter-getcompanyinfo" | "/monitor-getcompanyinfo" => {
            company_record(v, "searched_by", true);
            fields(v, &[("subsidiaries_list", T::Arr)]);
            each(&v["subsidiaries_list"], |s| assert!(s.is_string()));
        }
        "/underwriter-getcompanyapplicationsassets" | "/monitor-getcompanyapplicationsassets" => {
            fields(v, IDENTITY);
            fields(v, &[("number_of_applications", T::Int), ("applications", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["applications"], |a| fields(a, &[("name", T::Str), ("host", T::Str), ("categories", T::Arr)]));
        }
        "/underwriter-getcompanyinfrastructureassets" | "/monitor-getcompanyinfrastructureassets" => {
            fields(v, IDENTITY);
            fields(
                v,
                &[("number_of_infrastructure_endpoint", T::Int), ("network_endpoints", T::Arr), ("pagination", T::Obj)],
            );
            pagination(&v["pagination"]);
            each(&v["network_endpoints"], |e| {
                fields(e, &[("ip", T::Str), ("port", T::Int), ("protocol", T::Str), ("attribution", T::Obj)]);
                exact(&e["attribution"], &[("source", T::Str), ("evidence", T::Str)]);
            });
        }
        "/underwriter-getcompanysbom" | "/monitor-getcompanysbom" => sbom_page(v, false),
        "/underwriter-getcompanysbomcve" | "/monitor-getcompanysbomcve" => sbom_page(v, true),
        "/underwriter-getcompanysbomdomain" | "/monitor-getcompanysbomdomain" => {
            fields(v, &[("data", T::Obj), ("pagination", T::Obj)]);
            exact(&v["data"], &[("domain_name", T::Str), ("subdomain", T::Arr)]);
            each(&v["data"]["subdomain"], |s| {
                fields(s, &[("subdomain", T::Str), ("components", T::Arr)]);
                each(&s["components"], sbom_item);
            });
            pagination(&v["pagination"]);
        }
        "/underwriter-getcompanyscores" | "/monitor-getcompanyscores" => scores(v),
        "/underwriter-getcompanystats" | "/monitor-getcompanystats" => {
            exact(v, &[("parent_social_id", T::Str), ("subsidiaries_stats", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["subsidiaries_stats"], |s| {
                fields(s, &[("social_id", T::Str), ("company_name", T::Str), ("findings", T::Obj)])
            });
        }
        "/underwriter-getcompanysubscores" | "/monitor-getcompanysubscores" => {
            exact(v, &[("social_id", T::Str), ("subsidiaries_scores", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["subsidiaries_scores"], |s| {
                fields(s, &[("social_id", T::Str), ("score", T::NumOrNull), ("components", T::Obj)])
            });
        }
        // Extension (docs/API.md): events.
        "/underwriter-getevents" | "/monitor-getevents" => {
            exact(v, &[("social_id", T::Str), ("data", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["data"], |e| {
                exact(
                    e,
                    &[
                        ("id", T::Int),
                        ("type", T::Str),
                        ("social_id", T::Str),
                        ("company_name", T::Str),
                        ("occurred_at", T::Str),
                        ("summary", T::Str),
                        ("data", T::Obj),
                        ("links", T::Arr),
                    ],
                );
                each(&e["links"], |l| exact(l, &[("rel", T::Str), ("href", T::Str)]));
            });
        }
        // Extension (docs/API.md): the score history.
        "/underwriter-getcompanyscore-history" | "/monitor-getcompanyscore-history" => {
            exact(v, &[("social_id", T::Str), ("company_name", T::Str), ("data", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["data"], |r| {
                let mut members = vec![
                    ("scanned_at", T::Str),
                    ("score", T::Num),
                    ("grade", T::Str),
                    ("methodology", T::Str),
                    ("components", T::Obj),
                ];
                // What limited the scan, only when something did.
                if r.get("notes").is_some() {
                    members.push(("notes", T::Arr));
                }
                exact(r, &members);
                for (name, score) in r["components"].as_object().into_iter().flatten() {
                    assert!(COMPONENTS.contains(&name.as_str()), "{name}");
                    assert!(score.is_null() || score.as_f64().is_some_and(|s| (0.0..=100.0).contains(&s)));
                }
            });
        }
        "/underwriter-getincidentdetail-by-id" => {
            exact(v, &[("incident_id", T::Str), ("data", T::Obj)]);
            exact(
                &v["data"],
                &[
                    ("title", T::Str),
                    ("description", T::Str),
                    ("date_detected", T::StrOrNull),
                    ("date_publicly_disclosed", T::StrOrNull),
                    ("type", T::Str),
                    ("attack_vector", T::Str),
                    ("threat_actor", T::Str),
                    ("motivation", T::Str),
                    ("impact", T::Obj),
                    ("affected_entities", T::Arr),
                    ("response", T::Obj),
                    ("data_breach", T::Obj),
                    ("ransomware", T::Obj),
                    ("references", T::Arr),
                    ("investigation_status", T::Str),
                    ("stakeholder_advisories", T::Str),
                    ("customer_advisories", T::Str),
                ],
            );
            for d in ["date_detected", "date_publicly_disclosed"] {
                if let Some(s) = v["data"][d].as_str() {
                    assert_eq!(s.len(), 10, "{d} is YYYY-MM-DD: {s}");
                }
            }
        }
        "/underwriter-getlastcompaniesscanned" => {
            exact(v, &[("data", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["data"], |c| {
                fields(c, &[("social_id", T::Str), ("company_name", T::Str), ("score", T::Num), ("scanned_at", T::Str)])
            });
        }
        "/underwriter-getcompany-history" | "/monitor-getcompany-history" => history(v, "social_id"),
        "/underwriter-getcompany-history-domain" => history(v, "domain"),
        "/monitor-getcompanysubsidiaries" => each(v, |c| {
            company_record(c, "searched_by", false);
            assert!(c.get("subsidiaries_list").is_none());
        }),
        "/monitor-listsubsidiaries" => {
            exact(v, &[("social_id", T::Str), ("subsidiaries_list", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["subsidiaries_list"], |c| {
                company_record(c, "serched_by", false);
                assert!(c.get("searched_by").is_none(), "the list spells serched_by");
            });
        }
        "/monitor-getall-vulnerability-detection" => {
            exact(v, &[("social_id", T::Str), ("data", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["data"], finding);
        }
        "/monitor-getall-subdomain-findings" | "/monitor-get-subdomain-findings" => subdomain_findings(v),
        "/monitor-get-tail-risk-estimation"
        | "/monitor-get-data-loss-prediction"
        | "/monitor-get-incident-prediction"
        | "/underwriter-get-tail-risk-estimation"
        | "/underwriter-get-data-loss-prediction"
        | "/underwriter-get-incident-prediction" => prediction(v),
        "/monitor-rescan-subdomain-by-vectorid" | "/monitor-add-subsidiary" | "/monitor-delete-subsidiary" => {
            exact(v, &[("message", T::Str)])
        }
        // Extensions (docs/API.md): disputes and footprint corrections.
        "/monitor-getdisputes" => {
            exact(v, &[("social_id", T::Str), ("disputes", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["disputes"], dispute);
        }
        "/monitor-dispute-finding" | "/monitor-remove-asset" => {
            exact(v, &[("message", T::Str), ("dispute", T::Obj)]);
            dispute(&v["dispute"]);
        }
        "/monitor-add-asset" => exact(v, &[("message", T::Str)]),
        // Extensions (docs/API.md): portfolios and findings searches.
        "/portfolio-list" => {
            exact(v, &[("portfolios", T::Arr)]);
            each(&v["portfolios"], portfolio);
        }
        "/portfolio-getcompanies" => {
            exact(v, &[("portfolio_id", T::Int), ("name", T::Str), ("companies", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["companies"], portfolio_company);
        }
        "/portfolio-getsummary" => exact(
            v,
            &[
                ("portfolio_id", T::Int),
                ("name", T::Str),
                ("companies", T::Int),
                ("rated", T::Int),
                ("average_score", T::NumOrNull),
                ("grades", T::Obj),
                ("tiers", T::Arr),
                ("movers_down", T::Arr),
                ("movers_up", T::Arr),
                ("findings", T::Obj),
                ("findings_by_component", T::Obj),
                ("kev_companies", T::Arr),
                ("stale", T::Int),
            ],
        ),
        "/portfolio-getfindings" | "/underwriter-getcompanyfindings" | "/monitor-getcompanyfindings" => {
            let key = if path == "/portfolio-getfindings" { ("portfolio_id", T::Int) } else { ("social_id", T::Str) };
            exact(v, &[key, ("findings", T::Arr), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["findings"], |f| {
                finding(f);
                fields(f, &[("social_id", T::Str), ("status", T::Str), ("closed_at", T::StrOrNull)]);
            });
        }
        "/portfolio-set-alert-rules" | "/portfolio-getalertrules" => exact(
            v,
            &[
                ("portfolio_id", T::Int),
                ("updated_at", T::StrOrNull),
                ("updated_by", T::StrOrNull),
                ("count", T::Int),
                ("rules", T::Arr),
            ],
        ),
        "/portfolio-getalerts" => {
            exact(v, &[("alerts", T::Arr), ("unacknowledged", T::Int), ("pagination", T::Obj)]);
            pagination(&v["pagination"]);
            each(&v["alerts"], alert);
        }
        "/portfolio-ack-alert" => {
            exact(v, &[("message", T::Str), ("alert", T::Obj)]);
            alert(&v["alert"]);
        }
        "/portfolio-getchanges" => {
            exact(
                v,
                &[
                    ("portfolio_id", T::Int),
                    ("name", T::Str),
                    ("since", T::Str),
                    ("until", T::Str),
                    ("companies", T::Arr),
                    ("truncated", T::Bool),
                ],
            );
            each(&v["companies"], |c| {
                exact(
                    c,
                    &[("social_id", T::Str), ("company_name", T::Str), ("tier", T::IntOrNull), ("ratings", T::Arr)],
                );
                each(&c["ratings"], |r| {
                    exact(
                        r,
                        &[
                            ("scanned_at", T::Str),
                            ("reason", T::StrOrNull),
                            ("depth", T::Str),
                            ("score_before", T::NumOrNull),
                            ("grade_before", T::StrOrNull),
                            ("score_after", T::Num),
                            ("grade_after", T::Str),
                            ("change", T::NumOrNull),
                            ("explanation", T::Str),
                            ("opened", T::Arr),
                            ("closed", T::Arr),
                        ],
                    );
                    each(&r["opened"], finding);
                    each(&r["closed"], finding);
                });
            });
        }
        "/portfolio-set-guidelines" | "/portfolio-getguidelines" => exact(
            v,
            &[
                ("version", T::IntOrNull),
                ("created_at", T::StrOrNull),
                ("created_by", T::StrOrNull),
                ("rules", T::Int),
                ("document", T::Obj),
            ],
        ),
        "/underwriter-evaluate-guidelines" => {
            exact(
                v,
                &[
                    ("social_id", T::Str),
                    ("company_name", T::Str),
                    ("outcome", T::Str),
                    ("guideline_version", T::Int),
                    ("evaluated_at", T::Str),
                    ("score", T::Num),
                    ("grade", T::Str),
                    ("rules", T::Arr),
                ],
            );
            each(&v["rules"], |r| {
                fields(
                    r,
                    &[
                        ("id", T::Str),
                        ("kind", T::Str),
                        ("action", T::Str),
                        ("outcome", T::Str),
                        ("observed", T::Str),
                        ("note", T::StrOrNull),
                        ("findings", T::Arr),
                    ],
                );
                each(&r["findings"], finding);
            });
        }
        "/underwriter-getimprovementplan" | "/monitor-getimprovementplan" => {
            exact(
                v,
                &[
                    ("social_id", T::Str),
                    ("company_name", T::Str),
                    ("score", T::Num),
                    ("grade", T::Str),
                    ("target_grade", T::Str),
                    ("target_score", T::Num),
                    ("outcome", T::Str),
                    ("why", T::StrOrNull),
                    ("score_after", T::NumOrNull),
                    ("grade_after", T::StrOrNull),
                    ("steps", T::Arr),
                    ("methodology", T::Str),
                ],
            );
            each(&v["steps"], |s| {
                fields(
                    s,
                    &[
                        ("gain", T::Num),
                        ("score_after", T::Num),
                        ("grade_after", T::Str),
                        ("lifts_cap", T::StrOrNull),
                        ("finding", T::Obj),
                    ],
                );
                finding(&s["finding"]);
            });
        }
        other => panic!("no shape for {other}"),
    }
}
