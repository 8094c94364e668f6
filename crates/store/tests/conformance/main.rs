//! The conformance suite: every area's checks, each on a fresh, empty store of every
//! backend, as a test of its own (`suite.rs` holds the checks, the backend modules how
//! a fresh store is made and what only that backend has to show).

mod postgres;
mod sqlite;
mod suite;

use std::sync::Arc;

use store::Store;

/// A fresh store and what keeps it alive (a temporary directory, a schema).
pub struct Fresh {
    pub store: Arc<dyn Store>,
    pub _keep: Box<dyn std::any::Any + Send>,
}

/// One test per area of the suite, each on a fresh store `$open` makes (`None`: the
/// backend cannot be reached here, and the test says so and passes; in CI it fails).
macro_rules! conformance {
    ($backend:ident, $open:path) => {
        mod $backend {
            conformance!(@areas $open; companies subsidiaries_and_search normalised_names subsidiary_requests
                cves cve_batches keys_and_usage jobs job_order scans discovery software data_versions schedule feed_changes events concurrent_writes disputes rated_assets portfolios guidelines rating_changes alerts);

            #[tokio::test]
            async fn served_forms_follow_their_record() {
                let Some(fresh) = $open().await else { return };
                crate::suite::served_forms_follow_their_record(&*fresh.store, &*fresh.store).await;
            }
        }
    };
    (@areas $open:path; $($area:ident)+) => {
        $(
            #[tokio::test]
            async fn $area() {
                let Some(fresh) = $open().await else { return };
                crate::suite::$area(&*fresh.store).await;
            }
        )+
    };
}

conformance!(sqlite_file, crate::sqlite::fresh_file);
conformance!(sqlite_memory, crate::sqlite::fresh_memory);
conformance!(on_postgres, crate::postgres::fresh);
