//! CPU-bound answers (the tail-risk simulation) run off the async runtime, on tokio's
//! blocking threads, so a burst of them never holds up the runtime's threads and the
//! cheap requests they serve. Two bounds keep one tenant from taking the machine: at
//! most [`PER_KEY`] of them in flight per API key (the next is a 429 with Retry-After at
//! once), and at most one per core but one running in the process (a computation waits
//! up to [`QUEUE_WAIT`] for its turn, then is a 503 with Retry-After).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{self, ApiError};

/// Computations one API key may have in flight (waiting or running).
pub const PER_KEY: usize = 2;

/// How long a computation waits for a free thread before it is refused (503).
pub const QUEUE_WAIT: Duration = Duration::from_secs(2);

/// How long a client is told to wait when refused.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Computations running at once in the process: one core is left to the runtime (at
/// least one runs).
pub fn running_bound() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1)).max(1)
}

/// The two bounds of one process.
pub struct Bounds {
    running: Arc<tokio::sync::Semaphore>,
    per_key: usize,
    wait: Duration,
    /// Computations in flight by key id (`None`: a caller without a key id — mock mode,
    /// the trusted router — all counted as one).
    in_flight: Arc<Mutex<HashMap<Option<i64>, usize>>>,
}

/// A key's place among its computations in flight, given back when dropped.
struct Slot {
    in_flight: Arc<Mutex<HashMap<Option<i64>, usize>>>,
    key: Option<i64>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut map = self.in_flight.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = map.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.key);
            }
        }
    }
}

impl Bounds {
    /// `running` computations at once in the process, `per_key` in flight per key, a
    /// wait of at most `wait` for a turn.
    pub fn new(running: usize, per_key: usize, wait: Duration) -> Self {
        Self {
            running: Arc::new(tokio::sync::Semaphore::new(running.max(1))),
            per_key: per_key.max(1),
            wait,
            in_flight: Arc::default(),
        }
    }

    /// The bounds of an API process: [`running_bound`], [`PER_KEY`], [`QUEUE_WAIT`].
    pub fn of_process() -> Self {
        Self::new(running_bound(), PER_KEY, QUEUE_WAIT)
    }

    fn slot(&self, key: Option<i64>) -> Option<Slot> {
        let mut map = self.in_flight.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = map.entry(key).or_insert(0);
        if *n >= self.per_key {
            return None;
        }
        *n += 1;
        Some(Slot { in_flight: self.in_flight.clone(), key })
    }

    /// Runs `work` on a blocking thread for the caller of key `key`, within the bounds.
    /// The key's place and the thread's turn are held until `work` ends, even when the
    /// request is dropped before (the work goes on: the bounds count the CPU it takes).
    pub async fn run<T: Send + 'static>(
        &self,
        key: Option<i64>,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let slot = self
            .slot(key)
            .ok_or(ApiError::TooManyRequests { message: error::COMPUTATIONS_PER_KEY, retry_after: RETRY_AFTER })?;
        let turn = match tokio::time::timeout(self.wait, self.running.clone().acquire_owned()).await {
            Ok(Ok(turn)) => turn,
            _ => return Err(ApiError::Unavailable),
        };
        tokio::task::spawn_blocking(move || {
            let _held = (slot, turn);
            work()
        })
        .await
        .map_err(|e| ApiError::Internal(format!("a computation failed: {e}")))
    }

    /// Computations in flight for `key` now.
    #[cfg(test)]
    fn in_flight(&self, key: Option<i64>) -> usize {
        self.in_flight.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_key_past_its_bound_is_refused_and_its_places_come_back() {
        let bounds = Arc::new(Bounds::new(1, 2, Duration::from_millis(300)));
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        let hold = |w: Arc<Mutex<std::sync::mpsc::Receiver<()>>>| {
            move || {
                let _ = w.lock().unwrap().recv();
            }
        };
        // Two in flight for key 1: one running (held), one waiting for the thread.
        let first = tokio::spawn({
            let (b, w) = (bounds.clone(), wait.clone());
            async move { b.run(Some(1), hold(w)).await }
        });
        while bounds.in_flight(Some(1)) < 1 {
            tokio::task::yield_now().await;
        }
        let second = tokio::spawn({
            let (b, w) = (bounds.clone(), wait.clone());
            async move { b.run(Some(1), hold(w)).await }
        });
        while bounds.in_flight(Some(1)) < 2 {
            tokio::task::yield_now().await;
        }
        let third = bounds.run(Some(1), || ()).await;
        assert!(matches!(third, Err(ApiError::TooManyRequests { message: error::COMPUTATIONS_PER_KEY, .. })));
        // The one waiting for the thread is refused past the wait (503), and gives its
        // place back.
        assert!(matches!(second.await.unwrap(), Err(ApiError::Unavailable)));
        assert_eq!(bounds.in_flight(Some(1)), 1);
        // Another key is not refused for key 1's work: it gets the thread once free.
        let other = tokio::spawn({
            let b = bounds.clone();
            async move { b.run(Some(2), || 2).await }
        });
        go.send(()).unwrap();
        assert!(first.await.unwrap().is_ok());
        assert_eq!(other.await.unwrap().unwrap(), 2);
        assert_eq!(bounds.in_flight(Some(1)), 0);
        assert_eq!(bounds.run(Some(1), || 7).await.unwrap(), 7);
    }
}
