//! The store: every table Rampart keeps, behind traits split by role.
//!
//! Each role is a trait of its own, declared in `<role>.rs` — [`Companies`], [`Assets`],
//! [`Findings`], [`Incidents`], [`Intel`] (CVE intelligence and reference data),
//! [`Keys`], [`Queue`], [`Schedule`] (scheduled rescans), [`Events`] (events, webhooks
//! and their deliveries), [`Disputes`] (disputes, the footprint, domain ownership) and
//! [`Portfolios`] (organisations, portfolios, vendor records, findings searches).
//! [`Store`] is all of them, what the API, the importers and the workers hold;
//! `use store::prelude::*` brings the role traits into scope.
//!
//! Each role's SQL is written once, in `sql/<role>.rs`, and compiled for both backends
//! (`sqlite/`, `postgres/`) against the small seam each defines (a reader, a writer, a
//! transaction, a unit of writes, list parameters: `sql/mod.rs`). The backend modules
//! keep only what truly differs, each saying why: opening and migrating, the queue's
//! enqueue and lease, the CVE bulk writes, one-row answers and candidate scans, SQLite's
//! group commit and readers. Every backend passes the one conformance suite
//! (`tests/conformance`). The store never talks to the network and never decides
//! policy (scores, limits): it keeps what it is given, durably.

mod alloc;
mod assets;
mod codec;
mod companies;
pub mod copy;
pub mod cve;
pub mod disputes;
mod events;
mod findings;
mod incidents;
pub mod judged;
mod keys;
mod migrate;
mod portfolios;
pub mod postgres;
mod queue;
mod schedule;
mod served_cache;
mod shared;
pub mod sqlite;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use alloc::tune_allocator;
pub use assets::{Assets, CompanyCounts, HostComponents};
pub use companies::{Companies, CompanySnapshot, DataVersions, SubsidiaryRequest, SubsidiaryState};
pub use cve::Intel;
pub use disputes::{
    Added, Decision, Disputes, DomainClaim, FootprintCaps, NewDispute, Opened, RatedCompany, StoredFinding,
};
pub use events::Events;
pub use findings::{FindingFilter, Findings, ScanOutcome, ScanScope, finding_subject};
pub use incidents::Incidents;
pub use keys::Keys;
pub use model::asset_under;
pub use portfolios::{
    Alert, AlertQuery, AlertWatch, CHANGE_DAYS, FindingQuery, FindingStatus, FindingsOf, FoundFinding, NewAlert,
    Onboarding, PortfolioRow, Portfolios, RatingChange, RatingChanges, RowRating, StoredAlertRules, StoredGuidelines,
};
pub use postgres::PgStore;
pub use queue::{JobCount, Queue};
pub use schedule::{RescanPlan, Schedule, ScheduleRow};
pub use shared::SharedStr;
pub use sqlite::SqliteStore;

/// The role traits, for calling a store's methods: `use store::prelude::*`.
pub mod prelude {
    pub use crate::{
        Assets, Companies, Disputes, Events, Findings, Incidents, Intel, Keys, Portfolios, Queue, Schedule, Store,
    };
}

/// Everything persisted: every role, from one backend.
pub trait Store:
    Companies + Assets + Findings + Incidents + Intel + Keys + Queue + Schedule + Events + Disputes + Portfolios
{
}

impl<T> Store for T where
    T: Companies + Assets + Findings + Incidents + Intel + Keys + Queue + Schedule + Events + Disputes + Portfolios
{
}

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
    #[error("unsupported database URL {0:?}: expected postgres://…, sqlite://PATH or a file path")]
    UnsupportedUrl(String),
    /// No connection was free within the wait: the store is saturated, try again.
    #[error("the database is busy: no connection free within the wait")]
    Busy,
    /// A write shared a commit that failed (SQLite's group commit): nothing of it holds.
    #[error("the write was not committed: {0}")]
    NotCommitted(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A page of items and the total number of items over all pages.
#[derive(Debug, Clone)]
pub struct Paged<T> {
    pub items: Vec<T>,
    pub total: u64,
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

/// Opens the store a URL names: `postgres://…` (or `postgresql://…`), `sqlite://PATH`,
/// `sqlite::memory:`, or a plain path (SQLite).
pub async fn open(url: &str) -> Result<std::sync::Arc<dyn Store>> {
    open_with(url, &Options::default()).await
}

/// [`open`] with `options`.
pub async fn open_with(url: &str, options: &Options) -> Result<std::sync::Arc<dyn Store>> {
    if is_postgres(url) {
        return Ok(std::sync::Arc::new(PgStore::open_with(url, options).await?));
    }
    if let Some((scheme, _)) = url.split_once("://")
        && scheme != "sqlite"
    {
        return Err(StoreError::UnsupportedUrl(redact_url(url)));
    }
    Ok(std::sync::Arc::new(SqliteStore::open_with(url, options).await?))
}

/// Whether `url` names a PostgreSQL database.
pub fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// `url` without the password it may carry, for messages and logs.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((creds, host)) => {
            let user = creds.split_once(':').map_or(creds, |(user, _)| user);
            let hidden = if creds.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(redact_url("postgres://u:pw@h:5432/db?x=1"), "postgres://u:***@h:5432/db?x=1");
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("postgres://h/db"), "postgres://h/db");
        assert_eq!(redact_url("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact_url("rampart.db"), "rampart.db");
        assert_eq!(redact_url("sqlite:///var/lib/a@b.db"), "sqlite:///var/lib/a@b.db");
    }
}
