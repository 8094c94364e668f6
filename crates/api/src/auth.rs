//! API keys: generation, hashing, lookup with a short cache, and the middleware that
//! authenticates, authorises by scope and applies the rate limits.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use hashlink::LruCache;
use model::{ApiKey, NewApiKey, Scope, SocialId};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::cache::TtlCache;
use crate::error::{self, ApiError};
use crate::limit::LimitKind;

/// Who is calling: what the key allows and, for monitor keys, which company.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key_id: Option<i64>,
    pub scopes: Vec<Scope>,
    pub company: Option<SocialId>,
    /// The organisation of the key: its portfolios are the caller's.
    pub org: Option<i64>,
}

/// A freshly generated key: the secret to hand to the user once, and what to store.
pub struct GeneratedKey {
    pub secret: String,
    pub record: NewApiKey,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no random source: {0}")]
    Random(String),
    #[error("a key with the monitor scope must name its company (--company SOCIAL_ID)")]
    MonitorWithoutCompany,
    #[error("a key needs at least one scope")]
    NoScope,
}

/// Makes a random key `rk_` + 64 hex digits (256 bits) and its stored form.
pub fn generate_key(
    name: &str,
    scopes: Vec<Scope>,
    company: Option<SocialId>,
    per_minute: u32,
    monthly: u64,
) -> Result<GeneratedKey, KeyError> {
    if scopes.is_empty() {
        return Err(KeyError::NoScope);
    }
    if scopes.contains(&Scope::Monitor) && company.is_none() {
        return Err(KeyError::MonitorWithoutCompany);
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| KeyError::Random(e.to_string()))?;
    let secret = format!("rk_{}", hex::encode(bytes));
    let record = NewApiKey {
        name: name.to_owned(),
        prefix: secret[..11].to_owned(),
        hash: hash_key(&secret),
        scopes,
        company,
        org: None,
        per_minute,
        monthly,
    };
    Ok(GeneratedKey { secret, record })
}

/// SHA-256 of a key, hex: the only form in which keys are stored.
pub fn hash_key(secret: &str) -> String {
    hex::encode(digest(secret))
}

/// SHA-256 of a key: what the caches of this process are keyed by.
pub type KeyDigest = [u8; 32];

pub fn digest(secret: &str) -> KeyDigest {
    Sha256::digest(secret.as_bytes()).into()
}

/// Keys looked up recently (by hash), so that a burst of requests costs one query per
/// key. Entries live `ttl`: a deactivation reaches every API process within that time.
/// Keys that were not found are kept apart, in a bounded least-recently-used list, so a
/// flood of random keys never evicts the real ones.
pub struct KeyCache {
    ttl: Duration,
    good: TtlCache<KeyDigest, Arc<ApiKey>>,
    bad: Mutex<LruCache<KeyDigest, Instant>>,
    /// Hashes of keys that authenticated recently (for [`RECENT`]), whatever the cache's
    /// TTL: such a key is let through an address's failure limit (it is still looked up
    /// and checked), so a real client behind a busy address is not locked out.
    recent: std::sync::RwLock<LruCache<KeyDigest, Instant>>,
    /// One reader of a key's record at a time (striped by the hash).
    loading: [tokio::sync::Mutex<()>; 16],
}

/// Unknown keys remembered at most, and keys that authenticated recently.
const BAD_KEYS: usize = 10_000;
const RECENT_KEYS: usize = 10_000;
/// How long a key that authenticated counts as known.
const RECENT: Duration = Duration::from_secs(3600);
/// A key's time in the recent list is renewed at most this often (not at every request).
const RECENT_RENEW: Duration = Duration::from_secs(60);

impl KeyCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            good: TtlCache::new(ttl, 10_000, crate::cache::Epoch::default()),
            bad: Mutex::new(LruCache::new(BAD_KEYS)),
            recent: std::sync::RwLock::new(LruCache::new(RECENT_KEYS)),
            loading: Default::default(),
        }
    }

    fn bad(&self) -> std::sync::MutexGuard<'_, LruCache<KeyDigest, Instant>> {
        self.bad.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn recent(&self) -> std::sync::RwLockWriteGuard<'_, LruCache<KeyDigest, Instant>> {
        self.recent.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn noted(&self, key: &KeyDigest) -> Option<Instant> {
        self.recent.read().unwrap_or_else(std::sync::PoisonError::into_inner).peek(key).copied()
    }

    /// Did the key of this digest authenticate in the last hour (in this process)?
    pub fn known(&self, key: &KeyDigest) -> bool {
        self.noted(key).is_some_and(|at| at.elapsed() < RECENT)
    }

    /// Notes that the key of this digest authenticated (a shared read when it was noted
    /// less than [`RECENT_RENEW`] ago, as it is for every request of a busy key).
    pub fn authenticated(&self, key: &KeyDigest) {
        if self.noted(key).is_some_and(|at| at.elapsed() < RECENT_RENEW) {
            return;
        }
        let mut recent = self.recent();
        match recent.get_mut(key) {
            Some(at) if at.elapsed() < RECENT_RENEW => {}
            Some(at) => *at = Instant::now(),
            None => {
                recent.insert(*key, Instant::now());
            }
        }
    }

    /// The key of this digest: read at most the TTL ago (one caller reads it again while
    /// the others use the kept record, so a busy key never makes every request wait on
    /// the store at once), or none.
    pub async fn lookup(&self, store: &dyn store::Store, key: &KeyDigest) -> Result<Option<Arc<ApiKey>>, ApiError> {
        if !self.ttl.is_zero()
            && self.good.get(key).is_none()
            && self.bad().get(key).is_some_and(|at| at.elapsed() < self.ttl)
        {
            return Ok(None);
        }
        let stripe = usize::from(key[0]) % self.loading.len();
        let found = self
            .good
            .get_or_load(
                key,
                &self.loading[stripe],
                |_| true,
                async || {
                    let hash = hex::encode(key);
                    match store.key_by_hash(&hash).await {
                        // The index lookup found the row by hash; confirm in constant time anyway.
                        Ok(Some(k)) if bool::from(k.hash.as_bytes().ct_eq(hash.as_bytes())) => Ok(Arc::new(k)),
                        Ok(_) => Err(None),
                        Err(e) => Err(Some(e)),
                    }
                },
            )
            .await;
        match found {
            Ok(k) => Ok(Some(k)),
            Err(None) => {
                if !self.ttl.is_zero() {
                    self.bad().insert(*key, Instant::now());
                }
                Ok(None)
            }
            Err(Some(e)) => Err(e.into()),
        }
    }
}

/// Failed authentications (no key, an unknown or deactivated one) per client address
/// and calendar minute. Past [`FAILURES_PER_MINUTE`], an address's requests are answered
/// 429 before any key lookup, unless their key authenticated in the last hour: a client
/// guessing keys cannot make the server query the store for each guess, and a real
/// client behind the same address is not locked out.
pub struct FailureLimiter {
    per_minute: u32,
    seen: Mutex<LruCache<IpAddr, (i64, u32)>>,
    /// The last minute an address reached its limit in: in any other minute no address
    /// is blocked, and a request needs no look-up.
    over_in: std::sync::atomic::AtomicI64,
}

/// Failed authentications an address may make in a minute, by default.
pub const FAILURES_PER_MINUTE: u32 = 60;

impl FailureLimiter {
    /// `per_minute` failures allowed per address; 0: no limit.
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            seen: Mutex::new(LruCache::new(100_000)),
            over_in: std::sync::atomic::AtomicI64::new(i64::MIN),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, LruCache<IpAddr, (i64, u32)>> {
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn minute() -> (i64, u64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        (now.div_euclid(60), u64::try_from(60 - now.rem_euclid(60)).unwrap_or(60))
    }

    /// Seconds until the address may try again, when it is over its failures.
    pub fn blocked(&self, ip: IpAddr) -> Option<Duration> {
        if self.per_minute == 0 {
            return None;
        }
        let (minute, left) = Self::minute();
        if self.over_in.load(std::sync::atomic::Ordering::Relaxed) != minute {
            return None;
        }
        match self.map().get(&ip) {
            Some((m, n)) if *m == minute && *n >= self.per_minute => Some(Duration::from_secs(left)),
            _ => None,
        }
    }

    pub fn failed(&self, ip: IpAddr) {
        let (minute, _) = Self::minute();
        let mut map = self.map();
        let n = match map.get_mut(&ip) {
            Some((m, n)) if *m == minute => {
                *n = n.saturating_add(1);
                *n
            }
            _ => {
                map.insert(ip, (minute, 1));
                1
            }
        };
        if self.per_minute > 0 && n >= self.per_minute {
            self.over_in.store(minute, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The scope an operation needs, from its path.
pub fn scope_for_path(path: &str) -> Option<Scope> {
    let p = path.strip_prefix('/')?;
    if p.starts_with("general-") {
        Some(Scope::General)
    } else if p.starts_with("vulnerability-") {
        Some(Scope::Vulnerability)
    } else if p.starts_with("underwriter-") {
        Some(Scope::Underwriter)
    } else if p.starts_with("monitor-") {
        Some(Scope::Monitor)
    } else if p.starts_with("portfolio-") {
        Some(Scope::Portfolio)
    } else {
        None
    }
}

/// The client a request comes from: the connection's address, or, when that is a trusted
/// balancer, the last address of `X-Forwarded-For` that is not one (balancers append the
/// address they saw; what a client writes itself comes earlier and is not believed).
/// An unreadable header leaves the balancer's address.
pub fn client_address(peer: IpAddr, headers: &axum::http::HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let mut client = peer;
    // At most 32 hops are looked at: the header is the client's to make long.
    let hops: Vec<&str> =
        headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).collect();
    for hop in hops.iter().rev().take(32) {
        match hop.trim().parse::<IpAddr>() {
            Ok(ip) if trusted.contains(&ip) => continue,
            Ok(ip) => {
                client = ip;
                break;
            }
            Err(_) => break,
        }
    }
    client
}

/// What every operation checks first: key → active → scope → rate limits. Admitted,
/// the request carries its [`Caller`]; refused, the answer to give (a failed key counts
/// against the client's address). `needed` is the operation's scope.
pub(crate) async fn admit(app: &AppState, req: &mut Request, needed: Option<Scope>) -> Result<(), Response> {
    // The key as sent (trimmed; a header that is not text is no key), and its digest.
    // Two `apikey` headers are no key: neither is picked silently.
    let mut sent = req.headers().get_all("apikey").iter();
    let first = sent.next();
    let two = sent.next().is_some();
    let raw = first.map(|v| v.to_str().unwrap_or("\u{0}").trim()).filter(|v| !v.is_empty());
    let key = raw.filter(|v| v.len() <= 256 && !two).map(digest);
    let too_long = (raw.is_some() || two) && key.is_none();
    let peer = req.extensions().get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0.ip());
    let client = peer.map(|ip| client_address(ip, req.headers(), &app.config().trusted_proxies));
    if let Some(ip) = client
        && let Some(retry_after) = app.failures().blocked(ip)
        && key.as_ref().is_none_or(|k| !app.keys().known(k))
    {
        return Err(ApiError::TooManyRequests { message: error::PER_MINUTE, retry_after }.into_response());
    }
    match check(app, key.as_ref(), too_long, two, needed).await {
        Ok(caller) => {
            if let Some(k) = &key {
                app.keys().authenticated(k);
            }
            req.extensions_mut().insert(caller);
            Ok(())
        }
        Err(e) => {
            if let (Some(ip), ApiError::Unauthorized(_)) = (client, &e) {
                app.failures().failed(ip);
            }
            Err(e.into_response())
        }
    }
}

/// `key`: the digest of the key sent, none when none was sent or `too_long` (more than
/// 256 characters, which is no key of ours, or `two` keys).
async fn check(
    app: &AppState,
    key: Option<&KeyDigest>,
    too_long: bool,
    two: bool,
    needed: Option<Scope>,
) -> Result<Caller, ApiError> {
    if key.is_none() && !too_long {
        return Err(ApiError::Unauthorized(error::KEY_REQUIRED));
    }
    if two {
        // Before mock mode, which takes any one key.
        return Err(ApiError::Unauthorized(error::KEY_INVALID));
    }
    if let Some(mock) = app.mock() {
        // Mock mode: any key is accepted and reports on the sample company.
        return Ok(Caller {
            key_id: None,
            scopes: Scope::ALL.to_vec(),
            company: Some(mock.company.clone()),
            org: None,
        });
    }
    let key = key.ok_or(ApiError::Unauthorized(error::KEY_INVALID))?;
    let key = app.keys().lookup(app.store(), key).await?.ok_or(ApiError::Unauthorized(error::KEY_INVALID))?;
    if !key.active {
        return Err(ApiError::Unauthorized(error::KEY_DEACTIVATED));
    }
    let needed = needed.ok_or(ApiError::RouteNotFound)?;
    if !key.scopes.contains(&needed)
        || (needed == Scope::Monitor && key.company.is_none())
        || (needed == Scope::Portfolio && key.org.is_none())
    {
        return Err(ApiError::Forbidden);
    }
    if let Err(limited) = app.limiter().check(&key).await? {
        let message = match limited.kind {
            LimitKind::PerMinute => error::PER_MINUTE,
            LimitKind::Monthly => error::MONTHLY,
        };
        return Err(ApiError::TooManyRequests { message, retry_after: limited.retry_after });
    }
    Ok(Caller { key_id: Some(key.id), scopes: key.scopes.clone(), company: key.company.clone(), org: key.org })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_random_and_hashed() {
        let a = generate_key("a", vec![Scope::General], None, 60, 1000).unwrap();
        let b = generate_key("b", vec![Scope::General], None, 60, 1000).unwrap();
        assert_ne!(a.secret, b.secret);
        assert_eq!(a.secret.len(), 67);
        assert!(a.secret.starts_with(&a.record.prefix));
        assert_eq!(a.record.hash, hash_key(&a.secret));
        assert!(!a.record.hash.contains(&a.secret[3..]));
        assert!(matches!(generate_key("m", vec![Scope::Monitor], None, 1, 1), Err(KeyError::MonitorWithoutCompany)));
        assert!(matches!(generate_key("n", vec![], None, 1, 1), Err(KeyError::NoScope)));
    }

    #[test]
    fn a_client_behind_a_trusted_balancer_is_the_last_untrusted_hop() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let balancer = ip("10.0.0.2");
        let mut h = axum::http::HeaderMap::new();
        h.insert("x-forwarded-for", "6.6.6.6, 203.0.113.7".parse().unwrap());
        // Not trusted: the connection is the client, whatever the header says.
        assert_eq!(client_address(balancer, &h, &[]), balancer);
        assert_eq!(client_address(ip("198.51.100.1"), &h, &[balancer]), ip("198.51.100.1"));
        // Trusted: the address the balancer saw, not what the client wrote before it.
        assert_eq!(client_address(balancer, &h, &[balancer]), ip("203.0.113.7"));
        // Two balancers in a row.
        h.insert("x-forwarded-for", "203.0.113.7, 10.0.0.3".parse().unwrap());
        assert_eq!(client_address(balancer, &h, &[balancer, ip("10.0.0.3")]), ip("203.0.113.7"));
        // Garbage, or nothing: the balancer's own address.
        h.insert("x-forwarded-for", "not-an-ip".parse().unwrap());
        assert_eq!(client_address(balancer, &h, &[balancer]), balancer);
        assert_eq!(client_address(balancer, &axum::http::HeaderMap::new(), &[balancer]), balancer);
    }

    #[test]
    fn scopes_follow_the_operation_group() {
        assert_eq!(scope_for_path("/general-getsocialid-by-domain"), Some(Scope::General));
        assert_eq!(scope_for_path("/monitor-getcompanyinfo"), Some(Scope::Monitor));
        assert_eq!(scope_for_path("/portfolio-list"), Some(Scope::Portfolio));
        assert_eq!(scope_for_path("/healthz"), None);
    }
}
