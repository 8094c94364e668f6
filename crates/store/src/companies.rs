//! Companies, their profiles, subsidiaries and add-subsidiary requests.

use model::{
    Application, Company, CompanyProfile, Domain, DomainAsset, Finding, Incident, NetworkEndpoint, Page, SbomComponent,
    ScoreSnapshot, SocialId,
};

use crate::{Paged, Result};
use async_trait::async_trait;

/// Everything known about one company, as written by the importer and the scanner.
/// `None` members are left as they are; `Some` members replace what was stored.
#[derive(Debug, Clone, Default)]
pub struct CompanySnapshot {
    pub profile: CompanyProfile,
    pub domains: Option<Vec<DomainAsset>>,
    pub applications: Option<Vec<Application>>,
    pub network_endpoints: Option<Vec<NetworkEndpoint>>,
    pub sbom: Option<Vec<SbomComponent>>,
    pub findings: Option<Vec<Finding>>,
    /// Ratings to add to the history (a rating already stored for the same time is kept).
    pub scores: Vec<ScoreSnapshot>,
    pub incidents: Vec<Incident>,
}

/// The versions of the stored data ([`Companies::data_versions`]): `company` moves with
/// every write of companies and what is recorded about them, `cve` with every write of
/// the vulnerability data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataVersions {
    pub company: i64,
    pub cve: i64,
}

impl DataVersions {
    /// From the `data_versions` rows: (scope, version). PostgreSQL keeps the company
    /// version in rows 'company:0'..'company:15', whose sum it is.
    pub(crate) fn from_rows(rows: Vec<(String, i64)>) -> DataVersions {
        let mut v = DataVersions::default();
        for (scope, version) in rows {
            if scope == "company" || scope.starts_with("company:") {
                v.company += version;
            } else if scope == "cve" {
                v.cve = version;
            }
        }
        v
    }
}

/// Where an add-subsidiary request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubsidiaryState {
    /// The request created the company, and linked it.
    Created,
    /// An existing company outside the key's tree: waits for an operator.
    Pending,
    Approved,
    Rejected,
}

impl SubsidiaryState {
    pub fn as_str(self) -> &'static str {
        match self {
            SubsidiaryState::Created => "created",
            SubsidiaryState::Pending => "pending",
            SubsidiaryState::Approved => "approved",
            SubsidiaryState::Rejected => "rejected",
        }
    }

    pub fn parse(raw: &str) -> Option<SubsidiaryState> {
        [SubsidiaryState::Created, SubsidiaryState::Pending, SubsidiaryState::Approved, SubsidiaryState::Rejected]
            .into_iter()
            .find(|s| s.as_str() == raw)
    }
}

/// An add-subsidiary request, as an operator reviews it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubsidiaryRequest {
    pub id: i64,
    pub parent: model::SocialId,
    pub child: model::SocialId,
    pub child_name: String,
    pub key_id: Option<i64>,
    pub state: SubsidiaryState,
    pub created_at: String,
    pub decided_at: Option<String>,
    pub note: Option<String>,
}

/// Companies, their profiles, subsidiaries and add-subsidiary requests.
#[async_trait]
pub trait Companies: Send + Sync + 'static {
    /// Creates or updates a company and everything in the snapshot, in one transaction.
    async fn save_company(&self, snapshot: &CompanySnapshot) -> Result<Company>;

    async fn company_by_social_id(&self, social_id: &SocialId) -> Result<Option<Company>>;

    /// Every company's id and social id, by id, from after `after` (0: the first), at most
    /// `limit`: a walk over all companies one page at a time (`rampart jobs scan --all`).
    async fn company_ids(&self, after: i64, limit: u32) -> Result<Vec<(i64, SocialId)>>;

    /// How many companies there are (`rampart status`, `/metrics`): counted by the
    /// database, not read row by row.
    async fn company_count(&self) -> Result<u64>;

    /// The company whose web domain is `domain` or one of its parents, or which owns
    /// such a name among its attributed domains.
    async fn company_by_domain(&self, domain: &Domain) -> Result<Option<Company>>;

    /// Companies whose name contains `needle` (case-insensitive), best matches first.
    async fn search_companies(&self, needle: &str, page: Page) -> Result<Paged<Company>>;

    /// Companies whose normalised name (`model::normalise_name`) equals `name`, at most
    /// `limit`, oldest first; none for an empty name.
    async fn companies_by_normalised_name(&self, name: &str, limit: u32) -> Result<Vec<Company>>;

    /// Records why the company's last scan could not rate it (`None` clears it).
    async fn set_scan_error(&self, company: i64, error: Option<&str>) -> Result<()>;

    /// Why the company's last scan could not rate it, and when.
    async fn scan_error(&self, company: i64) -> Result<Option<(String, time::OffsetDateTime)>>;

    /// Sets the DKIM selectors the company names (validated by
    /// `model::dkim_selectors`); empty clears them.
    async fn set_dkim_selectors(&self, company: i64, selectors: &[String]) -> Result<()>;

    /// The DKIM selectors the company names (empty when it names none).
    async fn dkim_selectors(&self, company: i64) -> Result<Vec<String>>;

    /// The versions of the stored data, moved on by every write of it (whoever writes):
    /// what read caches are keyed by. Lookup counts do not move them.
    async fn data_versions(&self) -> Result<DataVersions>;

    /// Adds lookups to `searched_by`: (company row id, count).
    async fn add_lookups(&self, counts: &[(i64, i64)]) -> Result<()>;

    /// Companies most recently rated first.
    async fn last_scanned(&self, page: Page) -> Result<Paged<Company>>;

    /// Links `child` below `parent`; false when the link existed.
    async fn link_subsidiary(&self, parent: i64, child: i64) -> Result<bool>;

    /// Records what a key asked of add-subsidiary: `Created` links at once (a company
    /// the request created); `Pending` waits for an operator (an existing company outside
    /// the key's tree; asked again, the open request's id is returned). Returns the id.
    async fn record_subsidiary_request(
        &self,
        parent: i64,
        child: i64,
        key_id: Option<i64>,
        state: SubsidiaryState,
    ) -> Result<i64>;

    /// The requests in `state` (all when `None`), oldest first.
    async fn subsidiary_requests(&self, state: Option<SubsidiaryState>) -> Result<Vec<SubsidiaryRequest>>;

    /// Approves (links the companies) or rejects a pending request; `None` when no
    /// pending request has that id.
    async fn decide_subsidiary_request(&self, id: i64, approve: bool, note: &str) -> Result<Option<SubsidiaryRequest>>;

    /// Companies created through add-subsidiary by a key since `since`.
    async fn companies_created_by_key(&self, key_id: i64, since: time::OffsetDateTime) -> Result<u64>;

    /// Removes the link; false when there was none.
    async fn unlink_subsidiary(&self, parent: i64, child: i64) -> Result<bool>;

    /// Whether `child` is linked as a subsidiary of `parent`.
    async fn is_subsidiary(&self, parent: i64, child: i64) -> Result<bool>;

    /// Subsidiaries by name; all of them when `page` is `None`.
    async fn subsidiaries(&self, parent: i64, page: Option<Page>) -> Result<Paged<Company>>;
}
