//! Scheduled rescans: the scheduler queues what the workers drain, in order (watched,
//! never scanned, stale), one scheduler at a time however many workers run it, and on
//! a lab with a one-minute cadence every company's rating history gains an entry at
//! each of its slots, no company scanned twice at once.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use model::{CompanyProfile, Domain, DomainAsset, JobSpec, NewApiKey, Scope, SocialId};
use store::{CompanySnapshot, Store};
use time::OffsetDateTime;

/// When each job of each company ran: (company, start, end).
type Runs = Arc<Mutex<Vec<(String, Instant, Instant)>>>;

fn sid(s: &str) -> SocialId {
    SocialId::parse(s).unwrap()
}

async fn company(store: &dyn Store, social: &str, domain: &str) -> i64 {
    let profile = CompanyProfile {
        social_id: Some(sid(social)),
        company_name: social.into(),
        website: format!("https://www.{domain}"),
        domain: Some(Domain::parse(domain).unwrap()),
        ..Default::default()
    };
    let domains = vec![DomainAsset { name: Domain::parse(domain).unwrap(), attribution: "test".into() }];
    store.save_company(&CompanySnapshot { profile, domains: Some(domains), ..Default::default() }).await.unwrap().id
}

/// A handler that takes `took` per job and records when each ran.
fn recording(runs: Runs, took: Duration) -> worker::Handler {
    Arc::new(move |job: model::Job| {
        let runs = runs.clone();
        Box::pin(async move {
            let start = Instant::now();
            tokio::time::sleep(took).await;
            runs.lock().unwrap().push((job.spec.company().to_string(), start, Instant::now()));
            Ok(store::ScanOutcome::default())
        })
    })
}

/// No company's jobs overlap in time.
fn assert_never_twice_at_once(runs: &[(String, Instant, Instant)]) {
    let mut by: BTreeMap<&str, Vec<(Instant, Instant)>> = BTreeMap::new();
    for (c, s, e) in runs {
        by.entry(c).or_default().push((*s, *e));
    }
    for (c, mut spans) in by {
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[1].0 >= w[0].1, "{c} was scanned twice at once");
        }
    }
}

async fn sqlite() -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store = store::open(&format!("sqlite://{}", dir.path().join("s.db").display())).await.unwrap();
    (dir, store)
}

#[tokio::test]
async fn the_scheduler_queues_what_the_workers_drain_watched_first_then_never_scanned_then_stale() {
    let (_dir, store) = sqlite().await;
    // Sixteen companies: two stale (rated long ago), twelve never scanned, two of those
    // watched by a monitor key (bound to one, the other its subsidiary).
    let mut ids = Vec::new();
    for i in 0..16 {
        ids.push(company(&*store, &format!("bp-{i:02}"), &format!("bp{i:02}.example")).await);
    }
    for stale in [0, 1] {
        let mut rating = store.latest_score(ids[stale]).await.unwrap();
        assert!(rating.is_none());
        rating = Some(old_rating());
        store.replace_rating(ids[stale], rating.as_ref().unwrap()).await.unwrap();
    }
    store.link_subsidiary(ids[14], ids[15]).await.unwrap();
    store
        .create_key(&NewApiKey {
            name: "monitor".into(),
            prefix: "rk_bp0001".into(),
            hash: "b7".repeat(32),
            scopes: vec![Scope::Monitor],
            company: Some(sid("bp-14")),
            org: None,
            per_minute: 60,
            monthly: 1_000,
        })
        .await
        .unwrap();

    // One worker, one job at a time, 250 ms a job: it drains four a second.
    let runs: Runs = Arc::default();
    let config = worker::Config {
        concurrency: 1,
        idle: Duration::from_millis(20),
        rescan_every: Some(Duration::from_secs(60)),
        ..worker::Config::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(worker::run_with(
        store.clone(),
        config,
        async move {
            let _ = stopped.await;
        },
        recording(runs.clone(), Duration::from_millis(250)),
    ));
    let began = Instant::now();
    let mut most_waiting = 0;
    while runs.lock().unwrap().len() < 16 {
        assert!(began.elapsed() < Duration::from_secs(30), "not every company was scanned: {:?}", runs.lock().unwrap());
        let waiting = store.waiting_jobs(JobSpec::BACKGROUND, OffsetDateTime::now_utc()).await.unwrap();
        most_waiting = most_waiting.max(waiting);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // Each round keeps at most twice what was drained since the last one waiting (one
    // round a second, four drained a second: 8; a round late by half a second on a
    // loaded machine: 12), never all sixteen.
    assert!(most_waiting <= 12, "{most_waiting} jobs waited at once");
    let order: Vec<String> = runs.lock().unwrap().iter().map(|r| r.0.clone()).collect();
    assert_eq!(&order[..2], ["bp-14", "bp-15"], "watched first: {order:?}");
    assert_eq!(&order[14..], ["bp-00", "bp-01"], "stale after never scanned: {order:?}");
    // Queued once each: the next rescans wait for the companies' slots.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(runs.lock().unwrap().len(), 16, "{:?}", runs.lock().unwrap());
    let next = store.next_rescans(100).await.unwrap();
    assert_eq!(next.len(), 16);
    // Each was queued after the test began: its next slot is more than half a cadence
    // after that, and at most a cadence and a half.
    let now = OffsetDateTime::now_utc();
    let since = now - began.elapsed();
    assert!(
        next.iter().all(|(_, at)| *at > since + Duration::from_secs(30) && *at <= now + Duration::from_secs(91)),
        "{next:?}"
    );

    let _ = stop.send(());
    running.await.unwrap();
}

fn old_rating() -> model::ScoreSnapshot {
    let text = r#"{"scanned_at":"2026-01-01T00:00:00Z","score":70,"grade":"B","components":{}}"#;
    serde_json::from_str(text).unwrap_or_else(|e| panic!("test rating: {e}"))
}

#[tokio::test]
async fn of_several_workers_one_schedules_and_no_company_is_scanned_twice_at_once() {
    let (_dir, store) = sqlite().await;
    for i in 0..10 {
        company(&*store, &format!("two-{i}"), &format!("two{i}.example")).await;
    }
    let runs: Runs = Arc::default();
    let mut workers = Vec::new();
    let mut stops = Vec::new();
    for n in 0..3 {
        let config = worker::Config {
            concurrency: 2,
            idle: Duration::from_millis(20),
            rescan_every: Some(Duration::from_secs(60)),
            name: format!("w{n}"),
            ..worker::Config::default()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        stops.push(stop);
        workers.push(tokio::spawn(worker::run_with(
            store.clone(),
            config,
            async move {
                let _ = stopped.await;
            },
            recording(runs.clone(), Duration::from_millis(300)),
        )));
    }
    tokio::time::sleep(Duration::from_secs(6)).await;
    let got = runs.lock().unwrap().clone();
    assert_never_twice_at_once(&got);
    let mut companies: Vec<&str> = got.iter().map(|r| r.0.as_str()).collect();
    companies.sort();
    assert_eq!(companies, (0..10).map(|i| format!("two-{i}")).collect::<Vec<_>>(), "each once");
    // The workers stop; the lease is given up and another process may schedule at once.
    for stop in stops {
        let _ = stop.send(());
    }
    for w in workers {
        w.await.unwrap();
    }
    assert!(
        store
            .hold_lease(worker::schedule::LEASE, "next", Duration::from_secs(10), OffsetDateTime::now_utc())
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn with_a_one_minute_cadence_every_lab_company_is_rated_again_at_each_of_its_slots() {
    let file = lab::LabFile::builtin_at(94).unwrap();
    let lab = lab::Lab::up(&file).await.unwrap();
    let mut ctx = scanner::probes::Context::lab(
        lab.resolver.unwrap(),
        file.effective_port_map(),
        lab.ca_root_der.clone(),
        &lab.trust_anchor_text(),
    )
    .unwrap();
    ctx.vectors = vec![model::RiskVector::Spf, model::RiskVector::Dmarc];
    let (_dir, store) = sqlite().await;
    let mut ids = BTreeMap::new();
    for (social, domain) in [
        ("northwind-shield", "northwindshield.test"),
        ("bluefin-bank", "bluefinbank.test"),
        ("orchard-pharma", "orchardlane.test"),
    ] {
        ids.insert(social, company(&*store, social, domain).await);
    }

    // The worker's own handler, recording when each job ran.
    let runs: Runs = Arc::default();
    let handler: worker::Handler = {
        let (store, runs) = (store.clone(), runs.clone());
        let contexts = Arc::new(worker::JobContexts::new(ctx));
        Arc::new(move |job: model::Job| {
            let (store, runs, contexts) = (store.clone(), runs.clone(), contexts.clone());
            Box::pin(async move {
                let start = Instant::now();
                let lease = worker::Lease::of(&job, Duration::from_secs(120));
                let ctx = contexts.for_job(&*store, OffsetDateTime::now_utc()).await?;
                let outcome = worker::process_leased(&*store, &ctx, &job.spec, lease.as_ref()).await;
                runs.lock().unwrap().push((job.spec.company().to_string(), start, Instant::now()));
                outcome
            })
        })
    };
    let every = Duration::from_secs(60);
    let config = worker::Config {
        concurrency: 2,
        idle: Duration::from_millis(200),
        rescan_every: Some(every),
        ..Default::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(worker::run_with(
        store.clone(),
        config,
        async move {
            let _ = stopped.await;
        },
        handler,
    ));

    // Rated at once (never scanned), then at the next slot more than half a minute
    // later, then a minute after that: three ratings each within 155 seconds.
    let began = Instant::now();
    let mut histories = BTreeMap::new();
    loop {
        for (social, id) in &ids {
            histories.insert(*social, store.score_history(*id, 10).await.unwrap());
        }
        if histories.values().all(|h| h.len() >= 3) {
            break;
        }
        let counts: Vec<usize> = histories.values().map(Vec::len).collect();
        assert!(began.elapsed() < Duration::from_secs(170), "ratings so far: {counts:?}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let _ = stop.send(());
    running.await.unwrap();

    for (social, id) in &ids {
        let mut times: Vec<i64> = histories[social].iter().map(|r| r.scanned_at.0.unix_timestamp()).collect();
        times.sort();
        let phase = worker::schedule::phase(*id, every).as_secs_f64();
        // Scheduled ratings fall on the company's slots (dated when the job was leased:
        // within a round and a poll of the slot, more on a loaded machine; stored to the second).
        for t in &times[1..] {
            let off = (*t as f64 - phase).rem_euclid(60.0);
            assert!(!(8.0..=59.0).contains(&off), "{social}: a rating {off:.1} s past its slot: {times:?}");
        }
        assert!(times[1] - times[0] > 29 && times[1] - times[0] <= 94, "{social}: {times:?}");
        assert!((57..=66).contains(&(times[2] - times[1])), "{social}: a minute apart: {times:?}");
    }
    assert_never_twice_at_once(&runs.lock().unwrap());
}
