//! The queue's own speed: empty jobs queued, then leased and completed by N concurrent
//! workers (tasks sharing one store, as the worker processes share the database), on
//! SQLite (a fresh file) and on PostgreSQL (a fresh schema in the test database).
//!
//! Usage: `queue_bench [JOBS] [WORKERS,…]` (default 5000 and 1,4,16). Prints one line per
//! backend and worker count: jobs/s queued (by that many tasks at once), jobs/s leased
//! and completed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use store::Store;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5_000);
    let workers: Vec<usize> =
        args.next().map(|a| a.split(',').filter_map(|w| w.parse().ok()).collect()).unwrap_or_else(|| vec![1, 4, 16]);
    println!("{:<12} {:>8} {:>8} {:>14} {:>22}", "backend", "jobs", "workers", "queued/s", "leased+completed/s");
    for &n in &workers {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", dir.path().join("queue.db").display());
        let sqlite: Arc<dyn Store> = store::open(&url).await.expect("a SQLite store");
        run("sqlite", sqlite, jobs, n).await;
        match store::testkit::PgSchema::create().await {
            Some(schema) => {
                let pg: Arc<dyn Store> = Arc::new(schema.store().await);
                run("postgresql", pg, jobs, n).await;
                drop(schema);
            }
            None => println!("{:<12} skipped: the test database cannot be reached", "postgresql"),
        }
    }
}

async fn run(backend: &str, store: Arc<dyn Store>, jobs: usize, workers: usize) {
    let started = Instant::now();
    // Queued by the same number of tasks at once, each its share of the jobs.
    let queuers: Vec<_> = (0..workers)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in (w..jobs).step_by(workers) {
                    let spec =
                        model::JobSpec::Scan { social_id: model::SocialId::parse(&format!("c{i}")).expect("an id") };
                    assert!(store.enqueue(&spec).await.expect("enqueue"), "job {i} queued once");
                }
            })
        })
        .collect();
    for q in queuers {
        q.await.expect("a queueing task");
    }
    let queued = jobs as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..workers {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let name = format!("w{w}");
            let mut done = 0usize;
            while let Some(job) = store.lease_job(&name, Duration::from_secs(60), 5).await.expect("lease") {
                let token = job.lease_token.as_deref().expect("a token");
                assert!(store.complete_job(job.id, token).await.expect("complete"));
                done += 1;
            }
            done
        }));
    }
    let mut done = 0;
    for t in tasks {
        done += t.await.expect("a worker task");
    }
    assert_eq!(done, jobs, "every job leased and completed once");
    let rate = jobs as f64 / started.elapsed().as_secs_f64();
    println!("{backend:<12} {jobs:>8} {workers:>8} {queued:>14.0} {rate:>22.0}");
}
