//! What changed in a portfolio since a time (docs/API.md, "What changed"): per company,
//! each rating with the one before it, the findings opened and closed between the two,
//! and why — the daily change report, as JSON or CSV.

use std::collections::HashMap;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use time::OffsetDateTime;

use super::portfolio::{OrgCaller, PortfolioQuery, cell, csv_answer, portfolio_id, viewed, wants_csv};
use crate::AppState;
use crate::error::{ApiError, CommonErrors};
use crate::params::Params;
use crate::responses::FindingOut;
use crate::responses::changes::*;

/// The most findings one report lists (opened and closed together).
pub(crate) const MAX_FINDINGS: u32 = 10_000;

/// How far back a report may start.
const MAX_DAYS: i64 = 400;

/// A rating change as the answers show it, explained.
pub(crate) fn change_out(c: &store::RatingChange) -> RatingChangeOut {
    let side = |r: &store::RowRating| rating::change::Side { score: r.score, grade: r.grade };
    RatingChangeOut {
        scanned_at: model::timefmt::rfc3339(c.after.scanned_at.0),
        reason: c.reason.clone(),
        depth: c.after.depth.clone(),
        score_before: c.before.as_ref().map(|b| b.score.as_f64()),
        grade_before: c.before.as_ref().map(|b| b.grade.as_str().to_owned()),
        score_after: c.after.score.as_f64(),
        grade_after: c.after.grade.as_str().to_owned(),
        change: c.before.as_ref().map(|b| round(c.after.score.as_f64() - b.score.as_f64())),
        explanation: rating::change::explain(
            c.before.as_ref().map(side),
            side(&c.after),
            c.reason.as_deref(),
            &c.opened,
            &c.closed,
        ),
        opened: c.opened.iter().map(FindingOut::from).collect(),
        closed: c.closed.iter().map(FindingOut::from).collect(),
    }
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `since` as given (a date or an RFC 3339 time), 24 hours ago when absent; not in the
/// future, nor more than [`MAX_DAYS`] back.
fn since(p: &Params, now: OffsetDateTime) -> Result<OffsetDateTime, ApiError> {
    let Some(raw) = p.optional("since") else { return Ok(now - time::Duration::days(1)) };
    let t = model::timefmt::parse_datetime(raw)
        .ok_or_else(|| ApiError::bad("since must be a date (2026-12-01) or an RFC 3339 time"))?;
    if t > now {
        return Err(ApiError::bad("since is in the future"));
    }
    if now - t > time::Duration::days(MAX_DAYS) {
        return Err(ApiError::bad(format!("since is more than {MAX_DAYS} days ago")));
    }
    Ok(t)
}

/// The report of the portfolio `id` of `org` since `since`.
pub(crate) async fn report(
    app: &AppState,
    org: i64,
    id: i64,
    since: OffsetDateTime,
    now: OffsetDateTime,
) -> Result<PortfolioChangesOut, ApiError> {
    let view = viewed(app, org, id).await?;
    let got = app.store().rating_changes(store::FindingsOf::Portfolio(id), since, MAX_FINDINGS).await?;
    let member: HashMap<i64, &store::PortfolioRow> = view.rows.iter().map(|r| (r.company, r)).collect();
    let mut companies: Vec<CompanyChangesOut> = Vec::new();
    for c in &got.changes {
        // A company that left the portfolio between the two reads is left out.
        let Some(row) = member.get(&c.company) else { continue };
        match companies.last_mut() {
            Some(last) if last.social_id == row.social_id.as_str() => last.ratings.push(change_out(c)),
            _ => companies.push(CompanyChangesOut {
                social_id: row.social_id.to_string(),
                company_name: row.name.clone(),
                tier: row.record.tier.map(model::Tier::get),
                ratings: vec![change_out(c)],
            }),
        }
    }
    companies.sort_by(|a, b| a.social_id.cmp(&b.social_id));
    Ok(PortfolioChangesOut {
        portfolio_id: view.portfolio.id,
        name: view.portfolio.name.clone(),
        since: model::timefmt::rfc3339(since),
        until: model::timefmt::rfc3339(now),
        companies,
        truncated: got.truncated,
    })
}

/// The columns of the CSV report, one row per rating.
const COLUMNS: [&str; 15] = [
    "social_id",
    "company_name",
    "tier",
    "scanned_at",
    "reason",
    "depth",
    "score_before",
    "grade_before",
    "score_after",
    "grade_after",
    "change",
    "opened",
    "closed",
    "opened_findings",
    "explanation",
];

fn csv(report: &PortfolioChangesOut) -> Result<Vec<u8>, ApiError> {
    let fail = |e: csv::Error| ApiError::Internal(format!("csv: {e}"));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS).map_err(fail)?;
    let opt = |v: Option<String>| v.unwrap_or_default();
    for c in &report.companies {
        for r in &c.ratings {
            let opened: Vec<String> = r.opened.iter().map(|f| format!("{} {}", f.code, f.asset)).collect();
            w.write_record([
                cell(&c.social_id),
                cell(&c.company_name),
                opt(c.tier.map(|t| t.to_string())),
                r.scanned_at.clone(),
                opt(r.reason.clone()),
                r.depth.clone(),
                opt(r.score_before.map(|s| format!("{s:.2}"))),
                opt(r.grade_before.clone()),
                format!("{:.2}", r.score_after),
                r.grade_after.clone(),
                opt(r.change.map(|s| format!("{s:.2}"))),
                r.opened.len().to_string(),
                r.closed.len().to_string(),
                cell(&opened.join("; ")),
                cell(&r.explanation),
            ])
            .map_err(fail)?;
        }
    }
    w.into_inner().map_err(|e| ApiError::Internal(format!("csv: {e}")))
}

/// What changed in a portfolio since `since` (24 hours by default): per company, each
/// rating with the one before it, the findings opened and closed between the two, and
/// why; `format=csv` gives one row per rating.
#[utoipa::path(get, path = "/portfolio-getchanges", operation_id = "portfolio-getchanges", tag = "Portfolio",
    params(PortfolioQuery,
        ("since" = Option<String>, Query, description = "A date or RFC 3339 time at most 400 days back (default: 24 hours ago)"),
        ("format" = Option<String>, Query, description = "json (default) or csv")),
    responses((status = 200, description = "The change report (extension)",
        content((PortfolioChangesOut = "application/json"), (String = "text/csv"))), CommonErrors))]
pub async fn get_changes(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Response, ApiError> {
    let id = portfolio_id(p.optional("portfolio_id"))?;
    let now = OffsetDateTime::now_utc();
    let since = since(&p, now)?;
    let csv_wanted = wants_csv(&p)?;
    let out = report(&app, org, id, since, now).await?;
    if csv_wanted {
        return Ok(csv_answer(&format!("changes-{id}.csv"), csv(&out)?));
    }
    Ok(axum::Json(out).into_response())
}
