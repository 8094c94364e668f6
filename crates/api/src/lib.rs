//! The HTTP API (docs/API.md, and `docs/openapi.json` generated from this crate): routing,
//! key authentication, rate limits, the handlers of every operation, mock mode and the
//! OpenAPI document.
//!
//! Only this crate knows HTTP and JSON response shapes: domain types are mapped to the
//! response types of `responses` here, never serialised straight from the store. It
//! must never hold SQL or call the network.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use model::{CveId, SocialId};
use store::Store;
use tokio::net::TcpListener;

pub mod auth;
pub mod cache;
pub mod cached;
pub mod compute;
pub mod error;
pub mod limit;
pub mod metrics;
pub mod openapi;
pub mod params;
pub mod redis_limit;
pub mod responses;
mod routes;
pub use auth::FAILURES_PER_MINUTE;
pub use routes::disputes::{MAX_ADDED_PER_DAY, MAX_PENDING_ASSETS};
pub use routes::monitor::MAX_CREATIONS_PER_DAY;
pub use routes::portfolio::MAX_NAMED;

pub use auth::{Caller, GeneratedKey, KeyError, generate_key, hash_key};
pub use limit::{LimitKind, Limited, MemoryLimiter, RateLimiter};
pub use redis_limit::{FailPolicy, RedisLimiter};

/// What mock mode answers with: every lookup that finds nothing falls back to these.
#[derive(Debug, Clone)]
pub struct MockData {
    pub company: SocialId,
    pub cve: CveId,
    pub incident: String,
}

/// Settings of one API process.
#[derive(Clone)]
pub struct Config {
    /// How long a looked-up key is trusted before it is read again.
    pub key_cache_ttl: Duration,
    /// How long answers about companies are served from memory at most. A write of the
    /// data they were read from makes them stale sooner: within [`Config::version_poll`]
    /// when another process wrote it, at once when this one did. Zero: no read cache.
    pub read_cache_ttl: Duration,
    /// The same for answers of the CVE searches (get-cve-from-cpe-id, search-by-vendor),
    /// which change only when feeds are imported.
    pub cve_cache_ttl: Duration,
    /// How often the versions of the stored data are read: the longest a write made by
    /// another process (a worker, an import, another API process) goes unseen.
    pub version_poll: Duration,
    /// How often lookup and usage counters are written to the store.
    pub flush_every: Duration,
    pub mock: Option<MockData>,
    /// Failed authentications a client address may make per minute before its requests
    /// are refused (429) without a key lookup; 0 turns the limit off.
    pub auth_failures_per_minute: u32,
    /// Time for a whole request once its header is read (its body included): past it
    /// the answer is 503 with Retry-After. [`REQUEST_TIMEOUT`] by default.
    pub request_timeout: Duration,
    /// Balancers whose `X-Forwarded-For` names the client (the failed-authentication
    /// limit counts per client address). Empty: the connection's address is the client.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The process's metrics (requests are counted into them); `None`: none kept.
    pub metrics: Option<Arc<metrics::Metrics>>,
    /// Whether `/metrics` is served on the API's address (false when it has an address
    /// of its own: `--metrics-listen`).
    pub metrics_on_api: bool,
    /// Lab mode: `/monitor-add-asset` accepts loopback addresses (the lab's, on
    /// 127.0.0.0/8); no other special address is accepted in any mode. Off by default.
    pub lab_addresses: bool,
    /// The rescan cadence of companies without one of their own (`--rescan-every`): a
    /// rating older than twice its company's cadence is answered as stale.
    pub default_cadence: Duration,
}

/// The cadence the scheduler rescans by when nothing else is said (`--rescan-every`).
pub const DEFAULT_CADENCE: Duration = Duration::from_secs(24 * 3600);

impl Default for Config {
    fn default() -> Self {
        Self {
            key_cache_ttl: Duration::from_secs(1),
            read_cache_ttl: Duration::from_secs(60),
            cve_cache_ttl: Duration::from_secs(300),
            version_poll: Duration::from_millis(250),
            flush_every: Duration::from_secs(1),
            mock: None,
            auth_failures_per_minute: auth::FAILURES_PER_MINUTE,
            request_timeout: REQUEST_TIMEOUT,
            trusted_proxies: Vec::new(),
            metrics: None,
            metrics_on_api: true,
            lab_addresses: false,
            default_cadence: DEFAULT_CADENCE,
        }
    }
}

/// Lookups of companies (`searched_by`), counted in memory and written in batches so
/// that reading a company's score costs no write.
///
/// A reader adds the pending count to the stored one; a flush writes a batch and then
/// takes it off the pending counts, so a read that straddles a flush would count a
/// batch twice or not at all. A flush therefore holds `gate` for writing from before its
/// write to after the subtraction, and [`Lookups::read`] holds it for reading: no read
/// overlaps a flush (the flush waits for reads under way; reads wait for the flush).
/// `flushes` moves on by two with each flush (odd while one is under way), so what was
/// read under one generation can be reused without the gate while it has not moved.
#[derive(Default)]
pub struct Lookups {
    pending: Mutex<HashMap<i64, i64>>,
    flushes: std::sync::atomic::AtomicU64,
    gate: tokio::sync::RwLock<()>,
}

impl Lookups {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<i64, i64>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn record(&self, company: i64) {
        *self.map().entry(company).or_insert(0) += 1;
    }

    /// Lookups of `company` not yet written.
    pub fn pending(&self, company: i64) -> i64 {
        self.map().get(&company).copied().unwrap_or(0)
    }

    pub(crate) fn generation(&self) -> u64 {
        self.flushes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Runs `read` (which reads stored counts and adds [`Lookups::pending`]) while no
    /// flush can run: the stored and the pending count it sees add up exactly.
    pub async fn read<T, F, Fut>(&self, read: F) -> T
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = T>,
    {
        let _no_flush = self.gate.read().await;
        read().await
    }

    pub async fn flush(&self, store: &dyn Store) -> Result<(), store::StoreError> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.map().is_empty() {
            return Ok(());
        }
        let _alone = self.gate.write().await;
        let batch: Vec<(i64, i64)> = self.map().iter().map(|(k, v)| (*k, *v)).collect();
        if batch.is_empty() {
            return Ok(());
        }
        self.flushes.fetch_add(1, SeqCst);
        let written = store.add_lookups(&batch).await;
        if written.is_ok() {
            let mut map = self.map();
            for (id, n) in batch {
                if let Some(v) = map.get_mut(&id) {
                    *v -= n;
                    if *v == 0 {
                        map.remove(&id);
                    }
                }
            }
        }
        self.flushes.fetch_add(1, SeqCst);
        written
    }
}

struct Inner {
    /// The backend behind the kept reads of [`cached`]: the one store handlers see.
    store: cached::CachingStore,
    limiter: Arc<dyn RateLimiter>,
    keys: auth::KeyCache,
    failures: auth::FailureLimiter,
    lookups: Lookups,
    /// What a company-info answer reads (the row afresh, the IP count, the subsidiaries'
    /// names), with the lookup-flush generation it was read in.
    infos: cache::TtlCache<(i64, bool), Arc<routes::InfoParts>>,
    /// Answers of reads about one company (operation, parameters), for the read cache's
    /// TTL; at most [`ANSWERS`] of at most [`ANSWER_MAX`] bytes each.
    answers: cache::TtlCache<(i64, &'static str, String), axum::body::Bytes>,
    scores: cache::TtlCache<i64, axum::body::Bytes>,
    /// Every rated company's latest score, sector and size band (peer benchmarks).
    population: cache::TtlCache<(), Arc<Vec<rating::peers::Member>>>,
    /// Answers of portfolio lists, by organisation and parameters.
    portfolio_answers: cache::TtlCache<(i64, String), axum::body::Bytes>,
    /// Portfolios' views, by organisation and portfolio.
    portfolio_views: cache::TtlCache<(i64, i64), Option<Arc<routes::portfolio::PortfolioView>>>,
    /// Jobs being queued now, by dedup key: the same job asked for by many requests at
    /// once is one store call.
    enqueuing: cache::Coalesce<String, Result<bool, Arc<store::StoreError>>>,
    /// Jobs this process queued lately, by dedup key: the same job asked for again within
    /// [`RECENT_JOB`] and before the company data moves (a worker's result moves it) is
    /// the one already asked for — no store call.
    recent_jobs: cache::TtlCache<String, ()>,
    /// Recent answers of the CVE searches, by query.
    cve_answers: cache::TtlCache<String, axum::body::Bytes>,
    /// Moved on when CVE data changed.
    cve_epoch: cache::Epoch,
    /// The data versions last read from the store.
    versions: Mutex<Option<store::DataVersions>>,
    /// Simulations (tail risk) off the runtime, bounded per key and in all.
    computations: compute::Bounds,
    /// One rebuild of a company's scores at a time (sharded by company).
    /// Held while a kept value is loaded: the others asking for it wait and take it
    /// from the cache instead of loading it again (per cache, striped by the key).
    filling: [cache::Stripes; 7],
    config: Config,
}

/// Shared state of the handlers.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

impl AppState {
    pub fn new(store: Arc<dyn Store>, limiter: Arc<dyn RateLimiter>, config: Config) -> Self {
        let (company_epoch, cve_epoch) = (cache::Epoch::default(), cache::Epoch::default());
        let (ttl, e) = (config.read_cache_ttl, &company_epoch);
        // Lookup counts are no data version: other processes write theirs every
        // `flush_every`, and what includes them is read again as often.
        let counted = config.read_cache_ttl.min(config.flush_every);
        let store = cached::CachingStore::new(store, ttl, company_epoch.clone());
        Self(Arc::new(Inner {
            keys: auth::KeyCache::new(config.key_cache_ttl),
            failures: auth::FailureLimiter::new(config.auth_failures_per_minute),
            infos: cache::TtlCache::new(counted, 100_000, company_epoch.clone()),
            answers: cache::TtlCache::new(ttl, ANSWERS, e.clone()),
            scores: cache::TtlCache::new(ttl, 10_000, e.clone()),
            population: cache::TtlCache::new(ttl, 1, e.clone()),
            portfolio_views: cache::TtlCache::new(ttl, 64, e.clone()),
            portfolio_answers: cache::TtlCache::new(ttl, ANSWERS, e.clone()),
            enqueuing: cache::Coalesce::default(),
            recent_jobs: cache::TtlCache::new(ttl.min(RECENT_JOB), 10_000, e.clone()),
            cve_answers: cache::TtlCache::new(config.cve_cache_ttl, CVE_ANSWERS, cve_epoch.clone()),
            cve_epoch,
            versions: Mutex::new(None),
            computations: compute::Bounds::of_process(),
            filling: Default::default(),
            store,
            limiter,
            lookups: Lookups::default(),
            config,
        }))
    }

    /// The usual state: the in-memory limiter over the same store.
    pub fn with_store(store: Arc<dyn Store>, config: Config) -> Self {
        let limiter = Arc::new(MemoryLimiter::new(store.clone()));
        Self::new(store, limiter, config)
    }

    /// The store: the backend with its kept reads ([`cached`]).
    pub fn store(&self) -> &dyn Store {
        &self.0.store
    }
    /// A portfolio list's answer for `org` and these parameters, kept like the company
    /// answers (at most [`ANSWER_MAX`] bytes), or built once for everyone asking at once.
    pub(crate) async fn portfolio_answer(
        &self,
        org: i64,
        params: String,
        build: impl AsyncFnOnce() -> Result<axum::body::Bytes, error::ApiError>,
    ) -> Result<axum::body::Bytes, error::ApiError> {
        let key = (org, params);
        self.0
            .portfolio_answers
            .get_or_load(&key, self.fill_lock(Fill::PortfolioAnswer, &key), |b| b.len() <= ANSWER_MAX, build)
            .await
    }
    /// `org`'s portfolio `id` with its view (its rows as the list shows them, sort orders
    /// and summary made once), kept for the read cache's TTL and forgotten with the
    /// company data; none when the organisation has no such portfolio (not kept).
    pub(crate) async fn portfolio_view(
        &self,
        org: i64,
        id: i64,
    ) -> Result<Option<Arc<routes::portfolio::PortfolioView>>, error::ApiError> {
        let cadence = self.0.config.default_cadence;
        let key = (org, id);
        self.0
            .portfolio_views
            .get_or_load(&key, self.fill_lock(Fill::Portfolio, &key), Option::is_some, async || {
                let Some(portfolio) = self.store().portfolio(org, id).await? else { return Ok(None) };
                let now = time::OffsetDateTime::now_utc();
                let rows = self.store().portfolio_rows(id, now).await?;
                let view = routes::portfolio::PortfolioView::new(portfolio, rows, now, cadence);
                Ok::<_, error::ApiError>(Some(Arc::new(view)))
            })
            .await
    }
    /// The backend without the kept reads, for a read that must see the row as it is
    /// now (a company's lookup count, between flushes).
    pub(crate) fn backend(&self) -> &dyn Store {
        &**self.0.store.inner()
    }
    pub(crate) fn metrics(&self) -> Option<&metrics::Metrics> {
        self.0.config.metrics.as_deref()
    }
    pub fn limiter(&self) -> &dyn RateLimiter {
        &*self.0.limiter
    }
    pub(crate) fn failures(&self) -> &auth::FailureLimiter {
        &self.0.failures
    }
    pub fn keys(&self) -> &auth::KeyCache {
        &self.0.keys
    }
    pub fn lookups(&self) -> &Lookups {
        &self.0.lookups
    }
    pub fn mock(&self) -> Option<&MockData> {
        self.0.config.mock.as_ref()
    }
    pub(crate) fn config(&self) -> &Config {
        &self.0.config
    }
    pub(crate) fn computations(&self) -> &compute::Bounds {
        &self.0.computations
    }
    pub(crate) fn answers(&self) -> &cache::TtlCache<(i64, &'static str, String), axum::body::Bytes> {
        &self.0.answers
    }
    pub(crate) fn info_cache(&self) -> &cache::TtlCache<(i64, bool), Arc<routes::InfoParts>> {
        &self.0.infos
    }
    pub(crate) fn cve_answers(&self) -> &cache::TtlCache<String, axum::body::Bytes> {
        &self.0.cve_answers
    }
    /// Queues `job` (`Queue::enqueue`); requests asking for the same job while it is
    /// being queued take that call's answer.
    pub(crate) async fn enqueue(&self, job: &model::JobSpec) -> Result<bool, error::ApiError> {
        let key = job.dedup_key();
        if self.0.recent_jobs.get(&key).is_some() {
            return Ok(false);
        }
        let epoch = self.0.recent_jobs.epoch();
        let queued = self.0.enqueuing.run(key.clone(), async || self.store().enqueue(job).await.map_err(Arc::new));
        let queued = queued.await.map_err(|e| error::ApiError::from(&*e))?;
        self.0.recent_jobs.insert_read_in(key, (), epoch);
        Ok(queued)
    }
    pub(crate) fn scores_cache(&self) -> &cache::TtlCache<i64, axum::body::Bytes> {
        &self.0.scores
    }
    pub(crate) fn population_cache(&self) -> &cache::TtlCache<(), Arc<Vec<rating::peers::Member>>> {
        &self.0.population
    }
    /// The lock a load of `key` into the cache `fill` takes. Each cache has locks of its
    /// own: a load may read through another cache (an answer needs the company), never
    /// the other way round, so locks are taken in one order and cannot deadlock.
    pub(crate) fn fill_lock(&self, fill: Fill, key: &impl std::hash::Hash) -> &tokio::sync::Mutex<()> {
        self.0.filling[fill as usize].of(key)
    }
    /// Reads the data versions; when they moved since the last read, what the caches
    /// keep is stale (its epoch moves on) and dropped.
    pub async fn refresh_versions(&self) -> Result<(), store::StoreError> {
        let now = self.store().data_versions().await?;
        let mut seen = self.0.versions.lock().unwrap_or_else(|p| p.into_inner());
        if *seen == Some(now) {
            return Ok(());
        }
        let cve_moved = seen.is_none_or(|s| s.cve != now.cve);
        *seen = Some(now);
        drop(seen);
        self.0.store.forget();
        self.forget_answers();
        if cve_moved {
            self.0.cve_epoch.advance();
            self.0.cve_answers.clear();
        }
        Ok(())
    }

    /// Drops the answers kept about companies (stale already: their epoch moved on).
    fn forget_answers(&self) {
        self.0.scores.clear();
        self.0.infos.clear();
        self.0.answers.clear();
    }

    /// Writes pending counters to the store.
    pub async fn flush(&self) {
        if let Err(e) = self.0.lookups.flush(self.store()).await {
            tracing::warn!(error = %e, "could not write lookup counters");
        }
        if let Err(e) = self.0.limiter.flush().await {
            tracing::warn!(error = %e, "could not write usage counters");
        }
    }
}

/// The caches whose loads are taken one at a time ([`AppState::fill_lock`]), in the order
/// their locks may nest: an answer's load may read a company, not the reverse.
#[derive(Clone, Copy)]
pub(crate) enum Fill {
    Answer = 0,
    Info = 1,
    Cve = 2,
    Scores = 3,
    Population = 4,
    Portfolio = 5,
    PortfolioAnswer = 6,
}

/// How long a job this process queued is taken as still asked for (the bound on a
/// repeated rescan being folded into one that has just started; a worker's result ends
/// it sooner).
pub const RECENT_JOB: Duration = Duration::from_secs(1);

/// CVE search answers kept; with answers of at most [`CVE_ANSWER_MAX`] bytes this
/// bounds the cache at 64 MB.
const CVE_ANSWERS: usize = 32;
/// Larger answers are not kept.
pub(crate) const CVE_ANSWER_MAX: usize = 2 << 20;
/// Company answers kept; with answers of at most [`ANSWER_MAX`] bytes this bounds the
/// cache at 128 MB.
const ANSWERS: usize = 4096;
pub(crate) const ANSWER_MAX: usize = 32 << 10;

/// Largest request body accepted (the add-subsidiary body is far smaller): a larger one
/// is answered 413 ([`params::RawBody`]).
pub const BODY_LIMIT: usize = 64 * 1024;
/// Largest body of a bulk operation (1,000 companies to add).
pub const BULK_BODY_LIMIT: usize = 1 << 20;

/// The whole application: operations behind authentication, the documentation and
/// health paths without, and the spec's 404 for everything else.
pub fn router(state: AppState) -> Router {
    let (api, doc) = openapi::operations().split_for_parts();
    let operations = Arc::new(metrics::Operations::of(&doc));
    let swagger = utoipa_swagger_ui::SwaggerUi::new("/docs").url("/openapi.json", doc);
    let mut app = Router::new()
        .merge(api)
        .merge(swagger)
        .route("/healthz", axum::routing::get(routes::healthz))
        .route("/readyz", axum::routing::get(routes::readyz));
    if state.0.config.metrics.is_some() && state.0.config.metrics_on_api {
        app = app.route("/metrics", axum::routing::get(metrics::scrape));
    }
    app.fallback(error::route_not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(metrics::GateLayer { state: state.clone(), operations })
        .with_state(state)
}

/// The operations for a caller this process trusts without a key: the CLI reading its
/// own database (`rampart report`). Every scope, bound to no company, no rate limit.
/// Never served on a socket.
pub fn trusted_router(state: AppState) -> Router {
    let (api, _) = openapi::operations().split_for_parts();
    let caller = Caller { key_id: None, scopes: model::Scope::ALL.to_vec(), company: None, org: None };
    api.layer(axum::middleware::from_fn(move |mut req: axum::extract::Request, next: axum::middleware::Next| {
        req.extensions_mut().insert(caller.clone());
        next.run(req)
    }))
    .fallback(error::route_not_found)
    .with_state(state)
}

/// Serves [`router`] until `shutdown` resolves, writing counters every `flush_every` and
/// at the end.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(state.clone());
    serve_app(listener, state, app, shutdown).await
}

/// Serves `app` — [`router`] of `state`, with whatever is merged into it (the web app) —
/// as [`serve`] does.
pub async fn serve_app(
    listener: TcpListener,
    state: AppState,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let flusher = {
        let state = state.clone();
        let every = state.0.config.flush_every;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                state.flush().await;
            }
        })
    };
    // The versions are read once before the first request, so that what is kept from
    // then on is tagged with the epoch they started.
    let mut warned: Option<std::time::Instant> = None;
    if let Err(e) = state.refresh_versions().await {
        tracing::warn!(error = %e, "could not read the data versions");
        warned = Some(std::time::Instant::now());
    }
    let poller = {
        let state = state.clone();
        let every = state.0.config.version_poll;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = state.refresh_versions().await
                    && warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(60))
                {
                    // Until it reads them again, answers are kept no longer than the TTL.
                    tracing::warn!(error = %e, "could not read the data versions");
                    warned = Some(std::time::Instant::now());
                }
            }
        })
    };
    let result = serve_connections(listener, app, shutdown).await;
    flusher.abort();
    poller.abort();
    state.flush().await;
    result
}

/// The connections one server keeps open; past it, new connections are closed at once
/// (a flood of idle or slow clients cannot exhaust the process's file descriptors).
pub const MAX_CONNECTIONS: usize = 4096;
/// Time for a client to send a request's whole header (slowloris: one byte a second
/// holds nothing for long). Also how long an idle keep-alive connection is kept.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for a whole request, from its header read to its answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// At shutdown, how long connections get to finish the request they are serving.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Accepts connections until `shutdown`, each served by hyper's HTTP/1 with a header
/// read timeout, under [`MAX_CONNECTIONS`]; requests carry the client's address
/// (`ConnectInfo`). At shutdown, serving connections finish their request (within
/// [`SHUTDOWN_GRACE`]), idle ones close.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let open = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors, say: wait a little rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            tracing::warn!(%remote, "connection cap reached: connection closed");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(axum::extract::ConnectInfo(remote));
            tower::ServiceExt::oneshot(app.clone(), request.map(axum::body::Body::new))
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = watched.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => tracing::warn!("connections still open at the end of the grace period"),
    }
    Ok(())
}
