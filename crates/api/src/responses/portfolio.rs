//! The answers of the Portfolio group and of the findings searches (extensions,
//! docs/API.md "Portfolios").

use std::collections::BTreeMap;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{FindingOut, PaginationOut};

/// A portfolio of the caller's organisation.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PortfolioOut {
    pub portfolio_id: i64,
    pub name: String,
    /// Companies in it.
    pub companies: u64,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&model::Portfolio> for PortfolioOut {
    fn from(p: &model::Portfolio) -> Self {
        Self {
            portfolio_id: p.id,
            name: p.name.clone(),
            companies: p.companies,
            created_at: model::timefmt::rfc3339(p.created_at.0),
            updated_at: model::timefmt::rfc3339(p.updated_at.0),
        }
    }
}

/// The organisation's portfolios, by name.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PortfoliosOut {
    pub portfolios: Vec<PortfolioOut>,
}

/// What became of one row of an add-companies request.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AddedRowOut {
    /// The domain as given (or the row's text, when it named none).
    pub domain: String,
    /// The company the row is (none when refused).
    pub social_id: Option<String>,
    /// `rated` (a rating is there to read), `queued` (its first rating is on its way:
    /// its quick rating is queued at top priority), `pending` (an operator must
    /// decide: the domain is in another company's footprint) or `refused` (with why).
    pub status: Cow<'static, str>,
    /// Of a rated company: `quick` or `full`, the depth of the scan behind its rating.
    pub depth: Option<String>,
    /// Whether the company is new to Rampart (created from its domain by this request).
    pub created: bool,
    pub message: String,
}

/// The answer of POST /portfolio-add-companies.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AddCompaniesOut {
    pub portfolio_id: i64,
    /// Companies new to the portfolio.
    pub added: u64,
    /// Rows by status.
    pub counts: BTreeMap<Cow<'static, str>, u64>,
    /// One result per row, in the order given.
    pub results: Vec<AddedRowOut>,
}

/// An organisation's record of a company in a portfolio.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct VendorRecordOut {
    /// 1 (critical) to 4; none when not tiered.
    pub tier: Option<u8>,
    pub tags: Vec<String>,
    pub custom_id: Option<String>,
    /// vendor, insured, applicant, subsidiary or other.
    pub relationship: String,
    /// prospect, onboarding, active, review, offboarding or ended.
    pub stage: String,
    pub owner: String,
    pub note: String,
}

impl From<&model::VendorRecord> for VendorRecordOut {
    fn from(r: &model::VendorRecord) -> Self {
        Self {
            tier: r.tier.map(model::Tier::get),
            tags: r.tags.clone(),
            custom_id: r.custom_id.clone(),
            relationship: r.relationship.as_str().to_owned(),
            stage: r.stage.as_str().to_owned(),
            owner: r.owner.clone(),
            note: r.note.clone(),
        }
    }
}

/// Open findings by severity.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SeverityCounts {
    pub critical: u32,
    pub high: u32,
    pub medium: u32,
    pub low: u32,
    pub info: u32,
}

impl SeverityCounts {
    /// From counts in `model::Severity::ALL`'s order (info first).
    pub fn of(counts: &[u32; 5]) -> Self {
        let [info, low, medium, high, critical] = *counts;
        Self { critical, high, medium, low, info }
    }

    pub fn total(&self) -> u32 {
        self.critical + self.high + self.medium + self.low + self.info
    }

    pub fn add(&mut self, other: &SeverityCounts) {
        self.critical += other.critical;
        self.high += other.high;
        self.medium += other.medium;
        self.low += other.low;
        self.info += other.info;
    }
}

/// One company of a portfolio, as its list shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PortfolioCompanyOut {
    pub social_id: String,
    pub name: String,
    /// The name is derived from what the site says or from the domain (onboarding).
    pub name_derived: bool,
    pub domain: Option<String>,
    pub industry: String,
    /// `rated`, `queued` (not rated yet), `pending` (an operator must approve its
    /// domain) or `refused` (its scan could not rate it: `status_message` says why).
    pub status: Cow<'static, str>,
    pub status_message: Option<String>,
    /// The global score (0–100) and grade of its latest rating.
    pub score: Option<f64>,
    pub grade: Option<String>,
    /// The score's change since the latest rating at or before 7, 30 and 90 days ago.
    pub change_7d: Option<f64>,
    pub change_30d: Option<f64>,
    pub change_90d: Option<f64>,
    /// Open findings by severity, and how many name a KEV-listed CVE.
    pub findings: SeverityCounts,
    pub kev_findings: u32,
    /// The latest rating's time and depth (`quick` or `full`).
    pub last_scan: Option<String>,
    pub depth: Option<String>,
    /// The rating is stale: its last scan failed, or it is older than twice its rescan
    /// cadence.
    pub stale: bool,
    pub added_at: String,
    #[serde(flatten)]
    pub record: VendorRecordOut,
}

/// A page of a portfolio's companies.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PortfolioCompaniesOut {
    pub portfolio_id: i64,
    pub name: String,
    pub companies: Vec<PortfolioCompanyOut>,
    pub pagination: PaginationOut,
}

/// The answer of PUT /portfolio-update-company.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MemberOut {
    pub portfolio_id: i64,
    pub social_id: String,
    #[serde(flatten)]
    pub record: VendorRecordOut,
}

/// A company that moved, in a portfolio's summary.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MoverOut {
    pub social_id: String,
    pub name: String,
    pub score: f64,
    pub grade: String,
    pub change_30d: f64,
}

/// A company with a KEV-listed CVE among its open findings.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KevCompanyOut {
    pub social_id: String,
    pub name: String,
    pub kev_findings: u32,
}

/// One tier's row of the tier × grade matrix (`tier` none: companies without a tier).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TierGradesOut {
    pub tier: Option<u8>,
    pub companies: u64,
    /// Companies by grade (A to F); unrated ones are not counted.
    pub grades: BTreeMap<String, u64>,
}

/// The answer of GET /portfolio-getsummary.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PortfolioSummaryOut {
    pub portfolio_id: i64,
    pub name: String,
    pub companies: u64,
    pub rated: u64,
    /// The mean global score of the rated companies.
    pub average_score: Option<f64>,
    pub grades: BTreeMap<String, u64>,
    pub tiers: Vec<TierGradesOut>,
    /// The ten largest falls and rises over 30 days.
    pub movers_down: Vec<MoverOut>,
    pub movers_up: Vec<MoverOut>,
    pub findings: SeverityCounts,
    /// Open findings by component (risk vector) and severity.
    pub findings_by_component: BTreeMap<String, SeverityCounts>,
    pub kev_companies: Vec<KevCompanyOut>,
    pub stale: u64,
}

/// A finding a search found.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FoundFindingOut {
    pub social_id: String,
    /// `open` or `closed`.
    pub status: Cow<'static, str>,
    pub closed_at: Option<String>,
    #[serde(flatten)]
    pub finding: FindingOut,
}

impl From<&store::FoundFinding> for FoundFindingOut {
    fn from(f: &store::FoundFinding) -> Self {
        Self {
            social_id: f.social_id.to_string(),
            status: Cow::Borrowed(if f.closed_at.is_some() { "closed" } else { "open" }),
            closed_at: f.closed_at.map(|t| model::timefmt::rfc3339(t.0)),
            finding: FindingOut::from(&f.finding),
        }
    }
}

/// A page of the findings a search found, worst first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FindingsOut {
    /// The company searched (absent for a portfolio's search).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub social_id: Option<String>,
    /// The portfolio searched (absent for a company's search).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub portfolio_id: Option<i64>,
    pub findings: Vec<FoundFindingOut>,
    pub pagination: PaginationOut,
}
