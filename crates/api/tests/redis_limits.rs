//! The Redis limiter on the Redis of this machine (127.0.0.1:6379): limits that hold
//! exactly across limiters that stand for separate API processes, the monthly quota
//! seeded from and written to the store, and both failure policies when Redis is away.
//! Each test uses keys under a prefix of its own and deletes them after.

use std::sync::Arc;
use std::time::Duration;

use api::{FailPolicy, RateLimiter, RedisLimiter};
use model::{ApiKey, Scope};
use store::Store;

const REDIS: &str = "redis://127.0.0.1:6379";
/// Nothing listens there.
const NO_REDIS: &str = "redis://127.0.0.1:9";

/// The Redis of this machine, or `None` (said, and a failure in CI) when it is not there.
async fn redis() -> Option<redis::aio::MultiplexedConnection> {
    let client = redis::Client::open(REDIS).ok()?;
    match tokio::time::timeout(Duration::from_secs(2), client.get_multiplexed_async_connection()).await {
        Ok(Ok(c)) => Some(c),
        other => {
            let why = format!("Redis at {REDIS} cannot be reached ({:?})", other.map(|r| r.map(|_| ())));
            assert!(std::env::var_os("CI").is_none(), "{why}");
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// A prefix of this test's own, and its keys deleted when dropped.
struct Prefix(String);

impl Prefix {
    fn new(test: &str) -> Self {
        Prefix(format!("rampart-test:{test}:{}:{}", std::process::id(), rand_suffix()))
    }
}

fn rand_suffix() -> u64 {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).unwrap();
    u64::from_le_bytes(b)
}

async fn cleanup(con: &mut redis::aio::MultiplexedConnection, prefix: &Prefix) {
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{}:*", prefix.0)).query_async(con).await.unwrap();
    if !keys.is_empty() {
        let _: () = redis::cmd("DEL").arg(keys).query_async(con).await.unwrap();
    }
}

async fn store_with_key(per_minute: u32, monthly: u64) -> (Arc<dyn Store>, ApiKey) {
    let store: Arc<dyn Store> = store::open("sqlite::memory:").await.unwrap();
    let made = api::generate_key("shared", vec![Scope::General], None, per_minute, monthly).unwrap();
    let key = store.create_key(&made.record).await.unwrap();
    (store, key)
}

/// Waits, when the minute is about to turn, for the next one: a test of a per-minute
/// window must run inside one minute.
async fn inside_one_minute() {
    let second = time::OffsetDateTime::now_utc().second();
    if second >= 50 {
        tokio::time::sleep(Duration::from_secs(u64::from(61 - second))).await;
    }
}

#[tokio::test]
async fn a_per_minute_limit_holds_exactly_across_processes() {
    let Some(mut con) = redis().await else { return };
    let prefix = Prefix::new("minute");
    let (store, key) = store_with_key(10, 0).await;
    let a = RedisLimiter::new(REDIS, &prefix.0, store.clone(), FailPolicy::Closed).unwrap();
    let b = RedisLimiter::new(REDIS, &prefix.0, store.clone(), FailPolicy::Closed).unwrap();
    inside_one_minute().await;
    // Both "processes" at once, 40 requests between them.
    let (ra, rb) = tokio::join!(
        async {
            let mut ok = 0;
            for _ in 0..20 {
                ok += u32::from(a.check(&key).await.unwrap().is_ok());
            }
            ok
        },
        async {
            let mut ok = 0;
            for _ in 0..20 {
                ok += u32::from(b.check(&key).await.unwrap().is_ok());
            }
            ok
        }
    );
    assert_eq!(ra + rb, 10, "exactly the limit across both: {ra} + {rb}");
    let refused = a.check(&key).await.unwrap().unwrap_err();
    assert_eq!(refused.kind, api::LimitKind::PerMinute);
    assert!((1..=60).contains(&refused.retry_after.as_secs()), "{refused:?}");
    // Accepted requests reach the store's monthly count, each once.
    a.flush().await.unwrap();
    b.flush().await.unwrap();
    let month = model::timefmt::month(time::OffsetDateTime::now_utc());
    assert_eq!(store.usage(key.id, &month).await.unwrap(), 10);
    cleanup(&mut con, &prefix).await;
}

/// Many requests at once on one process: each is decided by Redis (none is refused as if
/// Redis were down because another request was using or making the connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_share_one_connection() {
    let Some(mut con) = redis().await else { return };
    let prefix = Prefix::new("burst");
    let (store, key) = store_with_key(100, 0).await;
    let limiter = Arc::new(RedisLimiter::new(REDIS, &prefix.0, store, FailPolicy::Closed).unwrap());
    inside_one_minute().await;
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (limiter, key) = (limiter.clone(), key.clone());
            tokio::spawn(async move { limiter.check(&key).await })
        })
        .collect();
    let (mut ok, mut limited, mut busy) = (0, 0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(Ok(())) => ok += 1,
            Ok(Err(_)) => limited += 1,
            Err(_) => busy += 1,
        }
    }
    assert_eq!((ok, limited, busy), (100, 100, 0));
    cleanup(&mut con, &prefix).await;
}

#[tokio::test]
async fn the_monthly_quota_is_shared_seeded_from_the_store_and_reseeded_when_redis_forgets() {
    let Some(mut con) = redis().await else { return };
    let prefix = Prefix::new("month");
    let (store, key) = store_with_key(0, 7).await;
    let month = model::timefmt::month(time::OffsetDateTime::now_utc());
    // Three requests of this month counted before (another process, last week).
    store.add_usage(key.id, &month, 3).await.unwrap();
    let a = RedisLimiter::new(REDIS, &prefix.0, store.clone(), FailPolicy::Closed).unwrap();
    let b = RedisLimiter::new(REDIS, &prefix.0, store.clone(), FailPolicy::Closed).unwrap();
    let mut accepted = 0;
    for i in 0..10 {
        let limiter = if i % 2 == 0 { &a } else { &b };
        match limiter.check(&key).await.unwrap() {
            Ok(()) => accepted += 1,
            Err(limited) => assert_eq!(limited.kind, api::LimitKind::Monthly),
        }
    }
    assert_eq!(accepted, 4, "7 a month, 3 used before");
    a.flush().await.unwrap();
    b.flush().await.unwrap();
    assert_eq!(store.usage(key.id, &month).await.unwrap(), 7, "the store holds the durable count");

    // Redis restarted empty: the count starts again from the store, not from zero.
    cleanup(&mut con, &prefix).await;
    assert!(a.check(&key).await.unwrap().is_err(), "still over the quota after Redis forgot");
    cleanup(&mut con, &prefix).await;
}

#[tokio::test]
async fn without_redis_open_limits_per_process_and_closed_refuses() {
    let (store, key) = store_with_key(3, 0).await;
    let open = RedisLimiter::new(NO_REDIS, "rampart-test:down", store.clone(), FailPolicy::Open).unwrap();
    inside_one_minute().await;
    let started = std::time::Instant::now();
    let verdicts: Vec<bool> = {
        let mut v = Vec::new();
        for _ in 0..50 {
            v.push(open.check(&key).await.unwrap().is_ok());
        }
        v
    };
    // This process's own count decides: the first 3 pass, the rest are refused.
    assert_eq!(verdicts.iter().filter(|ok| **ok).count(), 3, "{verdicts:?}");
    // A dead Redis is not waited on by every request: it is left alone for a second
    // after each failure (50 requests each waiting 250 ms would take 12 s).
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
    open.flush().await.unwrap();
    let month = model::timefmt::month(time::OffsetDateTime::now_utc());
    assert_eq!(store.usage(key.id, &month).await.unwrap(), 3, "what the fallback accepted is counted");

    let closed = RedisLimiter::new(NO_REDIS, "rampart-test:down", store.clone(), FailPolicy::Closed).unwrap();
    assert!(matches!(closed.check(&key).await, Err(store::StoreError::Busy)), "closed: 503");

    // A key without limits never needs Redis, and its requests still count as usage.
    let (free_store, free) = store_with_key(0, 0).await;
    let unlimited = RedisLimiter::new(NO_REDIS, "rampart-test:down", free_store.clone(), FailPolicy::Closed).unwrap();
    for _ in 0..3 {
        assert!(unlimited.check(&free).await.unwrap().is_ok());
    }
    unlimited.flush().await.unwrap();
    assert_eq!(free_store.usage(free.id, &month).await.unwrap(), 3);
}

#[test]
fn a_url_that_is_not_redis_is_refused_and_policies_parse() {
    let store: Arc<dyn Store> = Arc::new(tokio::runtime::Runtime::new().unwrap().block_on(async {
        // Any store: the URL is refused before it is used.
        store::SqliteStore::open("sqlite::memory:").await.unwrap()
    }));
    assert!(RedisLimiter::new("http://127.0.0.1:6379", "p", store, FailPolicy::Open).is_err());
    assert_eq!("Closed".parse::<FailPolicy>(), Ok(FailPolicy::Closed));
    assert_eq!("open".parse::<FailPolicy>(), Ok(FailPolicy::Open));
    assert!("maybe".parse::<FailPolicy>().is_err());
}
