//! Findings (opened, refreshed and closed by scans) and the rating history they give.

use model::{Finding, Page, RiskVector, ScoreSnapshot};

use crate::{Paged, Result};
use async_trait::async_trait;

/// Which findings to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct FindingFilter<'a> {
    pub asset: Option<&'a str>,
    pub risk_vector: Option<RiskVector>,
}

/// What a scan covered: the open findings of these risk vectors (on this asset only,
/// when given) that the scan did not see again are closed.
#[derive(Debug, Clone, Copy)]
pub struct ScanScope<'a> {
    pub risk_vectors: &'a [RiskVector],
    pub asset: Option<&'a str>,
    /// With `asset`: also the assets below it (`s1._domainkey.acme.test`,
    /// `www.acme.test:443`, `https://www.acme.test/` are below `acme.test`).
    pub below: bool,
    /// Close the open findings in scope that the scan did not see. False for a scan that
    /// stopped at its budget: what it did not look at is unknown, not fixed.
    pub close_missing: bool,
    /// Open findings (by id) kept open although the scan did not see them: their checks
    /// could not be made (the guard refused the host, its DNS failed), and a probe that
    /// could not run is not a pass.
    pub keep_open: &'a [i64],
}

/// What tells apart findings of one code on one asset: the CVE it names, else the
/// component it is about, else nothing (one finding per risk vector, asset and code).
pub fn finding_subject(f: &Finding) -> &str {
    match (&f.cve, &f.component) {
        (Some(cve), _) => cve.as_str(),
        (None, Some(component)) => component,
        (None, None) => "",
    }
}

/// What recording a scan changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanOutcome {
    /// New findings, and closed ones that came back.
    pub opened: u32,
    pub seen_again: u32,
    pub closed: u32,
}

/// Findings (opened, refreshed and closed by scans) and the rating history they give.
#[async_trait]
pub trait Findings: Send + Sync + 'static {
    /// Findings, worst first.
    async fn findings(&self, company: i64, filter: FindingFilter<'_>, page: Page) -> Result<Paged<Finding>>;

    /// Records what a scan saw within `scope`, in one transaction: findings seen are
    /// inserted or refreshed (first_seen kept, last_seen moved, a closed one reopened);
    /// open findings in scope that were not seen are closed at `scanned_at`. A finding
    /// outside the scope is an error.
    async fn record_scan(
        &self,
        company: i64,
        scope: ScanScope<'_>,
        findings: &[Finding],
        scanned_at: time::OffsetDateTime,
    ) -> Result<ScanOutcome>;

    /// Closed findings, most recently closed first, with when they were closed.
    async fn closed_findings(&self, company: i64) -> Result<Vec<(Finding, model::OffsetDateTimeText)>>;

    /// The `per_vector` worst findings of each risk vector.
    async fn top_findings(&self, company: i64, per_vector: u32) -> Result<Vec<Finding>>;

    /// Every open finding of the company (what a rating judges), in a stable order.
    async fn open_findings(&self, company: i64) -> Result<Vec<Finding>>;

    /// Replaces the company's rating at `rating.scanned_at` (a recomputation under
    /// another methodology version), or adds it when there is none at that time.
    async fn replace_rating(&self, company: i64, rating: &ScoreSnapshot) -> Result<()>;

    async fn latest_score(&self, company: i64) -> Result<Option<ScoreSnapshot>>;

    async fn score_history(&self, company: i64, limit: u32) -> Result<Vec<ScoreSnapshot>>;

    /// One page of the company's ratings, newest first, with how many it has: only the
    /// ratings of the page are read (with their components).
    async fn score_history_page(&self, company: i64, page: model::Page) -> Result<crate::Paged<ScoreSnapshot>>;
}
