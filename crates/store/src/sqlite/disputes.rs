//! [`crate::Disputes`] on SQLite (the statements shared with PostgreSQL).

use super::*;

impl SqliteStore {
    /// A read connection for the shared statements.
    async fn reader(&self) -> Result<readers::ReadConn<'_>> {
        self.read.get().await
    }
}

crate::disputes::disputes_impl!(SqliteStore, SqliteRow, Sqlite);
