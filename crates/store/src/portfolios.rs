//! Organisations, their portfolios and vendor records, and what a portfolio's list and
//! a findings search read (docs/API.md, "Portfolios").

use model::{
    Finding, Grade, OffsetDateTimeText, Org, Page, Portfolio, RiskVector, Score, Severity, SocialId, VendorRecord,
};

use crate::{Paged, Result};
use async_trait::async_trait;

/// A company created from its domain alone ([`Portfolios::onboard`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Onboarding {
    /// Its profile; `social_id` is required.
    pub profile: model::CompanyProfile,
    /// Its name is derived (from its domain now, from its site after its scans).
    pub name_derived: bool,
    /// Its domain claimed as verified, with the attribution; `None` when an operator
    /// must decide (the domain is another company's on evidence).
    pub domain: Option<(model::Domain, String)>,
    /// The job queued for it at its default priority (its first rating).
    pub job: Option<model::JobSpec>,
}

/// A company's latest rating, as a portfolio row shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowRating {
    pub score: Score,
    pub grade: Grade,
    pub scanned_at: OffsetDateTimeText,
    /// `quick` or `full`: how deep the scan behind it looked.
    pub depth: String,
}

/// One company of a portfolio with what its list shows: the vendor record, the latest
/// rating and the ratings 7, 30 and 90 days before now, its open findings.
#[derive(Debug, Clone, PartialEq)]
pub struct PortfolioRow {
    pub company: i64,
    pub social_id: SocialId,
    pub name: String,
    /// The name is derived (from the site or the domain), nobody gave it.
    pub name_derived: bool,
    pub domain: Option<String>,
    pub industry: String,
    pub record: VendorRecord,
    pub added_at: OffsetDateTimeText,
    pub rating: Option<RowRating>,
    /// The score of the latest rating at or before 7, 30 and 90 days ago.
    pub score_before: [Option<Score>; 3],
    /// Open findings by severity, in [`Severity::ALL`]'s order (info first).
    pub open: [u32; 5],
    /// Open findings by risk vector (in [`RiskVector::ALL`]'s order) and severity.
    pub open_by_vector: [[u32; 5]; 12],
    /// Open findings whose CVE is in the KEV catalogue.
    pub kev: u32,
    pub last_scanned_at: Option<OffsetDateTimeText>,
    /// Why the last scan could not rate the company (its domain does not exist …), and when.
    pub scan_error: Option<(String, OffsetDateTimeText)>,
    /// The company's own rescan cadence (none: the scheduler's).
    pub cadence: Option<std::time::Duration>,
}

/// The days [`PortfolioRow::score_before`] looks back.
pub const CHANGE_DAYS: [i64; 3] = [7, 30, 90];

/// Open or closed findings, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FindingStatus {
    #[default]
    Open,
    Closed,
    All,
}

/// Whose findings a search looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingsOf {
    Company(i64),
    Portfolio(i64),
}

/// A findings search: every filter given must hold.
#[derive(Debug, Clone, Default)]
pub struct FindingQuery {
    pub severity: Option<Severity>,
    pub risk_vector: Option<RiskVector>,
    pub code: Option<String>,
    /// The host or a name below it (`model::asset_under`), a parsed domain.
    pub host: Option<model::Domain>,
    pub status: FindingStatus,
    /// First seen at or after.
    pub since: Option<time::OffsetDateTime>,
    pub disputed: Option<bool>,
}

/// A finding a search found, with its company and when it was closed (a closed one).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundFinding {
    pub company: i64,
    pub social_id: SocialId,
    pub finding: Finding,
    pub closed_at: Option<OffsetDateTimeText>,
}

/// A company's rating made after a time, with the rating before it and the findings
/// that opened and closed between the two (what explains the change).
#[derive(Debug, Clone, PartialEq)]
pub struct RatingChange {
    pub company: i64,
    /// The rating before (none: the company's first).
    pub before: Option<RowRating>,
    pub after: RowRating,
    /// Why the rating was made (`model::RATED_BY_SCAN` …; none for an imported one).
    pub reason: Option<String>,
    /// Findings that opened (new, or back after closing) after `before` and by `after`,
    /// worst first.
    pub opened: Vec<Finding>,
    /// Findings that closed in the same interval, worst first.
    pub closed: Vec<Finding>,
}

/// The rating changes since a time, oldest first per company, companies in id order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RatingChanges {
    pub changes: Vec<RatingChange>,
    /// More findings opened or closed than the read's bound: the lists are cut (the
    /// ratings are all there).
    pub truncated: bool,
}

/// A portfolio's alert rules as set (JSON, parsed before it was kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAlertRules {
    pub document: String,
    pub updated_at: OffsetDateTimeText,
    pub updated_by: String,
}

/// A portfolio that holds a company and has alert rules: whose, the company's tier in
/// it, and the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertWatch {
    pub org: i64,
    pub portfolio: i64,
    pub tier: Option<u8>,
    pub document: String,
}

/// An alert to keep: a rule of a portfolio raised about one of its companies.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAlert {
    pub org: i64,
    pub portfolio: i64,
    pub company: i64,
    pub rule_id: String,
    pub kind: String,
    /// What tells it from another alert of the rule at the same moment (a finding id, a
    /// CVE); kept once per portfolio, company, rule, subject and moment.
    pub subject: String,
    pub summary: String,
    /// The rating change that raised it, in words.
    pub explanation: String,
    pub created_at: time::OffsetDateTime,
}

/// A kept alert, with the names its reader needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub id: i64,
    pub portfolio: i64,
    pub portfolio_name: String,
    pub company: i64,
    pub social_id: SocialId,
    pub company_name: String,
    pub rule_id: String,
    pub kind: String,
    pub subject: String,
    pub summary: String,
    pub explanation: String,
    pub created_at: OffsetDateTimeText,
    pub acknowledged_at: Option<OffsetDateTimeText>,
    pub acknowledged_by: Option<String>,
}

/// Which alerts of an organisation to list, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertQuery {
    pub portfolio: Option<i64>,
    pub acknowledged: Option<bool>,
    pub kind: Option<String>,
}

/// A version of an organisation's underwriting guidelines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredGuidelines {
    pub version: i64,
    /// The document as set (JSON, parsed before it was kept).
    pub document: String,
    pub created_at: OffsetDateTimeText,
    /// The key that set it (its name).
    pub created_by: String,
}

/// Organisations, their portfolios and vendor records.
#[async_trait]
pub trait Portfolios: Send + Sync + 'static {
    /// A new organisation; `Invalid` when the name is taken.
    async fn create_org(&self, name: &str) -> Result<Org>;

    async fn org_by_name(&self, name: &str) -> Result<Option<Org>>;

    async fn orgs(&self) -> Result<Vec<Org>>;

    /// A new portfolio of `org`; none when the organisation has one of that name, or
    /// has `max` portfolios already (checked and created in one step).
    async fn create_portfolio(&self, org: i64, name: &str, max: u64) -> Result<Option<Portfolio>>;

    /// The organisation's portfolios, by name.
    async fn portfolios(&self, org: i64) -> Result<Vec<Portfolio>>;

    /// The portfolio `id`, if it is `org`'s.
    async fn portfolio(&self, org: i64, id: i64) -> Result<Option<Portfolio>>;

    /// Renames `org`'s portfolio `id`: none when there is no such portfolio, `Invalid`
    /// when the name is taken.
    async fn rename_portfolio(&self, org: i64, id: i64, name: &str) -> Result<Option<Portfolio>>;

    /// Deletes `org`'s portfolio `id` and its vendor records; false when there was none.
    async fn delete_portfolio(&self, org: i64, id: i64) -> Result<bool>;

    /// Adds companies with their records to a portfolio, in one transaction; a company
    /// in it already keeps its record. For each, whether it was added.
    async fn add_to_portfolio(&self, portfolio: i64, members: &[(i64, VendorRecord)]) -> Result<Vec<bool>>;

    /// The record of a company in a portfolio.
    async fn member(&self, portfolio: i64, company: i64) -> Result<Option<VendorRecord>>;

    /// Replaces a company's record in a portfolio; false when it is not in it.
    async fn update_member(&self, portfolio: i64, company: i64, record: &VendorRecord) -> Result<bool>;

    /// Removes a company from a portfolio; false when it was not in it.
    async fn remove_member(&self, portfolio: i64, company: i64) -> Result<bool>;

    /// Creates the companies of `rows` in one transaction, each counted against the
    /// key's creations since `since` (at most `cap`; no key, no count): its profile, its
    /// name marked derived, its domain claimed, its job queued. The id of each company
    /// created, in order; `None` past the cap (nothing of that row is written). A
    /// social id already taken is the caller's to have refused.
    async fn onboard(
        &self,
        key: Option<i64>,
        since: time::OffsetDateTime,
        at: time::OffsetDateTime,
        cap: u64,
        rows: &[Onboarding],
    ) -> Result<Vec<Option<i64>>>;

    /// Names a company whose name is derived by what its site says (`name`, already
    /// cleaned); a name someone gave is never replaced. True when the name changed.
    async fn name_from_site(&self, company: i64, name: &str) -> Result<bool>;

    /// Sets the website of a company onboarded by its domain (its name derived) to
    /// where its site was found; a website someone gave is never replaced. True when it
    /// changed.
    async fn website_from_site(&self, company: i64, website: &model::Website) -> Result<bool>;

    /// Every company of a portfolio with what its list shows, as of `now`.
    async fn portfolio_rows(&self, portfolio: i64, now: time::OffsetDateTime) -> Result<Vec<PortfolioRow>>;

    /// The score of each member's latest rating at or before `at` (members rated then).
    async fn portfolio_scores_at(
        &self,
        portfolio: i64,
        at: time::OffsetDateTime,
    ) -> Result<std::collections::HashMap<i64, Score>>;

    /// One page of the findings `query` finds, worst first.
    async fn search_findings(&self, of: FindingsOf, query: &FindingQuery, page: Page) -> Result<Paged<FoundFinding>>;

    /// Keeps a new version of `org`'s guidelines (the latest is in force): its number.
    async fn save_guidelines(&self, org: i64, document: &str, by: &str, at: time::OffsetDateTime) -> Result<i64>;

    /// The guidelines of `org` in force (its latest version), if any.
    async fn guidelines(&self, org: i64) -> Result<Option<StoredGuidelines>>;

    /// Every finding `query` finds, worst first, at most `limit` (a CSV download).
    async fn all_findings(&self, of: FindingsOf, query: &FindingQuery, limit: u64) -> Result<Vec<FoundFinding>>;

    /// Sets a portfolio's alert rules (replacing those it had).
    async fn set_alert_rules(&self, portfolio: i64, document: &str, by: &str, at: time::OffsetDateTime) -> Result<()>;

    async fn alert_rules(&self, portfolio: i64) -> Result<Option<StoredAlertRules>>;

    /// The portfolios that hold `company` and have alert rules.
    async fn alert_watches(&self, company: i64) -> Result<Vec<AlertWatch>>;

    /// Keeps the alerts not kept already; how many were new.
    async fn record_alerts(&self, alerts: &[NewAlert]) -> Result<u64>;

    /// One page of an organisation's alerts, newest first, with how many match.
    async fn alerts(&self, org: i64, query: &AlertQuery, page: Page) -> Result<Paged<Alert>>;

    /// Acknowledges an alert of the organisation (the first acknowledgement is kept); the
    /// alert, or none when the organisation has no such alert.
    async fn ack_alert(&self, org: i64, id: i64, by: &str, at: time::OffsetDateTime) -> Result<Option<Alert>>;

    /// The ratings of `of` (a company, or a portfolio's members) made after `since`, each
    /// with the rating before it and the findings opened and closed between the two; at
    /// most `max_findings` findings are read in all.
    async fn rating_changes(
        &self,
        of: FindingsOf,
        since: time::OffsetDateTime,
        max_findings: u32,
    ) -> Result<RatingChanges>;
}
