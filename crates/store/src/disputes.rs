//! Disputes of findings and the company's own footprint: what a rated company said
//! against a finding or an asset, what was decided, and the assets it added or had
//! removed.
//!
//! Both backends share one implementation ([`disputes_impl!`]): the statements are
//! written once, with `$N` parameters and `TRUE`/`FALSE`, which SQLite and PostgreSQL
//! both read.

use model::{Dispute, DisputeReason, DisputeState, Finding, FootprintAsset, FootprintChange, OffsetDateTimeText, Page};
use time::OffsetDateTime;

use crate::{Paged, Result};
use async_trait::async_trait;

/// A dispute to open.
#[derive(Debug, Clone, Copy)]
pub struct NewDispute<'a> {
    pub company: i64,
    /// The finding disputed; none for the removal of an asset (`not_ours`).
    pub finding: Option<i64>,
    /// The asset a removal names (ignored for a finding: its asset is taken).
    pub asset: &'a str,
    pub reason: DisputeReason,
    pub explanation: &'a str,
    /// The key (its name) that opens it.
    pub by: &'a str,
    pub at: OffsetDateTime,
    /// The most disputes the company may have open at once: counted and inserted under
    /// one lock of the company's row, so concurrent requests (of any process) cannot
    /// pass it together.
    pub max_open: u64,
}

/// What opening a dispute came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Opened {
    Opened(Dispute),
    /// The finding has an open dispute already: that one.
    AlreadyOpen(Dispute),
    /// The finding closed (a scan no longer saw it) before the dispute: nothing to dispute.
    FindingClosed {
        closed_at: OffsetDateTimeText,
    },
    /// No such finding of this company.
    NoSuchFinding,
    /// The company has `NewDispute::max_open` disputes open already.
    TooMany,
}

/// The caps of a company's footprint additions, enforced in the store's transaction.
#[derive(Debug, Clone, Copy)]
pub struct FootprintCaps {
    pub per_day: u64,
    pub total: u64,
}

/// What adding an asset to a footprint came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    Added,
    /// The asset is in the footprint already.
    Already,
    /// `FootprintCaps::per_day` additions were made today (UTC) already.
    DayFull,
    /// `FootprintCaps::total` additions were made already.
    TotalFull,
}

/// An asset a key asked to add that another company holds on evidence: an operator
/// approves or rejects it (`rampart footprint pending|approve|reject`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetRequest {
    pub id: i64,
    pub company: model::SocialId,
    pub asset: String,
    pub reason: String,
    pub requested_by: String,
    pub requested_at: String,
    /// `pending`, `approved` or `rejected`.
    pub state: String,
    pub note: Option<String>,
}

/// The names among `claims` that are a key's unverified claims of a company that also
/// holds a verified domain (and lie under none of its verified ones): scanned, but not
/// rated nor shown as the company's (a company known by claims alone is rated on them,
/// and answered to nobody outside its tree).
pub fn unproven(claims: &[DomainClaim]) -> Vec<String> {
    if !claims.iter().any(|c| c.verified) {
        return Vec::new();
    }
    claims
        .iter()
        .filter(|c| !c.verified && !claims.iter().any(|v| v.verified && c.name.is_within(&v.name)))
        .map(|c| c.name.to_string())
        .collect()
}

/// A domain attributed to a company, and whether the attribution rests on evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainClaim {
    pub name: model::Domain,
    pub attribution: String,
    /// Verified: an operator's import, discovery, or the company's proof of control.
    /// Otherwise a key's claim.
    pub verified: bool,
    /// The token the company publishes to prove control, once one was issued.
    pub challenge: Option<String>,
    /// How it was verified (`operator`, `dns txt`, `well-known file`), when by proof.
    pub verified_by: Option<String>,
}

/// An operator's (or a rescan's) decision of an open dispute.
#[derive(Debug, Clone, Copy)]
pub struct Decision<'a> {
    pub accept: bool,
    pub note: &'a str,
    /// The operator's name, or `rescan`.
    pub by: &'a str,
    pub at: OffsetDateTime,
}

/// A stored finding with its company and when it closed (none while open).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFinding {
    pub company: i64,
    pub finding: Finding,
    pub closed_at: Option<OffsetDateTimeText>,
    pub false_positive: bool,
}

/// Disputes of findings, their decisions, and the company's footprint changes.
#[async_trait]
pub trait Disputes: Send + Sync + 'static {
    /// The finding `id`, open or closed.
    async fn finding_by_id(&self, id: i64) -> Result<Option<StoredFinding>>;

    /// Opens a dispute: of a finding of the company (marked `disputed` until it is
    /// decided), or of an asset (`finding: None`, a removal). One open dispute per
    /// finding and per asset.
    async fn open_dispute(&self, new: &NewDispute<'_>) -> Result<Opened>;

    /// Disputes of these companies (all when `None`), newest first.
    async fn disputes(
        &self,
        companies: Option<&[i64]>,
        state: Option<DisputeState>,
        page: Page,
    ) -> Result<Paged<Dispute>>;

    async fn dispute(&self, id: i64) -> Result<Option<Dispute>>;

    /// Decides an open dispute and applies it in the same transaction: the finding is no
    /// longer disputed; accepted, `compensating_control` gives it no weight, `incorrect`
    /// closes it as a false positive of its check (later scans that see it keep it
    /// closed), `fixed` closes it, `not_ours` removes the asset from the company (its
    /// hosts, endpoints and open findings; kept as a `removed` footprint change that its
    /// scans honour). `None` when there is no such dispute; `StoreError::Invalid` when it
    /// is decided already.
    async fn decide_dispute(&self, id: i64, decision: &Decision<'_>) -> Result<Option<Dispute>>;

    /// Records an asset the company added (a name not under any of its domains becomes
    /// one of its domains, verified as `verified` says: a key's word alone makes a
    /// claim), within `caps`: the additions are counted and the row inserted under one
    /// lock of the company's row, so concurrent requests of any process cannot pass them.
    #[allow(clippy::too_many_arguments)]
    async fn add_to_footprint(
        &self,
        company: i64,
        asset: &FootprintAsset,
        reason: &str,
        by: &str,
        at: OffsetDateTime,
        verified: bool,
        caps: FootprintCaps,
    ) -> Result<Added>;

    /// The companies other than `family` that hold `name` on evidence: a verified domain
    /// equal to it, above it or below it, or a host of that name their scans attributed.
    async fn holders_of(&self, name: &model::Domain, family: &[i64]) -> Result<Vec<i64>>;

    /// The companies other than `family` whose scans observed a service on one of
    /// `addresses` (a footprint range of at most 256).
    async fn address_holders(&self, addresses: &[std::net::IpAddr], family: &[i64]) -> Result<Vec<i64>>;

    /// Sets how the company holds `name` (inserting the domain when it has none).
    async fn claim_domain(&self, company: i64, name: &model::Domain, attribution: &str, verified: bool) -> Result<()>;

    /// The company's domains with how each is held.
    async fn domain_claims(&self, company: i64) -> Result<Vec<DomainClaim>>;

    /// The challenge token of the company's domain `name`: the one issued, or `token`
    /// now. `None` when the company has no such domain.
    async fn challenge_domain(&self, company: i64, name: &model::Domain, token: &str) -> Result<Option<String>>;

    /// Counts a company created by `key` at `at` against its cap of `cap` since `since`:
    /// false, and nothing counted, when it has created `cap` already. Counted and
    /// recorded under one lock of the key's row, for every process.
    async fn reserve_creation(&self, key: i64, since: OffsetDateTime, at: OffsetDateTime, cap: u64) -> Result<bool>;

    /// Marks the company's domain `name` verified (`how`); false when it has none.
    async fn verify_domain(&self, company: i64, name: &model::Domain, how: &str) -> Result<bool>;

    /// Records a key's request to add `asset` (another company's on evidence) for an
    /// operator; one pending request per company and asset (the one there is answered).
    /// `None`, and nothing recorded, when the company has `max_pending` pending already
    /// (counted and inserted under a lock of the company's row).
    async fn request_asset(
        &self,
        company: i64,
        asset: &FootprintAsset,
        reason: &str,
        by: &str,
        at: OffsetDateTime,
        max_pending: u64,
    ) -> Result<Option<i64>>;

    /// The asset requests, oldest first; the pending ones only unless `all`.
    async fn asset_requests(&self, all: bool) -> Result<Vec<AssetRequest>>;

    /// Decides a pending asset request: approved, the asset joins the company's footprint
    /// (a name as a verified domain: an operator's word is evidence), in the same
    /// transaction. `None` when there is no such pending request.
    async fn decide_asset_request(
        &self,
        id: i64,
        approve: bool,
        note: &str,
        at: OffsetDateTime,
    ) -> Result<Option<AssetRequest>>;

    /// The company's footprint changes, oldest first.
    async fn footprint(&self, company: i64) -> Result<Vec<FootprintChange>>;

    /// Findings closed as false positives, counted per check (finding code), most first.
    async fn false_positives(&self) -> Result<Vec<(String, u64)>>;

    /// The risk vectors of the company's open findings that an open dispute names.
    async fn disputed_vectors(&self, company: i64) -> Result<Vec<model::RiskVector>>;

    /// Every rated company with its latest global score (hundredths), NAICS code and
    /// stated employees: the population peer benchmarks rank among.
    async fn rated_population(&self) -> Result<Vec<RatedCompany>>;
}

/// A rated company as peer benchmarks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedCompany {
    pub id: i64,
    pub naics_code: Option<i64>,
    pub employees: String,
    /// The latest global score, in hundredths (0–10000).
    pub score: i64,
}

/// The asset an accepted `not_ours` removes: the host of the finding's asset, its
/// address, or the asset a removal named.
pub fn removed_asset(d: &Dispute) -> Option<FootprintAsset> {
    if d.finding_id.is_some() {
        if let Some(host) = model::dispute::asset_host(&d.asset) {
            return Some(FootprintAsset::Name(host));
        }
        return model::dispute::asset_address(&d.asset).map(FootprintAsset::Ip);
    }
    FootprintAsset::parse(&d.asset).ok()
}

pub(crate) const DISPUTE_SELECT: &str = "SELECT d.id, c.social_id, d.finding_id, d.asset, d.risk_vector, d.code, d.title, \
     d.reason, d.explanation, d.state, d.opened_at, d.opened_by, d.decided_at, d.decided_by, d.note \
     FROM disputes d JOIN companies c ON c.id = d.company_id";
