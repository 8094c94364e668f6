//! The store: every table Rampart keeps, behind one trait.
//!
//! `Store` is what the API, the importers and (later) the workers see; SQL lives only
//! in the backend modules (`sqlite`, and PostgreSQL next), and every backend passes the
//! one conformance suite in `conformance`. The store never talks to the network and
//! never decides policy (scores, limits): it keeps what it is given, durably.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use model::{
    ApiKey, Application, Company, CompanyProfile, CveId, CveRecord, Domain, DomainAsset, Finding, Incident, Job,
    NetworkEndpoint, NewApiKey, Page, RiskVector, SbomComponent, ScoreSnapshot, Severity, SocialId,
};

mod alloc;
pub mod conformance;
mod migrate;
mod shared;
pub mod sqlite;

pub use alloc::tune_allocator;
pub use shared::SharedStr;
pub use sqlite::SqliteStore;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is not valid: {0}")]
    Corrupt(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("invalid input: {0}")]
    Invalid(String),
    #[error("unsupported database URL {0:?}: expected sqlite://PATH or a file path")]
    UnsupportedUrl(String),
    /// No connection was free within the wait: the store is saturated, try again.
    #[error("the database is busy: no connection free within the wait")]
    Busy,
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

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

/// One `cpeMatch` entry of a CVE, indexed for lookups by vendor and product. Version
/// fields are keys whose byte order is the version order (`vulndb::version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpeMatchRow {
    pub part: String,
    pub vendor: String,
    pub product: String,
    /// The criteria's version attribute as written (`*`, `-`, a version, a pattern).
    pub version: String,
    /// Key of the version when the criteria names one exactly.
    pub version_key: Option<String>,
    pub start_incl: Option<String>,
    pub start_excl: Option<String>,
    pub end_incl: Option<String>,
    pub end_excl: Option<String>,
    pub vulnerable: bool,
    pub criteria: String,
}

/// A vulnerability record as stored: the record served, its configurations (JSON, for
/// matching) and their index rows.
#[derive(Debug, Clone)]
pub struct StoredCve {
    pub record: CveRecord,
    /// The record as JSON when its served form does not reproduce it
    /// ([`CveRecord::served_form_reproduces`]); `None` keeps only the served form, from
    /// which the record is read back. NVD records need no copy of their own.
    pub record_json: Option<String>,
    pub configurations: String,
    /// Whether a match needs the configurations evaluated, or the index rows suffice.
    pub needs_eval: bool,
    /// The record as list responses serve it (JSON object), without the members joined
    /// from other feeds.
    pub served: String,
    /// The products the CVE has vulnerable entries for.
    pub products: Vec<ProductRow>,
    pub matches: Vec<CpeMatchRow>,
}

/// What [`Store::cve_candidates`] looks for: CVEs with a vulnerable entry for `part`
/// (any when `None`), `vendor` and `product` that may cover `version_key` (all of them
/// when `None`), newest first, after `after` (last-modified, id) when given, at most
/// `batch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CandidateQuery<'a> {
    pub part: Option<&'a str>,
    pub vendor: &'a str,
    pub product: &'a str,
    pub version_key: Option<&'a str>,
    /// Configurations with every candidate, not only those that need evaluating.
    pub all_configurations: bool,
    pub after: Option<&'a (String, CveId)>,
    pub batch: u32,
    /// Each candidate's served form with it, read in the same query.
    pub served: bool,
}

/// A CVE that may match a name, with what is needed to decide.
#[derive(Debug, Clone)]
pub struct CveCandidate {
    pub id: CveId,
    pub last_modified: SharedStr,
    /// The configurations, when they must be evaluated (or were asked for).
    pub configurations: Option<SharedStr>,
    /// The served form, when asked for ([`CandidateQuery::served`]).
    pub served: Option<ServedCve>,
}

/// A product a CVE has vulnerable entries for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductRow {
    pub vendor: String,
    pub product: String,
    /// The parts (`a`, `o`, `h`) of those entries.
    pub parts: String,
    /// Whether the CVE applies to the product asked about without a version (decided
    /// at import by evaluating the configurations).
    pub applies_any_version: bool,
}

/// A record in its served form, with what other feeds add to it.
#[derive(Debug, Clone)]
pub struct ServedCve {
    pub id: CveId,
    pub cwe: SharedStr,
    /// The served JSON object.
    pub json: SharedStr,
    /// The KEV entry (JSON object), when listed.
    pub kev: Option<SharedStr>,
    pub epss: Option<f64>,
    pub percentile: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct KevRow {
    pub cve_id: CveId,
    pub date_added: String,
    pub entry: serde_json::Value,
}

#[derive(Debug, Clone)]
pub struct EpssRow {
    pub cve_id: CveId,
    pub epss: f64,
    pub percentile: f64,
}

#[derive(Debug, Clone)]
pub struct CweRow {
    pub id: u32,
    pub name: String,
    pub capec_ids: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct CapecRow {
    pub id: u32,
    /// The pattern as cve-search shows it in a CVE's `capec`.
    pub record: serde_json::Value,
    /// `CWE-n` names.
    pub related_weaknesses: Vec<String>,
}

/// Which findings to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct FindingFilter<'a> {
    pub asset: Option<&'a str>,
    pub risk_vector: Option<RiskVector>,
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
}

pub use model::asset_under;

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

/// A page of items and the total number of items over all pages.
#[derive(Debug, Clone)]
pub struct Paged<T> {
    pub items: Vec<T>,
    pub total: u64,
}

/// Subdomain (host) with the SBOM components seen on it.
#[derive(Debug, Clone)]
pub struct HostComponents {
    pub host: String,
    pub components: Vec<SbomComponent>,
}

/// Per-company counts used by the subsidiary statistics.
#[derive(Debug, Clone, Default)]
pub struct CompanyCounts {
    pub applications: u64,
    pub network_endpoints: u64,
    pub ip_addresses: u64,
    pub sbom_components: u64,
    pub findings: BTreeMap<Severity, u64>,
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    // --- companies -------------------------------------------------------------
    /// Creates or updates a company and everything in the snapshot, in one transaction.
    async fn save_company(&self, snapshot: &CompanySnapshot) -> Result<Company>;
    async fn company_by_social_id(&self, social_id: &SocialId) -> Result<Option<Company>>;
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
    /// Adds lookups to `searched_by`: (company row id, count).
    async fn add_lookups(&self, counts: &[(i64, i64)]) -> Result<()>;
    async fn domains(&self, company: i64) -> Result<Vec<DomainAsset>>;
    async fn counts(&self, company: i64) -> Result<CompanyCounts>;
    /// Companies most recently rated first.
    async fn last_scanned(&self, page: Page) -> Result<Paged<Company>>;

    // --- subsidiaries ----------------------------------------------------------
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
    /// Subsidiaries by name; all of them when `page` is `None`.
    async fn subsidiaries(&self, parent: i64, page: Option<Page>) -> Result<Paged<Company>>;

    // --- assets and findings ---------------------------------------------------
    async fn applications(&self, company: i64, page: Page) -> Result<Paged<Application>>;
    async fn network_endpoints(&self, company: i64, page: Page) -> Result<Paged<NetworkEndpoint>>;
    /// SBOM components; only those with CVEs when `with_cves`.
    async fn sbom(&self, company: i64, page: Page, with_cves: bool) -> Result<Paged<SbomComponent>>;
    /// Hosts within `domain` that carry SBOM components, by host name.
    async fn sbom_by_domain(&self, company: i64, domain: &Domain, page: Page) -> Result<Paged<HostComponents>>;
    /// Findings, worst first.
    async fn findings(&self, company: i64, filter: FindingFilter<'_>, page: Page) -> Result<Paged<Finding>>;
    /// The `per_vector` worst findings of each risk vector.
    async fn top_findings(&self, company: i64, per_vector: u32) -> Result<Vec<Finding>>;
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
    /// Records what discovery attributed to the company: host names (inserted, or
    /// refreshed with their latest addresses and attribution, first_seen kept) and the
    /// endpoints a scan observed (matched by ip, port and protocol; first_seen kept,
    /// everything else from the scan), in one transaction.
    async fn record_discovery(
        &self,
        company: i64,
        hosts: &[model::DiscoveredHost],
        endpoints: &[NetworkEndpoint],
        seen_at: time::OffsetDateTime,
    ) -> Result<()>;
    /// Records the software a full scan detected: applications (matched by name, version
    /// and host) and SBOM components (matched by name and version) keep their first_seen;
    /// the company's rows that the scan did not see again are removed. One transaction.
    async fn record_software(
        &self,
        company: i64,
        applications: &[Application],
        components: &[SbomComponent],
        seen_at: time::OffsetDateTime,
    ) -> Result<()>;
    /// Stores imported fingerprint rules `(name, rule JSON)` from `source`, replacing
    /// rules of the same name; returns how many were written.
    async fn save_fingerprints(&self, source: &str, rules: &[(String, String)]) -> Result<usize>;
    /// Every imported fingerprint rule `(name, rule JSON)`, by name.
    async fn fingerprints(&self) -> Result<Vec<(String, String)>>;
    /// Stores endoflife.date products `(name, product JSON)`, replacing same names.
    async fn save_eol_products(&self, products: &[(String, String)]) -> Result<usize>;
    /// Every stored endoflife.date product `(name, product JSON)`, by name.
    async fn eol_products(&self) -> Result<Vec<(String, String)>>;
    /// The discovered host names of a company, by name.
    async fn hosts(&self, company: i64) -> Result<Vec<model::DiscoveredHost>>;
    /// Closed findings, most recently closed first, with when they were closed.
    async fn closed_findings(&self, company: i64) -> Result<Vec<(Finding, model::OffsetDateTimeText)>>;
    /// True when `host` is one of the company's attributed names or carries an asset.
    async fn owns_host(&self, company: i64, host: &Domain) -> Result<bool>;

    /// Every open finding of the company (what a rating judges), in a stable order.
    async fn open_findings(&self, company: i64) -> Result<Vec<Finding>>;

    // --- scores ------------------------------------------------------------------
    /// Adds a rating to the company's history and moves its last scan time forward;
    /// false when a rating for the same time is already stored (it is kept).
    async fn record_rating(&self, company: i64, rating: &ScoreSnapshot) -> Result<bool>;
    /// Replaces the company's rating at `rating.scanned_at` (a recomputation under
    /// another methodology version), or adds it when there is none at that time.
    async fn replace_rating(&self, company: i64, rating: &ScoreSnapshot) -> Result<()>;
    async fn latest_score(&self, company: i64) -> Result<Option<ScoreSnapshot>>;
    async fn score_history(&self, company: i64, limit: u32) -> Result<Vec<ScoreSnapshot>>;

    // --- incidents and predictions ------------------------------------------------
    /// Stores an incident (replacing one with the same id), linked to a company and a
    /// domain when known, with how the link was made.
    async fn save_incident(
        &self,
        incident: &Incident,
        company: Option<i64>,
        domain: Option<&Domain>,
        linked_by: Option<&str>,
    ) -> Result<()>;
    async fn incidents_for_company(&self, company: i64) -> Result<Vec<Incident>>;
    async fn incidents_for_domain(&self, domain: &Domain) -> Result<Vec<Incident>>;
    /// The incident with this id, ignoring ASCII case (VERIS writes lower case).
    async fn incident(&self, incident_id: &str) -> Result<Option<Incident>>;
    /// The company an incident is linked to (`None`: unknown incident or not linked).
    async fn incident_company(&self, incident_id: &str) -> Result<Option<i64>>;
    async fn save_prediction(&self, company: i64, kind: &str, period: u32, data: &serde_json::Value) -> Result<()>;
    async fn prediction(&self, company: i64, kind: &str, period: u32) -> Result<Option<serde_json::Value>>;

    // --- vulnerabilities -----------------------------------------------------------
    /// Inserts or replaces records in one transaction; a record never replaces a newer
    /// one (by last-modified). Returns how many were written.
    async fn upsert_cves(&self, cves: &[StoredCve]) -> Result<usize>;
    /// Writes the batches `batches` yields as [`Store::upsert_cves`] would, `per_commit`
    /// batches to a transaction (a bulk import: pages that several batches change are
    /// written once per transaction, not once per batch). A batch that fails rolls back
    /// the batches of its transaction, so nothing of it is committed; the batches of
    /// earlier transactions stay. Returns how many records were written.
    async fn upsert_cve_batches(
        &self,
        batches: &mut tokio::sync::mpsc::Receiver<Vec<StoredCve>>,
        per_commit: usize,
    ) -> Result<usize> {
        let _ = per_commit;
        let mut written = 0;
        while let Some(batch) = batches.recv().await {
            written += self.upsert_cves(&batch).await?;
        }
        Ok(written)
    }
    /// After a bulk write: folds what the backend logged on the side (SQLite's
    /// write-ahead log) into the database, so that readers and the next writer start
    /// from a compact file.
    async fn settle(&self) -> Result<()> {
        Ok(())
    }
    /// A record, with its KEV entry and EPSS figures when known.
    async fn cve(&self, id: &CveId) -> Result<Option<CveRecord>>;
    /// Records in the order asked for (unknown ids are left out), with KEV and EPSS.
    async fn cves(&self, ids: &[CveId]) -> Result<Vec<CveRecord>>;
    /// The served forms of records, in the order asked for (unknown ids left out).
    async fn served_cves(&self, ids: &[CveId]) -> Result<Vec<ServedCve>>;
    /// The CVEs `query` describes, newest first. Configurations come with the
    /// candidates that need evaluating, or with all when `all_configurations`.
    async fn cve_candidates(&self, query: &CandidateQuery<'_>) -> Result<Vec<CveCandidate>>;
    async fn last_cves(&self, limit: u32) -> Result<Vec<CveRecord>>;
    async fn vendors(&self) -> Result<Vec<String>>;
    async fn products(&self, vendor: &str) -> Result<Vec<String>>;
    /// Replaces the KEV catalogue.
    async fn save_kev(&self, entries: &[KevRow]) -> Result<usize>;
    /// Upserts EPSS figures.
    async fn save_epss(&self, scores: &[EpssRow], score_date: &str) -> Result<usize>;
    async fn save_cwe(&self, weaknesses: &[CweRow]) -> Result<usize>;
    async fn save_capec(&self, patterns: &[CapecRow]) -> Result<usize>;
    /// The attack patterns cve-search lists for each CWE (`CWE-79`): those the
    /// weakness names, else those that name the weakness; by CAPEC id. CWEs without
    /// patterns (and values that are not CWE ids) are left out of the map.
    async fn capec_for_cwes(&self, cwes: &[&str]) -> Result<BTreeMap<String, Vec<serde_json::Value>>>;

    /// [`Store::capec_for_cwes`] for one CWE.
    async fn capec_for_cwe(&self, cwe: &str) -> Result<Vec<serde_json::Value>> {
        Ok(self.capec_for_cwes(&[cwe]).await?.remove(cwe).unwrap_or_default())
    }
    async fn feed_state(&self, feed: &str) -> Result<Option<String>>;
    async fn set_feed_state(&self, feed: &str, value: &str) -> Result<()>;

    // --- API keys and usage --------------------------------------------------------
    async fn create_key(&self, key: &NewApiKey) -> Result<ApiKey>;
    async fn key_by_hash(&self, hash: &str) -> Result<Option<ApiKey>>;
    async fn keys(&self) -> Result<Vec<ApiKey>>;
    /// Sets a key's active flag by id or by prefix; false when no key matched.
    async fn set_key_active(&self, id_or_prefix: &str, active: bool) -> Result<bool>;
    /// Requests counted for a key in a month (`YYYY-MM`).
    async fn usage(&self, key_id: i64, month: &str) -> Result<u64>;
    async fn add_usage(&self, key_id: i64, month: &str, requests: u64) -> Result<()>;

    // --- job queue -------------------------------------------------------------------
    /// Queues a job. With a `dedup_key`, a job is not queued again while one with the
    /// same key waits or runs; returns whether a job was queued.
    async fn enqueue(&self, kind: &str, payload: &serde_json::Value, dedup_key: Option<&str>) -> Result<bool>;
    /// Takes the oldest ready job (or one whose lease expired) for `lease`, with a new
    /// lease token. A job whose lease expired after `max_attempts` attempts (its worker
    /// died or hung each time: a job that crashes workers) is marked dead instead.
    async fn lease_job(&self, worker: &str, lease: Duration, max_attempts: i64) -> Result<Option<Job>>;
    /// Extends a running job's lease to `lease` from now. False when `token` no longer
    /// holds the lease (it lapsed and another worker took the job, or it was cancelled).
    async fn renew_lease(&self, job_id: i64, token: &str, lease: Duration) -> Result<bool>;
    /// Marks a leased job done; false (and nothing written) when `token` no longer holds
    /// the lease.
    async fn complete_job(&self, job_id: i64, token: &str) -> Result<bool>;
    /// Marks a leased job failed: retried after `retry_after`, or dead when `give_up`.
    /// False (and nothing written) when `token` no longer holds the lease.
    async fn fail_job(
        &self,
        job_id: i64,
        token: &str,
        error: &str,
        retry_after: Duration,
        give_up: bool,
    ) -> Result<bool>;
    /// Gives a leased job back to the queue at once, the attempt not counted (a worker
    /// shutting down). False when `token` no longer holds the lease.
    async fn release_job(&self, job_id: i64, token: &str) -> Result<bool>;
    /// Jobs waiting or running, oldest first.
    async fn pending_jobs(&self) -> Result<Vec<Job>>;
    /// Jobs in `status` (any when `None`), newest first, at most `limit`.
    async fn jobs(&self, status: Option<model::JobStatus>, limit: u32) -> Result<Vec<Job>>;
    /// Queues a dead or cancelled job again with its attempts reset; false when the job
    /// is not dead or cancelled.
    async fn retry_job(&self, job_id: i64) -> Result<bool>;
    /// Cancels a queued or running job (a running job's worker then finds its lease
    /// gone); false when the job is not queued or running.
    async fn cancel_job(&self, job_id: i64) -> Result<bool>;
}

/// How a store is opened.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes of CVE served forms kept in memory (least recently used out first; 0: none):
    /// a get-cve-from-cpe-id answer reads its records from there before the database.
    pub served_cache_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        // About 27 000 records of the real corpus.
        Options { served_cache_bytes: 64 << 20 }
    }
}

/// Opens the store a URL names: `sqlite://PATH`, `sqlite::memory:`, or a plain path.
pub async fn open(url: &str) -> Result<std::sync::Arc<dyn Store>> {
    open_with(url, &Options::default()).await
}

/// [`open`] with `options`.
pub async fn open_with(url: &str, options: &Options) -> Result<std::sync::Arc<dyn Store>> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Err(StoreError::UnsupportedUrl(url.to_owned()));
    }
    Ok(std::sync::Arc::new(SqliteStore::open_with(url, options).await?))
}
