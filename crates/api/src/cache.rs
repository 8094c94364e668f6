//! Short-lived read caches. Under load most requests read the same few companies;
//! serving them from memory for a second keeps the store out of the hot path while a
//! rescan still shows within seconds. Writes made through this process clear them.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// A map whose entries expire after `ttl`; a `ttl` of zero disables it. Bounded: when
/// full it starts over, which costs a few misses and never unbounded memory.
pub struct TtlCache<K, V> {
    ttl: Duration,
    max: usize,
    map: RwLock<HashMap<K, (V, Instant)>>,
}

impl<K: Hash + Eq, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration, max: usize) -> Self {
        Self { ttl, max, map: RwLock::new(HashMap::new()) }
    }

    /// Whether entries are kept at all (a TTL of zero keeps none).
    pub fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    pub fn get(&self, key: &K) -> Option<V> {
        match self.lookup(key) {
            Some((v, true)) => Some(v),
            _ => None,
        }
    }

    /// The entry and whether it is fresh. An entry past `ttl` but younger than twice
    /// that is returned as stale, so that one caller can rebuild it while the others
    /// keep being served.
    pub fn lookup(&self, key: &K) -> Option<(V, bool)> {
        if self.ttl.is_zero() {
            return None;
        }
        let map = self.map.read().ok()?;
        let (v, at) = map.get(key)?;
        let age = at.elapsed();
        if age < self.ttl {
            Some((v.clone(), true))
        } else if age < self.ttl * 2 {
            Some((v.clone(), false))
        } else {
            None
        }
    }

    pub fn insert(&self, key: K, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        if let Ok(mut map) = self.map.write() {
            if map.len() >= self.max {
                map.clear();
            }
            map.insert(key, (value, Instant::now()));
        }
    }

    pub fn clear(&self) {
        if let Ok(mut map) = self.map.write() {
            map.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_zero_disables() {
        let c = TtlCache::new(Duration::from_millis(30), 2);
        c.insert(1, "a");
        assert_eq!(c.get(&1), Some("a"));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(c.get(&1), None);
        assert_eq!(c.lookup(&1), Some(("a", false)), "stale, still usable");
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(c.lookup(&1), None);
        c.insert(1, "a");
        c.insert(2, "b");
        c.insert(3, "c");
        assert_eq!((c.get(&1), c.get(&3)), (None, Some("c")), "full: starts over");
        let off = TtlCache::new(Duration::ZERO, 10);
        off.insert(1, "a");
        assert_eq!(off.get(&1), None);
    }
}
