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

/// Another process's writes: the reader's served forms in memory do not outlive the
/// record they were read for.
#[tokio::test]
async fn served_forms_follow_a_record_written_by_another_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
    let (writer, reader) = (SqliteStore::open(&url).await.unwrap(), SqliteStore::open(&url).await.unwrap());
    conformance::served_forms_follow_their_record(&writer, &reader).await;
}

#[tokio::test]
async fn sqlite_memory_passes_conformance() {
    conformance::run_all(Arc::new(SqliteStore::open("sqlite::memory:").await.unwrap())).await;
}
