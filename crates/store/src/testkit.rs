//! What tests of other crates ask of a store that the product never does (the
//! `testkit` feature, turned on by their dev-dependencies only).

use model::Job;

use crate::{Queue, Result};

/// Jobs waiting or running, oldest first.
pub async fn pending_jobs(queue: &(impl Queue + ?Sized)) -> Result<Vec<Job>> {
    let mut jobs: Vec<Job> = queue
        .jobs(None, u32::MAX)
        .await?
        .into_iter()
        .filter(|j| matches!(j.status, model::JobStatus::Queued | model::JobStatus::Running))
        .collect();
    jobs.sort_by_key(|j| j.id);
    Ok(jobs)
}

/// The PostgreSQL database tests use (`RAMPART_TEST_POSTGRES`, else the one every
/// development and CI machine here runs: trust auth, database `test`).
pub fn postgres_url() -> String {
    std::env::var("RAMPART_TEST_POSTGRES").unwrap_or_else(|_| "postgres://root@127.0.0.1:5432/test".to_owned())
}

/// A schema of its own in the test database: dropped (with everything in it) when this
/// is dropped, so tests run in parallel and leave nothing behind.
#[derive(Debug)]
pub struct PgSchema {
    pub name: String,
    pub url: String,
}

impl PgSchema {
    /// A new, empty schema; `None` (with the reason printed) when the test database
    /// cannot be reached and `CI` is not set. In CI an unreachable database fails the
    /// test.
    pub async fn create() -> Option<PgSchema> {
        use sqlx::Connection as _;
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let url = postgres_url();
        let mut conn = match sqlx::PgConnection::connect(&url).await {
            Ok(c) => c,
            Err(e) if std::env::var_os("CI").is_none() => {
                eprintln!("skipped: PostgreSQL at {url} cannot be reached ({e}); CI fails here");
                return None;
            }
            Err(e) => panic!("PostgreSQL at {url} cannot be reached: {e}"),
        };
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let name = format!("t{}_{}_{n}_{nanos}", std::process::id(), epoch_secs());
        // The database answered: a schema it cannot create is a failure, not a skip.
        if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {name}"))).execute(&mut conn).await {
            panic!("creating the test schema {name}: {e}");
        }
        Some(PgSchema { name, url })
    }

    /// Connection options whose `search_path` is this schema (and whose
    /// `application_name` is its name, so that the drop can end their sessions).
    pub fn options(&self) -> sqlx::postgres::PgConnectOptions {
        let base: sqlx::postgres::PgConnectOptions = self.url.parse().expect("test database URL");
        base.options([("search_path", self.name.as_str())]).application_name(&self.name)
    }

    /// The database URL with this schema as its `search_path` (for `rampart --db`).
    pub fn url(&self) -> String {
        let sep = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-c%20search_path%3D{}&application_name={}", self.url, self.name, self.name)
    }

    /// A store on this schema.
    pub async fn store(&self) -> crate::PgStore {
        crate::PgStore::connect(self.options(), &crate::Options::default()).await.expect("a store on the test schema")
    }
}

/// Seconds since the epoch, so that schemas of different runs never collide.
fn epoch_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        // Drop runs inside a test's runtime, which this thread blocks while it waits: a
        // task of the test (a server's usage flush) may be in the middle of a transaction
        // on the schema that it cannot finish now. The sessions of the schema are ended
        // first, then it is dropped, from a thread with a runtime of its own.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            rt.block_on(async {
                use sqlx::Connection as _;
                let mut conn = sqlx::PgConnection::connect(&url).await.ok()?;
                sqlx::query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE application_name = $1 AND pid <> pg_backend_pid()",
                )
                .bind(&name)
                .execute(&mut conn)
                .await
                .ok()?;
                sqlx::query("SET lock_timeout = '10s'").execute(&mut conn).await.ok()?;
                let dropped = sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA IF EXISTS {name} CASCADE")))
                    .execute(&mut conn)
                    .await;
                if let Err(e) = &dropped {
                    eprintln!("note: the test schema {name} was left behind: {e}");
                }
                dropped.ok()
            })
        });
        let _ = dropped.join();
    }
}
