//! [`crate::Disputes`] on PostgreSQL (the statements shared with SQLite).

use super::*;

impl PgStore {
    /// A connection for the shared statements.
    async fn reader(&self) -> Result<sqlx::pool::PoolConnection<Postgres>> {
        Ok(self.pool.acquire().await?)
    }
}

crate::disputes::disputes_impl!(PgStore, PgRow, Postgres);
