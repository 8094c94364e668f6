//! The scale-out backend: PostgreSQL, shared by any number of API and worker processes.
//!
//! The schema is the SQLite schema's (migrations/postgres/0001_schema.sql): the same
//! tables, columns and text order (`COLLATE "C"`), so both backends answer alike; the
//! role modules hold the same queries in PostgreSQL's dialect. Migrations are applied on
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

use crate::cve::{CandidateQuery, CapecRow, CveCandidate, CweRow, EpssRow, KevRow, ServedCve, StoredCve};
use crate::migrate::Embedded;
use crate::served_cache::ServedCache;
use crate::{
    CompanyCounts, CompanySnapshot, FindingFilter, HostComponents, Paged, Result, ScanOutcome, ScanScope, SharedStr,
    StoreError, SubsidiaryRequest, SubsidiaryState,
};

use crate::codec::*;

mod companies;
mod events;
mod intel;
mod queue;

#[path = "../sql/mod.rs"]
mod sql;
use sql::rows::*;

/// The seam the shared statements (`../sql/`) are written against.
type Backend = PgStore;
type Db = Postgres;
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
}

// --- row decoding -------------------------------------------------------------------

/// Adds one rating to the history (a rating already stored for the same time is kept)
/// and moves the company's last scan time forward; true when it was added.
async fn insert_score(tx: &mut Transaction<'_, Postgres>, id: i64, snap: &ScoreSnapshot) -> Result<bool> {
    let at = rfc3339(snap.scanned_at.0);
    let sid: Option<i64> = sqlx::query_scalar(
        "INSERT INTO scores (company_id, scanned_at, score, grade, methodology, notes, reason) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(id)
    .bind(&at)
    .bind(snap.score.hundredths())
    .bind(snap.grade.as_str())
    .bind(snap.methodology.as_deref())
    .bind(if snap.notes.is_empty() { None } else { Some(to_json(&snap.notes)?) })
    .bind(snap.reason.as_deref())
    .fetch_optional(&mut **tx)
    .await?;
    let Some(sid) = sid else { return Ok(false) };
    for (rv, c) in &snap.components {
        sqlx::query(
            "INSERT INTO component_scores (score_id, risk_vector, score, grade, weight, assets_checked, findings_count, \
             not_assessable, checks) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(sid)
        .bind(rv.as_str())
        .bind(c.score.hundredths())
        .bind(c.grade.as_str())
        .bind(c.weight.hundredths())
        .bind(i64::from(c.assets_checked))
        .bind(i64::from(c.findings_count))
        .bind(c.not_assessable.as_deref())
        .bind(c.checks.as_ref().map(to_json).transpose()?)
        .execute(&mut **tx)
        .await?;
    }
    sqlx::query(
        "UPDATE companies SET last_scanned_at = $2 WHERE id = $1 AND (last_scanned_at IS NULL OR last_scanned_at < $2)",
    )
    .bind(id)
    .bind(&at)
    .execute(&mut **tx)
    .await?;
    Ok(true)
}

/// Inserts a finding or refreshes the stored one (same company, risk vector, asset and
/// code): first_seen is kept, last_seen moves on, a closed finding reopens.
async fn upsert_finding(tx: &mut Transaction<'_, Postgres>, company: i64, f: &Finding) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO findings (company_id, risk_vector, asset, severity, severity_rank, code, title, evidence, remediation, refs, first_seen, last_seen, cve, component, subject) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
         ON CONFLICT (company_id, risk_vector, asset, code, subject) DO UPDATE SET severity = excluded.severity, \
         severity_rank = excluded.severity_rank, title = excluded.title, evidence = excluded.evidence, \
         remediation = excluded.remediation, refs = excluded.refs, cve = excluded.cve, component = excluded.component, \
         first_seen = LEAST(findings.first_seen, excluded.first_seen), last_seen = excluded.last_seen, \
         closed_at = CASE WHEN findings.false_positive THEN findings.closed_at ELSE NULL END RETURNING id",
    )
    .bind(company)
    .bind(f.risk_vector.as_str())
    .bind(&f.asset)
    .bind(f.severity.as_str())
    .bind(severity_rank(f.severity))
    .bind(&f.code)
    .bind(&f.title)
    .bind(&f.evidence)
    .bind(&f.remediation)
    .bind(to_json(&f.references)?)
    .bind(rfc3339(f.first_seen.0))
    .bind(rfc3339(f.last_seen.0))
    .bind(f.cve.as_ref().map(|c| c.as_str()))
    .bind(f.component.as_deref())
    .bind(crate::finding_subject(f))
    .fetch_one(&mut **tx)
    .await?)
}

async fn insert_application(tx: &mut Transaction<'_, Postgres>, company: i64, a: &Application) -> Result<()> {
    sqlx::query("INSERT INTO applications (company_id, name, version, categories, host, cpe, evidence, confidence, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
        .bind(company)
        .bind(&a.name)
        .bind(a.version.as_deref())
        .bind(to_json(&a.categories)?)
        .bind(&a.host)
        .bind(a.cpe.as_deref())
        .bind(&a.evidence)
        .bind(a.confidence.map(i64::from))
        .bind(rfc3339(a.first_seen.0))
        .bind(rfc3339(a.last_seen.0))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

async fn insert_component(tx: &mut Transaction<'_, Postgres>, company: i64, c: &SbomComponent) -> Result<()> {
    let cid: i64 = sqlx::query_scalar("INSERT INTO sbom_components (company_id, name, version, purl, cpe, evidence, end_of_life, latest_version, confidence, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id")
        .bind(company)
        .bind(&c.name)
        .bind(c.version.as_deref())
        .bind(c.purl.as_deref())
        .bind(c.cpe.as_deref())
        .bind(&c.evidence)
        .bind(c.end_of_life)
        .bind(c.latest_version.as_deref())
        .bind(c.confidence.map(i64::from))
        .bind(rfc3339(c.first_seen.0))
        .bind(rfc3339(c.last_seen.0))
        .fetch_one(&mut **tx)
        .await?;
    for h in &c.hosts {
        sqlx::query("INSERT INTO sbom_hosts (component_id, host) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(cid)
            .bind(h.as_str())
            .execute(&mut **tx)
            .await?;
    }
    for cve in &c.cves {
        sqlx::query("INSERT INTO sbom_cves (component_id, cve_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(cid)
            .bind(cve.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

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

async fn insert_endpoint(tx: &mut Transaction<'_, Postgres>, company: i64, e: &NetworkEndpoint) -> Result<()> {
    sqlx::query(
        "INSERT INTO network_endpoints (company_id, ip, port, protocol, host, service, product, version, banner, \
         source, evidence, first_seen, last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(company)
    .bind(e.ip.to_string())
    .bind(i64::from(e.port))
    .bind(&e.protocol)
    .bind(e.host.as_deref())
    .bind(e.service.as_deref())
    .bind(e.product.as_deref())
    .bind(e.version.as_deref())
    .bind(&e.banner)
    .bind(e.attribution.as_ref().map(|a| a.source.as_str()))
    .bind(e.attribution.as_ref().map(|a| a.evidence.as_str()))
    .bind(rfc3339(e.first_seen.0))
    .bind(rfc3339(e.last_seen.0))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Links `child` below `parent` (nothing when the link exists); whether it was new.
async fn link(conn: &mut sqlx::PgConnection, parent: i64, child: i64, now: &str) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO subsidiaries (parent_id, child_id, added_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
    )
    .bind(parent)
    .bind(child)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

// --- writes of a company snapshot ----------------------------------------------------

async fn upsert_profile(tx: &mut Transaction<'_, Postgres>, p: &CompanyProfile, now: &str) -> Result<i64> {
    let social_id = p.social_id.as_ref().ok_or_else(|| StoreError::Invalid("social_id is required".into()))?;
    let pending_id = format!("pending:{social_id}");
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO companies (social_id, company_name, name_lc, website, domain, industry, description, \
         company_id, funding_id, employees_number, followers, naics_code, created_at, updated_at, name_norm) \
         VALUES ($1, $2, lower($2), $3, $4, $5, $6, coalesce($7, $8), $9, $10, $11, $12, $13, $13, $14) \
         ON CONFLICT (social_id) DO UPDATE SET company_name = excluded.company_name, name_lc = excluded.name_lc, \
         name_norm = excluded.name_norm, \
         website = excluded.website, domain = excluded.domain, industry = excluded.industry, \
         description = excluded.description, company_id = coalesce($7, companies.company_id), \
         funding_id = excluded.funding_id, employees_number = excluded.employees_number, \
         followers = excluded.followers, naics_code = excluded.naics_code, \
         updated_at = excluded.updated_at RETURNING id",
    )
    .bind(social_id.as_str())
    .bind(&p.company_name)
    .bind(&p.website)
    .bind(p.domain.as_ref().map(Domain::as_str))
    .bind(&p.industry)
    .bind(&p.description)
    .bind(p.company_id.as_deref())
    .bind(&pending_id)
    .bind(&p.funding_id)
    .bind(&p.employees_number)
    .bind(p.followers_number)
    .bind(p.naics_code)
    .bind(now)
    .bind(model::normalise_name(&p.company_name))
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query("UPDATE companies SET company_id = 'RP' || lpad(id::text, 8, '0') WHERE id = $1 AND company_id = $2")
        .bind(id)
        .bind(&pending_id)
        .execute(&mut **tx)
        .await?;
    if let Some(d) = &p.domain {
        sqlx::query("INSERT INTO domains (company_id, name, attribution) VALUES ($1, $2, 'web domain of the company profile') ON CONFLICT DO NOTHING")
            .bind(id)
            .bind(d.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(id)
}

async fn write_snapshot(tx: &mut Transaction<'_, Postgres>, id: i64, s: &CompanySnapshot) -> Result<()> {
    if let Some(domains) = &s.domains {
        sqlx::query(
            "DELETE FROM domains WHERE company_id = $1 AND name IS DISTINCT FROM (SELECT domain FROM companies WHERE id = $1) \
             AND verified AND verified_by IS NULL AND attribution NOT LIKE 'added by the company%'",
        )
        .bind(id)
        .execute(&mut **tx)
        .await?;
        for d in domains {
            sqlx::query("INSERT INTO domains (company_id, name, attribution) VALUES ($1, $2, $3) ON CONFLICT (company_id, name) DO UPDATE SET attribution = excluded.attribution, verified = TRUE")
                .bind(id)
                .bind(d.name.as_str())
                .bind(&d.attribution)
                .execute(&mut **tx)
                .await?;
        }
    }
    if let Some(apps) = &s.applications {
        sqlx::query("DELETE FROM applications WHERE company_id = $1").bind(id).execute(&mut **tx).await?;
        for a in apps {
            insert_application(tx, id, a).await?;
        }
    }
    if let Some(eps) = &s.network_endpoints {
        sqlx::query("DELETE FROM network_endpoints WHERE company_id = $1").bind(id).execute(&mut **tx).await?;
        for e in eps {
            insert_endpoint(tx, id, e).await?;
        }
    }
    if let Some(sbom) = &s.sbom {
        sqlx::query("DELETE FROM sbom_components WHERE company_id = $1").bind(id).execute(&mut **tx).await?;
        for c in sbom {
            insert_component(tx, id, c).await?;
        }
    }
    if let Some(findings) = &s.findings {
        let mut kept: Vec<i64> = Vec::with_capacity(findings.len());
        for f in findings {
            let fid = upsert_finding(tx, id, f).await?;
            kept.push(fid);
        }
        sqlx::query(
            "UPDATE findings SET closed_at = $3 WHERE company_id = $1 AND closed_at IS NULL \
             AND NOT (id = ANY($2))",
        )
        .bind(id)
        .bind(&kept)
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .execute(&mut **tx)
        .await?;
    }
    for snap in &s.scores {
        insert_score(tx, id, snap).await?;
    }
    for inc in &s.incidents {
        sqlx::query(
            "INSERT INTO incidents (incident_id, company_id, domain, date_detected, record) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (incident_id) DO UPDATE SET company_id = excluded.company_id, domain = excluded.domain, \
             date_detected = excluded.date_detected, record = excluded.record",
        )
        .bind(&inc.incident_id)
        .bind(id)
        .bind(s.profile.domain.as_ref().map(Domain::as_str))
        .bind(inc.date_detected.map(|d| model::timefmt::format_date(d.0)))
        .bind(to_json(inc)?)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

impl PgStore {
    /// Subsidiary requests in `state` and/or with `id` (either unset: any), oldest first.
    async fn requests(&self, state: Option<SubsidiaryState>, id: Option<i64>) -> Result<Vec<SubsidiaryRequest>> {
        let rows = sqlx::query(
            "SELECT r.*, p.social_id AS parent_social_id, c.social_id AS child_social_id, c.company_name AS child_name \
             FROM subsidiary_requests r JOIN companies p ON p.id = r.parent_id JOIN companies c ON c.id = r.child_id \
             WHERE ($1 IS NULL OR r.state = $1) AND ($2 IS NULL OR r.id = $2) ORDER BY r.id",
        )
        .bind(state.map(SubsidiaryState::as_str))
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(subsidiary_request_from_row).collect()
    }

    async fn load_sbom(&self, rows: Vec<PgRow>) -> Result<Vec<SbomComponent>> {
        let ids: Vec<i64> = rows.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?;
        let mut hosts: BTreeMap<i64, Vec<Domain>> = BTreeMap::new();
        for r in sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT component_id, host FROM sbom_hosts h JOIN sbom_components c ON c.id = h.component_id \
             WHERE component_id = ANY($1) AND {} ORDER BY host",
            crate::assets::rated_host("h.host", "c.company_id")
        )))
        .bind(&ids)
        .fetch_all(&self.pool)
        .await?
        {
            let h: String = r.try_get("host")?;
            hosts
                .entry(r.try_get("component_id")?)
                .or_default()
                .push(Domain::parse(&h).map_err(|_| corrupt("host", &h))?);
        }
        let mut cves: BTreeMap<i64, Vec<CveId>> = BTreeMap::new();
        for r in sqlx::query("SELECT component_id, cve_id FROM sbom_cves WHERE component_id = ANY($1) ORDER BY cve_id")
            .bind(&ids)
            .fetch_all(&self.pool)
            .await?
        {
            let c: String = r.try_get("cve_id")?;
            cves.entry(r.try_get("component_id")?)
                .or_default()
                .push(CveId::parse(&c).map_err(|_| corrupt("cve_id", &c))?);
        }
        rows.iter()
            .map(|row| {
                let id: i64 = row.try_get("id")?;
                Ok(SbomComponent {
                    name: row.try_get("name")?,
                    version: row.try_get("version")?,
                    purl: row.try_get("purl")?,
                    cpe: row.try_get("cpe")?,
                    hosts: hosts.remove(&id).unwrap_or_default(),
                    evidence: row.try_get("evidence")?,
                    end_of_life: row.try_get("end_of_life")?,
                    latest_version: row.try_get("latest_version")?,
                    cves: cves.remove(&id).unwrap_or_default(),
                    confidence: confidence(row)?,
                    first_seen: ts_text(row.try_get("first_seen")?)?,
                    last_seen: ts_text(row.try_get("last_seen")?)?,
                })
            })
            .collect()
    }

    async fn load_scores(&self, rows: Vec<PgRow>) -> Result<Vec<ScoreSnapshot>> {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let sid: i64 = row.try_get("id")?;
            let grade: String = row.try_get("grade")?;
            let mut components = BTreeMap::new();
            for c in sqlx::query("SELECT risk_vector, score, grade, weight, assets_checked, findings_count, not_assessable, checks FROM component_scores WHERE score_id = $1")
                .bind(sid)
                .fetch_all(&self.pool)
                .await?
            {
                let rv: String = c.try_get("risk_vector")?;
                let g: String = c.try_get("grade")?;
                components.insert(
                    RiskVector::parse(&rv).map_err(|_| corrupt("risk_vector", &rv))?,
                    ComponentScore {
                        score: score(c.try_get("score")?)?,
                        grade: Grade::parse(&g).map_err(|_| corrupt("grade", &g))?,
                        weight: score(c.try_get("weight")?)?,
                        assets_checked: u32::try_from(c.try_get::<i64, _>("assets_checked")?).unwrap_or(0),
                        findings_count: u32::try_from(c.try_get::<i64, _>("findings_count")?).unwrap_or(0),
                        not_assessable: c.try_get("not_assessable")?,
                        checks: c.try_get::<Option<String>, _>("checks")?.as_deref().map(json).transpose()?,
                    },
                );
            }
            out.push(ScoreSnapshot {
                scanned_at: ts_text(row.try_get("scanned_at")?)?,
                score: score(row.try_get("score")?)?,
                grade: Grade::parse(&grade).map_err(|_| corrupt("grade", &grade))?,
                components,
                methodology: row.try_get("methodology")?,
                notes: row.try_get::<Option<String>, _>("notes")?.as_deref().map(json).transpose()?.unwrap_or_default(),
                reason: row.try_get("reason")?,
            });
        }
        Ok(out)
    }

    async fn companies_page(
        &self,
        where_sql: &'static str,
        order_sql: &'static str,
        binds: &[&str],
        id_bind: Option<i64>,
        page: Option<Page>,
    ) -> Result<Paged<Company>> {
        let count_sql = format!("SELECT count(*) FROM companies c WHERE {where_sql}");
        let mut cq = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(count_sql));
        if let Some(id) = id_bind {
            cq = cq.bind(id);
        }
        for b in binds {
            cq = cq.bind(*b);
        }
        let total = count(cq.fetch_one(&self.pool).await?);
        let limit = page.map_or_else(|| "ALL".to_owned(), |p| p.limit().to_string());
        let offset = page.map_or(0, |p| p.offset());
        let sql = format!("{COMPANY_SELECT} WHERE {where_sql} ORDER BY {order_sql} LIMIT {limit} OFFSET {offset}");
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(id) = id_bind {
            q = q.bind(id);
        }
        for b in binds {
            q = q.bind(*b);
        }
        let items = q.fetch_all(&self.pool).await?.iter().map(company_from_row).collect::<Result<_>>()?;
        Ok(Paged { items, total })
    }
}
