//! Answers of the API for the views' tests, as the API writes them (every member the
//! answer types require), read into those types by [`parse`].

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The answer `v` read as the API's type `T` (a fixture that does not read is a bug of
/// the test).
pub(crate) fn parse<T: DeserializeOwned>(v: Value) -> T {
    match serde_json::from_value(v) {
        Ok(t) => t,
        Err(e) => panic!("a fixture is not a {}: {e}", std::any::type_name::<T>()),
    }
}

pub(crate) fn pagination(current_page: u64, page_size: u64, total_pages: u64, total_items: u64) -> Value {
    json!({"current_page": current_page, "page_size": page_size, "total_pages": total_pages, "total_items": total_items})
}

/// The `score` object of a score answer: `named` components as given, the others of the
/// twelve not assessable (as a rating without them is answered).
pub(crate) fn components(named: Value, methodology: &str) -> Value {
    let mut all = serde_json::Map::new();
    for (key, ..) in crate::pages::COMPONENTS {
        let c = named.get(key).cloned().unwrap_or_else(|| {
            json!({"score": null, "grade": null, "weight": 0.0, "assets_checked": 0, "findings_count": 0,
                   "methodology": methodology, "findings": []})
        });
        all.insert(key.to_owned(), c);
    }
    Value::Object(all)
}

/// A finding as the scores answers list it.
pub(crate) fn finding(id: i64, risk_vector: &str, severity: &str, title: &str) -> Value {
    json!({"id": id, "risk_vector": risk_vector, "asset": "a.test", "severity": severity, "code": "CODE",
           "title": title, "evidence": "seen", "remediation": "fix it", "references": [], "cve": null,
           "component": null, "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z"})
}

/// A vulnerabilities finding as the score answers list it: CVE-2022-26134 on a
/// Confluence, with the CVSS metric its severity is computed from.
pub(crate) fn cve_finding(id: i64) -> Value {
    json!({"id": id, "risk_vector": "vulnerabilities", "asset": "wiki.acme.test", "severity": "critical",
           "code": "vulnerabilities.cve", "title": "Software with a known vulnerability",
           "evidence": "Atlassian Confluence 7.13.6 is covered by …; CVSS v3 9.8; in the CISA Known Exploited Vulnerabilities catalog",
           "remediation": "Upgrade", "references": [], "cve": "CVE-2022-26134", "component": "Atlassian Confluence 7.13.6",
           "severity_cvss": {"version": "3.1", "score": 9.8, "vector": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"},
           "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z"})
}

/// `/underwriter-getcompanyscores` of a rated company: two components named, a finding.
pub(crate) fn scores() -> Value {
    json!({
        "social_id": "acme", "company_name": "Acme <b>Corp</b>", "website": "https://www.acme.test",
        "domain": "acme.test", "industry": "Retail", "description": "", "subsidiaries_number": 0,
        "global_score": 71.5, "grade": "C", "scanned_at": "2026-11-01T10:00:00Z",
        "score": components(json!({
            "dmarc": {"score": 40.0, "grade": "E", "weight": 9.0, "assets_checked": 1, "findings_count": 1, "methodology": "1",
                "findings": [{"id": 7, "risk_vector": "dmarc", "asset": "acme.test", "severity": "high", "code": "DMARC_NONE",
                    "title": "DMARC policy is none", "evidence": "v=DMARC1; p=none", "remediation": "Set p=reject",
                    "references": ["https://www.rfc-editor.org/rfc/rfc7489", "RFC 7489"], "cve": null, "component": null,
                    "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z"}]},
            "dkim": {"score": null, "grade": null, "weight": 0.0, "assets_checked": 0, "findings_count": 0, "methodology": "1",
                "not_assessable": "no DKIM selector found", "findings": []}
        }), "1")
    })
}

/// Everything a scores answer may hold besides: notes, peers, staleness, disputes, checks.
pub(crate) fn scores_in_full() -> Value {
    let mut spf = finding(8, "spf", "low", "SPF softfail");
    if let Some(f) = spf.as_object_mut() {
        f.insert("compensating_control".to_owned(), json!(true));
    }
    json!({
        "social_id": "acme", "company_name": "Acme <b>Corp</b>", "website": "https://www.acme.test",
        "domain": "acme.test", "industry": "Retail", "description": "Freight <script>alert(1)</script>", "subsidiaries_number": 2,
        "global_score": 71.5, "grade": "C", "scanned_at": "2026-11-01T10:00:00Z",
        "score": components(json!({
            "dmarc": {"score": 40.0, "grade": "E", "weight": 9.0, "assets_checked": 1, "findings_count": 7, "methodology": "1",
                "disputed": true,
                "findings": [{"id": 7, "risk_vector": "dmarc", "asset": "https://acme.test:8443/x", "severity": "high", "code": "DMARC_NONE",
                    "title": "DMARC policy is none", "evidence": "v=DMARC1; p=none", "remediation": "Set p=reject",
                    "references": ["https://www.rfc-editor.org/rfc/rfc7489", "RFC 7489"], "cve": "CVE-2016-0777",
                    "component": "openssh 6.6", "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z",
                    "disputed": true}]},
            "spf": {"score": 100.0, "grade": "A", "weight": 8.0, "assets_checked": 2, "findings_count": 1, "methodology": "1",
                "findings": [spf],
                "checks": {"pass": 1, "finding": 1, "not_assessable": 0, "list": [
                    {"check": "spf.record", "asset": "acme.test", "outcome": "pass", "detail": "v=spf1 -all"}]}},
            "dkim": {"score": null, "grade": null, "weight": 0.0, "assets_checked": 0, "findings_count": 0, "methodology": "1",
                "not_assessable": "no DKIM selector found", "findings": []},
            "web_headers": {"score": 85.0, "grade": "B", "weight": 7.5, "assets_checked": 3, "findings_count": 0, "methodology": "1",
                "findings": []}
        }), "1"),
        "scan_notes": ["the host cap (50) was reached", "nx.acme.test does not exist"],
        "peer_benchmarks": {
            "sector_and_size": {"group": "NAICS 44-45 Retail Trade, 50-249 employees", "peers": 14, "percentile": 71.4},
            "overall": {"group": "all rated companies", "peers": 3, "percentile": null, "note": "fewer than 10 rated peers"}
        },
        "stale": true, "stale_reason": "the last scan failed", "last_successful_scan": "2026-11-01T10:00:00Z"
    })
}

/// A company not rated yet.
pub(crate) fn unrated() -> Value {
    json!({
        "social_id": "newco", "company_name": "Newco", "website": "https://newco.test", "domain": "newco.test",
        "industry": "", "description": "A new company", "subsidiaries_number": 2,
        "message": "The company has not been rated yet: a scan is queued."
    })
}

pub(crate) fn history() -> Value {
    json!({"social_id": "acme", "company_name": "Acme <b>Corp</b>", "data": [
        {"scanned_at": "2026-11-01T10:00:00Z", "score": 71.5, "grade": "C", "methodology": "1", "components": {}, "reason": "scan"},
        {"scanned_at": "2026-10-01T10:00:00Z", "score": 70.0, "grade": "C", "methodology": "imported",
         "components": {"spf": 80.0, "dkim": null}, "notes": ["capped"]}
    ], "pagination": pagination(1, 100, 1, 2)})
}

/// `/underwriter-getcompanysubscores`.
pub(crate) fn subscores() -> Value {
    json!({"social_id": "acme", "subsidiaries_scores": [
        {"social_id": "acme-sub", "company_name": "Acme Sub", "domain": "sub.acme.test", "score": 90.0, "grade": "A",
         "scanned_at": "2026-11-01T10:00:00Z", "components": {"spf": 90.0}},
        {"social_id": "acme-new", "company_name": "Acme New", "domain": null, "score": null, "grade": null,
         "scanned_at": null, "components": {}}
    ], "pagination": pagination(1, 20, 1, 2)})
}

/// `/monitor-listsubsidiaries` (its records spell `serched_by`).
pub(crate) fn listed_subsidiaries() -> Value {
    let record = |sid: &str, name: &str, score: Value| {
        json!({"social_id": sid, "company_name": name, "website": "https://sub.acme.test", "industry": "Retail",
               "description": "", "company_id": "", "funding_id": "", "employees_number": "10-49",
               "followers_number": null, "score": score, "naics_code": 44, "serched_by": 3, "ip_addresses": 1})
    };
    json!({"social_id": "acme", "subsidiaries_list": [record("acme-sub", "Acme Sub", json!(90.0)), record("acme-new", "Acme New", Value::Null)],
           "pagination": pagination(1, 20, 1, 2)})
}

/// `/underwriter-getcompanyapplicationsassets`, page `n` of 3.
pub(crate) fn applications(n: u64) -> Value {
    json!({"social_id": "acme", "company_name": "Acme", "website": "https://www.acme.test", "industry": "Retail",
           "description": "", "number_of_applications": 3,
           "applications": [
               {"name": "nginx", "version": "1.18.0", "categories": ["Web servers", "Reverse proxies"], "host": "a.test",
                "cpe": null, "evidence": "Server header", "confidence": 100,
                "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z"}
           ],
           "pagination": pagination(n, 1, 3, 3)})
}

pub(crate) fn infrastructure() -> Value {
    json!({"social_id": "acme", "company_name": "Acme", "website": "https://www.acme.test", "industry": "Retail",
           "description": "", "number_of_infrastructure_endpoint": 2,
           "network_endpoints": [
               {"ip": "127.0.0.5", "port": 22, "protocol": "tcp", "host": "ssh.acme.test", "service": "ssh",
                "product": "OpenSSH", "version": "6.6", "banner": "SSH-2.0-OpenSSH_6.6",
                "attribution": {"source": "domain", "evidence": "ssh.acme.test A 127.0.0.5"},
                "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z"},
               {"ip": "127.0.0.6", "port": 443, "protocol": "tcp", "host": null, "service": null, "product": null,
                "version": null, "banner": "",
                "attribution": {"source": "import", "evidence": "imported with the company's data"},
                "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z"}
           ],
           "pagination": pagination(1, 1, 2, 2)})
}

/// `/underwriter-getcompanysbomcve`.
pub(crate) fn sbom() -> Value {
    json!({"data": [
        {"name": "openssh", "version": "6.6", "purl": null, "cpe": "cpe:2.3:a:openbsd:openssh:6.6:*:*:*:*:*:*:*",
         "hosts": ["ssh.acme.test", "git.acme.test"], "evidence": "banner", "end_of_life": true, "latest_version": "9.9",
         "confidence": 90, "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z",
         "cves": [{"id": "CVE-2016-0777", "basis": "nvd-range", "scored": true, "summary": "roaming", "cvss3": null, "cvss": 6.5, "kev": true, "epss": 0.5,
                   "severity_cvss": {"version": "2.0", "score": 6.5, "vector": "AV:N/AC:L/Au:S/C:P/I:P/A:P"}},
                  {"id": "CVE-2016-0778", "basis": "unbounded", "scored": false, "summary": null, "cvss3": 8.1, "cvss": null, "kev": false, "epss": null,
                   "severity_cvss": {"version": "3.0", "score": 8.1, "vector": "CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H"}}]},
        {"name": "jquery", "version": null, "purl": null, "cpe": null, "hosts": ["www.acme.test"], "evidence": "script",
         "end_of_life": null, "latest_version": null, "confidence": null,
         "first_seen": "2026-10-01T00:00:00Z", "last_seen": "2026-11-01T10:00:00Z", "cves": []}
    ], "pagination": pagination(1, 2, 2, 3), "message": "CVE data last updated 2026-11-01"})
}

/// `/underwriter-getcompany-history`.
pub(crate) fn incidents() -> Value {
    json!({"social_id": "acme", "incidents": [
        {"incident_id": "INC-1", "title": "Breach", "date_detected": null, "date_publicly_disclosed": null, "type": "breach",
         "attack_vector": "", "threat_actor": "", "investigation_status": ""},
        {"incident_id": "INC-2", "title": "Ransomware <i>attack</i>", "date_detected": "2025-03-01",
         "date_publicly_disclosed": "2025-03-09", "type": "ransomware", "attack_vector": "phishing",
         "threat_actor": "organised crime", "investigation_status": "closed"}
    ]})
}

/// `/underwriter-getincidentdetail-by-id`.
pub(crate) fn incident() -> Value {
    json!({"incident_id": "INC-2", "data": {
        "title": "Ransomware <i>attack</i>", "description": "Files were encrypted.", "date_detected": "2025-03-01",
        "date_publicly_disclosed": null, "type": "ransomware", "attack_vector": "phishing",
        "threat_actor": "organised crime", "motivation": "financial",
        "impact": {"overall_rating": "major", "loss": [{"variety": "business_disruption", "amount": 120000}]},
        "affected_entities": [{"name": "Acme", "role": "victim"}], "response": {}, "data_breach": {"records": null, "exfiltrated": false},
        "ransomware": {"paid": false, "family": "LockBit"},
        "references": ["https://news.example/acme", "court filing 12/2025"],
        "investigation_status": "closed", "stakeholder_advisories": "", "customer_advisories": "Customers were told."
    }})
}

/// The last companies scanned.
pub(crate) fn last_scanned() -> Value {
    json!({"data": [
        {"social_id": "acme", "company_name": "Acme", "domain": "acme.test", "score": 71.5, "grade": "C", "scanned_at": "2026-11-01T10:00:00Z"},
        {"social_id": "newco", "company_name": "Newco", "domain": null, "score": null, "grade": null, "scanned_at": null}
    ], "pagination": pagination(1, 20, 1, 2)})
}

/// The monitor key's company record.
pub(crate) fn company_info() -> Value {
    json!({"social_id": "acme", "company_name": "Acme", "website": "https://www.acme.test", "industry": "Retail",
           "description": "", "company_id": "", "funding_id": "", "employees_number": "50-249",
           "followers_number": null, "score": 71.5, "naics_code": 44, "searched_by": 9,
           "subsidiaries_list": ["Acme Sub"], "ip_addresses": 3})
}

/// What a prediction was computed from (`responses::PredictionInputs`).
fn prediction_inputs() -> Value {
    json!({"score": 71.5, "naics_code": 541512, "revenue_usd": 2.5e7, "revenue_basis": "employees 51-200",
        "public_incidents": 1, "annual_event_rate": 0.12,
        "rate_factors": {"base": 0.1, "size": 1.2, "industry": 1.0, "score": 1.0, "history": 1.0, "exposure": 1.0},
        "exposure_factors": [{"code": "rdp_exposed", "label": "RDP open to the internet", "multiplier": 1.5,
            "figure": "1.5x", "source": "a published study", "assumption": false, "findings": [9]}],
        "breach_share": 0.3, "breach_share_basis": "the event mix"})
}

/// A by-month prediction answer: `field` the probability's member, `count` the count's.
pub(crate) fn month_prediction(field: &str, count: &str, what_if: Value) -> Value {
    json!({"social_id": "acme", "period": 1, "what_if": what_if, "data": [{
        "month": 1, "horizon_months": 1, field: 0.1, count: 1000.0, "units": "probability",
        "inputs": prediction_inputs(), "methodology": "docs/PREDICTIONS.md"}]})
}

/// A tail-risk answer.
pub(crate) fn tail_risk() -> Value {
    json!({"social_id": "acme", "period": 12, "what_if": [], "data": [{
        "horizon_months": 12, "probability_of_loss": 0.2, "expected_loss_usd": 80000.0,
        "var95_usd": 50000.0, "var99_usd": 400000.0, "tvar95_usd": 300000.0,
        "loss_given_event_p50_usd": 20000.0, "loss_given_event_p95_usd": 250000.0,
        "exceedance": [{"threshold_usd": 10000.0, "probability": 0.2}, {"threshold_usd": 1e6, "probability": 0.01}],
        "cap_per_event_usd": 1e8, "paths": 10000, "seed": 7, "units": "US dollars",
        "inputs": prediction_inputs(), "methodology": "docs/PREDICTIONS.md"}]})
}

/// The organisation's portfolios.
pub(crate) fn portfolios() -> Value {
    json!({"portfolios": [{"portfolio_id": 7, "name": "Cyber book", "companies": 2,
        "created_at": "2026-11-01T09:00:00Z", "updated_at": "2026-12-01T09:30:00Z"}]})
}

/// A portfolio's summary.
pub(crate) fn portfolio_summary() -> Value {
    let mover = json!({"social_id": "acme", "name": "Acme", "score": 71.5, "grade": "C", "change_30d": -8.5});
    let sev = json!({"critical": 1, "high": 2, "medium": 0, "low": 3, "info": 0});
    json!({"portfolio_id": 7, "name": "Cyber book", "companies": 2, "rated": 1, "average_score": 71.5,
        "grades": {"A": 0, "B": 0, "C": 1, "D": 0, "E": 0, "F": 0},
        "tiers": [{"tier": 1, "companies": 1, "grades": {"C": 1}}, {"tier": null, "companies": 1, "grades": {}}],
        "movers_down": [mover], "movers_up": [], "findings": sev, "findings_by_component": {"spf": sev},
        "kev_companies": [{"social_id": "acme", "name": "Acme", "kev_findings": 1}], "stale": 0})
}

/// A page of a portfolio's companies: one rated, one queued.
pub(crate) fn portfolio_companies() -> Value {
    let sev = json!({"critical": 1, "high": 2, "medium": 0, "low": 3, "info": 0});
    let none = json!({"critical": 0, "high": 0, "medium": 0, "low": 0, "info": 0});
    json!({"portfolio_id": 7, "name": "Cyber book", "pagination": pagination(1, 10, 1, 2), "companies": [
        {"social_id": "acme", "name": "Acme", "name_derived": false, "domain": "acme.test", "industry": "Retail",
         "status": "rated", "status_message": null, "score": 71.5, "grade": "C", "change_7d": -1.5,
         "change_30d": -8.5, "change_90d": 2.0, "findings": sev, "kev_findings": 1,
         "last_scan": "2026-12-01T08:00:00Z", "depth": "full", "stale": false, "added_at": "2026-11-01T09:00:00Z",
         "tier": 1, "tags": ["eu", "renewal"], "custom_id": "P-1", "relationship": "insured", "stage": "active",
         "owner": "", "note": ""},
        {"social_id": "new.test", "name": "new.test", "name_derived": true, "domain": "new.test", "industry": "",
         "status": "queued", "status_message": "not processed yet", "score": null, "grade": null,
         "change_7d": null, "change_30d": null, "change_90d": null, "findings": none, "kev_findings": 0,
         "last_scan": null, "depth": null, "stale": false, "added_at": "2026-12-01T09:00:00Z",
         "tier": null, "tags": [], "custom_id": null, "relationship": "applicant", "stage": "prospect",
         "owner": "", "note": ""}]})
}

/// A page of a findings search across a portfolio.
pub(crate) fn found_findings() -> Value {
    let mut f = finding(41, "dmarc", "high", "DMARC policy is none");
    f["social_id"] = json!("acme");
    f["status"] = json!("open");
    f["closed_at"] = json!(null);
    json!({"portfolio_id": 7, "findings": [f], "pagination": pagination(1, 10, 3, 21)})
}

/// An add-companies answer: a rated company, a queued one and a refused row.
pub(crate) fn added() -> Value {
    json!({"portfolio_id": 7, "added": 2, "counts": {"rated": 1, "queued": 1, "pending": 0, "refused": 1}, "results": [
        {"domain": "acme.test", "social_id": "acme", "status": "rated", "depth": "full", "created": false, "message": "rated"},
        {"domain": "new.test", "social_id": "new.test", "status": "queued", "depth": null, "created": true, "message": "queued"},
        {"domain": "10.0.0.1", "social_id": null, "status": "refused", "depth": null, "created": false, "message": "an IP address"}]})
}

/// An improvement plan of two fixes, the first lifting a cap.
pub(crate) fn plan() -> Value {
    let step = |id: i64, after: f64, grade: &str, cap: Value| {
        json!({"gain": 4.5, "score_after": after, "grade_after": grade, "lifts_cap": cap,
               "finding": finding(id, "open_ports", "critical", "Redis answers without a password")})
    };
    json!({"social_id": "acme", "company_name": "Acme", "score": 71.5, "grade": "C", "target_grade": "B",
        "target_score": 80.0, "outcome": "plan", "why": null, "score_after": 81.0, "grade_after": "B",
        "steps": [step(7, 76.0, "C", json!("a critical finding")), step(8, 81.0, "B", Value::Null)],
        "methodology": "2026.11"})
}
