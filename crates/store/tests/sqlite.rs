//! The conformance suite against the embedded SQLite backend, on a real file.

use std::sync::Arc;

use store::{SqliteStore, Store, conformance};

#[tokio::test]
async fn sqlite_file_passes_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    conformance::run_all(Arc::new(store)).await;
    // Reopening applies no migration twice and keeps the data.
    let again = SqliteStore::open(&url).await.unwrap();
    assert_eq!(again.keys().await.unwrap().len(), 1);
}

#[tokio::test]
async fn sqlite_memory_passes_conformance() {
    conformance::run_all(Arc::new(SqliteStore::open("sqlite::memory:").await.unwrap())).await;
}
