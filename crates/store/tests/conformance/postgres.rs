//! The PostgreSQL backend: each check on a schema of its own in the test database
//! (`store::testkit::PgSchema`), dropped afterwards.

use std::sync::Arc;

use store::testkit::PgSchema;

use crate::Fresh;

pub async fn fresh() -> Option<Fresh> {
    let schema = PgSchema::create().await?;
    let store = schema.store().await;
    Some(Fresh { store: Arc::new(store), _keep: Box::new(schema) })
}

/// An idle worker waiting for jobs wakes when one is queued (NOTIFY), not at the end
/// of its wait; a notice that came between waits wakes the next wait at once.
#[tokio::test]
async fn a_queued_job_wakes_a_waiting_worker() {
    use std::time::{Duration, Instant};
    use store::Queue;
    let Some(schema) = PgSchema::create().await else { return };
    let (worker, api) = (schema.store().await, schema.store().await);
    let long = Duration::from_secs(30);
    worker.wait_for_jobs(Duration::from_millis(10)).await; // starts listening
    let started = Instant::now();
    let waiting = tokio::spawn(async move {
        worker.wait_for_jobs(long).await;
        (worker, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let job = model::JobSpec::Scan { social_id: model::SocialId::parse("acme").unwrap() };
    assert!(api.enqueue(&job).await.unwrap());
    let (worker, waited) = waiting.await.unwrap();
    assert!(waited < long / 2, "woken by the notice, not the timeout: {waited:?}");
    assert_eq!(worker.lease_job("w", Duration::from_secs(60), 3).await.unwrap().map(|j| j.spec), Some(job));
    // Queued while nobody waited: the next wait returns at once.
    let other = model::JobSpec::Scan { social_id: model::SocialId::parse("other").unwrap() };
    assert!(api.enqueue(&other).await.unwrap());
    let t = Instant::now();
    worker.wait_for_jobs(long).await;
    assert!(t.elapsed() < long / 2, "{:?}", t.elapsed());
}
