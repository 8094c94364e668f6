//! `rampart migrate`: everything in a SQLite database copied into an empty PostgreSQL
//! one — companies, assets, findings with their first_seen, rating history, keys and
//! usage, CVEs and their indexes, incidents, the queue — row for row, ids kept.

use futures_util::TryStreamExt as _;
use sqlx::Row as _;
use sqlx::sqlite::SqliteRow;

use crate::{PgStore, Result, SqliteStore, StoreError};

/// The tables, parents before the rows that point at them.
const TABLES: &[&str] = &[
    "orgs",
    "guidelines",
    "companies",
    "domains",
    "subsidiaries",
    "subsidiary_requests",
    "hosts",
    "applications",
    "network_endpoints",
    "sbom_components",
    "sbom_hosts",
    "sbom_cves",
    "findings",
    "disputes",
    "footprint",
    "asset_requests",
    "scores",
    "component_scores",
    "incidents",
    "cves",
    "cve_served",
    "cve_product_index",
    "cve_cpe_matches",
    "cpe_products",
    "kev",
    "epss",
    "cwe",
    "capec",
    "feed_state",
    "fingerprints",
    "eol_products",
    "advisories",
    "api_keys",
    "usage_counters",
    "jobs",
    "rescan_schedule",
    "detected_software",
    "detected_products",
    "events",
    "webhooks",
    "webhook_deliveries",
    "key_creations",
    "portfolios",
    "portfolio_companies",
    "alert_rules",
    "alerts",
];

/// Rows written per statement (PostgreSQL takes at most 65 535 parameters).
const ROWS_PER_INSERT: usize = 500;

/// How many rows each table received.
pub type Copied = Vec<(&'static str, u64)>;

/// Copies every table of `from` into `to`, in one transaction: all of it or nothing.
/// `to` must be empty.
pub async fn sqlite_to_postgres(from: &SqliteStore, to: &PgStore) -> Result<Copied> {
    let mut tx = to.pool().begin().await?;
    for table in TABLES {
        let any: bool = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT EXISTS (SELECT 1 FROM {table})")))
            .fetch_one(&mut *tx)
            .await?;
        if any {
            return Err(StoreError::Invalid(format!("the destination is not empty: {table} has rows")));
        }
    }
    let mut copied = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let columns: Vec<(String, String)> = sqlx::query_as(
            "SELECT column_name::text, data_type::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
        )
        .bind(*table)
        .fetch_all(&mut *tx)
        .await?;
        if columns.is_empty() {
            return Err(StoreError::Invalid(format!("the destination has no table {table}")));
        }
        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
        let list = names.join(", ");
        let select = format!("SELECT {list} FROM {table}");
        let mut rows = sqlx::query(sqlx::AssertSqlSafe(select)).fetch(&from.write);
        let mut batch: Vec<SqliteRow> = Vec::with_capacity(ROWS_PER_INSERT);
        let mut n = 0u64;
        loop {
            let row = rows.try_next().await?;
            let done = row.is_none();
            batch.extend(row);
            if batch.len() == ROWS_PER_INSERT || (done && !batch.is_empty()) {
                n += insert(&mut tx, table, &list, &columns, &batch).await?;
                batch.clear();
            }
            if done {
                break;
            }
        }
        // The next id a table hands out follows the largest copied.
        if names.contains(&"id") && columns.iter().any(|(n, t)| n == "id" && t == "bigint") {
            let identity: Option<String> =
                sqlx::query_scalar("SELECT pg_get_serial_sequence($1, 'id')").bind(*table).fetch_one(&mut *tx).await?;
            if identity.is_some() {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                     (SELECT COALESCE(max(id), 0) + 1 FROM {table}), false)"
                )))
                .execute(&mut *tx)
                .await?;
            }
        }
        copied.push((*table, n));
    }
    tx.commit().await?;
    Ok(copied)
}

/// Writes `rows` into `table`, each value decoded as the PostgreSQL column's type.
async fn insert(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    table: &str,
    list: &str,
    columns: &[(String, String)],
    rows: &[SqliteRow],
) -> Result<u64> {
    let mut q = sqlx::QueryBuilder::<sqlx::Postgres>::new(format!("INSERT INTO {table} ({list}) "));
    let mut failed: Option<StoreError> = None;
    q.push_values(rows, |mut b, row| {
        for (i, (name, kind)) in columns.iter().enumerate() {
            let value = match kind.as_str() {
                "bigint" => row.try_get::<Option<i64>, _>(i).map(Value::Int),
                "boolean" => row.try_get::<Option<i64>, _>(i).map(|v| Value::Bool(v.map(|v| v != 0))),
                "double precision" => row.try_get::<Option<f64>, _>(i).map(Value::Float),
                _ => row.try_get::<Option<String>, _>(i).map(Value::Text),
            };
            match value {
                Ok(Value::Int(v)) => b.push_bind(v),
                Ok(Value::Bool(v)) => b.push_bind(v),
                Ok(Value::Float(v)) => b.push_bind(v),
                Ok(Value::Text(v)) => b.push_bind(v),
                Err(e) => {
                    failed.get_or_insert(StoreError::Corrupt(format!("{table}.{name}: {e}")));
                    b.push_bind(None::<String>)
                }
            };
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(q.build().execute(&mut **tx).await?.rows_affected())
}

enum Value {
    Int(Option<i64>),
    Bool(Option<bool>),
    Float(Option<f64>),
    Text(Option<String>),
}
