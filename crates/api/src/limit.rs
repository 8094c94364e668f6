//! Rate limits per API key: requests per calendar minute and a monthly quota.
//!
//! The limiter is a trait so that several API processes can share one (Redis:
//! [`crate::redis_limit`]);
//! the in-memory limiter here serves one process and persists monthly usage in the
//! store, so quotas survive restarts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use model::ApiKey;
use store::{Store, StoreError};
use time::{Date, Month, OffsetDateTime, Time};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    PerMinute,
    Monthly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    pub kind: LimitKind,
    pub retry_after: Duration,
}

#[async_trait]
pub trait RateLimiter: Send + Sync + 'static {
    /// Counts one request of `key`, or says which limit it hits (and does not count it).
    async fn check(&self, key: &ApiKey) -> Result<Result<(), Limited>, StoreError>;
    /// Writes counts not yet persisted.
    async fn flush(&self) -> Result<(), StoreError>;
}

#[derive(Debug)]
struct Window {
    minute: i64,
    in_minute: u32,
    month: String,
    /// The Unix times `month` spans, [start, end): a request inside needs no date
    /// arithmetic.
    month_span: (i64, i64),
    /// Requests of `month` persisted in the store when this process loaded them,
    /// plus those it has flushed since.
    month_base: u64,
    /// Requests counted here and not yet written to the store.
    month_pending: u64,
}

impl Window {
    /// Counts one request of `key` at `now`, or says which limit it hits.
    fn count(&mut self, key: &ApiKey, now: OffsetDateTime) -> Result<(), Limited> {
        let unix = now.unix_timestamp();
        let minute = unix.div_euclid(60);
        if self.minute != minute {
            self.minute = minute;
            self.in_minute = 0;
        }
        if key.per_minute > 0 && self.in_minute >= key.per_minute {
            let retry = u64::try_from(60 - unix.rem_euclid(60)).unwrap_or(60);
            return Err(Limited { kind: LimitKind::PerMinute, retry_after: Duration::from_secs(retry) });
        }
        if key.monthly > 0 && self.month_base + self.month_pending >= key.monthly {
            return Err(Limited {
                kind: LimitKind::Monthly,
                retry_after: Duration::from_secs(seconds_to_next_month(now)),
            });
        }
        self.in_minute += 1;
        self.month_pending += 1;
        Ok(())
    }
}

/// One process's limiter. A limit of 0 means unlimited.
pub struct MemoryLimiter {
    store: Arc<dyn Store>,
    windows: Mutex<HashMap<i64, Window>>,
    /// Counts taken for a flush whose write failed: written by the next flush (the
    /// window may have moved to another month meanwhile, so they are kept apart).
    unwritten: Mutex<Vec<(i64, String, u64)>>,
}

impl MemoryLimiter {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store, windows: Mutex::new(HashMap::new()), unwritten: Mutex::new(Vec::new()) }
    }

    fn windows(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Window>> {
        self.windows.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

pub(crate) fn seconds_to_next_month(now: OffsetDateTime) -> u64 {
    let (y, m) = match now.month() {
        Month::December => (now.year() + 1, Month::January),
        m => (now.year(), m.next()),
    };
    let next = Date::from_calendar_date(y, m, 1).map(|d| d.with_time(Time::MIDNIGHT).assume_utc()).unwrap_or(now);
    u64::try_from((next - now).whole_seconds()).unwrap_or(0).max(1)
}

#[async_trait]
impl RateLimiter for MemoryLimiter {
    async fn check(&self, key: &ApiKey) -> Result<Result<(), Limited>, StoreError> {
        let now = OffsetDateTime::now_utc();
        let unix = now.unix_timestamp();
        // The key's window of this month: counted under one lock.
        if let Some(w) = self.windows().get_mut(&key.id)
            && (w.month_span.0..w.month_span.1).contains(&unix)
        {
            return Ok(w.count(key, now));
        }
        // No window yet, or a new month: the month's stored usage first.
        {
            let month = model::timefmt::month(now);
            let start = now.replace_day(1).map(|d| d.replace_time(Time::MIDNIGHT).unix_timestamp()).unwrap_or(unix);
            let span = (start, unix.saturating_add(i64::try_from(seconds_to_next_month(now)).unwrap_or(i64::MAX)));
            let base = self.store.usage(key.id, &month).await?;
            let mut windows = self.windows();
            let w = windows.entry(key.id).or_insert_with(|| Window {
                minute: 0,
                in_minute: 0,
                month: String::new(),
                month_span: (0, 0),
                month_base: 0,
                month_pending: 0,
            });
            if w.month != month {
                // Counts of the month that ended go to that month, not to the new one.
                if w.month_pending > 0 {
                    let (old_month, n) = (w.month.clone(), w.month_pending);
                    let (store, key_id) = (self.store.clone(), key.id);
                    tokio::spawn(async move {
                        if let Err(e) = store.add_usage(key_id, &old_month, n).await {
                            tracing::warn!(error = %e, "could not persist usage of the previous month");
                        }
                    });
                }
                *w = Window { minute: 0, in_minute: 0, month, month_span: span, month_base: base, month_pending: 0 };
            } else {
                w.month_span = span;
            }
        }
        Ok(self.windows().get_mut(&key.id).map_or(Ok(()), |w| w.count(key, now)))
    }

    async fn flush(&self) -> Result<(), StoreError> {
        let mut pending: Vec<(i64, String, u64)> = {
            let mut windows = self.windows();
            windows
                .iter_mut()
                .filter(|(_, w)| w.month_pending > 0)
                .map(|(id, w)| {
                    let n = std::mem::take(&mut w.month_pending);
                    // Still counted against the quota (base), whether written yet or not.
                    w.month_base += n;
                    (*id, w.month.clone(), n)
                })
                .collect()
        };
        pending.append(&mut self.unwritten.lock().unwrap_or_else(|p| p.into_inner()));
        let store = &self.store;
        let (failed, first_error) =
            write_counts(pending, |id, month, n| async move { store.add_usage(id, &month, n).await }).await;
        self.unwritten.lock().unwrap_or_else(|p| p.into_inner()).extend(failed);
        first_error.map_or(Ok(()), Err)
    }
}

/// Writes each count with `write`; returns those whose write failed (to be written
/// later: nothing counted is dropped) and the first error.
pub(crate) async fn write_counts<F, Fut>(
    counts: Vec<(i64, String, u64)>,
    write: F,
) -> (Vec<(i64, String, u64)>, Option<StoreError>)
where
    F: Fn(i64, String, u64) -> Fut,
    Fut: std::future::Future<Output = Result<(), StoreError>>,
{
    let mut failed = Vec::new();
    let mut first = None;
    for (id, month, n) in counts {
        if let Err(e) = write(id, month.clone(), n).await {
            first.get_or_insert(e);
            failed.push((id, month, n));
        }
    }
    (failed, first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[tokio::test]
    async fn a_failed_write_keeps_every_count() {
        let written = Mutex::new(Vec::new());
        let counts = vec![(1, "2026-11".to_owned(), 5), (2, "2026-11".to_owned(), 7), (3, "2026-10".to_owned(), 2)];
        let (failed, error) = write_counts(counts, |id, month, n| {
            let written = &written;
            async move {
                if id == 1 {
                    return Err(StoreError::Busy);
                }
                written.lock().unwrap().push((id, month, n));
                Ok(())
            }
        })
        .await;
        assert!(matches!(error, Some(StoreError::Busy)));
        assert_eq!(failed, [(1, "2026-11".to_owned(), 5)], "the failed count is kept");
        assert_eq!(written.into_inner().unwrap().len(), 2, "the counts after the failure are still written");
    }

    #[test]
    fn next_month_boundaries() {
        assert_eq!(seconds_to_next_month(datetime!(2026-12-31 23:59:00 UTC)), 60);
        assert_eq!(seconds_to_next_month(datetime!(2026-02-28 00:00:00 UTC)), 86_400);
    }
}
