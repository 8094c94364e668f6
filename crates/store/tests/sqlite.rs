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

/// A new database file gets the store's page size (a served form and more to a page).
#[tokio::test]
async fn a_new_database_has_8_kib_pages() {
    use sqlx::Connection as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rampart.db");
    drop(SqliteStore::open(&format!("sqlite://{}", path.display())).await.unwrap());
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    let size: i64 = sqlx::query_scalar("PRAGMA page_size").fetch_one(&mut conn).await.unwrap();
    assert_eq!(size, 8192);
}
