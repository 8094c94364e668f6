//! Rate limits shared by every API process, kept in Redis (`--limits redis://…`).
//!
//! One Lua script per request does the whole decision atomically on the Redis server:
//!
//! - **Per minute: a fixed window** of the calendar minute (the in-memory limiter's
//!   rule, so a key behaves the same on one process or many): a counter
//!   `{prefix}:m:{key}:{unix minute}` that expires after two minutes. A request over the
//!   limit is refused and not counted; Retry-After is the seconds left in the minute. As
//!   with any fixed window, a key may make up to twice its limit across a minute
//!   boundary (the last second of one minute and the first of the next).
//! - **Monthly quota**: a counter `{prefix}:q:{key}:{YYYY-MM}` that every process
//!   increments in the same script, so the quota holds exactly across processes while
//!   Redis lives. It is seeded from the store (the durable count) the first time a
//!   process meets a key in a month Redis has no counter for; each process also writes
//!   the requests it accepted to the store (`Keys::add_usage`, every flush), so the
//!   store stays the durable record and a restarted Redis starts again from it (missing
//!   at most the last flush interval of each process).
//!
//! When Redis cannot be reached or does not answer within [`REDIS_DEADLINE`], the
//! request is decided by the [`FailPolicy`], Redis is left alone for [`RETRY_AFTER_DOWN`]
//! (requests do not each wait for a dead server), and the outage is logged once a
//! minute while it lasts.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use model::ApiKey;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use store::{Store, StoreError};
use time::OffsetDateTime;

use crate::limit::{LimitKind, Limited, MemoryLimiter, RateLimiter, seconds_to_next_month, write_counts};

/// The longest a request waits on Redis before the [`FailPolicy`] decides it.
pub const REDIS_DEADLINE: Duration = Duration::from_millis(250);
/// After a failure, Redis is tried again after this long.
pub const RETRY_AFTER_DOWN: Duration = Duration::from_secs(1);

/// What happens to requests while Redis cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPolicy {
    /// Keep answering: each process limits by its own count (the in-memory limiter, the
    /// monthly quota from the store), so across N processes a key may get up to N times
    /// its per-minute limit while Redis is away.
    Open,
    /// Refuse every limited request with 503 and Retry-After until Redis answers.
    Closed,
}

impl std::str::FromStr for FailPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "open" => Ok(FailPolicy::Open),
            "closed" => Ok(FailPolicy::Closed),
            _ => Err(format!("{s:?} is not a policy (open, closed)")),
        }
    }
}

/// The decision, atomic on the server. KEYS: the minute counter, the month counter.
/// ARGV: per-minute limit, monthly limit (0: none), the month's count in the store (or
/// "" when the caller has not read it), the month counter's lifetime in seconds.
/// Returns {0, n}: counted, n in this minute; {1, n}: per-minute limit reached;
/// {2, n}: monthly quota reached; {-1, 0}: no month counter yet, call again with the
/// store's count.
const SCRIPT: &str = r"
local month = redis.call('GET', KEYS[2])
if not month then
  if ARGV[3] == '' then return {-1, 0} end
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4], 'NX')
  month = redis.call('GET', KEYS[2])
end
local minute = tonumber(redis.call('GET', KEYS[1]) or '0')
local per_minute = tonumber(ARGV[1])
if per_minute > 0 and minute >= per_minute then return {1, minute} end
local monthly = tonumber(ARGV[2])
if monthly > 0 and tonumber(month) >= monthly then return {2, tonumber(month)} end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], 120) end
redis.call('INCR', KEYS[2])
return {0, minute + 1}
";

/// The limiter every API process shares through one Redis.
pub struct RedisLimiter {
    client: redis::Client,
    /// Made on first use; requests arriving while it is made wait for it (within the
    /// deadline). A failed connect leaves it empty, to be tried again.
    connection: tokio::sync::OnceCell<ConnectionManager>,
    script: redis::Script,
    prefix: String,
    store: Arc<dyn Store>,
    policy: FailPolicy,
    /// Decides while Redis is away under [`FailPolicy::Open`].
    fallback: MemoryLimiter,
    /// Requests accepted through Redis and not yet written to the store, per key and month.
    pending: Mutex<HashMap<(i64, String), u64>>,
    unwritten: Mutex<Vec<(i64, String, u64)>>,
    /// Redis is not tried before this instant (it failed).
    down_until: Mutex<Option<Instant>>,
    /// The unix minute the outage was last logged in.
    logged_minute: AtomicI64,
}

/// A Redis URL that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("Redis URL: {0}")]
pub struct RedisUrlError(String);

impl RedisLimiter {
    /// A limiter over the Redis at `url` (`redis://host:port[/db]`). Nothing is connected
    /// yet: a server started before its Redis answers by its policy until Redis comes.
    /// `prefix` namespaces the keys (one Redis may serve several deployments).
    pub fn new(url: &str, prefix: &str, store: Arc<dyn Store>, policy: FailPolicy) -> Result<Self, RedisUrlError> {
        let client = redis::Client::open(url).map_err(|e| RedisUrlError(e.to_string()))?;
        Ok(Self {
            client,
            connection: tokio::sync::OnceCell::new(),
            script: redis::Script::new(SCRIPT),
            prefix: prefix.to_owned(),
            fallback: MemoryLimiter::new(store.clone()),
            store,
            policy,
            pending: Mutex::new(HashMap::new()),
            unwritten: Mutex::new(Vec::new()),
            down_until: Mutex::new(None),
            logged_minute: AtomicI64::new(i64::MIN),
        })
    }

    fn down(&self) -> bool {
        let mut until = self.down_until.lock().unwrap_or_else(|p| p.into_inner());
        match *until {
            Some(t) if Instant::now() < t => true,
            Some(_) => {
                *until = None;
                false
            }
            None => false,
        }
    }

    fn mark_down(&self, why: &str) {
        *self.down_until.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now() + RETRY_AFTER_DOWN);
        let minute = OffsetDateTime::now_utc().unix_timestamp().div_euclid(60);
        if self.logged_minute.swap(minute, Ordering::Relaxed) != minute {
            let policy = match self.policy {
                FailPolicy::Open => "requests are limited by this process alone",
                FailPolicy::Closed => "requests are refused (503)",
            };
            tracing::error!(error = why, "the rate-limit Redis does not answer: {policy} until it does");
        }
    }

    /// The shared connection, made on first use (or again after a failed first connect).
    /// A `ConnectionManager` is a handle: cloning it shares the one multiplexed connection.
    async fn connection(&self) -> Result<ConnectionManager, String> {
        let made = self.connection.get_or_try_init(|| async {
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(REDIS_DEADLINE)
                .set_response_timeout(REDIS_DEADLINE)
                .set_number_of_retries(0)
                .set_max_delay(RETRY_AFTER_DOWN.as_millis().try_into().unwrap_or(1000));
            ConnectionManager::new_with_config(self.client.clone(), config).await.map_err(|e| e.to_string())
        });
        match tokio::time::timeout(REDIS_DEADLINE * 2, made).await {
            Ok(Ok(c)) => Ok(c.clone()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("connect timed out".to_owned()),
        }
    }

    async fn run(&self, keys: [&str; 2], args: (u32, u64, Option<u64>, u64)) -> Result<(i64, i64), String> {
        let mut con = self.connection().await?;
        let mut call = self.script.prepare_invoke();
        call.key(keys[0]).key(keys[1]).arg(args.0).arg(args.1);
        match args.2 {
            Some(seed) => call.arg(seed),
            None => call.arg(""),
        };
        call.arg(args.3);
        let answer: Vec<i64> = tokio::time::timeout(REDIS_DEADLINE, call.invoke_async(&mut con))
            .await
            .map_err(|_| "no answer in time".to_owned())?
            .map_err(|e| e.to_string())?;
        match answer.as_slice() {
            [verdict, n] => Ok((*verdict, *n)),
            _ => Err(format!("unexpected answer {answer:?}")),
        }
    }

    async fn check_redis(&self, key: &ApiKey, now: OffsetDateTime) -> Result<Result<(), Limited>, String> {
        let month = model::timefmt::month(now);
        let unix = now.unix_timestamp();
        let minute_key = format!("{}:m:{}:{}", self.prefix, key.id, unix.div_euclid(60));
        let month_key = format!("{}:q:{}:{}", self.prefix, key.id, month);
        // The month counter outlives the month by a week (late flushes, clock skew).
        let ttl = seconds_to_next_month(now) + 7 * 86_400;
        let limits = (key.per_minute, key.monthly);
        let mut verdict = self.run([&minute_key, &month_key], (limits.0, limits.1, None, ttl)).await?;
        if verdict.0 == -1 {
            let seed = self.store.usage(key.id, &month).await.map_err(|e| format!("reading usage: {e}"))?;
            let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner()).get(&(key.id, month.clone())).copied();
            verdict = self
                .run([&minute_key, &month_key], (limits.0, limits.1, Some(seed + pending.unwrap_or(0)), ttl))
                .await?;
        }
        match verdict.0 {
            0 => {
                *self.pending.lock().unwrap_or_else(|p| p.into_inner()).entry((key.id, month)).or_default() += 1;
                Ok(Ok(()))
            }
            1 => {
                let retry = u64::try_from(60 - unix.rem_euclid(60)).unwrap_or(60);
                Ok(Err(Limited { kind: LimitKind::PerMinute, retry_after: Duration::from_secs(retry) }))
            }
            2 => Ok(Err(Limited {
                kind: LimitKind::Monthly,
                retry_after: Duration::from_secs(seconds_to_next_month(now)),
            })),
            other => Err(format!("unexpected verdict {other}")),
        }
    }
}

#[async_trait]
impl RateLimiter for RedisLimiter {
    async fn check(&self, key: &ApiKey) -> Result<Result<(), Limited>, StoreError> {
        if key.per_minute == 0 && key.monthly == 0 {
            // Nothing to decide, so Redis is not asked; the request still counts in the
            // store's monthly usage, as with the in-memory limiter.
            let month = model::timefmt::month(OffsetDateTime::now_utc());
            *self.pending.lock().unwrap_or_else(|p| p.into_inner()).entry((key.id, month)).or_default() += 1;
            return Ok(Ok(()));
        }
        if !self.down() {
            match self.check_redis(key, OffsetDateTime::now_utc()).await {
                Ok(verdict) => return Ok(verdict),
                Err(why) => self.mark_down(&why),
            }
        }
        match self.policy {
            FailPolicy::Open => self.fallback.check(key).await,
            FailPolicy::Closed => Err(StoreError::Busy),
        }
    }

    async fn flush(&self) -> Result<(), StoreError> {
        let mut counts: Vec<(i64, String, u64)> =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()))
                .into_iter()
                .map(|((id, month), n)| (id, month, n))
                .collect();
        counts.append(&mut self.unwritten.lock().unwrap_or_else(|p| p.into_inner()));
        let store = &self.store;
        let (failed, first_error) =
            write_counts(counts, |id, month, n| async move { store.add_usage(id, &month, n).await }).await;
        self.unwritten.lock().unwrap_or_else(|p| p.into_inner()).extend(failed);
        let fallback = self.fallback.flush().await;
        match first_error {
            Some(e) => Err(e),
            None => fallback,
        }
    }
}
