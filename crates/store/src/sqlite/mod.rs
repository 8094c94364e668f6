//! The embedded backend: one SQLite file in WAL mode.
//!
//! Reads go through a few connections taken first-free-first (`readers`); every write
//! goes through a single writer connection in an IMMEDIATE transaction, so writers in
//! this process never race for the lock and writers in other processes wait on the busy
//! timeout.
//!
//! A bound LIMIT is written `LIMIT CAST(?N AS INTEGER)`: SQLite reads a bare `LIMIT ?N`
//! when it plans, so every new value bound to it made the cached statement prepare
//! again (0.54 M instructions, 6 % of a 296-record CVE answer, by callgrind).

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use model::ComponentScore;
use model::timefmt::{parse_datetime, rfc3339};
use model::{
    ApiKey, Application, Attribution, Company, CompanyProfile, CveId, CveRecord, DiscoveredHost, Domain, DomainAsset,
    Finding, Grade, Incident, Job, NetworkEndpoint, NewApiKey, OffsetDateTimeText, Page, RiskVector, SbomComponent,
    Scope, Score, ScoreSnapshot, Severity, SocialId,
};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, Transaction};
use time::OffsetDateTime;
use tokio::sync::mpsc::Receiver;

use crate::migrate::Embedded;
use crate::{
    CandidateQuery, CapecRow, CompanyCounts, CompanySnapshot, CveCandidate, CweRow, EpssRow, FindingFilter,
    HostComponents, KevRow, Paged, Result, ScanOutcome, ScanScope, ServedCve, SharedStr, Store, StoreError, StoredCve,
    SubsidiaryRequest, SubsidiaryState,
};
use readers::Readers;
use served_cache::ServedCache;

mod readers;
mod served_cache;

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
    write: SqlitePool,
    served: std::sync::Arc<ServedCache>,
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
        Self { read: std::sync::Arc::new(read), write, served }
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

/// A CVE record from its row: its own JSON, or (when that is empty) its served form.
fn record(own: &str, served: Option<&str>) -> Result<CveRecord> {
    if !own.is_empty() {
        return json(own);
    }
    let served = served.ok_or_else(|| corrupt("cve record", "neither a record nor a served form"))?;
    CveRecord::from_served_form(served).map_err(|e| corrupt("served cve record", e.to_string()))
}

/// Adds one rating to the history (a rating already stored for the same time is kept)
/// and moves the company's last scan time forward; true when it was added.
async fn insert_score(tx: &mut Transaction<'_, Sqlite>, id: i64, snap: &ScoreSnapshot) -> Result<bool> {
    let at = rfc3339(snap.scanned_at.0);
    let sid: Option<i64> = sqlx::query_scalar(
        "INSERT INTO scores (company_id, scanned_at, score, grade, methodology, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(id)
    .bind(&at)
    .bind(snap.score.hundredths())
    .bind(snap.grade.as_str())
    .bind(snap.methodology.as_deref())
    .bind(if snap.notes.is_empty() { None } else { Some(to_json(&snap.notes)?) })
    .fetch_optional(&mut **tx)
    .await?;
    let Some(sid) = sid else { return Ok(false) };
    for (rv, c) in &snap.components {
        sqlx::query(
            "INSERT INTO component_scores (score_id, risk_vector, score, grade, weight, assets_checked, findings_count, \
             not_assessable, checks) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
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
        "UPDATE companies SET last_scanned_at = ?2 WHERE id = ?1 AND (last_scanned_at IS NULL OR last_scanned_at < ?2)",
    )
    .bind(id)
    .bind(&at)
    .execute(&mut **tx)
    .await?;
    Ok(true)
}

/// Inserts a finding or refreshes the stored one (same company, risk vector, asset and
/// code): first_seen is kept, last_seen moves on, a closed finding reopens.
async fn upsert_finding(tx: &mut Transaction<'_, Sqlite>, company: i64, f: &Finding) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO findings (company_id, risk_vector, asset, severity, severity_rank, code, title, evidence, remediation, refs, first_seen, last_seen, cve, component, subject) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) \
         ON CONFLICT (company_id, risk_vector, asset, code, subject) DO UPDATE SET severity = excluded.severity, \
         severity_rank = excluded.severity_rank, title = excluded.title, evidence = excluded.evidence, \
         remediation = excluded.remediation, refs = excluded.refs, cve = excluded.cve, component = excluded.component, \
         first_seen = min(findings.first_seen, excluded.first_seen), last_seen = excluded.last_seen, \
         closed_at = NULL RETURNING id",
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

async fn insert_application(tx: &mut Transaction<'_, Sqlite>, company: i64, a: &Application) -> Result<()> {
    sqlx::query("INSERT INTO applications (company_id, name, version, categories, host, cpe, evidence, confidence, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
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

async fn insert_component(tx: &mut Transaction<'_, Sqlite>, company: i64, c: &SbomComponent) -> Result<()> {
    let cid: i64 = sqlx::query_scalar("INSERT INTO sbom_components (company_id, name, version, purl, cpe, evidence, end_of_life, latest_version, confidence, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id")
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
        sqlx::query("INSERT INTO sbom_hosts (component_id, host) VALUES (?1, ?2) ON CONFLICT DO NOTHING")
            .bind(cid)
            .bind(h.as_str())
            .execute(&mut **tx)
            .await?;
    }
    for cve in &c.cves {
        sqlx::query("INSERT INTO sbom_cves (component_id, cve_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING")
            .bind(cid)
            .bind(cve.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

fn corrupt(what: &str, value: impl std::fmt::Debug) -> StoreError {
    StoreError::Corrupt(format!("{what}: {value:?}"))
}

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
    let index: Vec<(&str, &str, &crate::ProductRow)> = fresh
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
    let matches: Vec<(&str, &crate::CpeMatchRow)> = fresh
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

/// Reads the records of an answer that came as one row. A few hundred rows crossing
/// sqlx's worker channel one by one cost several times what SQLite spends finding them,
/// so SQLite joins them into one string: fields split by US (0x1f), records by RS
/// (0x1e), which JSON text never holds unescaped. `each` reads one record; the pieces
/// it keeps share the one string ([`SharedStr`]) instead of copying it.
fn answer_rows<T>(joined: Option<String>, mut each: impl FnMut(&Arc<String>, &str) -> Result<T>) -> Result<Vec<T>> {
    let text = Arc::new(joined.unwrap_or_default());
    text.split('\u{1e}').filter(|r| !r.is_empty()).map(|row| each(&text, row)).collect()
}

/// `piece` of `text`, shared with it.
fn shared(text: &Arc<String>, piece: &str) -> Result<SharedStr> {
    SharedStr::within(text, piece).ok_or_else(|| corrupt("answer row", piece.get(..40).unwrap_or(piece)))
}

/// The next field of an answer row.
fn field<'a>(fields: &mut impl Iterator<Item = &'a str>, row: &str) -> Result<&'a str> {
    fields.next().ok_or_else(|| corrupt("answer row", row.get(..60).unwrap_or(row)))
}

/// The next field of an answer row, a CVE id.
fn cve_id_field<'a>(fields: &mut impl Iterator<Item = &'a str>, row: &str) -> Result<CveId> {
    let id = field(fields, row)?;
    CveId::parse(id).map_err(|_| corrupt("cve id", id))
}

/// The KEV entry, EPSS score and percentile of a record: the next three fields of an
/// answer row, each '' when absent.
fn side_feeds<'a>(
    text: &Arc<String>,
    fields: &mut impl Iterator<Item = &'a str>,
    row: &str,
) -> Result<(Option<SharedStr>, Option<f64>, Option<f64>)> {
    let number = |s: &str| -> Result<Option<f64>> {
        if s.is_empty() { Ok(None) } else { s.parse().map(Some).map_err(|_| corrupt("epss", s)) }
    };
    let kev = field(fields, row)?;
    let kev = if kev.is_empty() { None } else { Some(shared(text, kev)?) };
    Ok((kev, number(field(fields, row)?)?, number(field(fields, row)?)?))
}

/// RFC 3339 UTC with microseconds: CVE timestamps keep their fraction, and the fixed
/// width keeps text order equal to time order.
fn rfc3339_micros(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    t.format(time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z"))
        .unwrap_or_default()
}

fn ts(raw: &str) -> Result<OffsetDateTime> {
    parse_datetime(raw).ok_or_else(|| corrupt("timestamp", raw))
}

fn ts_text(raw: &str) -> Result<OffsetDateTimeText> {
    ts(raw).map(OffsetDateTimeText)
}

fn score(h: i64) -> Result<Score> {
    Score::from_hundredths(h).map_err(|_| corrupt("score", h))
}

fn json<T: serde::de::DeserializeOwned>(raw: &str) -> Result<T> {
    serde_json::from_str(raw).map_err(|e| corrupt("json", e.to_string()))
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Invalid(e.to_string()))
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

const COMPANY_SELECT: &str = "SELECT c.id, c.social_id, c.company_name, c.website, c.domain, c.industry, \
     c.description, c.company_id, c.funding_id, c.employees_number, c.followers_number, c.naics_code, \
     c.searched_by, c.last_scanned_at, s.score AS score, s.grade AS grade \
     FROM companies c LEFT JOIN scores s ON s.id = \
     (SELECT id FROM scores WHERE company_id = c.id ORDER BY scanned_at DESC LIMIT 1)";

fn company_from_row(row: &SqliteRow) -> Result<Company> {
    let social_id: String = row.try_get("social_id")?;
    let domain: Option<String> = row.try_get("domain")?;
    let last: Option<String> = row.try_get("last_scanned_at")?;
    let sc: Option<i64> = row.try_get("score")?;
    let grade: Option<String> = row.try_get("grade")?;
    Ok(Company {
        id: row.try_get("id")?,
        social_id: SocialId::parse(&social_id).map_err(|_| corrupt("social_id", &social_id))?,
        company_name: row.try_get("company_name")?,
        website: row.try_get("website")?,
        domain: domain.as_deref().map(Domain::parse).transpose().map_err(|_| corrupt("domain", &domain))?,
        industry: row.try_get("industry")?,
        description: row.try_get("description")?,
        company_id: row.try_get("company_id")?,
        funding_id: row.try_get("funding_id")?,
        employees_number: row.try_get("employees_number")?,
        followers_number: row.try_get("followers_number")?,
        naics_code: row.try_get("naics_code")?,
        searched_by: row.try_get("searched_by")?,
        last_scanned_at: last.as_deref().map(ts).transpose()?,
        score: sc.map(score).transpose()?,
        grade: grade.as_deref().map(Grade::parse).transpose().map_err(|_| corrupt("grade", &grade))?,
    })
}

fn application_from_row(row: &SqliteRow) -> Result<Application> {
    Ok(Application {
        name: row.try_get("name")?,
        version: row.try_get("version")?,
        categories: json(row.try_get::<&str, _>("categories")?)?,
        host: row.try_get("host")?,
        cpe: row.try_get("cpe")?,
        evidence: row.try_get("evidence")?,
        confidence: confidence(row)?,
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
    })
}

/// A detection's confidence column (0–100, NULL for imported rows).
fn confidence(row: &SqliteRow) -> Result<Option<u8>> {
    match row.try_get::<Option<i64>, _>("confidence")? {
        Some(n) => u8::try_from(n).map(Some).map_err(|_| corrupt("confidence", n)),
        None => Ok(None),
    }
}

fn endpoint_from_row(row: &SqliteRow) -> Result<NetworkEndpoint> {
    let ip: String = row.try_get("ip")?;
    let port: i64 = row.try_get("port")?;
    Ok(NetworkEndpoint {
        ip: ip.parse().map_err(|_| corrupt("ip", &ip))?,
        port: u16::try_from(port).map_err(|_| corrupt("port", port))?,
        protocol: row.try_get("protocol")?,
        host: row.try_get("host")?,
        service: row.try_get("service")?,
        product: row.try_get("product")?,
        version: row.try_get("version")?,
        banner: row.try_get("banner")?,
        attribution: match (row.try_get::<Option<String>, _>("source")?, row.try_get::<Option<String>, _>("evidence")?)
        {
            (Some(source), Some(evidence)) => Some(Attribution { source, evidence }),
            _ => None,
        },
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
    })
}

async fn insert_endpoint(tx: &mut Transaction<'_, Sqlite>, company: i64, e: &NetworkEndpoint) -> Result<()> {
    sqlx::query(
        "INSERT INTO network_endpoints (company_id, ip, port, protocol, host, service, product, version, banner, \
         source, evidence, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
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

fn host_from_row(row: &SqliteRow) -> Result<DiscoveredHost> {
    let addresses: String = row.try_get("addresses")?;
    Ok(DiscoveredHost {
        name: row.try_get("name")?,
        addresses: addresses
            .split(',')
            .filter(|a| !a.is_empty())
            .map(|a| a.parse().map_err(|_| corrupt("addresses", a)))
            .collect::<Result<_>>()?,
        attribution: Attribution { source: row.try_get("source")?, evidence: row.try_get("evidence")? },
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
    })
}

fn finding_from_row(row: &SqliteRow) -> Result<Finding> {
    let rv: String = row.try_get("risk_vector")?;
    let sev: String = row.try_get("severity")?;
    Ok(Finding {
        id: row.try_get("id")?,
        risk_vector: RiskVector::parse(&rv).map_err(|_| corrupt("risk_vector", &rv))?,
        asset: row.try_get("asset")?,
        severity: Severity::parse(&sev).map_err(|_| corrupt("severity", &sev))?,
        code: row.try_get("code")?,
        title: row.try_get("title")?,
        evidence: row.try_get("evidence")?,
        remediation: row.try_get("remediation")?,
        references: json(row.try_get::<&str, _>("refs")?)?,
        cve: match row.try_get::<Option<String>, _>("cve")? {
            Some(text) => Some(CveId::parse(&text).map_err(|_| corrupt("cve", &text))?),
            None => None,
        },
        component: row.try_get("component")?,
        first_seen: ts_text(row.try_get("first_seen")?)?,
        last_seen: ts_text(row.try_get("last_seen")?)?,
    })
}

fn key_from_row(row: &SqliteRow) -> Result<ApiKey> {
    let scopes: String = row.try_get("scopes")?;
    let company: Option<String> = row.try_get("company")?;
    let per_minute: i64 = row.try_get("per_minute")?;
    let monthly: i64 = row.try_get("monthly")?;
    Ok(ApiKey {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        prefix: row.try_get("prefix")?,
        hash: row.try_get("hash")?,
        scopes: Scope::parse_list(&scopes).map_err(|e| corrupt("scopes", e))?,
        company: company.as_deref().map(SocialId::parse).transpose().map_err(|_| corrupt("company", &company))?,
        per_minute: u32::try_from(per_minute).map_err(|_| corrupt("per_minute", per_minute))?,
        monthly: u64::try_from(monthly).map_err(|_| corrupt("monthly", monthly))?,
        active: row.try_get("active")?,
        created_at: ts(row.try_get("created_at")?)?,
    })
}

/// Links `child` below `parent` (nothing when the link exists); whether it was new.
async fn link(conn: &mut sqlx::SqliteConnection, parent: i64, child: i64, now: &str) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO subsidiaries (parent_id, child_id, added_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
    )
    .bind(parent)
    .bind(child)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

fn subsidiary_request_from_row(row: &SqliteRow) -> Result<SubsidiaryRequest> {
    let state: &str = row.try_get("state")?;
    Ok(SubsidiaryRequest {
        id: row.try_get("id")?,
        parent: SocialId::parse(row.try_get("parent_social_id")?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        child: SocialId::parse(row.try_get("child_social_id")?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        child_name: row.try_get("child_name")?,
        key_id: row.try_get("key_id")?,
        state: SubsidiaryState::parse(state)
            .ok_or_else(|| StoreError::Corrupt(format!("subsidiary request state {state:?}")))?,
        created_at: row.try_get("created_at")?,
        decided_at: row.try_get("decided_at")?,
        note: row.try_get("note")?,
    })
}

fn job_from_row(row: &SqliteRow) -> Result<Job> {
    let status: &str = row.try_get("status")?;
    Ok(Job {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        payload: json(row.try_get::<&str, _>("payload")?)?,
        attempts: row.try_get("attempts")?,
        status: model::JobStatus::parse(status).ok_or_else(|| StoreError::Corrupt(format!("job status {status:?}")))?,
        lease_token: row.try_get("lease_token")?,
        worker: row.try_get("worker")?,
        last_error: row.try_get("last_error")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn severity_rank(s: Severity) -> i64 {
    match s {
        Severity::Info => 0,
        Severity::Low => 1,
        Severity::Medium => 2,
        Severity::High => 3,
        Severity::Critical => 4,
    }
}

// --- writes of a company snapshot ----------------------------------------------------

async fn upsert_profile(tx: &mut Transaction<'_, Sqlite>, p: &CompanyProfile, now: &str) -> Result<i64> {
    let social_id = p.social_id.as_ref().ok_or_else(|| StoreError::Invalid("social_id is required".into()))?;
    let pending_id = format!("pending:{social_id}");
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO companies (social_id, company_name, name_lc, website, domain, industry, description, \
         company_id, funding_id, employees_number, followers_number, naics_code, created_at, updated_at, name_norm) \
         VALUES (?1, ?2, lower(?2), ?3, ?4, ?5, ?6, coalesce(?7, ?8), ?9, ?10, ?11, ?12, ?13, ?13, ?14) \
         ON CONFLICT (social_id) DO UPDATE SET company_name = excluded.company_name, name_lc = excluded.name_lc, \
         name_norm = excluded.name_norm, \
         website = excluded.website, domain = excluded.domain, industry = excluded.industry, \
         description = excluded.description, company_id = coalesce(?7, companies.company_id), \
         funding_id = excluded.funding_id, employees_number = excluded.employees_number, \
         followers_number = excluded.followers_number, naics_code = excluded.naics_code, \
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
    sqlx::query("UPDATE companies SET company_id = printf('RP%08d', id) WHERE id = ?1 AND company_id = ?2")
        .bind(id)
        .bind(&pending_id)
        .execute(&mut **tx)
        .await?;
    if let Some(d) = &p.domain {
        sqlx::query("INSERT INTO domains (company_id, name, attribution) VALUES (?1, ?2, 'web domain of the company profile') ON CONFLICT DO NOTHING")
            .bind(id)
            .bind(d.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(id)
}

async fn write_snapshot(tx: &mut Transaction<'_, Sqlite>, id: i64, s: &CompanySnapshot) -> Result<()> {
    if let Some(domains) = &s.domains {
        sqlx::query(
            "DELETE FROM domains WHERE company_id = ?1 AND name IS NOT (SELECT domain FROM companies WHERE id = ?1)",
        )
        .bind(id)
        .execute(&mut **tx)
        .await?;
        for d in domains {
            sqlx::query("INSERT INTO domains (company_id, name, attribution) VALUES (?1, ?2, ?3) ON CONFLICT (company_id, name) DO UPDATE SET attribution = excluded.attribution")
                .bind(id)
                .bind(d.name.as_str())
                .bind(&d.attribution)
                .execute(&mut **tx)
                .await?;
        }
    }
    if let Some(apps) = &s.applications {
        sqlx::query("DELETE FROM applications WHERE company_id = ?1").bind(id).execute(&mut **tx).await?;
        for a in apps {
            insert_application(tx, id, a).await?;
        }
    }
    if let Some(eps) = &s.network_endpoints {
        sqlx::query("DELETE FROM network_endpoints WHERE company_id = ?1").bind(id).execute(&mut **tx).await?;
        for e in eps {
            insert_endpoint(tx, id, e).await?;
        }
    }
    if let Some(sbom) = &s.sbom {
        sqlx::query("DELETE FROM sbom_components WHERE company_id = ?1").bind(id).execute(&mut **tx).await?;
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
            "UPDATE findings SET closed_at = ?3 WHERE company_id = ?1 AND closed_at IS NULL \
             AND id NOT IN (SELECT value FROM json_each(?2))",
        )
        .bind(id)
        .bind(to_json(&kept)?)
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .execute(&mut **tx)
        .await?;
    }
    for snap in &s.scores {
        insert_score(tx, id, snap).await?;
    }
    for inc in &s.incidents {
        sqlx::query(
            "INSERT INTO incidents (incident_id, company_id, domain, date_detected, record) VALUES (?1, ?2, ?3, ?4, ?5) \
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

impl SqliteStore {
    /// Subsidiary requests in `state` and/or with `id` (either unset: any), oldest first.
    async fn requests(&self, state: Option<SubsidiaryState>, id: Option<i64>) -> Result<Vec<SubsidiaryRequest>> {
        let rows = sqlx::query(
            "SELECT r.*, p.social_id AS parent_social_id, c.social_id AS child_social_id, c.company_name AS child_name \
             FROM subsidiary_requests r JOIN companies p ON p.id = r.parent_id JOIN companies c ON c.id = r.child_id \
             WHERE (?1 IS NULL OR r.state = ?1) AND (?2 IS NULL OR r.id = ?2) ORDER BY r.id",
        )
        .bind(state.map(SubsidiaryState::as_str))
        .bind(id)
        .fetch_all(&mut *self.read.get().await?)
        .await?;
        rows.iter().map(subsidiary_request_from_row).collect()
    }

    async fn load_sbom(&self, rows: Vec<SqliteRow>) -> Result<Vec<SbomComponent>> {
        let ids: Vec<i64> = rows.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?;
        let ids_json = to_json(&ids)?;
        let mut hosts: BTreeMap<i64, Vec<Domain>> = BTreeMap::new();
        for r in sqlx::query("SELECT component_id, host FROM sbom_hosts WHERE component_id IN (SELECT value FROM json_each(?1)) ORDER BY host")
            .bind(&ids_json)
            .fetch_all(&mut *self.read.get().await?)
            .await?
        {
            let h: String = r.try_get("host")?;
            hosts
                .entry(r.try_get("component_id")?)
                .or_default()
                .push(Domain::parse(&h).map_err(|_| corrupt("host", &h))?);
        }
        let mut cves: BTreeMap<i64, Vec<CveId>> = BTreeMap::new();
        for r in sqlx::query("SELECT component_id, cve_id FROM sbom_cves WHERE component_id IN (SELECT value FROM json_each(?1)) ORDER BY cve_id")
            .bind(&ids_json)
            .fetch_all(&mut *self.read.get().await?)
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

    async fn load_scores(&self, rows: Vec<SqliteRow>) -> Result<Vec<ScoreSnapshot>> {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let sid: i64 = row.try_get("id")?;
            let grade: String = row.try_get("grade")?;
            let mut components = BTreeMap::new();
            for c in sqlx::query("SELECT risk_vector, score, grade, weight, assets_checked, findings_count, not_assessable, checks FROM component_scores WHERE score_id = ?1")
                .bind(sid)
                .fetch_all(&mut *self.read.get().await?)
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
        let total = count(cq.fetch_one(&mut *self.read.get().await?).await?);
        let (limit, offset) = page.map_or((-1, 0), |p| (p.limit(), p.offset()));
        let sql = format!("{COMPANY_SELECT} WHERE {where_sql} ORDER BY {order_sql} LIMIT {limit} OFFSET {offset}");
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(id) = id_bind {
            q = q.bind(id);
        }
        for b in binds {
            q = q.bind(*b);
        }
        let items =
            q.fetch_all(&mut *self.read.get().await?).await?.iter().map(company_from_row).collect::<Result<_>>()?;
        Ok(Paged { items, total })
    }
}

fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[async_trait]
impl Store for SqliteStore {
    async fn save_company(&self, snapshot: &CompanySnapshot) -> Result<Company> {
        let now = rfc3339(OffsetDateTime::now_utc());
        let mut tx = self.begin().await?;
        let id = upsert_profile(&mut tx, &snapshot.profile, &now).await?;
        write_snapshot(&mut tx, id, snapshot).await?;
        tx.commit().await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{COMPANY_SELECT} WHERE c.id = ?1")))
            .bind(id)
            .fetch_one(&self.write)
            .await?;
        company_from_row(&row)
    }

    async fn company_by_social_id(&self, social_id: &SocialId) -> Result<Option<Company>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("{COMPANY_SELECT} WHERE c.social_id = ?1")))
            .bind(social_id.as_str())
            .fetch_optional(&mut *self.read.get().await?)
            .await?;
        row.as_ref().map(company_from_row).transpose()
    }

    async fn company_by_domain(&self, domain: &Domain) -> Result<Option<Company>> {
        for name in domain.self_and_parents() {
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "{COMPANY_SELECT} WHERE c.domain = ?1 OR c.id IN (SELECT company_id FROM domains WHERE name = ?1) \
                 ORDER BY (c.domain = ?1) DESC, c.id LIMIT 1"
            )))
            .bind(name)
            .fetch_optional(&mut *self.read.get().await?)
            .await?;
            if let Some(row) = row {
                return company_from_row(&row).map(Some);
            }
        }
        Ok(None)
    }

    async fn search_companies(&self, needle: &str, page: Page) -> Result<Paged<Company>> {
        let needle = needle.trim().to_lowercase();
        let pattern = format!("%{}%", like_escape(&needle));
        let prefix = format!("{}%", like_escape(&needle));
        self.companies_page(
            "c.name_lc LIKE ?1 ESCAPE '\\'",
            "(c.name_lc = ?3) DESC, (c.name_lc LIKE ?2 ESCAPE '\\') DESC, c.name_lc, c.id",
            &[&pattern, &prefix, &needle],
            None,
            Some(page),
        )
        .await
    }

    async fn companies_by_normalised_name(&self, name: &str, limit: u32) -> Result<Vec<Company>> {
        if name.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "{COMPANY_SELECT} WHERE c.name_norm = ?1 ORDER BY c.id LIMIT {limit}"
        )))
        .bind(name)
        .fetch_all(&mut *self.read.get().await?)
        .await?;
        rows.iter().map(company_from_row).collect()
    }

    async fn set_scan_error(&self, company: i64, error: Option<&str>) -> Result<()> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        sqlx::query(
            "UPDATE companies SET scan_error = ?2, scan_error_at = CASE WHEN ?2 IS NULL THEN NULL ELSE ?3 END WHERE id = ?1",
        )
        .bind(company)
        .bind(error)
        .bind(&now)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn scan_error(&self, company: i64) -> Result<Option<(String, OffsetDateTime)>> {
        let row: Option<(Option<String>, Option<String>)> =
            sqlx::query_as("SELECT scan_error, scan_error_at FROM companies WHERE id = ?1")
                .bind(company)
                .fetch_optional(&mut *self.read.get().await?)
                .await?;
        let Some((Some(error), Some(at))) = row else { return Ok(None) };
        let at = OffsetDateTime::parse(&at, &time::format_description::well_known::Rfc3339)
            .map_err(|e| corrupt("scan_error_at", e.to_string()))?;
        Ok(Some((error, at)))
    }

    async fn set_dkim_selectors(&self, company: i64, selectors: &[String]) -> Result<()> {
        let json = (!selectors.is_empty())
            .then(|| serde_json::to_string(selectors))
            .transpose()
            .map_err(|e| corrupt("dkim_selectors", e.to_string()))?;
        sqlx::query("UPDATE companies SET dkim_selectors = ?2 WHERE id = ?1")
            .bind(company)
            .bind(json)
            .execute(&self.write)
            .await?;
        Ok(())
    }

    async fn dkim_selectors(&self, company: i64) -> Result<Vec<String>> {
        let row: Option<(Option<String>,)> = sqlx::query_as("SELECT dkim_selectors FROM companies WHERE id = ?1")
            .bind(company)
            .fetch_optional(&mut *self.read.get().await?)
            .await?;
        match row {
            Some((Some(json),)) => serde_json::from_str(&json).map_err(|e| corrupt("dkim_selectors", e.to_string())),
            _ => Ok(Vec::new()),
        }
    }

    async fn add_lookups(&self, counts: &[(i64, i64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin().await?;
        for (id, n) in counts {
            sqlx::query("UPDATE companies SET searched_by = searched_by + ?2 WHERE id = ?1")
                .bind(id)
                .bind(n)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn domains(&self, company: i64) -> Result<Vec<DomainAsset>> {
        sqlx::query("SELECT name, attribution FROM domains WHERE company_id = ?1 ORDER BY name")
            .bind(company)
            .fetch_all(&mut *self.read.get().await?)
            .await?
            .iter()
            .map(|r| {
                let n: String = r.try_get("name")?;
                Ok(DomainAsset {
                    name: Domain::parse(&n).map_err(|_| corrupt("domain", &n))?,
                    attribution: r.try_get("attribution")?,
                })
            })
            .collect()
    }

    async fn counts(&self, company: i64) -> Result<CompanyCounts> {
        let row = sqlx::query(
            "SELECT (SELECT count(*) FROM applications WHERE company_id = ?1) AS apps, \
             (SELECT count(*) FROM network_endpoints WHERE company_id = ?1) AS eps, \
             (SELECT count(DISTINCT ip) FROM network_endpoints WHERE company_id = ?1) AS ips, \
             (SELECT count(*) FROM sbom_components WHERE company_id = ?1) AS sbom",
        )
        .bind(company)
        .fetch_one(&mut *self.read.get().await?)
        .await?;
        let mut findings = BTreeMap::new();
        for s in Severity::ALL {
            findings.insert(*s, 0);
        }
        for r in sqlx::query("SELECT severity, count(*) AS n FROM findings WHERE company_id = ?1 AND closed_at IS NULL GROUP BY severity")
            .bind(company)
            .fetch_all(&mut *self.read.get().await?)
            .await?
        {
            let s: String = r.try_get("severity")?;
            findings.insert(Severity::parse(&s).map_err(|_| corrupt("severity", &s))?, count(r.try_get("n")?));
        }
        Ok(CompanyCounts {
            applications: count(row.try_get("apps")?),
            network_endpoints: count(row.try_get("eps")?),
            ip_addresses: count(row.try_get("ips")?),
            sbom_components: count(row.try_get("sbom")?),
            findings,
        })
    }

    async fn last_scanned(&self, page: Page) -> Result<Paged<Company>> {
        self.companies_page("c.last_scanned_at IS NOT NULL", "c.last_scanned_at DESC, c.id DESC", &[], None, Some(page))
            .await
    }

    async fn link_subsidiary(&self, parent: i64, child: i64) -> Result<bool> {
        if parent == child {
            return Err(StoreError::Invalid("a company cannot be its own subsidiary".into()));
        }
        let mut conn = self.write.acquire().await?;
        link(&mut conn, parent, child, &rfc3339(OffsetDateTime::now_utc())).await
    }

    async fn record_subsidiary_request(
        &self,
        parent: i64,
        child: i64,
        key_id: Option<i64>,
        state: SubsidiaryState,
    ) -> Result<i64> {
        if parent == child {
            return Err(StoreError::Invalid("a company cannot be its own subsidiary".into()));
        }
        let now = rfc3339(OffsetDateTime::now_utc());
        let mut tx = self.begin().await?;
        if state == SubsidiaryState::Pending {
            let open: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM subsidiary_requests WHERE parent_id = ?1 AND child_id = ?2 AND state = 'pending'",
            )
            .bind(parent)
            .bind(child)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(id) = open {
                tx.commit().await?;
                return Ok(id);
            }
        }
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO subsidiary_requests (parent_id, child_id, key_id, state, created_at) VALUES (?1, ?2, ?3, ?4, ?5) \
             RETURNING id",
        )
        .bind(parent)
        .bind(child)
        .bind(key_id)
        .bind(state.as_str())
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        if state == SubsidiaryState::Created {
            link(&mut tx, parent, child, &now).await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    async fn subsidiary_requests(&self, state: Option<SubsidiaryState>) -> Result<Vec<SubsidiaryRequest>> {
        self.requests(state, None).await
    }

    async fn decide_subsidiary_request(&self, id: i64, approve: bool, note: &str) -> Result<Option<SubsidiaryRequest>> {
        let now = rfc3339(OffsetDateTime::now_utc());
        let mut tx = self.begin().await?;
        let decided: Option<(i64, i64)> = sqlx::query_as(
            "UPDATE subsidiary_requests SET state = ?2, decided_at = ?3, note = ?4 WHERE id = ?1 AND state = 'pending' \
             RETURNING parent_id, child_id",
        )
        .bind(id)
        .bind(if approve { "approved" } else { "rejected" })
        .bind(&now)
        .bind(note)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((parent, child)) = decided else {
            tx.commit().await?;
            return Ok(None);
        };
        if approve {
            link(&mut tx, parent, child, &now).await?;
        }
        tx.commit().await?;
        Ok(self.requests(None, Some(id)).await?.pop())
    }

    async fn companies_created_by_key(&self, key_id: i64, since: OffsetDateTime) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM subsidiary_requests WHERE key_id = ?1 AND state = 'created' AND created_at >= ?2",
        )
        .bind(key_id)
        .bind(rfc3339(since))
        .fetch_one(&mut *self.read.get().await?)
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn unlink_subsidiary(&self, parent: i64, child: i64) -> Result<bool> {
        let done = sqlx::query("DELETE FROM subsidiaries WHERE parent_id = ?1 AND child_id = ?2")
            .bind(parent)
            .bind(child)
            .execute(&self.write)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn subsidiaries(&self, parent: i64, page: Option<Page>) -> Result<Paged<Company>> {
        self.companies_page(
            "c.id IN (SELECT child_id FROM subsidiaries WHERE parent_id = ?1)",
            "c.name_lc, c.id",
            &[],
            Some(parent),
            page,
        )
        .await
    }

    async fn applications(&self, company: i64, page: Page) -> Result<Paged<Application>> {
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM applications WHERE company_id = ?1")
            .bind(company)
            .fetch_one(&mut *self.read.get().await?)
            .await?;
        let items = sqlx::query(
            "SELECT * FROM applications WHERE company_id = ?1 ORDER BY lower(name), host, id LIMIT CAST(?2 AS INTEGER) OFFSET ?3",
        )
        .bind(company)
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(application_from_row)
        .collect::<Result<_>>()?;
        Ok(Paged { items, total: count(total) })
    }

    async fn network_endpoints(&self, company: i64, page: Page) -> Result<Paged<NetworkEndpoint>> {
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM network_endpoints WHERE company_id = ?1")
            .bind(company)
            .fetch_one(&mut *self.read.get().await?)
            .await?;
        let items = sqlx::query(
            "SELECT * FROM network_endpoints WHERE company_id = ?1 ORDER BY ip, port, id LIMIT CAST(?2 AS INTEGER) OFFSET ?3",
        )
        .bind(company)
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(endpoint_from_row)
        .collect::<Result<_>>()?;
        Ok(Paged { items, total: count(total) })
    }

    async fn sbom(&self, company: i64, page: Page, with_cves: bool) -> Result<Paged<SbomComponent>> {
        let filter = if with_cves { 1 } else { 0 };
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM sbom_components c WHERE company_id = ?1 AND (?2 = 0 OR EXISTS (SELECT 1 FROM sbom_cves v WHERE v.component_id = c.id))")
            .bind(company)
            .bind(filter)
            .fetch_one(&mut *self.read.get().await?)
            .await?;
        let rows = sqlx::query("SELECT * FROM sbom_components c WHERE company_id = ?1 AND (?2 = 0 OR EXISTS (SELECT 1 FROM sbom_cves v WHERE v.component_id = c.id)) ORDER BY lower(name), version, id LIMIT CAST(?3 AS INTEGER) OFFSET ?4")
            .bind(company)
            .bind(filter)
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(&mut *self.read.get().await?)
            .await?;
        Ok(Paged { items: self.load_sbom(rows).await?, total: count(total) })
    }

    async fn sbom_by_domain(&self, company: i64, domain: &Domain, page: Page) -> Result<Paged<HostComponents>> {
        const HOSTS: &str = "FROM sbom_hosts h JOIN sbom_components c ON c.id = h.component_id \
             WHERE c.company_id = ?1 AND (h.host = ?2 OR h.host LIKE '%.' || ?2)";
        let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(DISTINCT h.host) {HOSTS}")))
            .bind(company)
            .bind(domain.as_str())
            .fetch_one(&mut *self.read.get().await?)
            .await?;
        let hosts: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT DISTINCT h.host {HOSTS} ORDER BY h.host LIMIT CAST(?3 AS INTEGER) OFFSET ?4"
        )))
        .bind(company)
        .bind(domain.as_str())
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.read.get().await?)
        .await?;
        let mut items = Vec::with_capacity(hosts.len());
        for host in hosts {
            let rows = sqlx::query("SELECT c.* FROM sbom_components c JOIN sbom_hosts h ON h.component_id = c.id WHERE c.company_id = ?1 AND h.host = ?2 ORDER BY lower(c.name), c.version, c.id")
                .bind(company)
                .bind(&host)
                .fetch_all(&mut *self.read.get().await?)
                .await?;
            items.push(HostComponents { host, components: self.load_sbom(rows).await? });
        }
        Ok(Paged { items, total: count(total) })
    }

    async fn findings(&self, company: i64, filter: FindingFilter<'_>, page: Page) -> Result<Paged<Finding>> {
        const WHERE: &str =
            "company_id = ?1 AND closed_at IS NULL AND (?2 IS NULL OR asset = ?2) AND (?3 IS NULL OR risk_vector = ?3)";
        let rv = filter.risk_vector.map(RiskVector::as_str);
        let total: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM findings WHERE {WHERE}")))
                .bind(company)
                .bind(filter.asset)
                .bind(rv)
                .fetch_one(&mut *self.read.get().await?)
                .await?;
        let items = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT * FROM findings WHERE {WHERE} ORDER BY severity_rank DESC, risk_vector, asset, code, id LIMIT CAST(?4 AS INTEGER) OFFSET ?5"
        )))
        .bind(company)
        .bind(filter.asset)
        .bind(rv)
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(finding_from_row)
        .collect::<Result<_>>()?;
        Ok(Paged { items, total: count(total) })
    }

    async fn record_scan(
        &self,
        company: i64,
        scope: ScanScope<'_>,
        findings: &[Finding],
        scanned_at: OffsetDateTime,
    ) -> Result<ScanOutcome> {
        let vectors: Vec<&str> = scope.risk_vectors.iter().map(|v| v.as_str()).collect();
        let mut tx = self.begin().await?;
        let mut outcome = ScanOutcome::default();
        let mut kept = Vec::with_capacity(findings.len());
        for f in findings {
            let in_scope = match scope.asset {
                None => true,
                Some(a) if scope.below => crate::asset_under(&f.asset, a),
                Some(a) => a == f.asset,
            };
            if !scope.risk_vectors.contains(&f.risk_vector) || !in_scope {
                return Err(StoreError::Invalid(format!(
                    "finding {} on {} is outside the scan's scope",
                    f.code, f.asset
                )));
            }
            let open: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM findings WHERE company_id = ?1 AND risk_vector = ?2 AND asset = ?3 AND code = ?4 \
                 AND subject = ?5 AND closed_at IS NULL",
            )
            .bind(company)
            .bind(f.risk_vector.as_str())
            .bind(&f.asset)
            .bind(&f.code)
            .bind(crate::finding_subject(f))
            .fetch_optional(&mut *tx)
            .await?;
            if open.is_some() {
                outcome.seen_again += 1;
            } else {
                outcome.opened += 1;
            }
            kept.push(upsert_finding(&mut tx, company, f).await?);
        }
        if !scope.close_missing {
            tx.commit().await?;
            return Ok(outcome);
        }
        let closed = sqlx::query(
            "UPDATE findings SET closed_at = ?4 WHERE company_id = ?1 AND closed_at IS NULL \
             AND risk_vector IN (SELECT value FROM json_each(?2)) \
             AND (?3 IS NULL OR asset = ?3 OR (?6 AND (asset LIKE '%.' || ?3 OR asset LIKE '%.' || ?3 || ':%' \
                  OR asset LIKE '%://' || ?3 || '/%' OR asset LIKE '%.' || ?3 || '/%' OR asset LIKE ?3 || ':%'))) \
             AND id NOT IN (SELECT value FROM json_each(?5))",
        )
        .bind(company)
        .bind(to_json(&vectors)?)
        .bind(scope.asset)
        .bind(rfc3339(scanned_at))
        .bind(to_json(&kept)?)
        .bind(scope.below)
        .execute(&mut *tx)
        .await?;
        outcome.closed = u32::try_from(closed.rows_affected()).unwrap_or(u32::MAX);
        tx.commit().await?;
        Ok(outcome)
    }

    async fn closed_findings(&self, company: i64) -> Result<Vec<(Finding, OffsetDateTimeText)>> {
        let rows = sqlx::query(
            "SELECT * FROM findings WHERE company_id = ?1 AND closed_at IS NOT NULL ORDER BY closed_at DESC, id",
        )
        .bind(company)
        .fetch_all(&mut *self.read.get().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let closed: String = r.try_get("closed_at")?;
                Ok((finding_from_row(r)?, ts_text(&closed)?))
            })
            .collect()
    }

    async fn top_findings(&self, company: i64, per_vector: u32) -> Result<Vec<Finding>> {
        sqlx::query(
            "SELECT * FROM (SELECT f.*, row_number() OVER (PARTITION BY risk_vector \
             ORDER BY severity_rank DESC, asset, code, id) AS rn FROM findings f WHERE company_id = ?1 AND closed_at IS NULL) \
             WHERE rn <= ?2 ORDER BY risk_vector, rn",
        )
        .bind(company)
        .bind(i64::from(per_vector))
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(finding_from_row)
        .collect()
    }

    async fn record_discovery(
        &self,
        company: i64,
        hosts: &[DiscoveredHost],
        endpoints: &[NetworkEndpoint],
        seen_at: OffsetDateTime,
    ) -> Result<()> {
        let at = rfc3339(seen_at);
        let mut tx = self.begin().await?;
        for h in hosts {
            let addresses: Vec<String> = h.addresses.iter().map(ToString::to_string).collect();
            sqlx::query(
                "INSERT INTO hosts (company_id, name, addresses, source, evidence, first_seen, last_seen) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT (company_id, name) DO UPDATE SET \
                 addresses = excluded.addresses, source = excluded.source, evidence = excluded.evidence, \
                 last_seen = excluded.last_seen",
            )
            .bind(company)
            .bind(&h.name)
            .bind(addresses.join(","))
            .bind(&h.attribution.source)
            .bind(&h.attribution.evidence)
            .bind(&at)
            .execute(&mut *tx)
            .await?;
        }
        for e in endpoints {
            let updated = sqlx::query(
                "UPDATE network_endpoints SET host = ?5, service = ?6, product = ?7, version = ?8, banner = ?9, \
                 source = ?10, evidence = ?11, last_seen = ?12 \
                 WHERE company_id = ?1 AND ip = ?2 AND port = ?3 AND protocol = ?4",
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
            .bind(&at)
            .execute(&mut *tx)
            .await?;
            if updated.rows_affected() == 0 {
                let fresh = NetworkEndpoint {
                    first_seen: OffsetDateTimeText(seen_at),
                    last_seen: OffsetDateTimeText(seen_at),
                    ..e.clone()
                };
                insert_endpoint(&mut tx, company, &fresh).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    async fn record_software(
        &self,
        company: i64,
        applications: &[Application],
        components: &[SbomComponent],
        seen_at: OffsetDateTime,
    ) -> Result<()> {
        let mut tx = self.begin().await?;
        // first_seen of what was seen before, by identity.
        let mut app_seen: BTreeMap<(String, Option<String>, String), String> = BTreeMap::new();
        for r in sqlx::query("SELECT name, version, host, first_seen FROM applications WHERE company_id = ?1")
            .bind(company)
            .fetch_all(&mut *tx)
            .await?
        {
            app_seen.insert((r.try_get("name")?, r.try_get("version")?, r.try_get("host")?), r.try_get("first_seen")?);
        }
        let mut comp_seen: BTreeMap<(String, Option<String>), String> = BTreeMap::new();
        for r in sqlx::query("SELECT name, version, first_seen FROM sbom_components WHERE company_id = ?1")
            .bind(company)
            .fetch_all(&mut *tx)
            .await?
        {
            comp_seen.insert((r.try_get("name")?, r.try_get("version")?), r.try_get("first_seen")?);
        }
        let first = |known: Option<&String>| -> Result<OffsetDateTimeText> {
            match known {
                Some(t) => ts_text(t),
                None => Ok(OffsetDateTimeText(seen_at)),
            }
        };
        sqlx::query("DELETE FROM applications WHERE company_id = ?1").bind(company).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM sbom_components WHERE company_id = ?1").bind(company).execute(&mut *tx).await?;
        for a in applications {
            let key = (a.name.clone(), a.version.clone(), a.host.clone());
            let row = Application {
                first_seen: first(app_seen.get(&key))?,
                last_seen: OffsetDateTimeText(seen_at),
                ..a.clone()
            };
            insert_application(&mut tx, company, &row).await?;
        }
        for c in components {
            let key = (c.name.clone(), c.version.clone());
            let row = SbomComponent {
                first_seen: first(comp_seen.get(&key))?,
                last_seen: OffsetDateTimeText(seen_at),
                ..c.clone()
            };
            insert_component(&mut tx, company, &row).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn save_fingerprints(&self, source: &str, rules: &[(String, String)]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        for (name, rule) in rules {
            sqlx::query(
                "INSERT INTO fingerprints (name, source, rule, imported_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (name) DO UPDATE SET source = excluded.source, rule = excluded.rule, imported_at = excluded.imported_at",
            )
            .bind(name)
            .bind(source)
            .bind(rule)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(rules.len())
    }

    async fn fingerprints(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("SELECT name, rule FROM fingerprints ORDER BY name")
            .fetch_all(&mut *self.read.get().await?)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("name")?, r.try_get("rule")?))).collect()
    }

    async fn save_eol_products(&self, products: &[(String, String)]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let now = rfc3339(OffsetDateTime::now_utc());
        for (name, product) in products {
            sqlx::query(
                "INSERT INTO eol_products (name, product, imported_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET product = excluded.product, imported_at = excluded.imported_at",
            )
            .bind(name)
            .bind(product)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(products.len())
    }

    async fn eol_products(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("SELECT name, product FROM eol_products ORDER BY name")
            .fetch_all(&mut *self.read.get().await?)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("name")?, r.try_get("product")?))).collect()
    }

    async fn hosts(&self, company: i64) -> Result<Vec<DiscoveredHost>> {
        sqlx::query("SELECT * FROM hosts WHERE company_id = ?1 ORDER BY name")
            .bind(company)
            .fetch_all(&mut *self.read.get().await?)
            .await?
            .iter()
            .map(host_from_row)
            .collect()
    }

    async fn owns_host(&self, company: i64, host: &Domain) -> Result<bool> {
        let n: i64 = sqlx::query_scalar(
            "SELECT (SELECT count(*) FROM domains WHERE company_id = ?1 AND (name = ?2 OR ?2 LIKE '%.' || name)) \
             + (SELECT count(*) FROM hosts WHERE company_id = ?1 AND name = ?2) \
             + (SELECT count(*) FROM findings WHERE company_id = ?1 AND asset = ?2) \
             + (SELECT count(*) FROM applications WHERE company_id = ?1 AND host = ?2)",
        )
        .bind(company)
        .bind(host.as_str())
        .fetch_one(&mut *self.read.get().await?)
        .await?;
        Ok(n > 0)
    }

    async fn open_findings(&self, company: i64) -> Result<Vec<Finding>> {
        sqlx::query(
            "SELECT * FROM findings WHERE company_id = ?1 AND closed_at IS NULL ORDER BY risk_vector, asset, code, id",
        )
        .bind(company)
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(finding_from_row)
        .collect()
    }

    async fn record_rating(&self, company: i64, rating: &ScoreSnapshot) -> Result<bool> {
        let mut tx = self.begin().await?;
        let added = insert_score(&mut tx, company, rating).await?;
        tx.commit().await?;
        Ok(added)
    }

    async fn replace_rating(&self, company: i64, rating: &ScoreSnapshot) -> Result<()> {
        let mut tx = self.begin().await?;
        sqlx::query("DELETE FROM scores WHERE company_id = ?1 AND scanned_at = ?2")
            .bind(company)
            .bind(rfc3339(rating.scanned_at.0))
            .execute(&mut *tx)
            .await?;
        insert_score(&mut tx, company, rating).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn save_incident(
        &self,
        incident: &Incident,
        company: Option<i64>,
        domain: Option<&Domain>,
        linked_by: Option<&str>,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO incidents (incident_id, company_id, domain, date_detected, record, linked_by) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (incident_id) DO UPDATE SET company_id = excluded.company_id, \
             domain = excluded.domain, date_detected = excluded.date_detected, record = excluded.record, \
             linked_by = excluded.linked_by",
        )
        .bind(&incident.incident_id)
        .bind(company)
        .bind(domain.map(Domain::as_str))
        .bind(incident.date_detected.map(|d| model::timefmt::format_date(d.0)))
        .bind(to_json(incident)?)
        .bind(linked_by)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn latest_score(&self, company: i64) -> Result<Option<ScoreSnapshot>> {
        Ok(self.score_history(company, 1).await?.into_iter().next())
    }

    async fn score_history(&self, company: i64, limit: u32) -> Result<Vec<ScoreSnapshot>> {
        let rows = sqlx::query(
            "SELECT id, scanned_at, score, grade, methodology, notes FROM scores WHERE company_id = ?1 ORDER BY scanned_at DESC LIMIT CAST(?2 AS INTEGER)",
        )
        .bind(company)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.read.get().await?)
        .await?;
        self.load_scores(rows).await
    }

    async fn incidents_for_company(&self, company: i64) -> Result<Vec<Incident>> {
        sqlx::query_scalar::<_, String>(
            "SELECT record FROM incidents WHERE company_id = ?1 ORDER BY date_detected DESC, incident_id",
        )
        .bind(company)
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(|r| json(r))
        .collect()
    }

    async fn incidents_for_domain(&self, domain: &Domain) -> Result<Vec<Incident>> {
        sqlx::query_scalar::<_, String>(
            "SELECT record FROM incidents WHERE domain = ?1 OR company_id IN \
             (SELECT id FROM companies WHERE domain = ?1 UNION SELECT company_id FROM domains WHERE name = ?1) \
             ORDER BY date_detected DESC, incident_id",
        )
        .bind(domain.as_str())
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(|r| json(r))
        .collect()
    }

    async fn incident(&self, incident_id: &str) -> Result<Option<Incident>> {
        let rec: Option<String> =
            sqlx::query_scalar("SELECT record FROM incidents WHERE incident_id = ?1 COLLATE NOCASE")
                .bind(incident_id)
                .fetch_optional(&mut *self.read.get().await?)
                .await?;
        rec.as_deref().map(json).transpose()
    }

    async fn incident_company(&self, incident_id: &str) -> Result<Option<i64>> {
        let owner: Option<Option<i64>> =
            sqlx::query_scalar("SELECT company_id FROM incidents WHERE incident_id = ?1 COLLATE NOCASE")
                .bind(incident_id)
                .fetch_optional(&mut *self.read.get().await?)
                .await?;
        Ok(owner.flatten())
    }

    async fn save_prediction(&self, company: i64, kind: &str, period: u32, data: &serde_json::Value) -> Result<()> {
        sqlx::query(
            "INSERT INTO predictions (company_id, kind, period, computed_at, data) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (company_id, kind, period) DO UPDATE SET computed_at = excluded.computed_at, data = excluded.data",
        )
        .bind(company)
        .bind(kind)
        .bind(i64::from(period))
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .bind(to_json(data)?)
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn prediction(&self, company: i64, kind: &str, period: u32) -> Result<Option<serde_json::Value>> {
        let data: Option<String> =
            sqlx::query_scalar("SELECT data FROM predictions WHERE company_id = ?1 AND kind = ?2 AND period = ?3")
                .bind(company)
                .bind(kind)
                .bind(i64::from(period))
                .fetch_optional(&mut *self.read.get().await?)
                .await?;
        data.as_deref().map(json).transpose()
    }

    async fn upsert_cves(&self, cves: &[StoredCve]) -> Result<usize> {
        let mut tx = self.begin().await?;
        let written = write_cves(&mut tx, cves).await?;
        self.commit_cves(tx, written).await
    }

    async fn upsert_cve_batches(&self, batches: &mut Receiver<Vec<StoredCve>>, per_commit: usize) -> Result<usize> {
        let (mut committed, mut pending, mut in_tx) = (0, Vec::new(), 0);
        let mut tx = None;
        while let Some(batch) = batches.recv().await {
            let open = match &mut tx {
                Some(open) => open,
                None => tx.insert(self.begin().await?),
            };
            pending.extend(write_cves(open, &batch).await?);
            in_tx += 1;
            if in_tx >= per_commit.max(1)
                && let Some(open) = tx.take()
            {
                committed += self.commit_cves(open, std::mem::take(&mut pending)).await?;
                in_tx = 0;
            }
        }
        if let Some(open) = tx {
            committed += self.commit_cves(open, pending).await?;
        }
        Ok(committed)
    }

    async fn settle(&self) -> Result<()> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.write).await?;
        Ok(())
    }

    async fn cve(&self, id: &CveId) -> Result<Option<CveRecord>> {
        Ok(self.cves(std::slice::from_ref(id)).await?.into_iter().next())
    }

    async fn cves(&self, ids: &[CveId]) -> Result<Vec<CveRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<&str> = ids.iter().map(CveId::as_str).collect();
        let rows = sqlx::query(
            "SELECT c.id, c.record, CASE WHEN c.record = '' THEN s.served END AS served, k.entry AS kev, e.epss, \
             e.percentile FROM cves c LEFT JOIN cve_served s ON s.id = c.id \
             LEFT JOIN kev k ON k.cve_id = c.id LEFT JOIN epss e ON e.cve_id = c.id \
             WHERE c.id IN (SELECT value FROM json_each(?1))",
        )
        .bind(to_json(&wanted)?)
        .fetch_all(&mut *self.read.get().await?)
        .await?;
        let mut by_id: std::collections::HashMap<String, CveRecord> =
            std::collections::HashMap::with_capacity(rows.len());
        for row in rows {
            let mut rec = record(row.try_get("record")?, row.try_get("served")?)?;
            let kev: Option<String> = row.try_get("kev")?;
            if let Some(k) = kev {
                rec.kev = Some(json(&k)?);
            }
            if let Some(e) = row.try_get::<Option<f64>, _>("epss")? {
                rec.epss = Some(e);
                rec.percentile = row.try_get("percentile")?;
            }
            by_id.insert(row.try_get("id")?, rec);
        }
        Ok(ids.iter().filter_map(|id| by_id.remove(id.as_str())).collect())
    }

    async fn served_cves(&self, ids: &[CveId]) -> Result<Vec<ServedCve>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // One row for the whole answer (see `answer_rows`).
        let wanted: Vec<&str> = ids.iter().map(CveId::as_str).collect();
        let joined: Option<String> = sqlx::query_scalar(
            "SELECT group_concat(concat(s.id, char(31), k.entry, char(31), e.epss, char(31), e.percentile, char(31), \
             s.cwe, char(31), s.served), char(30)) \
             FROM json_each(?1) j JOIN cve_served s ON s.id = j.value \
             LEFT JOIN kev k ON k.cve_id = s.id LEFT JOIN epss e ON e.cve_id = s.id",
        )
        .bind(to_json(&wanted)?)
        .fetch_one(&mut *self.read.get().await?)
        .await?;
        let served = answer_rows(joined, |text, row| {
            let mut f = row.splitn(6, '\u{1f}');
            let id = cve_id_field(&mut f, row)?;
            let (kev, epss, percentile) = side_feeds(text, &mut f, row)?;
            let (cwe, json) = (shared(text, field(&mut f, row)?)?, shared(text, field(&mut f, row)?)?);
            Ok(ServedCve { id, cwe, json, kev, epss, percentile })
        })?;
        let mut by_id: std::collections::HashMap<CveId, ServedCve> =
            served.into_iter().map(|s| (s.id.clone(), s)).collect();
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    async fn cve_candidates(&self, q: &CandidateQuery<'_>) -> Result<Vec<CveCandidate>> {
        // Two seeks: the rows naming this exact version, and the rows without a version
        // whose range holds it ('' stands for an absent bound). `IN` drops the repeats.
        const EXACT_OR_RANGE: &str = "SELECT cve_id FROM cve_cpe_matches WHERE vendor = ?1 AND product = ?2 \
             AND version_key = ?3 AND (?7 IS NULL OR part = ?7) \
             UNION ALL SELECT cve_id FROM cve_cpe_matches WHERE vendor = ?1 AND product = ?2 \
             AND version_key = '' AND (?7 IS NULL OR part = ?7) \
             AND (start_incl = '' OR start_incl <= ?3) AND (start_excl = '' OR start_excl < ?3) \
             AND (end_incl = '' OR end_incl >= ?3) AND (end_excl = '' OR end_excl > ?3)";
        let sql = if q.version_key.is_some() {
            // The candidates are ordered from the index `cves_candidate` alone (migration
            // 11); the configurations are read for the batch kept, and only where needed,
            // by the rowid that the index carries.
            format!(
                "SELECT x.id, x.last_modified, f.configurations FROM \
                 (SELECT c.rowid AS rid, c.id, c.last_modified, c.needs_eval FROM cves c INDEXED BY cves_candidate \
                 WHERE c.id IN ({EXACT_OR_RANGE}) AND (?4 IS NULL OR (c.last_modified, c.id) < (?4, ?5)) \
                 ORDER BY c.last_modified DESC, c.id DESC LIMIT CAST(?6 AS INTEGER)) x \
                 LEFT JOIN cves f ON f.rowid = x.rid AND (x.needs_eval OR ?8)"
            )
        } else {
            // Any version: walk the product's CVEs newest first and stop at the limit; the
            // import decided which apply, so only a query with more attributes evaluates.
            "SELECT p.cve_id AS id, p.last_modified, \
             CASE WHEN ?8 THEN (SELECT configurations FROM cves WHERE id = p.cve_id) END AS configurations \
             FROM cve_product_index p \
             WHERE p.vendor = ?1 AND p.product = ?2 AND ?3 IS NULL AND (?7 IS NULL OR instr(p.parts, ?7) > 0) \
             AND (p.applies OR ?8) \
             AND (?4 IS NULL OR (p.last_modified, p.cve_id) < (?4, ?5)) \
             ORDER BY p.last_modified DESC, p.cve_id DESC LIMIT CAST(?6 AS INTEGER)"
                .to_owned()
        };
        // One row for the whole batch (see `answer_rows`), its records in no particular
        // order: they are sorted here. Configurations carry a flag byte so that an absent
        // one ('0') differs from an empty one.
        let candidate =
            "c.id, char(31), c.last_modified, char(31), iif(c.configurations IS NULL, '0', '1'), c.configurations";
        let sql = if q.served {
            // The side feeds come with the candidates; the served forms from memory, or
            // from a second query for those not kept (`ServedCache`).
            format!(
                "SELECT group_concat(concat({candidate}, char(31), k.entry, char(31), e.epss, char(31), e.percentile), \
                 char(30)) FROM ({sql}) c LEFT JOIN kev k ON k.cve_id = c.id LEFT JOIN epss e ON e.cve_id = c.id"
            )
        } else {
            format!("SELECT group_concat(concat({candidate}), char(30)) FROM ({sql}) c")
        };
        let joined: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(q.vendor)
            .bind(q.product)
            .bind(q.version_key)
            .bind(q.after.map(|a| a.0.as_str()))
            .bind(q.after.map(|a| a.1.as_str()))
            .bind(i64::from(q.batch))
            .bind(q.part)
            .bind(q.all_configurations)
            .fetch_one(&mut *self.read.get().await?)
            .await?;
        type SideFeeds = (Option<SharedStr>, Option<f64>, Option<f64>);
        let mut rows: Vec<(CveCandidate, Option<SideFeeds>)> = answer_rows(joined, |text, row| {
            let mut f = row.splitn(if q.served { 6 } else { 3 }, '\u{1f}');
            let id = cve_id_field(&mut f, row)?;
            let last_modified = shared(text, field(&mut f, row)?)?;
            let configurations = match field(&mut f, row)?.strip_prefix('1') {
                Some(c) => Some(shared(text, c)?),
                None => None,
            };
            let side = if q.served { Some(side_feeds(text, &mut f, row)?) } else { None };
            Ok((CveCandidate { id, last_modified, configurations, served: None }, side))
        })?;
        rows.sort_unstable_by(|(a, _), (b, _)| {
            (b.last_modified.as_str(), b.id.as_str()).cmp(&(a.last_modified.as_str(), a.id.as_str()))
        });
        if !q.served {
            return Ok(rows.into_iter().map(|(c, _)| c).collect());
        }
        let mut forms = self.served.get_many(rows.iter().map(|(c, _)| (&c.id, c.last_modified.as_str())));
        let missing: Vec<CveId> =
            rows.iter().zip(&forms).filter(|(_, f)| f.is_none()).map(|((c, _), _)| c.id.clone()).collect();
        if !missing.is_empty() {
            // Those not kept, read as `served_cves` reads them (its side feeds are not
            // needed: the candidates brought theirs).
            let mut read: std::collections::HashMap<CveId, ServedCve> =
                self.served_cves(&missing).await?.into_iter().map(|s| (s.id.clone(), s)).collect();
            for ((c, _), form) in rows.iter().zip(forms.iter_mut()).filter(|(_, f)| f.is_none()) {
                if let Some(s) = read.remove(&c.id) {
                    self.served.insert(&c.id, &c.last_modified, &s.cwe, &s.json);
                    *form = Some((s.cwe, s.json));
                }
            }
        }
        Ok(rows
            .into_iter()
            .zip(forms)
            .map(|((mut c, side), form)| {
                if let (Some((cwe, json)), Some((kev, epss, percentile))) = (form, side) {
                    c.served = Some(ServedCve { id: c.id.clone(), cwe, json, kev, epss, percentile });
                }
                c
            })
            .collect())
    }

    async fn last_cves(&self, limit: u32) -> Result<Vec<CveRecord>> {
        sqlx::query_as::<_, (String, Option<String>)>(
            "SELECT c.record, CASE WHEN c.record = '' THEN s.served END FROM cves c \
             LEFT JOIN cve_served s ON s.id = c.id ORDER BY c.last_modified DESC, c.id DESC LIMIT CAST(?1 AS INTEGER)",
        )
        .bind(i64::from(limit))
        .fetch_all(&mut *self.read.get().await?)
        .await?
        .iter()
        .map(|(r, served)| record(r, served.as_deref()))
        .collect()
    }

    async fn vendors(&self) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT DISTINCT vendor FROM cpe_products ORDER BY vendor")
            .fetch_all(&mut *self.read.get().await?)
            .await?)
    }

    async fn products(&self, vendor: &str) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar("SELECT product FROM cpe_products WHERE vendor = ?1 ORDER BY product")
            .bind(vendor)
            .fetch_all(&mut *self.read.get().await?)
            .await?)
    }

    async fn save_kev(&self, entries: &[KevRow]) -> Result<usize> {
        let mut tx = self.begin().await?;
        sqlx::query("DELETE FROM kev").execute(&mut *tx).await?;
        for e in entries {
            sqlx::query("INSERT INTO kev (cve_id, date_added, entry) VALUES (?1, ?2, ?3) ON CONFLICT (cve_id) DO UPDATE SET date_added = excluded.date_added, entry = excluded.entry")
                .bind(e.cve_id.as_str())
                .bind(&e.date_added)
                .bind(to_json(&e.entry)?)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(entries.len())
    }

    async fn save_epss(&self, scores: &[EpssRow], score_date: &str) -> Result<usize> {
        let mut tx = self.begin().await?;
        for e in scores {
            sqlx::query(
                "INSERT INTO epss (cve_id, epss, percentile, score_date) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (cve_id) DO UPDATE SET epss = excluded.epss, percentile = excluded.percentile, score_date = excluded.score_date",
            )
            .bind(e.cve_id.as_str())
            .bind(e.epss)
            .bind(e.percentile)
            .bind(score_date)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(scores.len())
    }

    async fn save_cwe(&self, weaknesses: &[CweRow]) -> Result<usize> {
        let mut tx = self.begin().await?;
        for w in weaknesses {
            sqlx::query("INSERT INTO cwe (id, name, capec_ids) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET name = excluded.name, capec_ids = excluded.capec_ids")
                .bind(i64::from(w.id))
                .bind(&w.name)
                .bind(to_json(&w.capec_ids)?)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(weaknesses.len())
    }

    async fn save_capec(&self, patterns: &[CapecRow]) -> Result<usize> {
        let mut tx = self.begin().await?;
        for p in patterns {
            sqlx::query("INSERT INTO capec (id, record, related_weaknesses) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO UPDATE SET record = excluded.record, related_weaknesses = excluded.related_weaknesses")
                .bind(i64::from(p.id))
                .bind(to_json(&p.record)?)
                .bind(to_json(&p.related_weaknesses)?)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(patterns.len())
    }

    async fn capec_for_cwes(&self, cwes: &[&str]) -> Result<BTreeMap<String, Vec<serde_json::Value>>> {
        let numbers: Vec<i64> =
            cwes.iter().filter_map(|c| c.strip_prefix("CWE-").and_then(|n| n.parse::<i64>().ok())).collect();
        let mut out: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
        if numbers.is_empty() {
            return Ok(out);
        }
        let wanted = to_json(&numbers)?;
        // Patterns each weakness names.
        for r in sqlx::query(
            "SELECT w.id AS cwe, p.record FROM cwe w, json_each(w.capec_ids) j JOIN capec p ON p.id = j.value \
             WHERE w.id IN (SELECT value FROM json_each(?1)) ORDER BY w.id, p.id",
        )
        .bind(&wanted)
        .fetch_all(&mut *self.read.get().await?)
        .await?
        {
            out.entry(format!("CWE-{}", r.try_get::<i64, _>("cwe")?)).or_default().push(json(r.try_get("record")?)?);
        }
        // Weaknesses that name none: the patterns that name the weakness.
        let rest: Vec<String> = numbers.iter().map(|n| format!("CWE-{n}")).filter(|c| !out.contains_key(c)).collect();
        if !rest.is_empty() {
            for r in sqlx::query(
                "SELECT j.value AS cwe, p.record FROM capec p, json_each(p.related_weaknesses) j \
                 WHERE j.value IN (SELECT value FROM json_each(?1)) ORDER BY p.id",
            )
            .bind(to_json(&rest)?)
            .fetch_all(&mut *self.read.get().await?)
            .await?
            {
                out.entry(r.try_get("cwe")?).or_default().push(json(r.try_get("record")?)?);
            }
        }
        Ok(out)
    }

    async fn feed_state(&self, feed: &str) -> Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT value FROM feed_state WHERE feed = ?1")
            .bind(feed)
            .fetch_optional(&mut *self.read.get().await?)
            .await?)
    }

    async fn set_feed_state(&self, feed: &str, value: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO feed_state (feed, value, updated_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (feed) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(feed)
        .bind(value)
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn create_key(&self, key: &NewApiKey) -> Result<ApiKey> {
        let scopes: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
        let row = sqlx::query(
            "INSERT INTO api_keys (name, prefix, hash, scopes, company, per_minute, monthly, active, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8) RETURNING *",
        )
        .bind(&key.name)
        .bind(&key.prefix)
        .bind(&key.hash)
        .bind(scopes.join(","))
        .bind(key.company.as_ref().map(SocialId::as_str))
        .bind(i64::from(key.per_minute))
        .bind(i64::try_from(key.monthly).unwrap_or(i64::MAX))
        .bind(rfc3339(OffsetDateTime::now_utc()))
        .fetch_one(&self.write)
        .await?;
        key_from_row(&row)
    }

    async fn key_by_hash(&self, hash: &str) -> Result<Option<ApiKey>> {
        let row = sqlx::query("SELECT * FROM api_keys WHERE hash = ?1")
            .bind(hash)
            .fetch_optional(&mut *self.read.get().await?)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    async fn keys(&self) -> Result<Vec<ApiKey>> {
        sqlx::query("SELECT * FROM api_keys ORDER BY id")
            .fetch_all(&mut *self.read.get().await?)
            .await?
            .iter()
            .map(key_from_row)
            .collect()
    }

    async fn set_key_active(&self, id_or_prefix: &str, active: bool) -> Result<bool> {
        let matches: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM api_keys WHERE CAST(id AS TEXT) = ?1 OR prefix = ?1")
                .bind(id_or_prefix)
                .fetch_all(&self.write)
                .await?;
        match matches.as_slice() {
            [] => Ok(false),
            [id] => {
                sqlx::query("UPDATE api_keys SET active = ?2 WHERE id = ?1")
                    .bind(id)
                    .bind(active)
                    .execute(&self.write)
                    .await?;
                Ok(true)
            }
            _ => Err(StoreError::Invalid(format!("{id_or_prefix:?} matches several keys: use the id"))),
        }
    }

    async fn usage(&self, key_id: i64, month: &str) -> Result<u64> {
        let n: Option<i64> = sqlx::query_scalar("SELECT requests FROM usage_counters WHERE key_id = ?1 AND month = ?2")
            .bind(key_id)
            .bind(month)
            .fetch_optional(&mut *self.read.get().await?)
            .await?;
        Ok(n.map_or(0, count))
    }

    async fn add_usage(&self, key_id: i64, month: &str, requests: u64) -> Result<()> {
        sqlx::query(
            "INSERT INTO usage_counters (key_id, month, requests) VALUES (?1, ?2, ?3) \
             ON CONFLICT (key_id, month) DO UPDATE SET requests = requests + excluded.requests",
        )
        .bind(key_id)
        .bind(month)
        .bind(i64::try_from(requests).unwrap_or(i64::MAX))
        .execute(&self.write)
        .await?;
        Ok(())
    }

    async fn enqueue(&self, kind: &str, payload: &serde_json::Value, dedup_key: Option<&str>) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        let done = sqlx::query(
            "INSERT INTO jobs (kind, payload, dedup_key, status, run_after, created_at, updated_at) \
             VALUES (?1, ?2, ?3, 'queued', ?4, ?4, ?4) ON CONFLICT DO NOTHING",
        )
        .bind(kind)
        .bind(to_json(payload)?)
        .bind(dedup_key)
        .bind(&now)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn lease_job(&self, worker: &str, lease: Duration, max_attempts: i64) -> Result<Option<Job>> {
        let now_t = OffsetDateTime::now_utc();
        let now = rfc3339_micros(now_t);
        let until = rfc3339_micros(now_t + lease);
        let mut tx = self.begin().await?;
        // Jobs whose lease lapsed on their last attempt: the worker died or hung running
        // them each time. They are not handed to another worker to crash.
        sqlx::query(
            "UPDATE jobs SET status = 'dead', lease_until = NULL, lease_token = NULL, updated_at = ?1, \
             last_error = 'the lease expired on attempt ' || attempts || ' of ' || ?2 || \
             ' (the worker died or hung)' || COALESCE('; before: ' || last_error, '') \
             WHERE status = 'running' AND lease_until < ?1 AND attempts >= ?2",
        )
        .bind(&now)
        .bind(max_attempts)
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query(
            "UPDATE jobs SET status = 'running', lease_until = ?2, worker = ?3, attempts = attempts + 1, updated_at = ?1, \
             lease_token = lower(hex(randomblob(16))) \
             WHERE id = (SELECT id FROM jobs WHERE (status = 'queued' AND run_after <= ?1) \
             OR (status = 'running' AND lease_until < ?1) ORDER BY run_after, id LIMIT 1) RETURNING *",
        )
        .bind(&now)
        .bind(&until)
        .bind(worker)
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        row.as_ref().map(job_from_row).transpose()
    }

    async fn renew_lease(&self, job_id: i64, token: &str, lease: Duration) -> Result<bool> {
        let now = OffsetDateTime::now_utc();
        let done = sqlx::query(
            "UPDATE jobs SET lease_until = ?3, updated_at = ?4 WHERE id = ?1 AND lease_token = ?2 AND status = 'running'",
        )
        .bind(job_id)
        .bind(token)
        .bind(rfc3339_micros(now + lease))
        .bind(rfc3339_micros(now))
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn complete_job(&self, job_id: i64, token: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE jobs SET status = 'done', lease_until = NULL, lease_token = NULL, updated_at = ?3 \
             WHERE id = ?1 AND lease_token = ?2 AND status = 'running'",
        )
        .bind(job_id)
        .bind(token)
        .bind(rfc3339_micros(OffsetDateTime::now_utc()))
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn fail_job(
        &self,
        job_id: i64,
        token: &str,
        error: &str,
        retry_after: Duration,
        give_up: bool,
    ) -> Result<bool> {
        let now = OffsetDateTime::now_utc();
        let done = sqlx::query(
            "UPDATE jobs SET status = CASE WHEN ?4 THEN 'dead' ELSE 'queued' END, last_error = ?2, \
             run_after = ?3, lease_until = NULL, lease_token = NULL, updated_at = ?5 \
             WHERE id = ?1 AND lease_token = ?6 AND status = 'running'",
        )
        .bind(job_id)
        .bind(error)
        .bind(rfc3339_micros(now + retry_after))
        .bind(give_up)
        .bind(rfc3339_micros(now))
        .bind(token)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn release_job(&self, job_id: i64, token: &str) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        let done = sqlx::query(
            "UPDATE jobs SET status = 'queued', run_after = ?3, lease_until = NULL, lease_token = NULL, \
             attempts = MAX(attempts - 1, 0), updated_at = ?3 WHERE id = ?1 AND lease_token = ?2 AND status = 'running'",
        )
        .bind(job_id)
        .bind(token)
        .bind(&now)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn jobs(&self, status: Option<model::JobStatus>, limit: u32) -> Result<Vec<Job>> {
        sqlx::query("SELECT * FROM jobs WHERE ?1 IS NULL OR status = ?1 ORDER BY id DESC LIMIT CAST(?2 AS INTEGER)")
            .bind(status.map(model::JobStatus::as_str))
            .bind(i64::from(limit))
            .fetch_all(&mut *self.read.get().await?)
            .await?
            .iter()
            .map(job_from_row)
            .collect()
    }

    async fn retry_job(&self, job_id: i64) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        // A dead job whose dedup key a newer job holds stays dead (the unique index).
        let done = sqlx::query(
            "UPDATE OR IGNORE jobs SET status = 'queued', attempts = 0, run_after = ?2, updated_at = ?2 \
             WHERE id = ?1 AND status IN ('dead', 'cancelled')",
        )
        .bind(job_id)
        .bind(&now)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn cancel_job(&self, job_id: i64) -> Result<bool> {
        let now = rfc3339_micros(OffsetDateTime::now_utc());
        let done = sqlx::query(
            "UPDATE jobs SET status = 'cancelled', lease_until = NULL, lease_token = NULL, updated_at = ?2 \
             WHERE id = ?1 AND status IN ('queued', 'running')",
        )
        .bind(job_id)
        .bind(&now)
        .execute(&self.write)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn pending_jobs(&self) -> Result<Vec<Job>> {
        sqlx::query("SELECT * FROM jobs WHERE status IN ('queued', 'running') ORDER BY id")
            .fetch_all(&mut *self.read.get().await?)
            .await?
            .iter()
            .map(job_from_row)
            .collect()
    }
}
