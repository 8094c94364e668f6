//! The answers of alerts (docs/API.md, "Alerts").

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::PaginationOut;

/// A portfolio's alert rules: `{"portfolio_id", "rules": [{"id", "kind", "tiers"?, …}]}`
/// (docs/API.md lists the kinds and their fields).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AlertRulesDocument {
    pub portfolio_id: i64,
    #[schema(value_type = Vec<Object>)]
    pub rules: Vec<serde_json::Value>,
}

/// A portfolio's alert rules as kept (no rules: none set yet).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AlertRulesOut {
    pub portfolio_id: i64,
    pub updated_at: Option<String>,
    pub updated_by: Option<String>,
    /// How many rules.
    pub count: u64,
    #[schema(value_type = Vec<Object>)]
    pub rules: Vec<serde_json::Value>,
}

/// An alert: what a rule of a portfolio saw change about one of its companies, and why.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AlertOut {
    pub alert_id: i64,
    pub portfolio_id: i64,
    pub portfolio_name: String,
    pub social_id: String,
    pub company_name: String,
    pub rule_id: String,
    /// The rule's kind: score_drop, grade_drop, finding_opened, kev_appeared, rating_stale.
    pub kind: String,
    /// What changed, in a line.
    pub summary: String,
    /// The rating change behind it: the move, the reason, the findings opened and closed.
    pub explanation: String,
    pub created_at: String,
    pub acknowledged: bool,
    pub acknowledged_at: Option<String>,
    pub acknowledged_by: Option<String>,
}

impl From<&store::Alert> for AlertOut {
    fn from(a: &store::Alert) -> Self {
        Self {
            alert_id: a.id,
            portfolio_id: a.portfolio,
            portfolio_name: a.portfolio_name.clone(),
            social_id: a.social_id.to_string(),
            company_name: a.company_name.clone(),
            rule_id: a.rule_id.clone(),
            kind: a.kind.clone(),
            summary: a.summary.clone(),
            explanation: a.explanation.clone(),
            created_at: model::timefmt::rfc3339(a.created_at.0),
            acknowledged: a.acknowledged_at.is_some(),
            acknowledged_at: a.acknowledged_at.map(|t| model::timefmt::rfc3339(t.0)),
            acknowledged_by: a.acknowledged_by.clone(),
        }
    }
}

/// One page of the organisation's alerts, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AlertsOut {
    pub alerts: Vec<AlertOut>,
    /// The organisation's alerts not acknowledged yet (in every portfolio, of every kind).
    pub unacknowledged: u64,
    pub pagination: PaginationOut,
}

/// An alert acknowledged.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AckOut {
    pub message: String,
    pub alert: AlertOut,
}
