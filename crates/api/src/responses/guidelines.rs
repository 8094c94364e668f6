//! The answers of the underwriting guidelines (docs/API.md, "Underwriting guidelines").

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::FindingOut;

/// A guidelines document: `{"rules": [{"id", "kind", "action", …}]}` (docs/API.md lists
/// the kinds and their fields).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct GuidelinesDocument {
    #[schema(value_type = Vec<Object>)]
    pub rules: Vec<serde_json::Value>,
}

/// The guidelines in force (or just set): their version and document.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct GuidelinesOut {
    /// From 1; none when the organisation has set none.
    pub version: Option<i64>,
    pub created_at: Option<String>,
    pub created_by: Option<String>,
    pub rules: u64,
    #[schema(value_type = Object)]
    pub document: serde_json::Value,
}

/// One rule's outcome for a company.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RuleOutcomeOut {
    pub id: String,
    pub kind: String,
    /// What the rule does when broken: refer or decline.
    pub action: String,
    /// `pass`, `refer` or `decline` (a rule that cannot be judged refers).
    pub outcome: String,
    /// What was observed (`72.4`, `grade C (65)`, `2 findings`, `unknown`).
    pub observed: String,
    pub note: Option<String>,
    /// The open findings behind a broken rule.
    pub findings: Vec<FindingOut>,
}

/// The answer of GET /underwriter-evaluate-guidelines.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EvaluationOut {
    pub social_id: String,
    pub company_name: String,
    /// `pass`, `refer` or `decline`: the strongest outcome of the rules.
    pub outcome: String,
    pub guideline_version: i64,
    pub evaluated_at: String,
    pub score: f64,
    pub grade: String,
    pub rules: Vec<RuleOutcomeOut>,
}
