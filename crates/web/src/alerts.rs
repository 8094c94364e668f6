//! The alerts inbox: the organisation's alerts newest first, filtered by portfolio, kind
//! and acknowledgement, each with what changed and why, acknowledged in place; and the
//! unread count the header shows (docs/WEB.md).

use api::responses::alerts::{AckOut, AlertOut, AlertsOut};
use api::responses::portfolio::PortfoliosOut;
use axum::body::Bytes;
use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Serialize;

use crate::pages::{self, query};
use crate::portfolio::{company_link, kept, link};
use crate::{Caller, Failure, Params, answered, form, fragment, param};

/// The filters a link keeps.
const KEPT: [&str; 3] = ["portfolio_id", "kind", "acknowledged"];

/// The kinds of alert, as the rules name them, and in words.
const KINDS: [(&str, &str); 5] = [
    ("score_drop", "score drop"),
    ("grade_drop", "grade fall"),
    ("finding_opened", "finding opened"),
    ("kev_appeared", "KEV on its software"),
    ("rating_stale", "stale rating"),
];

pub(crate) async fn inbox(Caller(api): Caller, Query(q): Params) -> Response {
    let kept = kept(&q, &KEPT);
    let mut at = kept.clone();
    let page = param(&q, "page");
    if !page.is_empty() {
        at.push(("page", page));
    }
    let (alerts, portfolios) = tokio::join!(
        api.get::<AlertsOut>("/portfolio-getalerts", &at),
        api.get::<PortfoliosOut>("/portfolio-list", &[])
    );
    fragment(StatusCode::OK, view(&kept, &alerts, portfolios.ok().as_ref()))
}

/// The unread count, as text (the header's badge); empty for a key without an inbox (no
/// portfolio scope, no organisation), the key's sign-in refusal as it came.
pub(crate) async fn count(Caller(api): Caller) -> Response {
    match api.get::<AlertsOut>("/portfolio-getalerts", &[("acknowledged", "false")]).await {
        Ok(v) => (StatusCode::OK, v.unacknowledged.to_string()).into_response(),
        Err(f) if f.status == StatusCode::UNAUTHORIZED => (f.status, String::new()).into_response(),
        Err(_) => (StatusCode::OK, String::new()).into_response(),
    }
}

#[derive(Serialize)]
struct AckBody {
    alert_id: i64,
}

pub(crate) async fn ack(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    let Ok(alert_id) = param(&f, "alert_id").parse::<i64>() else {
        return fragment(StatusCode::BAD_REQUEST, pages::message(false, "alert_id is not valid"));
    };
    let answer = api.post::<AckOut>("/portfolio-ack-alert", &AckBody { alert_id }).await;
    answered(answer.map(|a| format!("{}: {}.", a.alert.company_name, a.message)))
}

fn kind_name(kind: &str) -> &str {
    KINDS.iter().find(|(k, _)| *k == kind).map_or(kind, |(_, n)| *n)
}

fn view(kept: &[(&str, &str)], answer: &Result<AlertsOut, Failure>, portfolios: Option<&PortfoliosOut>) -> Markup {
    let get = |k: &str| kept.iter().find(|(n, _)| *n == k).map_or("", |(_, v)| *v);
    html! {
        h1 { "Alerts" }
        form.filters data-nav action="/app/alerts" role="search" aria-label="Filter the alerts" {
            label { "Portfolio "
                select name="portfolio_id" {
                    option value="" { "all" }
                    @if let Some(ps) = portfolios { @for p in &ps.portfolios {
                        @let id = p.portfolio_id.to_string();
                        option value=(id) selected[get("portfolio_id") == id] { (p.name) }
                    } }
                }
            }
            label { "Kind "
                select name="kind" {
                    option value="" { "any" }
                    @for (k, n) in KINDS { option value=(k) selected[get("kind") == k] { (n) } }
                }
            }
            label { "Status "
                select name="acknowledged" {
                    option value="" { "all" }
                    option value="false" selected[get("acknowledged") == "false"] { "unread" }
                    option value="true" selected[get("acknowledged") == "true"] { "acknowledged" }
                }
            }
            button type="submit" { "Show" }
        }
        @match answer {
            Err(f) => (pages::failure("Alerts", f)),
            Ok(v) => {
                @let p = &v.pagination;
                p.muted {
                    (p.total_items) " alert" @if p.total_items != 1 { "s" }
                    " · " (v.unacknowledged) " unread in all · page " (p.current_page) " of " (p.total_pages.max(1))
                }
                @if v.alerts.is_empty() {
                    p { "No alert matches. A portfolio's alert rules (POST /portfolio-set-alert-rules) say what raises one." }
                } @else {
                    ol.alerts { @for a in &v.alerts { li { (alert(a)) } } }
                    (pages::pager(p, |n| { let n = n.to_string(); link("/app/alerts", &[], kept, ("page", &n)) }))
                }
            }
        }
    }
}

fn alert(a: &AlertOut) -> Markup {
    html! {
        article.alert data-alert-id=(a.alert_id) data-kind=(a.kind) data-acknowledged=(a.acknowledged) {
            header {
                span.tag { (kind_name(&a.kind)) } " "
                a href=(company_link(&a.social_id)) { (a.company_name) } " "
                span.muted { "in " a href={"/app/portfolio?" (query(&[("portfolio_id", &a.portfolio_id.to_string())]))} { (a.portfolio_name) }
                    " · " (pages::when(&a.created_at)) " · rule " code { (a.rule_id) } }
            }
            p.summary { (a.summary) }
            @if !a.explanation.is_empty() { p.muted.explanation { (a.explanation) } }
            @if a.acknowledged {
                p.muted { "Acknowledged " (a.acknowledged_at.as_deref().map(pages::when).unwrap_or_default())
                    @if let Some(by) = &a.acknowledged_by { " by " (by) } }
            } @else {
                form.inline data-action="/ui/alerts/ack" data-then="reload" {
                    input type="hidden" name="alert_id" value=(a.alert_id);
                    button type="submit" { "Acknowledge" }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn alerts(acknowledged: bool) -> AlertsOut {
        serde_json::from_value(json!({
            "alerts": [{"alert_id": 4, "portfolio_id": 1, "portfolio_name": "Book 2027", "social_id": "acme",
                "company_name": "Acme", "rule_id": "high", "kind": "finding_opened",
                "summary": "high finding opened: dmarc.syntax_error on acme.example",
                "explanation": "Score 80.0 → 70.0 (−10.0), grade B → C, by a scan: 1 finding opened.",
                "created_at": "2026-12-01T10:00:00Z", "acknowledged": acknowledged,
                "acknowledged_at": if acknowledged { json!("2026-12-01T11:00:00Z") } else { json!(null) },
                "acknowledged_by": if acknowledged { json!("key 3") } else { json!(null) }}],
            "unacknowledged": if acknowledged { 0 } else { 1 },
            "pagination": {"total_items": 1, "current_page": 1, "page_size": 10, "total_pages": 1}
        }))
        .unwrap()
    }

    #[test]
    fn the_inbox_shows_what_changed_and_acknowledges_in_place() {
        let html = view(&[("kind", "finding_opened")], &Ok(alerts(false)), None).into_string();
        assert!(html.contains("high finding opened: dmarc.syntax_error") && html.contains("grade B → C"), "{html}");
        assert!(html.contains(r#"data-action="/ui/alerts/ack""#) && html.contains(r#"name="alert_id" value="4""#));
        assert!(html.contains(r#"<option value="finding_opened" selected>"#), "{html}");
        assert!(html.contains("1 unread in all"));
        let html = view(&[], &Ok(alerts(true)), None).into_string();
        assert!(
            !html.contains("/ui/alerts/ack") && html.contains("Acknowledged 2026-12-01 11:00 UTC by key 3"),
            "{html}"
        );
    }
}
