//! The scale-out backend: PostgreSQL, shared by any number of API and worker processes.
//!
//! The schema is the SQLite schema's (migrations/postgres/0001_schema.sql): the same
//! tables, columns and text order (`COLLATE "C"`), so both backends answer alike; the
//! statements both run are `../sql/` (this module's `sql`), written against the seam
//! below (`Backend`, `reader`, `writer`, `begin`, `grouped`, `in_list`, `list`). Migrations are applied on
//! open under sqlx's advisory lock, so processes that start together do not race. The
//! queue leases with `FOR UPDATE SKIP LOCKED` and wakes idle workers with
//! `NOTIFY rampart_jobs` ([`PgStore::job_wakeups`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use model::ComponentScore;
use model::timefmt::rfc3339;
use model::{
    ApiKey, Application, Attribution, Company, CompanyProfile, CveId, CveRecord, DiscoveredHost, Domain, DomainAsset,
    Finding, Grade, Incident, Job, NetworkEndpoint, NewApiKey, OffsetDateTimeText, Page, RiskVector, SbomComponent,
    Scope, ScoreSnapshot, Severity, SocialId,
};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{Postgres, Row, Transaction};
use time::OffsetDateTime;
use tokio::sync::mpsc::Receiver;

use crate::cve::{AdvisoryRow, CandidateQuery, CapecRow, CveCandidate, CweRow, EpssRow, KevRow, ServedCve, StoredCve};
use crate::migrate::Embedded;
use crate::served_cache::ServedCache;
use crate::{
    CompanyCounts, CompanySnapshot, FindingFilter, HostComponents, Paged, Result, ScanOutcome, ScanScope, SharedStr,
    StoreError, SubsidiaryRequest, SubsidiaryState,
};

use crate::codec::*;

mod intel;
mod queue;

// The statements both backends run: one directory, compiled once per backend.
#[allow(clippy::duplicate_mod, reason = "../sql is compiled for each backend on purpose")]
#[path = "../sql/mod.rs"]
mod sql;
use sql::rows::*;
use sql::write::*;

/// The seam the shared statements (`../sql/`) are written against.
type Backend = PgStore;
type Db = Postgres;
type DbConnection = sqlx::PgConnection;
type DbRow = PgRow;

/// SQL: the addresses of the hosts `h` that `filter` keeps, one row each (a host's
/// addresses are a comma-separated list), in the schema's text order.
fn host_addresses(filter: &str) -> String {
    format!("SELECT unnest(string_to_array(h.addresses, ',')) COLLATE \"C\" FROM hosts h WHERE {filter}")
}

/// SQL: `column` is one of the values of the list bound at `$n` ([`list`]: an array).
fn in_list(column: &str, n: u8) -> String {
    format!("{column} = ANY(${n})")
}

/// A list to bind for [`in_list`].
fn list<T: Clone>(values: &[T]) -> Result<Vec<T>> {
    Ok(values.to_vec())
}

impl PgStore {
    /// A pooled connection for reads.
    async fn reader(&self) -> Result<sqlx::pool::PoolConnection<Postgres>> {
        Ok(self.pool.acquire().await?)
    }

    /// The pool one autocommit write runs on.
    fn writer(&self) -> &PgPool {
        &self.pool
    }
}

const MIGRATIONS: Embedded = Embedded(&[
    (1, "schema", include_str!("../../migrations/postgres/0001_schema.sql")),
    (2, "job_scheduling", include_str!("../../migrations/postgres/0002_job_scheduling.sql")),
    (3, "data_versions", include_str!("../../migrations/postgres/0003_data_versions.sql")),
    (4, "rescan_schedule", include_str!("../../migrations/postgres/0004_rescan_schedule.sql")),
    (5, "feed_rematch", include_str!("../../migrations/postgres/0005_feed_rematch.sql")),
    (6, "events", include_str!("../../migrations/postgres/0006_events.sql")),
    (7, "followers", include_str!("../../migrations/postgres/0007_followers.sql")),
    (8, "disputes", include_str!("../../migrations/postgres/0008_disputes.sql")),
    (9, "domain_ownership", include_str!("../../migrations/postgres/0009_domain_ownership.sql")),
    (10, "cve_basis", include_str!("../../migrations/postgres/0010_cve_basis.sql")),
    (11, "advisories", include_str!("../../migrations/postgres/0011_advisories.sql")),
    (12, "portfolios", include_str!("../../migrations/postgres/0012_portfolios.sql")),
    (13, "guidelines", include_str!("../../migrations/postgres/0013_guidelines.sql")),
    (14, "finding opened", include_str!("../../migrations/postgres/0014_finding_opened.sql")),
    (15, "alerts", include_str!("../../migrations/postgres/0015_alerts.sql")),
]);

/// The channel a queued job is announced on.
pub const JOBS_CHANNEL: &str = "rampart_jobs";

/// Connections of one process's pool.
const CONNECTIONS: u32 = 16;
/// How long a query waits for a free connection before the store answers busy.
const ACQUIRE_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
    served: Arc<ServedCache>,
    /// Listens on [`JOBS_CHANNEL`] once a worker first waits for jobs.
    listener: Arc<tokio::sync::Mutex<Option<sqlx::postgres::PgListener>>>,
}

impl PgStore {
    /// Connects to the database `url` names (`postgres://…`, `postgresql://…`) and
    /// applies the migrations it has not had.
    pub async fn open(url: &str) -> Result<Self> {
        Self::open_with(url, &crate::Options::default()).await
    }

    /// [`PgStore::open`] with `options`.
    pub async fn open_with(url: &str, options: &crate::Options) -> Result<Self> {
        let connect: PgConnectOptions = url.parse().map_err(|_| StoreError::UnsupportedUrl(crate::redact_url(url)))?;
        Self::connect(connect, options).await
    }

    /// [`PgStore::open`] with connection options built by the caller (a schema of its
    /// own through `search_path`, as the tests use).
    pub async fn connect(connect: PgConnectOptions, options: &crate::Options) -> Result<Self> {
        // One connection first: the pool would report a refused or rejected connection
        // only as a timeout.
        {
            use sqlx::{ConnectOptions as _, Connection as _};
            match tokio::time::timeout(ACQUIRE_WAIT, connect.connect()).await {
                Ok(Ok(conn)) => conn.close().await?,
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => return Err(StoreError::Busy),
            }
        }
        let pool = PgPoolOptions::new()
            .max_connections(CONNECTIONS)
            .acquire_timeout(ACQUIRE_WAIT)
            .connect_with(connect)
            .await?;
        let migrator = sqlx::migrate::Migrator::new(MIGRATIONS).await?;
        // sqlx holds a PostgreSQL advisory lock while it migrates: a second process
        // waits, then finds the migrations applied.
        migrator.run(&pool).await?;
        Ok(Self {
            pool,
            served: Arc::new(ServedCache::new(options.served_cache_bytes)),
            listener: Arc::new(tokio::sync::Mutex::new(None)),
        })
    }

    /// The pool, for what the store's traits do not cover (a listener, `rampart migrate`).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Commits CVE writes and drops the served forms kept for the records `written`;
    /// returns how many there were.
    async fn commit_cves(&self, tx: Transaction<'static, Postgres>, written: Vec<CveId>) -> Result<usize> {
        tx.commit().await?;
        self.served.forget(written.iter());
        Ok(written.len())
    }

    async fn begin(&self) -> Result<Transaction<'static, Postgres>> {
        Ok(self.pool.begin().await?)
    }

    /// A unit of small writes, in a transaction of its own (SQLite shares one commit
    /// among the units waiting together; PostgreSQL commits concurrent transactions in
    /// parallel).
    async fn grouped<T, F>(&self, write: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut sqlx::PgConnection) -> futures_util::future::BoxFuture<'c, Result<T>>
            + Send
            + 'static,
    {
        let mut tx = self.begin().await?;
        let out = write(&mut tx).await?;
        tx.commit().await?;
        Ok(out)
    }

    /// A unit of one statement: on a pooled connection, its own transaction.
    async fn grouped_one<T, F>(&self, write: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut sqlx::PgConnection) -> futures_util::future::BoxFuture<'c, Result<T>>
            + Send
            + 'static,
    {
        write(&mut *self.pool.acquire().await?).await
    }
}

// --- row decoding -------------------------------------------------------------------

/// Writes a batch of CVE records in `tx` (see [`crate::Intel::upsert_cves`]) and returns
/// the ids of those written: new, or newer than the stored record.
///
/// Each table gets one statement per batch whatever its size: the rows travel as one
/// array per column and `UNNEST` turns them back into rows, so PostgreSQL parses and
/// plans a short statement once instead of a VALUES list of thousands of parameters.
async fn write_cves(tx: &mut Transaction<'static, Postgres>, cves: &[StoredCve]) -> Result<Vec<CveId>> {
    let (written, products) = write_cve_rows(tx, cves).await?;
    insert_products(tx, &products).await?;
    Ok(written)
}

/// The (vendor, product) pairs of a batch's vulnerable entries, for `cpe_products`.
type Products<'a> = std::collections::BTreeSet<(&'a str, &'a str)>;

/// Adds vendor and product names to `cpe_products` (the vendors and products lists).
async fn insert_products(tx: &mut Transaction<'static, Postgres>, products: &Products<'_>) -> Result<()> {
    if products.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO cpe_products (vendor, product) SELECT * FROM UNNEST($1::text[], $2::text[]) \
         ON CONFLICT DO NOTHING",
    )
    .bind(products.iter().map(|(v, _)| *v).collect::<Vec<_>>())
    .bind(products.iter().map(|(_, p)| *p).collect::<Vec<_>>())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// [`write_cves`] without `cpe_products`: the records, their served forms and index
/// rows; returns the ids written and the products their entries name. Two of these run
/// at once on halves of a batch split by id ([`crate::Intel::upsert_cve_batches`]), so
/// the rows one writes are never the other's.
async fn write_cve_rows<'c>(
    tx: &mut Transaction<'static, Postgres>,
    cves: &'c [StoredCve],
) -> Result<(Vec<CveId>, Products<'c>)> {
    /// A version key or bound as stored: '' when absent.
    fn key(k: &Option<String>) -> &str {
        k.as_deref().unwrap_or_default()
    }
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
    let column = |f: &dyn Fn(usize) -> &'c str| -> Vec<&'c str> { order.iter().map(|&i| f(i)).collect() };
    let ids = column(&|i| cves[i].record.id.as_str());
    let published: Vec<String> = order.iter().map(|&i| rfc3339_micros(cves[i].record.published.0)).collect();
    // NVD records keep only their served form (the record reads back from it).
    let written: Vec<String> = sqlx::query_scalar(
        "INSERT INTO cves (id, published, last_modified, record, configurations, needs_eval, cwe) \
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[]) \
         ON CONFLICT (id) DO UPDATE SET published = excluded.published, last_modified = excluded.last_modified, \
         record = excluded.record, configurations = excluded.configurations, needs_eval = excluded.needs_eval, \
         cwe = excluded.cwe WHERE excluded.last_modified > cves.last_modified RETURNING id",
    )
    .bind(&ids)
    .bind(&published)
    .bind(order.iter().map(|&i| last[i].as_str()).collect::<Vec<_>>())
    .bind(column(&|i| cves[i].record_json.as_deref().unwrap_or_default()))
    .bind(column(&|i| cves[i].configurations.as_str()))
    .bind(order.iter().map(|&i| cves[i].needs_eval).collect::<Vec<bool>>())
    .bind(column(&|i| cves[i].record.cwe.as_str()))
    .fetch_all(&mut **tx)
    .await?;
    let written: std::collections::HashSet<String> = written.into_iter().collect();
    let fresh: Vec<usize> = order.into_iter().filter(|&i| written.contains(cves[i].record.id.as_str())).collect();
    if fresh.is_empty() {
        return Ok((Vec::new(), Products::new()));
    }
    let fresh_ids: Vec<&str> = fresh.iter().map(|&i| cves[i].record.id.as_str()).collect();
    sqlx::query("DELETE FROM cve_cpe_matches WHERE cve_id = ANY($1)").bind(&fresh_ids).execute(&mut **tx).await?;
    sqlx::query("DELETE FROM cve_product_index WHERE cve_id = ANY($1)").bind(&fresh_ids).execute(&mut **tx).await?;
    sqlx::query(
        "INSERT INTO cve_served (id, cwe, served) SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[]) \
         ON CONFLICT (id) DO UPDATE SET cwe = excluded.cwe, served = excluded.served",
    )
    .bind(&fresh_ids)
    .bind(fresh.iter().map(|&i| cves[i].record.cwe.as_str()).collect::<Vec<_>>())
    .bind(fresh.iter().map(|&i| cves[i].served.as_str()).collect::<Vec<_>>())
    .execute(&mut **tx)
    .await?;
    // The index rows of these records were deleted above, so a plain INSERT of rows made
    // unique here suffices (ON CONFLICT's speculative insertion costs more per row).
    let mut seen = std::collections::HashSet::new();
    let index: Vec<(&str, &str, &crate::cve::ProductRow)> = fresh
        .iter()
        .flat_map(|&i| {
            let (id, at) = (cves[i].record.id.as_str(), last[i].as_str());
            cves[i].products.iter().map(move |p| (id, at, p))
        })
        .filter(|(id, _, p)| seen.insert((p.vendor.as_str(), p.product.as_str(), *id)))
        .collect();
    if !index.is_empty() {
        sqlx::query(
            "INSERT INTO cve_product_index (vendor, product, last_modified, cve_id, parts, applies) \
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[])",
        )
        .bind(index.iter().map(|(_, _, p)| p.vendor.as_str()).collect::<Vec<_>>())
        .bind(index.iter().map(|(_, _, p)| p.product.as_str()).collect::<Vec<_>>())
        .bind(index.iter().map(|(_, at, _)| *at).collect::<Vec<_>>())
        .bind(index.iter().map(|(id, _, _)| *id).collect::<Vec<_>>())
        .bind(index.iter().map(|(_, _, p)| p.parts.as_str()).collect::<Vec<_>>())
        .bind(index.iter().map(|(_, _, p)| p.applies_any_version).collect::<Vec<_>>())
        .execute(&mut **tx)
        .await?;
    }
    // Lookups read the vulnerable entries only.
    let mut seen = std::collections::HashSet::new();
    let matches: Vec<(&str, &crate::cve::CpeMatchRow)> = fresh
        .iter()
        .flat_map(|&i| cves[i].matches.iter().filter(|m| m.vulnerable).map(move |m| (cves[i].record.id.as_str(), m)))
        .filter(|(id, m)| {
            // The row's key as stored: an absent version or bound is ''.
            seen.insert((
                *id,
                m.part.as_str(),
                m.vendor.as_str(),
                m.product.as_str(),
                [&m.version_key, &m.start_incl, &m.start_excl, &m.end_incl, &m.end_excl].map(key),
            ))
        })
        .collect();
    if !matches.is_empty() {
        sqlx::query(
            "INSERT INTO cve_cpe_matches (cve_id, part, vendor, product, version_key, \
             start_incl, start_excl, end_incl, end_excl) \
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], \
             $8::text[], $9::text[])",
        )
        .bind(matches.iter().map(|(id, _)| *id).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| m.part.as_str()).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| m.vendor.as_str()).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| m.product.as_str()).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| key(&m.version_key)).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| key(&m.start_incl)).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| key(&m.start_excl)).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| key(&m.end_incl)).collect::<Vec<_>>())
        .bind(matches.iter().map(|(_, m)| key(&m.end_excl)).collect::<Vec<_>>())
        .execute(&mut **tx)
        .await?;
    }
    let products: Products<'c> = matches.iter().map(|(_, m)| (m.vendor.as_str(), m.product.as_str())).collect();
    Ok((fresh.iter().map(|&i| cves[i].record.id.clone()).collect(), products))
}
