//! Read caches keyed by the version of the data they were read from. Under load most
//! requests read the same few companies; serving them from memory keeps the store out
//! of the hot path. Every write of the data moves its version in the database
//! (`store::DataVersions`); each process polls the versions and moves its [`Epoch`]
//! when they change, or at once when it writes through the API itself. An entry read in
//! an earlier epoch is never served, so no answer outlives the write that changed it by
//! more than one poll; the TTL bounds what versions do not cover (lookup counts) and
//! memory.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// A counter a cache's entries are tagged with: moved on, every entry read before is
/// stale.
#[derive(Clone, Default)]
pub struct Epoch(Arc<AtomicU64>);

impl Epoch {
    pub fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    pub fn advance(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A map whose entries expire after `ttl` or when their epoch moves on; a `ttl` of zero
/// disables it. Bounded: when full it starts over, which costs a few misses and never
/// unbounded memory.
pub struct TtlCache<K, V> {
    ttl: Duration,
    max: usize,
    epoch: Epoch,
    map: RwLock<HashMap<K, (V, Instant, u64)>>,
}

impl<K: Hash + Eq, V: Clone> TtlCache<K, V> {
    /// A cache whose entries are stale once `epoch` moves on.
    pub fn new(ttl: Duration, max: usize, epoch: Epoch) -> Self {
        Self { ttl, max, epoch, map: RwLock::new(HashMap::new()) }
    }

    /// The epoch to tag a value with: read it before reading the value.
    pub fn epoch(&self) -> u64 {
        self.epoch.now()
    }

    /// The value kept for `key` if it was read less than the TTL ago, in this epoch.
    pub fn get(&self, key: &K) -> Option<V> {
        if self.ttl.is_zero() {
            return None;
        }
        self.aged(key).filter(|(_, age)| *age < self.ttl).map(|(v, _)| v)
    }

    /// The value for `key`, read at most `ttl` ago in this epoch, loading it with `load`
    /// when needed, with one caller loading at a time (`lock`, shared by the keys of a
    /// stripe):
    /// - younger than half the TTL: the kept value;
    /// - in the second half: the kept value, and the caller that gets `lock` without
    ///   waiting loads it anew meanwhile (the others are not held up);
    /// - absent, older than the TTL or of an earlier epoch: loaded; callers that arrive
    ///   while it loads wait for that load and take its value instead of loading again.
    ///
    /// Errors are not kept, nor values `keep` refuses (too large). With a TTL of zero
    /// every call loads.
    pub async fn get_or_load<E>(
        &self,
        key: &K,
        lock: &tokio::sync::Mutex<()>,
        keep: fn(&V) -> bool,
        load: impl AsyncFnOnce() -> Result<V, E>,
    ) -> Result<V, E>
    where
        K: Clone,
    {
        if self.ttl.is_zero() {
            return load().await;
        }
        match self.aged(key) {
            Some((v, age)) if age < self.ttl / 2 => return Ok(v),
            Some((v, age)) if age < self.ttl => {
                let Ok(_loading) = lock.try_lock() else { return Ok(v) };
                // Another caller may have loaded it while this one took the lock.
                if let Some((v, age)) = self.aged(key)
                    && age < self.ttl / 2
                {
                    return Ok(v);
                }
                let epoch = self.epoch();
                let v = load().await?;
                if keep(&v) {
                    self.insert_read_in(key.clone(), v.clone(), epoch);
                }
                return Ok(v);
            }
            _ => {}
        }
        let _loading = lock.lock().await;
        if let Some((v, age)) = self.aged(key)
            && age < self.ttl
        {
            return Ok(v);
        }
        let epoch = self.epoch();
        let v = load().await?;
        if keep(&v) {
            self.insert_read_in(key.clone(), v.clone(), epoch);
        }
        Ok(v)
    }

    /// The entry for `key` and its age, if it was read in this epoch.
    fn aged(&self, key: &K) -> Option<(V, Duration)> {
        let map = self.map.read().ok()?;
        let (v, at, epoch) = map.get(key)?;
        (*epoch == self.epoch()).then(|| (v.clone(), at.elapsed()))
    }

    /// Keeps `value`, read after [`TtlCache::epoch`] returned `epoch`: if the epoch has
    /// moved on since, the value may predate a write and is never served.
    pub fn insert_read_in(&self, key: K, value: V, epoch: u64) {
        if self.ttl.is_zero() {
            return;
        }
        if let Ok(mut map) = self.map.write() {
            if map.len() >= self.max {
                map.clear();
            }
            map.insert(key, (value, Instant::now(), epoch));
        }
    }

    pub fn clear(&self) {
        if let Ok(mut map) = self.map.write() {
            map.clear();
        }
    }
}

/// Locks a cache's loads take ([`TtlCache::get_or_load`]), striped by the key: the
/// same key always takes the same lock, different keys mostly different ones.
#[derive(Default)]
pub struct Stripes([tokio::sync::Mutex<()>; 16]);

impl Stripes {
    pub fn of(&self, key: &impl Hash) -> &tokio::sync::Mutex<()> {
        use std::hash::Hasher;
        // A fixed hasher: the same key always takes the same stripe.
        let mut fixed = std::hash::DefaultHasher::new();
        key.hash(&mut fixed);
        &self.0[(fixed.finish() % 16) as usize]
    }
}

/// Identical calls at the same time share one: the first runs it, and the callers that
/// arrive while it runs take its result instead of making the call again (a repeated
/// rescan under load is one store call, not one per request). Nothing is kept once the
/// call has ended: the next call runs anew.
pub struct Coalesce<K, V> {
    running: std::sync::Mutex<HashMap<K, Arc<tokio::sync::OnceCell<V>>>>,
}

impl<K, V> Default for Coalesce<K, V> {
    fn default() -> Self {
        Self { running: std::sync::Mutex::new(HashMap::new()) }
    }
}

impl<K: Hash + Eq + Clone, V: Clone> Coalesce<K, V> {
    /// The result of `call`, or of the same call (by `key`) already running.
    pub async fn run(&self, key: K, call: impl AsyncFnOnce() -> V) -> V {
        let running = || self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cell = running().entry(key.clone()).or_default().clone();
        // A caller that goes away while running it leaves the call to the next waiter.
        let value = cell.get_or_init(|| call()).await.clone();
        let mut running = running();
        if running.get(&key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            running.remove(&key);
        }
        value
    }

    /// Calls running now.
    pub fn running(&self) -> usize {
        self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_zero_disables() {
        let c = TtlCache::new(Duration::from_millis(30), 2, Epoch::default());
        c.insert_read_in(1, "a", c.epoch());
        assert_eq!(c.get(&1), Some("a"));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(c.get(&1), None, "expired");
        c.insert_read_in(1, "a", c.epoch());
        c.insert_read_in(2, "b", c.epoch());
        c.insert_read_in(3, "c", c.epoch());
        assert_eq!((c.get(&1), c.get(&3)), (None, Some("c")), "full: starts over");
        let off = TtlCache::new(Duration::ZERO, 10, Epoch::default());
        off.insert_read_in(1, "a", 0);
        assert_eq!(off.get(&1), None);
    }

    #[tokio::test]
    async fn entries_of_an_earlier_epoch_are_never_served() {
        let epoch = Epoch::default();
        let c = TtlCache::new(Duration::from_secs(60), 10, epoch.clone());
        let lock = tokio::sync::Mutex::new(());
        c.insert_read_in(1, "old", c.epoch());
        assert_eq!(c.get(&1), Some("old"));
        epoch.advance();
        assert_eq!(c.get(&1), None, "a write moved the epoch: the entry is stale");
        // A value read before the epoch moved, inserted after: not served either.
        let before = c.epoch();
        epoch.advance();
        c.insert_read_in(2, "raced", before);
        assert_eq!(c.get(&2), None);
        // A load that a write overtakes while it reads is not kept.
        let v = c
            .get_or_load(
                &3,
                &lock,
                |_| true,
                async || {
                    epoch.advance();
                    Ok::<_, ()>("during")
                },
            )
            .await;
        assert_eq!(v, Ok("during"), "the caller gets what it read");
        assert_eq!(c.get(&3), None, "but it is not kept");
        let v = c.get_or_load(&3, &lock, |_| true, async || Ok::<_, ()>("after")).await;
        assert_eq!((v, c.get(&3)), (Ok("after"), Some("after")));
    }

    #[tokio::test]
    async fn one_caller_loads_and_the_others_wait_for_it_or_take_the_kept_value() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU32, Ordering};
        let cache = Arc::new(TtlCache::new(Duration::from_millis(200), 10, Epoch::default()));
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        let loads = Arc::new(AtomicU32::new(0));
        let load = |loads: Arc<AtomicU32>| {
            async move || {
                loads.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, ()>(loads.load(Ordering::SeqCst))
            }
        };
        // 20 callers of an absent key: one load, everyone gets its value.
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (cache, lock, loads) = (cache.clone(), lock.clone(), loads.clone());
            tasks.push(tokio::spawn(async move { cache.get_or_load(&1, &lock, |_| true, load(loads)).await }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap(), Ok(1));
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        // Young: kept. In the second half: kept for the callers while one loads anew.
        assert_eq!(cache.get_or_load(&1, &lock, |_| true, load(loads.clone())).await, Ok(1));
        tokio::time::sleep(Duration::from_millis(120)).await;
        let (a, b) = tokio::join!(
            cache.get_or_load(&1, &lock, |_| true, load(loads.clone())),
            cache.get_or_load(&1, &lock, |_| true, load(loads.clone()))
        );
        assert_eq!(loads.load(Ordering::SeqCst), 2, "one reload");
        assert!(a == Ok(2) && b == Ok(1) || a == Ok(1) && b == Ok(2), "{a:?} {b:?}");
        // Past the TTL nothing kept is served.
        tokio::time::sleep(Duration::from_millis(220)).await;
        assert_eq!(cache.get_or_load(&1, &lock, |_| true, load(loads.clone())).await, Ok(3));
        // Errors are not kept; a TTL of zero always loads.
        let off: TtlCache<i32, u32> = TtlCache::new(Duration::ZERO, 10, Epoch::default());
        assert_eq!(off.get_or_load(&1, &lock, |_| true, async || Err::<u32, ()>(())).await, Err(()));
        assert_eq!(off.get_or_load(&1, &lock, |_| true, async || Ok::<u32, ()>(7)).await, Ok(7));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_at_the_same_time_share_one_and_later_ones_run_anew() {
        let calls = Arc::new(AtomicU64::new(0));
        let coalesce = Arc::new(Coalesce::<&'static str, u64>::default());
        let gate = Arc::new(tokio::sync::Notify::new());
        let entered = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (calls, coalesce, gate, entered) = (calls.clone(), coalesce.clone(), gate.clone(), entered.clone());
            tasks.push(tokio::spawn(async move {
                // Counted in the same poll that joins the call (no await in between).
                entered.fetch_add(1, Ordering::SeqCst);
                coalesce
                    .run("job", async || {
                        gate.notified().await;
                        calls.fetch_add(1, Ordering::SeqCst) + 1
                    })
                    .await
            }));
        }
        // Every caller is in before the one call ends.
        while entered.load(Ordering::SeqCst) < 20 {
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        gate.notify_one();
        for t in tasks {
            assert_eq!(t.await.unwrap(), 1, "every caller got the one call's result");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(coalesce.running(), 0, "nothing kept once it ended");
        // Asked again afterwards: a new call.
        let again = coalesce.run("job", async || calls.fetch_add(1, Ordering::SeqCst) + 1).await;
        assert_eq!(again, 2);
    }
}
