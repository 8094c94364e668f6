//! Alerts (docs/API.md, "Alerts"): a portfolio's alert rules, set and read; the
//! organisation's alerts, listed and acknowledged. The worker raises them
//! (`worker::alerts`) when a job changes a watched company.

use axum::Json;
use axum::extract::State;
use model::alerts::AlertRules;

use super::portfolio::{OrgCaller, PortfolioQuery, body_portfolio_id, by, json_object, portfolio_id, viewed};
use crate::AppState;
use crate::error::{ApiError, CommonErrors};
use crate::params::{PageQuery, Params, RawBody};
use crate::responses::alerts::*;

fn rules_out(portfolio: i64, kept: Option<store::StoredAlertRules>) -> Result<AlertRulesOut, ApiError> {
    Ok(match kept {
        Some(k) => {
            let doc: serde_json::Value =
                serde_json::from_str(&k.document).map_err(|e| ApiError::Internal(format!("kept alert rules: {e}")))?;
            let rules = doc.get("rules").and_then(|r| r.as_array()).cloned().unwrap_or_default();
            AlertRulesOut {
                portfolio_id: portfolio,
                updated_at: Some(model::timefmt::rfc3339(k.updated_at.0)),
                updated_by: Some(k.updated_by),
                count: rules.len() as u64,
                rules,
            }
        }
        None => {
            AlertRulesOut { portfolio_id: portfolio, updated_at: None, updated_by: None, count: 0, rules: Vec::new() }
        }
    })
}

/// Sets a portfolio's alert rules (replacing those it had): what to be told about its
/// companies, per tier.
#[utoipa::path(post, path = "/portfolio-set-alert-rules", operation_id = "portfolio-set-alert-rules", tag = "Portfolio",
    request_body(content = AlertRulesDocument, content_type = "application/json"),
    responses((status = 200, description = "The rules kept (extension)", body = AlertRulesOut), CommonErrors))]
pub async fn set_rules(
    State(app): State<AppState>,
    OrgCaller { org, caller }: OrgCaller,
    raw: RawBody,
) -> Result<Json<AlertRulesOut>, ApiError> {
    let body = json_object(&raw.0)?;
    let id = body_portfolio_id(&body)?;
    viewed(&app, org, id).await?;
    let doc = serde_json::json!({ "rules": body.get("rules").cloned().unwrap_or(serde_json::Value::Null) });
    AlertRules::parse(&doc).map_err(|e| ApiError::bad(e.to_string()))?;
    let text = serde_json::to_string(&doc).map_err(|e| ApiError::Internal(e.to_string()))?;
    let now = time::OffsetDateTime::now_utc();
    let at = now.replace_nanosecond(0).unwrap_or(now);
    app.store().set_alert_rules(id, &text, &by(&caller), at).await?;
    rules_out(id, app.store().alert_rules(id).await?).map(Json)
}

/// A portfolio's alert rules.
#[utoipa::path(get, path = "/portfolio-getalertrules", operation_id = "portfolio-getalertrules", tag = "Portfolio",
    params(PortfolioQuery),
    responses((status = 200, description = "The rules (extension)", body = AlertRulesOut), CommonErrors))]
pub async fn get_rules(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Json<AlertRulesOut>, ApiError> {
    let id = portfolio_id(p.optional("portfolio_id"))?;
    viewed(&app, org, id).await?;
    rules_out(id, app.store().alert_rules(id).await?).map(Json)
}

/// The organisation's alerts, newest first: of one portfolio, of one kind, acknowledged
/// or not.
#[utoipa::path(get, path = "/portfolio-getalerts", operation_id = "portfolio-getalerts", tag = "Portfolio",
    params(PageQuery,
        ("portfolio_id" = Option<i64>, Query, description = "Only this portfolio's"),
        ("acknowledged" = Option<bool>, Query, description = "Only acknowledged (true) or unacknowledged (false)"),
        ("kind" = Option<String>, Query, description = "Only this kind (score_drop, grade_drop, finding_opened, kev_appeared, rating_stale)")),
    responses((status = 200, description = "The alerts (extension)", body = AlertsOut), CommonErrors))]
pub async fn get_alerts(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Json<AlertsOut>, ApiError> {
    let page = p.page()?;
    let mut q = store::AlertQuery::default();
    if let Some(raw) = p.optional("portfolio_id") {
        let id = portfolio_id(Some(raw))?;
        viewed(&app, org, id).await?;
        q.portfolio = Some(id);
    }
    q.acknowledged = match p.optional("acknowledged") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(ApiError::bad("acknowledged must be true or false")),
    };
    if let Some(k) = p.optional("kind") {
        if !model::alerts::KINDS.contains(&k) {
            return Err(ApiError::bad(format!("kind must be one of: {}", model::alerts::KINDS.join(", "))));
        }
        q.kind = Some(k.to_owned());
    }
    let got = app.store().alerts(org, &q, page).await?;
    let unread = store::AlertQuery { acknowledged: Some(false), ..Default::default() };
    let unacknowledged = app.store().alerts(org, &unread, model::Page::FIRST).await?.total;
    Ok(Json(AlertsOut {
        alerts: got.items.iter().map(AlertOut::from).collect(),
        unacknowledged,
        pagination: page.pagination(got.total).into(),
    }))
}

/// Acknowledges an alert of the organisation (`{"alert_id"}`); the first
/// acknowledgement is kept.
#[utoipa::path(post, path = "/portfolio-ack-alert", operation_id = "portfolio-ack-alert", tag = "Portfolio",
    request_body(content = Object, content_type = "application/json", description = "{\"alert_id\": 1}"),
    responses((status = 200, description = "The alert (extension)", body = AckOut), CommonErrors))]
pub async fn ack(
    State(app): State<AppState>,
    OrgCaller { org, caller }: OrgCaller,
    raw: RawBody,
) -> Result<Json<AckOut>, ApiError> {
    let body = json_object(&raw.0)?;
    let id = match body.get("alert_id") {
        None | Some(serde_json::Value::Null) => return Err(ApiError::required("alert_id")),
        Some(v) => v.as_i64().filter(|n| *n > 0).ok_or_else(|| ApiError::not_valid("alert_id"))?,
    };
    let now = time::OffsetDateTime::now_utc();
    let at = now.replace_nanosecond(0).unwrap_or(now);
    let alert = app
        .store()
        .ack_alert(org, id, &by(&caller), at)
        .await?
        .ok_or_else(|| ApiError::bad(format!("alert_id: there is no alert {id} in this organisation")))?;
    Ok(Json(AckOut { message: "Acknowledged".into(), alert: AlertOut::from(&alert) }))
}
