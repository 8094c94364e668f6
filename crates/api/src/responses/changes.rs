//! The answer of what changed in a portfolio (docs/API.md, "What changed").

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::FindingOut;

/// A portfolio's ratings since a time: per company, each rating with the one before it
/// and the findings that opened and closed between the two.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PortfolioChangesOut {
    pub portfolio_id: i64,
    pub name: String,
    /// The start of the report (RFC 3339): ratings made after it.
    pub since: String,
    /// When the report was made.
    pub until: String,
    /// The companies rated since, by social_id.
    pub companies: Vec<CompanyChangesOut>,
    /// More findings opened or closed than one report lists (10,000): the lists are
    /// cut, the ratings are all there.
    pub truncated: bool,
}

/// One company's ratings since the report's start, oldest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CompanyChangesOut {
    pub social_id: String,
    pub company_name: String,
    pub tier: Option<u8>,
    pub ratings: Vec<RatingChangeOut>,
}

/// A rating against the one before it, and why it moved.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RatingChangeOut {
    pub scanned_at: String,
    /// Why the rating was made: `scan`, `rescan`, `feed_update` (none: imported).
    pub reason: Option<String>,
    /// `quick` or `full`.
    pub depth: String,
    /// The rating before (none: the company's first).
    pub score_before: Option<f64>,
    pub grade_before: Option<String>,
    pub score_after: f64,
    pub grade_after: String,
    /// `score_after` less `score_before` (none for a first rating).
    pub change: Option<f64>,
    /// In words: the move, the reason, how many findings opened and closed, the worst.
    pub explanation: String,
    /// Findings that opened (new, or back after closing) between the two, worst first.
    pub opened: Vec<FindingOut>,
    /// Findings that closed between the two, worst first.
    pub closed: Vec<FindingOut>,
}
