//! The worker's side of the queue (docs/SECURITY.md §5): a running job's lease is
//! renewed, a job that panics is dead with the panic's message, a cancelled job is
//! stopped and nothing of it recorded, and a worker shutting down releases what it could
//! not finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use model::JobStatus;
use store::{ScanOutcome, Store};
use worker::{Config, Handler, JobError};

async fn store() -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store = store::open(&format!("sqlite://{}", dir.path().join("q.db").display())).await.unwrap();
    (dir, store)
}

fn config(lease_ms: u64) -> Config {
    Config {
        concurrency: 2,
        lease: Duration::from_millis(lease_ms),
        idle: Duration::from_millis(20),
        drain: Duration::from_millis(300),
        ..Config::default()
    }
}

fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(model::Job) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<ScanOutcome, JobError>> + Send + 'static,
{
    Arc::new(move |job| Box::pin(f(job)))
}

/// Runs the worker until `until` holds of the store (or 20 s pass).
async fn run_until(store: &Arc<dyn Store>, config: Config, h: Handler, until: impl Fn(&[model::Job]) -> bool) {
    let watcher = store.clone();
    let done = async move {
        for _ in 0..1000 {
            let all = watcher.jobs(None, 100).await.unwrap();
            if until(&all) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the queue never reached the state waited for: {:?}", watcher.jobs(None, 100).await.unwrap());
    };
    worker::run_with(store.clone(), config, done, h).await;
}

#[tokio::test]
async fn a_panicking_job_is_dead_with_the_panic_message() {
    let (_dir, store) = store().await;
    store.enqueue(&model::JobSpec::Scan { social_id: model::SocialId::parse("x").unwrap() }).await.unwrap();
    let h = handler(|_job| async { panic!("the probe tripped over a certificate") });
    run_until(&store, config(5_000), h, |all| all.iter().all(|j| j.status == JobStatus::Dead)).await;
    let dead = store.jobs(Some(JobStatus::Dead), 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].last_error.as_deref(), Some("panicked: the probe tripped over a certificate"));
    assert_eq!(dead[0].attempts, 1, "a panic is not retried");
}

/// A job that runs five times its lease keeps it: no other worker can lease it meanwhile.
/// (The lease leaves the heartbeat, a third of it, room for a loaded machine's slow
/// SQLite commits: with 200 ms the renewal behind fsyncs sometimes came too late.)
#[tokio::test]
async fn a_running_job_renews_its_lease() {
    let (_dir, store) = store().await;
    store.enqueue(&model::JobSpec::Scan { social_id: model::SocialId::parse("slow").unwrap() }).await.unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let h = handler(move |_job| {
        counted.fetch_add(1, Ordering::SeqCst);
        async {
            tokio::time::sleep(Duration::from_millis(2_000)).await;
            Ok(ScanOutcome::default())
        }
    });
    let rival = store.clone();
    let rival_leases = tokio::spawn(async move {
        let mut taken = 0;
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if rival.lease_job("rival", Duration::from_secs(60), 5).await.unwrap().is_some() {
                taken += 1;
            }
        }
        taken
    });
    run_until(&store, config(400), h, |all| all.iter().all(|j| j.status == JobStatus::Done)).await;
    assert_eq!(rival_leases.await.unwrap(), 0, "the lease lapsed while the job ran");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// Cancelled while it runs: the worker finds its lease gone at the next heartbeat, stops
/// the job, and records nothing (the job stays cancelled).
#[tokio::test]
async fn a_cancelled_job_is_stopped_and_nothing_is_recorded() {
    let (_dir, store) = store().await;
    store.enqueue(&model::JobSpec::Scan { social_id: model::SocialId::parse("c").unwrap() }).await.unwrap();
    let finished = Arc::new(AtomicUsize::new(0));
    let flag = finished.clone();
    let h = handler(move |_job| {
        let flag = flag.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            flag.fetch_add(1, Ordering::SeqCst);
            Ok(ScanOutcome::default())
        }
    });
    let canceller = store.clone();
    tokio::spawn(async move {
        loop {
            let running = canceller.jobs(Some(JobStatus::Running), 1).await.unwrap();
            if let Some(j) = running.first() {
                assert!(canceller.cancel_job(j.id).await.unwrap());
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let started = std::time::Instant::now();
    run_until(&store, config(300), h, |all| all.iter().all(|j| j.status == JobStatus::Cancelled)).await;
    assert!(started.elapsed() < Duration::from_secs(4), "the worker stopped it at the heartbeat");
    assert_eq!(finished.load(Ordering::SeqCst), 0, "the job was stopped");
    let all = store.jobs(None, 10).await.unwrap();
    assert_eq!(all[0].status, JobStatus::Cancelled);
}

/// Resolves once a job is running (panics after 20 s).
async fn once_running(store: Arc<dyn Store>) {
    for _ in 0..4000 {
        if !store.jobs(Some(JobStatus::Running), 1).await.unwrap().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("no job ever ran: {:?}", store.jobs(None, 10).await.unwrap());
}

/// At shutdown a job that does not finish within the drain is stopped and released: it
/// is queued again, its attempt not counted, and another worker runs it.
#[tokio::test]
async fn shutdown_releases_what_it_cannot_finish() {
    let (_dir, store) = store().await;
    store.enqueue(&model::JobSpec::Scan { social_id: model::SocialId::parse("long").unwrap() }).await.unwrap();
    let h = handler(|_job| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(ScanOutcome::default())
    });
    let shutdown = once_running(store.clone());
    let started = std::time::Instant::now();
    worker::run_with(store.clone(), config(5_000), shutdown, h).await;
    assert!(started.elapsed() < Duration::from_secs(5), "bounded by the drain");
    let all = store.jobs(None, 10).await.unwrap();
    assert_eq!((all[0].status, all[0].attempts), (JobStatus::Queued, 0), "{all:?}");

    // A job that finishes within the drain is recorded as done.
    let quick = handler(|_job| async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(ScanOutcome::default())
    });
    worker::run_with(store.clone(), config(5_000), once_running(store.clone()), quick).await;
    assert_eq!(store.jobs(None, 10).await.unwrap()[0].status, JobStatus::Done);
}

/// A worker whose lease lapsed while it scanned, and whose job another worker took,
/// writes nothing when its scan ends: no host, no finding, no rating. The worker that
/// holds the lease then records the scan as usual.
#[tokio::test]
async fn a_stale_worker_writes_nothing() {
    use model::{CompanyProfile, Domain, DomainAsset, SocialId};
    let file = lab::LabFile::parse(
        r#"{"dns": {"address": "127.79.12.53"}, "port_map": {"53": 10053},
            "zones": [{"origin": "stale.test", "records": ["@ TXT \"v=spf1 -all\"", "www A 127.79.12.2"]}]}"#,
    )
    .unwrap();
    let lab = lab::Lab::up(&file).await.unwrap();
    let ctx = scanner::probes::Context::lab(lab.resolver.unwrap(), file.effective_port_map(), None, "").unwrap();
    let (_dir, store) = store().await;
    let profile = CompanyProfile {
        social_id: Some(SocialId::parse("stale-co").unwrap()),
        company_name: "Stale Co".into(),
        website: "https://www.stale.test".into(),
        domain: Some(Domain::parse("stale.test").unwrap()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: Domain::parse("stale.test").unwrap(), attribution: "test".into() }];
    let snapshot = store::CompanySnapshot { profile, domains: Some(domains), ..Default::default() };
    let company = store.save_company(&snapshot).await.unwrap();
    let job = model::JobSpec::Scan { social_id: model::SocialId::parse("stale-co").unwrap() };
    store.enqueue(&job).await.unwrap();

    // The first worker's lease lapses; a second worker takes the job.
    let short = Duration::from_millis(200);
    let stale_job = store.lease_job("stale", short, 5).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let long = Duration::from_secs(60);
    let fresh_job = store.lease_job("fresh", long, 5).await.unwrap().expect("the lapsed job is leased again");
    assert_eq!(fresh_job.id, stale_job.id);

    let stale = worker::Lease::of(&stale_job, short).unwrap();
    let err = worker::process_leased(&*store, &ctx, &job, Some(&stale)).await.unwrap_err();
    assert!(matches!(err, JobError::LeaseLost(id) if id == stale_job.id), "{err}");
    assert!(store.open_findings(company.id).await.unwrap().is_empty(), "the stale worker wrote findings");
    assert!(store.hosts(company.id).await.unwrap().is_empty(), "the stale worker wrote hosts");
    assert!(store.latest_score(company.id).await.unwrap().is_none(), "the stale worker rated the company");

    let fresh = worker::Lease::of(&fresh_job, long).unwrap();
    let outcome = worker::process_leased(&*store, &ctx, &job, Some(&fresh)).await.unwrap();
    assert!(outcome.opened > 0);
    assert!(store.open_findings(company.id).await.unwrap().iter().any(|f| f.code == "dmarc.missing"));
    assert!(store.latest_score(company.id).await.unwrap().is_some());
    assert!(store.complete_job(fresh_job.id, &fresh.token).await.unwrap());
    assert!(!store.complete_job(stale_job.id, &stale.token).await.unwrap(), "the stale completion is refused");
    lab.down().await;
}
