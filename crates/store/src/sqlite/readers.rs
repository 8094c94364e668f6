//! The read connections of a file database, handed out lowest-free-first.
//!
//! sqlx's pool hands out its idle connections in turn, so a run of queries one after
//! another walks through every connection, each with its own worker thread and page
//! cache: measured on the 500-record CVE answer, 1.4 ms on one connection against
//! 2.2–2.7 ms spread over two to eight (docs/PERFORMANCE.md). Here a query takes the
//! first free connection in a fixed order, so sequential work stays on one hot
//! connection and only concurrent work spills onto the next ones.

use std::ops::{Deref, DerefMut};

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqlitePool};
use sqlx::{ConnectOptions as _, Sqlite};
use tokio::sync::{Mutex, MutexGuard, Semaphore, SemaphorePermit};

use crate::Result;

/// How long a query waits for a free read connection.
pub(super) const ACQUIRE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Where reads go.
#[derive(Debug)]
pub(super) enum Readers {
    /// The writer's own pool (a private in-memory database has one connection only).
    Shared(SqlitePool),
    /// Connections of their own, the first free one first.
    Ordered { conns: Vec<Mutex<SqliteConnection>>, free: Semaphore },
}

impl Readers {
    /// `count` connections (at least one) opened with `options`.
    pub(super) async fn open(options: &SqliteConnectOptions, count: usize) -> Result<Readers> {
        let mut conns = Vec::with_capacity(count.max(1));
        for _ in 0..count.max(1) {
            conns.push(Mutex::new(options.connect().await?));
        }
        let free = Semaphore::new(conns.len());
        Ok(Readers::Ordered { conns, free })
    }

    /// A connection for one query (or a few in a row); it goes back when dropped. A
    /// caller waits at most [`ACQUIRE_WAIT`] for one, then gets `StoreError::Busy`: a
    /// saturated server answers "try again" instead of queueing without end.
    pub(super) async fn get(&self) -> Result<ReadConn<'_>> {
        match self {
            Readers::Shared(pool) => Ok(ReadConn::Pooled(pool.acquire().await?)),
            Readers::Ordered { conns, free } => {
                let permit = match tokio::time::timeout(ACQUIRE_WAIT, free.acquire()).await {
                    Ok(p) => p.map_err(|_| crate::StoreError::Db(sqlx::Error::PoolClosed))?,
                    Err(_) => return Err(crate::StoreError::Busy),
                };
                // A permit guarantees a free connection; take the first.
                for conn in conns {
                    if let Ok(guard) = conn.try_lock() {
                        return Ok(ReadConn::Ordered { conn: guard, _permit: permit });
                    }
                }
                Err(crate::StoreError::Db(sqlx::Error::PoolClosed))
            }
        }
    }
}

/// A read connection lent out by [`Readers::get`].
pub(super) enum ReadConn<'a> {
    Pooled(PoolConnection<Sqlite>),
    Ordered { conn: MutexGuard<'a, SqliteConnection>, _permit: SemaphorePermit<'a> },
}

impl Deref for ReadConn<'_> {
    type Target = SqliteConnection;
    fn deref(&self) -> &SqliteConnection {
        match self {
            ReadConn::Pooled(c) => c,
            ReadConn::Ordered { conn, .. } => conn,
        }
    }
}

impl DerefMut for ReadConn<'_> {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self {
            ReadConn::Pooled(c) => c,
            ReadConn::Ordered { conn, .. } => conn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With every read connection lent out, a query waits [`ACQUIRE_WAIT`] and then gets
    /// `StoreError::Busy` (the API answers 503 with Retry-After), never waits forever.
    #[tokio::test]
    async fn a_saturated_pool_answers_busy_after_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let options = SqliteConnectOptions::new().filename(dir.path().join("r.db")).create_if_missing(true);
        let readers = Readers::open(&options, 1).await.unwrap();
        let held = readers.get().await.unwrap();
        let started = tokio::time::Instant::now();
        let second = readers.get().await;
        assert!(matches!(second, Err(crate::StoreError::Busy)), "{:?}", second.err());
        assert!(started.elapsed() >= ACQUIRE_WAIT);
        drop(held);
        assert!(readers.get().await.is_ok(), "free again once returned");
    }
}
