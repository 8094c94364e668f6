//! The embedded backend: one SQLite file in WAL mode.
//!
//! Reads go through a few connections taken first-free-first (`readers`); every write
//! goes through a single writer connection in an IMMEDIATE transaction, so writers in
//! this process never race for the lock and writers in other processes wait on the busy
//! timeout.
//!
//! A bound LIMIT is written `LIMIT CAST($N AS BIGINT)`: SQLite reads a bare `LIMIT $N`
//! when it plans, so every new value bound to it made the cached statement prepare
//! again (0.54 M instructions, 6 % of a 296-record CVE answer, by callgrind).
//!
//! The statements both backends run are `../sql/` (this module's `sql`), written against
//! the seam below: `Backend`, `reader`, `writer`, `begin`, `grouped`, `in_list`, `list`.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use model::ComponentScore;
use model::timefmt::rfc3339;
use model::{
    ApiKey, Application, Attribution, Company, CompanyProfile, CveId, CveRecord, DiscoveredHost, Domain, DomainAsset,
    Finding, Grade, Incident, Job, NetworkEndpoint, NewApiKey, OffsetDateTimeText, Page, RiskVector, SbomComponent,
    Scope, ScoreSnapshot, Severity, SocialId,
};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, Transaction};
use time::OffsetDateTime;
use tokio::sync::mpsc::Receiver;

use crate::cve::{AdvisoryRow, CandidateQuery, CapecRow, CveCandidate, CweRow, EpssRow, KevRow, ServedCve, StoredCve};
use crate::migrate::Embedded;
use crate::served_cache::ServedCache;
use crate::{
    CompanyCounts, CompanySnapshot, FindingFilter, HostComponents, Paged, Result, ScanOutcome, ScanScope, SharedStr,
    StoreError, SubsidiaryRequest, SubsidiaryState,
};
use readers::Readers;

use crate::codec::*;

mod group;
mod intel;
mod queue;
mod readers;

// The statements both backends run: one directory, compiled once per backend.
#[allow(clippy::duplicate_mod, reason = "../sql is compiled for each backend on purpose")]
#[path = "../sql/mod.rs"]
mod sql;
use sql::rows::*;
use sql::write::*;

/// The seam the shared statements (`../sql/`) are written against.
type Backend = SqliteStore;
type Db = Sqlite;
type DbConnection = sqlx::SqliteConnection;
type DbRow = SqliteRow;

/// SQL: the addresses of the hosts `h` that `filter` keeps, one row each (a host's
/// addresses are a comma-separated list; SQLite splits it with `json_each`).
fn host_addresses(filter: &str) -> String {
    format!(
        "SELECT j.value FROM hosts h, json_each('[\"' || replace(h.addresses, ',', '\",\"') || '\"]') j WHERE {filter}"
    )
}

/// SQL: `column` is one of the values of the list bound at `$n` ([`list`]: a JSON array
/// SQLite reads with `json_each`).
fn in_list(column: &str, n: u8) -> String {
    format!("{column} IN (SELECT value FROM json_each(${n}))")
}

/// A list to bind for [`in_list`].
fn list<T: serde::Serialize>(values: &[T]) -> Result<String> {
    to_json(&values)
}

impl SqliteStore {
    /// A read connection.
    async fn reader(&self) -> Result<readers::ReadConn<'_>> {
        self.read.get().await
    }

    /// The pool one autocommit write runs on (the one writer connection).
    fn writer(&self) -> &SqlitePool {
        &self.write
    }

    /// A unit of one statement: it shares a commit like any unit ([`Self::grouped`]).
    async fn grouped_one<T, F>(&self, write: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut sqlx::SqliteConnection) -> futures_util::future::BoxFuture<'c, Result<T>>
            + Send
            + 'static,
    {
        self.grouped(write).await
    }
}

const MIGRATIONS: Embedded = Embedded(&[
    (1, "init", include_str!("../../migrations/sqlite/0001_init.sql")),
    (2, "vulndb", include_str!("../../migrations/sqlite/0002_vulndb.sql")),
    (3, "served", include_str!("../../migrations/sqlite/0003_served.sql")),
    (4, "findings_closed", include_str!("../../migrations/sqlite/0004_findings_closed.sql")),
    (5, "discovery", include_str!("../../migrations/sqlite/0005_discovery.sql")),
    (6, "finding_cve", include_str!("../../migrations/sqlite/0006_finding_cve.sql")),
    (7, "software", include_str!("../../migrations/sqlite/0007_software.sql")),
    (8, "rating", include_str!("../../migrations/sqlite/0008_rating.sql")),
    (9, "incident_links", include_str!("../../migrations/sqlite/0009_incident_links.sql")),
    (10, "slim_matches", include_str!("../../migrations/sqlite/0010_slim_matches.sql")),
    (11, "cve_candidates", include_str!("../../migrations/sqlite/0011_cve_candidates.sql")),
    (12, "job_leases", include_str!("../../migrations/sqlite/0012_job_leases.sql")),
    (13, "subsidiary_requests", include_str!("../../migrations/sqlite/0013_subsidiary_requests.sql")),
    (14, "name_norm", include_str!("../../migrations/sqlite/0014_name_norm.sql")),
    (15, "scan_errors", include_str!("../../migrations/sqlite/0015_scan_errors.sql")),
    (16, "score_notes", include_str!("../../migrations/sqlite/0016_score_notes.sql")),
    (17, "dkim_selectors", include_str!("../../migrations/sqlite/0017_dkim_selectors.sql")),
    (18, "component_checks", include_str!("../../migrations/sqlite/0018_component_checks.sql")),
    (19, "job_scheduling", include_str!("../../migrations/sqlite/0019_job_scheduling.sql")),
    (20, "data_versions", include_str!("../../migrations/sqlite/0020_data_versions.sql")),
    (21, "rescan_schedule", include_str!("../../migrations/sqlite/0021_rescan_schedule.sql")),
    (22, "feed_rematch", include_str!("../../migrations/sqlite/0022_feed_rematch.sql")),
    (23, "events", include_str!("../../migrations/sqlite/0023_events.sql")),
    (24, "followers", include_str!("../../migrations/sqlite/0024_followers.sql")),
    (25, "disputes", include_str!("../../migrations/sqlite/0025_disputes.sql")),
    (26, "domain_ownership", include_str!("../../migrations/sqlite/0026_domain_ownership.sql")),
    (27, "portable_lookups", include_str!("../../migrations/sqlite/0027_portable_lookups.sql")),
    (28, "cve_basis", include_str!("../../migrations/sqlite/0028_cve_basis.sql")),
    (29, "advisories", include_str!("../../migrations/sqlite/0029_advisories.sql")),
    (30, "portfolios", include_str!("../../migrations/sqlite/0030_portfolios.sql")),
    (31, "guidelines", include_str!("../../migrations/sqlite/0031_guidelines.sql")),
    (32, "finding opened", include_str!("../../migrations/sqlite/0032_finding_opened.sql")),
    (33, "alerts", include_str!("../../migrations/sqlite/0033_alerts.sql")),
]);

/// The page cache of each read connection, in KiB (SQLite's negative `cache_size`).
const READ_CACHE_KIB: &str = "-16384";
/// The page cache of the writer connection, in KiB: an import inserts into indexes
/// spread over the whole file, and with less it re-read their pages from the OS.
const WRITE_CACHE_KIB: &str = "-262144";
/// Pages the write-ahead log grows to before it is copied into the database (SQLite's
/// default is 1 000, 4 MiB). A CVE import dirties pages all over its indexes in every
/// batch, and checkpointing after every batch copied them into the database again and
/// again: commits took 6.5 s of a 15 s import of three yearly NVD files, 3.0 s at
/// 100 000 pages (400 MiB of disk), where a page rewritten by many batches is copied
/// once. A bulk import ends with a full checkpoint ([`Store::settle`]) that empties the
/// log.
const WAL_CHECKPOINT_PAGES: &str = "100000";
/// The page size of a new database file (an existing one keeps its own). A CVE's served
/// form is ~2.4 KB, one to a 4 KiB page with 1.6 KB left over; with 8 KiB pages the real
/// NVD 1.1 import ran at 6 436–6 653 records/s against 5 696–6 345 with 4 KiB, in
/// alternating runs, and the lookups stayed within the noise (docs/PERFORMANCE.md).
const PAGE_SIZE: u32 = 8192;
/// Read connections of a file database: queries run on two cores, and a third and
/// fourth let a slow read not hold up the rest.
const READERS: usize = 4;

#[derive(Debug, Clone)]
pub struct SqliteStore {
    read: std::sync::Arc<Readers>,
    pub(crate) write: SqlitePool,
    served: std::sync::Arc<ServedCache>,
    /// Small writes waiting to share a commit (`group`).
    group: std::sync::Arc<group::Group>,
    /// Rings when a job is queued through this store: the workers of the process that
    /// wait on an empty queue take it at once (others poll: `Queue::wait_for_jobs`).
    jobs_queued: std::sync::Arc<tokio::sync::Notify>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database `url` names — `sqlite://PATH`,
    /// `sqlite:PATH`, a plain path, or `sqlite::memory:` — and applies migrations.
    pub async fn open(url: &str) -> Result<Self> {
        Self::open_with(url, &crate::Options::default()).await
    }

    /// [`SqliteStore::open`] with `options`.
    pub async fn open_with(url: &str, options: &crate::Options) -> Result<Self> {
        let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
        if path.is_empty() {
            return Err(StoreError::UnsupportedUrl(url.to_owned()));
        }
        if path == ":memory:" {
            // One shared connection keeps a private in-memory database alive.
            let opts = SqliteConnectOptions::from_str("sqlite::memory:")?.foreign_keys(true);
            let pool = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(opts)
                .await?;
            migrate(&pool).await?;
            return Ok(Self::new(Readers::Shared(pool.clone()), pool, options));
        }
        let opts = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .page_size(PAGE_SIZE)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        // The writer keeps up to 256 MiB of pages (with 64 MiB the real NVD import ran at
        // 3 480 records/s, with 256 MiB at 3 930) and checkpoints rarely
        // (WAL_CHECKPOINT_PAGES).
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(
                opts.clone().pragma("cache_size", WRITE_CACHE_KIB).pragma("wal_autocheckpoint", WAL_CHECKPOINT_PAGES),
            )
            .await?;
        // The migrations run before any reader opens (a reader would hold the old schema).
        migrate(&write).await?;
        // Each reader keeps up to 16 MiB of pages (SQLite's default is 2 MiB, less than
        // the ~500 pages a 500-record CVE answer touches, so such answers re-read every
        // page from the OS): READERS readers bound the page caches at 64 MiB.
        let read = Readers::open(&opts.pragma("cache_size", READ_CACHE_KIB), READERS).await?;
        Ok(Self::new(read, write, options))
    }

    /// Commits CVE writes and drops the served forms kept for the records `written`;
    /// returns how many there were.
    async fn commit_cves(&self, tx: Transaction<'static, Sqlite>, written: Vec<CveId>) -> Result<usize> {
        tx.commit().await?;
        self.served.forget(written.iter());
        Ok(written.len())
    }

    fn new(read: Readers, write: SqlitePool, options: &crate::Options) -> Self {
        let served = std::sync::Arc::new(ServedCache::new(options.served_cache_bytes));
        Self {
            read: std::sync::Arc::new(read),
            write,
            served,
            group: Default::default(),
            jobs_queued: Default::default(),
        }
    }

    async fn begin(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.write.begin_with("BEGIN IMMEDIATE").await?)
    }
}

/// Applies the embedded migrations that the database has not had yet, then fills what a
/// migration cannot compute in SQL (the normalised names of companies written before
/// migration 14).
async fn migrate(write: &SqlitePool) -> Result<()> {
    let migrator = sqlx::migrate::Migrator::new(MIGRATIONS).await?;
    migrator.run(write).await?;
    let unnamed: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, company_name FROM companies WHERE name_norm IS NULL").fetch_all(write).await?;
    if !unnamed.is_empty() {
        let mut tx = write.begin().await?;
        for (id, name) in unnamed {
            sqlx::query("UPDATE companies SET name_norm = ?2 WHERE id = ?1")
                .bind(id)
                .bind(model::normalise_name(&name))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
    }
    Ok(())
}

// --- row decoding -------------------------------------------------------------------

/// Writes a batch of CVE records in `tx` (see [`Store::upsert_cves`]) and returns the ids
/// of those written: new, or newer than the stored record.
async fn write_cves(tx: &mut Transaction<'static, Sqlite>, cves: &[StoredCve]) -> Result<Vec<CveId>> {
    // A batch is written with a few multi-row statements, not a handful per record:
    // every statement is a round trip to sqlx's worker thread, and at six a record
    // the import spent more time switching threads than in SQLite.
    //
    // A record given twice in the batch counts once: the newest, the first of equals
    // (as one upsert after the other would keep it).
    let mut chosen: std::collections::HashMap<&str, usize> = std::collections::HashMap::with_capacity(cves.len());
    let last: Vec<String> =
        cves.iter().map(|c| rfc3339_micros(c.record.last_modified.unwrap_or(c.record.modified).0)).collect();
    for (i, c) in cves.iter().enumerate() {
        let id = c.record.id.as_str();
        match chosen.get(id) {
            Some(&j) if last[j] >= last[i] => {}
            _ => {
                chosen.insert(id, i);
            }
        }
    }
    let mut order: Vec<usize> = chosen.into_values().collect();
    order.sort_unstable();
    // NVD records keep only their served form (the record reads back from it).
    let records: Vec<&str> = order.iter().map(|&i| cves[i].record_json.as_deref().unwrap_or_default()).collect();

    // The records that are new or newer than the stored ones.
    let mut written: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (chunk, json) in order.chunks(1000).zip(records.chunks(1000)) {
        let mut q = sqlx::QueryBuilder::<Sqlite>::new(
            "INSERT INTO cves (id, published, last_modified, record, configurations, needs_eval, cwe) ",
        );
        q.push_values(chunk.iter().zip(json), |mut b, (&i, record)| {
            let (c, r) = (&cves[i], &cves[i].record);
            b.push_bind(r.id.as_str())
                .push_bind(rfc3339_micros(r.published.0))
                .push_bind(&last[i])
                .push_bind(*record)
                .push_bind(&c.configurations)
                .push_bind(c.needs_eval)
                .push_bind(&r.cwe);
        });
        q.push(
            " ON CONFLICT (id) DO UPDATE SET published = excluded.published, last_modified = excluded.last_modified, \
             record = excluded.record, configurations = excluded.configurations, needs_eval = excluded.needs_eval, \
             cwe = excluded.cwe WHERE excluded.last_modified > cves.last_modified RETURNING id",
        );
        let ids: Vec<String> = q.build_query_scalar().fetch_all(&mut **tx).await?;
        written.extend(ids);
    }
    let fresh: Vec<usize> = order.into_iter().filter(|&i| written.contains(cves[i].record.id.as_str())).collect();
    if fresh.is_empty() {
        return Ok(Vec::new());
    }
    let ids = to_json(&fresh.iter().map(|&i| cves[i].record.id.as_str()).collect::<Vec<_>>())?;
    sqlx::query("DELETE FROM cve_cpe_matches WHERE cve_id IN (SELECT value FROM json_each(?1))")
        .bind(&ids)
        .execute(&mut **tx)
        .await?;
    sqlx::query("DELETE FROM cve_product_index WHERE cve_id IN (SELECT value FROM json_each(?1))")
        .bind(&ids)
        .execute(&mut **tx)
        .await?;
    for chunk in fresh.chunks(1000) {
        let mut q = sqlx::QueryBuilder::<Sqlite>::new("INSERT OR REPLACE INTO cve_served (id, cwe, served) ");
        q.push_values(chunk, |mut b, &i| {
            let c = &cves[i];
            b.push_bind(c.record.id.as_str()).push_bind(&c.record.cwe).push_bind(&c.served);
        });
        q.build().execute(&mut **tx).await?;
    }
    let index: Vec<(&str, &str, &crate::cve::ProductRow)> = fresh
        .iter()
        .flat_map(|&i| {
            let (id, at) = (cves[i].record.id.as_str(), last[i].as_str());
            cves[i].products.iter().map(move |p| (id, at, p))
        })
        .collect();
    for chunk in index.chunks(2000) {
        let mut q = sqlx::QueryBuilder::<Sqlite>::new(
            "INSERT OR IGNORE INTO cve_product_index (vendor, product, last_modified, cve_id, parts, applies) ",
        );
        q.push_values(chunk, |mut b, (id, at, p)| {
            b.push_bind(&p.vendor)
                .push_bind(&p.product)
                .push_bind(*at)
                .push_bind(*id)
                .push_bind(&p.parts)
                .push_bind(p.applies_any_version);
        });
        q.build().execute(&mut **tx).await?;
    }
    // Lookups read the vulnerable entries only.
    let matches: Vec<(&str, &crate::cve::CpeMatchRow)> = fresh
        .iter()
        .flat_map(|&i| cves[i].matches.iter().filter(|m| m.vulnerable).map(move |m| (cves[i].record.id.as_str(), m)))
        .collect();
    for chunk in matches.chunks(2000) {
        let mut q = sqlx::QueryBuilder::<Sqlite>::new(
            "INSERT OR IGNORE INTO cve_cpe_matches (cve_id, part, vendor, product, version_key, \
             start_incl, start_excl, end_incl, end_excl) ",
        );
        let key = |k: &Option<String>| k.clone().unwrap_or_default();
        q.push_values(chunk, |mut b, (id, m)| {
            b.push_bind(*id)
                .push_bind(&m.part)
                .push_bind(&m.vendor)
                .push_bind(&m.product)
                .push_bind(key(&m.version_key))
                .push_bind(key(&m.start_incl))
                .push_bind(key(&m.start_excl))
                .push_bind(key(&m.end_incl))
                .push_bind(key(&m.end_excl));
        });
        q.build().execute(&mut **tx).await?;
    }
    let products: std::collections::BTreeSet<(&str, &str)> =
        matches.iter().map(|(_, m)| (m.vendor.as_str(), m.product.as_str())).collect();
    let products: Vec<(&str, &str)> = products.into_iter().collect();
    for chunk in products.chunks(2000) {
        let mut q = sqlx::QueryBuilder::<Sqlite>::new("INSERT INTO cpe_products (vendor, product) ");
        q.push_values(chunk, |mut b, (v, p)| {
            b.push_bind(*v).push_bind(*p);
        });
        q.push(" ON CONFLICT DO NOTHING");
        q.build().execute(&mut **tx).await?;
    }
    Ok(fresh.iter().map(|&i| cves[i].record.id.clone()).collect())
}
