//! Served forms kept in memory, least recently used out first.
//!
//! A get-cve-from-cpe-id answer of 500 records is ~1.3 MB of served forms. Reading them
//! from SQLite is most of the answer's cost: every text function copies its arguments to
//! terminate them, the aggregate that carries them past sqlx's per-row channel copies
//! them again, and sqlx copies the result twice more. Kept here, a record costs a hash
//! lookup.
//!
//! An entry is valid for one version of a record: it is keyed by the CVE id and checked
//! against the last-modified time the candidates query returns. The store replaces a
//! record only by a newer one, and its served form is rendered from the record alone
//! (KEV, EPSS and CAPEC are joined at read time), so an entry whose time matches is the
//! stored served form, even when another process wrote the database.

use std::sync::Mutex;

use hashlink::LinkedHashMap;
use model::CveId;

use crate::SharedStr;

/// What an entry costs beyond its text: the map's node, the key and the string headers.
const ENTRY_OVERHEAD: usize = 160;

#[derive(Clone)]
struct Entry {
    last_modified: String,
    cwe: SharedStr,
    json: SharedStr,
}

impl Entry {
    fn cost(&self) -> usize {
        self.last_modified.len() + self.cwe.len() + self.json.len() + ENTRY_OVERHEAD
    }
}

pub(super) struct ServedCache {
    budget: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: LinkedHashMap<CveId, Entry>,
    bytes: usize,
}

impl std::fmt::Debug for ServedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("ServedCache")
            .field("budget", &self.budget)
            .field("entries", &inner.entries.len())
            .field("bytes", &inner.bytes)
            .finish()
    }
}

impl ServedCache {
    pub(super) fn new(budget: usize) -> ServedCache {
        ServedCache { budget, inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The CWE and served form of each record of `wanted` (id, last-modified) that is
    /// kept for that version, in order; `None` for the others.
    pub(super) fn get_many<'a>(
        &self,
        wanted: impl Iterator<Item = (&'a CveId, &'a str)>,
    ) -> Vec<Option<(SharedStr, SharedStr)>> {
        let mut inner = self.lock();
        wanted
            .map(|(id, last_modified)| {
                let e = inner.entries.to_back(id)?;
                (e.last_modified == last_modified).then(|| (e.cwe.clone(), e.json.clone()))
            })
            .collect()
    }

    /// Keeps the served form of one version of a record, in text of its own (a piece of
    /// a larger answer would keep all of it alive), and lets the least recently used
    /// entries go to stay within the budget. A form larger than the budget is not kept.
    pub(super) fn insert(&self, id: &CveId, last_modified: &str, cwe: &str, json: &str) {
        // Sized before copying: with no room (or no cache) nothing is copied.
        if last_modified.len() + cwe.len() + json.len() + ENTRY_OVERHEAD > self.budget {
            return;
        }
        let entry = Entry { last_modified: last_modified.to_owned(), cwe: cwe.into(), json: json.into() };
        let cost = entry.cost();
        let mut inner = self.lock();
        if let Some(old) = inner.entries.insert(id.clone(), entry) {
            inner.bytes -= old.cost();
        }
        inner.bytes += cost;
        while inner.bytes > self.budget {
            match inner.entries.pop_front() {
                Some((_, old)) => inner.bytes -= old.cost(),
                None => break,
            }
        }
    }

    /// Drops the entries of records that were just written (they would no longer match;
    /// this frees their memory at once).
    pub(super) fn forget<'a>(&self, ids: impl Iterator<Item = &'a CveId>) {
        let mut inner = self.lock();
        for id in ids {
            if let Some(old) = inner.entries.remove(id) {
                inner.bytes -= old.cost();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> CveId {
        CveId::parse(&format!("CVE-2024-{n:04}")).unwrap()
    }

    fn get(cache: &ServedCache, n: u32, at: &str) -> Option<String> {
        let key = id(n);
        cache.get_many(std::iter::once((&key, at))).pop().flatten().map(|(_, json)| json.to_string())
    }

    #[test]
    fn an_entry_serves_only_its_version() {
        let cache = ServedCache::new(1 << 20);
        cache.insert(&id(1), "2024-01-01", "CWE-79", "{\"a\":1}");
        assert_eq!(get(&cache, 1, "2024-01-01").as_deref(), Some("{\"a\":1}"));
        assert_eq!(get(&cache, 1, "2024-02-01"), None, "a newer record");
        assert_eq!(get(&cache, 2, "2024-01-01"), None);
        cache.insert(&id(1), "2024-02-01", "CWE-79", "{\"a\":2}");
        assert_eq!(get(&cache, 1, "2024-02-01").as_deref(), Some("{\"a\":2}"));
        cache.forget([id(1)].iter());
        assert_eq!(get(&cache, 1, "2024-02-01"), None);
        assert_eq!(cache.lock().bytes, 0);
    }

    #[test]
    fn the_least_recently_used_go_first_and_the_budget_holds() {
        let json = "x".repeat(100);
        let one = Entry { last_modified: "t".into(), cwe: "c".into(), json: json.as_str().into() }.cost();
        let cache = ServedCache::new(3 * one);
        for n in 1..=3 {
            cache.insert(&id(n), "t", "c", &json);
        }
        // Reading 1 makes 2 the least recently used.
        assert!(get(&cache, 1, "t").is_some());
        cache.insert(&id(4), "t", "c", &json);
        assert_eq!(get(&cache, 2, "t"), None);
        assert!([1, 3, 4].iter().all(|&n| get(&cache, n, "t").is_some()));
        assert!(cache.lock().bytes <= 3 * one);
        // Larger than the whole budget: not kept, and nothing else is pushed out.
        cache.insert(&id(5), "t", "c", &"y".repeat(4 * one));
        assert_eq!(get(&cache, 5, "t"), None);
        assert!(get(&cache, 4, "t").is_some());
        // No cache (`--served-cache-mib 0`): nothing kept.
        let none = ServedCache::new(0);
        none.insert(&id(1), "t", "c", "{}");
        assert_eq!((get(&none, 1, "t"), none.lock().bytes), (None, 0));
    }
}
