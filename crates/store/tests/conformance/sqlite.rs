//! The SQLite backend: fresh stores for the suite (a file, and a private in-memory
//! database), and what only a file database has to show.

use std::sync::Arc;

use store::SqliteStore;
use store::prelude::*;

use crate::Fresh;

/// A store on a new file in a temporary directory.
pub async fn fresh_file() -> Option<Fresh> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
    Some(Fresh { store: Arc::new(SqliteStore::open(&url).await.unwrap()), _keep: Box::new(dir) })
}

pub async fn fresh_memory() -> Option<Fresh> {
    Some(Fresh { store: Arc::new(SqliteStore::open("sqlite::memory:").await.unwrap()), _keep: Box::new(()) })
}

/// Reopening applies no migration twice and keeps the data.
#[tokio::test]
async fn a_reopened_file_keeps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
    crate::suite::keys_and_usage(&SqliteStore::open(&url).await.unwrap()).await;
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
    crate::suite::served_forms_follow_their_record(&writer, &reader).await;
}

/// A job no worker can read (written by another version, or damaged) is dead with the
/// reason when a worker comes to it, and the queue goes on to the next.
#[tokio::test]
async fn an_unreadable_job_is_dead_not_handed_out() {
    use sqlx::Connection as _;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO jobs (kind, payload, status, run_after, created_at, updated_at) \
         VALUES ('teleport', '{}', 'queued', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z')",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let good = model::JobSpec::Scan { social_id: model::SocialId::parse("acme").unwrap() };
    store.enqueue(&good).await.unwrap();
    let leased = store.lease_job("w", std::time::Duration::from_secs(60), 3).await.unwrap().unwrap();
    assert_eq!(leased.spec, good);
    let mut raw =
        sqlx::query_as::<_, (String, Option<String>)>("SELECT status, last_error FROM jobs WHERE kind = 'teleport'")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(raw.0, "dead");
    let why = raw.1.take().unwrap_or_default();
    assert!(why.starts_with("unreadable job: teleport job:"), "{why}");
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

/// Small writes from concurrent callers share commits (the group commit of
/// `sqlite::group`): 200 usage increments at once take far fewer commits than writes,
/// and all of them land.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_small_writes_share_commits() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let key = store
        .create_key(&model::NewApiKey {
            name: "busy".into(),
            prefix: "rk_busy00".into(),
            hash: "ef".repeat(32),
            scopes: vec![model::Scope::General],
            company: None,
            org: None,
            per_minute: 0,
            monthly: 0,
        })
        .await
        .unwrap();
    let before = store.group_commits();
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.add_usage(key.id, "2026-11", 1).await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let (groups, units) = store.group_commits();
    let (groups, units) = (groups - before.0, units - before.1);
    assert_eq!(units, 200);
    assert!(groups * 4 <= units, "200 concurrent writes took {groups} commits");
    assert_eq!(store.usage(key.id, "2026-11").await.unwrap(), 200);
}

/// Callers that go away while their writes wait (a client disconnecting) take nothing
/// from the others: every caller that stays is answered and its write lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_that_go_away_do_not_lose_the_others_writes() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("rampart.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let mut keys = Vec::new();
    for n in 0..2 {
        let key = model::NewApiKey {
            name: format!("k{n}"),
            prefix: format!("rk_gone{n}0"),
            hash: format!("{n}").repeat(64),
            scopes: vec![model::Scope::General],
            company: None,
            org: None,
            per_minute: 0,
            monthly: 0,
        };
        keys.push(store.create_key(&key).await.unwrap().id);
    }
    let (stays, goes) = (keys[0], keys[1]);
    for round in 0..20 {
        let month = format!("2026-{:02}", round % 12 + 1);
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let (store, month) = (store.clone(), month.clone());
                // Odd callers count into their own key, and are dropped at once.
                let key = if i % 2 == 0 { stays } else { goes };
                tokio::spawn(async move { store.add_usage(key, &month, 1).await })
            })
            .collect();
        let mut kept = 0;
        for (i, t) in tasks.into_iter().enumerate() {
            if i % 2 == 1 {
                t.abort();
            } else {
                t.await.unwrap().unwrap();
                kept += 1;
            }
        }
        assert_eq!(kept, 20, "round {round}");
    }
    // Every stayed-for write landed (20 per round, months reused after 12 rounds).
    let mut total = 0;
    for m in 1..=12 {
        total += store.usage(stays, &format!("2026-{m:02}")).await.unwrap();
    }
    assert_eq!(total, 400);
    // The writes of callers that went away either landed whole or not at all, and the
    // store still takes writes.
    let before = store.usage(goes, "2026-01").await.unwrap();
    store.add_usage(goes, "2026-01", 1).await.unwrap();
    assert_eq!(store.usage(goes, "2026-01").await.unwrap(), before + 1);
}
