//! Telemetry of the API process: `/metrics` in the Prometheus text format (requests by
//! operation and status, their latency, and, read from the store at each scrape, the
//! queue by kind, the age of the ratings and of the feeds) and the access log (one line
//! per request: its id, operation, status and time; never a key or a query string).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use store::Store;

/// The header a request's id travels in, both ways.
pub const REQUEST_ID: &str = "x-request-id";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    operation: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    kind: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FeedLabels {
    feed: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QuantileLabels {
    quantile: String,
}

type Seconds = Gauge<f64, AtomicU64>;

/// The metrics of one process, in one registry (with what other crates registered in
/// it: the worker's job metrics when workers run here).
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<OperationLabels, Histogram, fn() -> Histogram>,
    jobs: Family<QueueLabels, Gauge>,
    oldest_job: Family<QueueLabels, Seconds>,
    companies: Gauge,
    rated: Gauge,
    rating_age: Family<QuantileLabels, Seconds>,
    feed_age: Family<FeedLabels, Seconds>,
    scrape_errors: Counter,
    /// One scrape reads the store at a time, and at most once per [`STORE_READ_EVERY`]
    /// (`/metrics` answers without a key: a flood of scrapes does not become a flood of
    /// store reads). When it last did.
    scraping: tokio::sync::Mutex<Option<Instant>>,
}

/// How often scrapes read the store's figures at most.
pub const STORE_READ_EVERY: Duration = Duration::from_secs(5);

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn latency_histogram() -> Histogram {
    // 100 µs to about 2.4 s, each bucket 2.5 times the one before.
    Histogram::new(exponential_buckets(0.000_1, 2.5, 12))
}

impl Metrics {
    /// The API's metrics, registered in `registry` beside what is there already.
    pub fn new(mut registry: Registry) -> Metrics {
        let m = Metrics {
            registry: Registry::default(),
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            jobs: Family::default(),
            oldest_job: Family::default(),
            companies: Gauge::default(),
            rated: Gauge::default(),
            rating_age: Family::default(),
            feed_age: Family::default(),
            scrape_errors: Counter::default(),
            scraping: tokio::sync::Mutex::new(None),
        };
        registry.register("rampart_http_requests", "Requests answered, by operation and status", m.requests.clone());
        registry.register(
            "rampart_http_request_duration_seconds",
            "Time from a request's header to its answer, by operation",
            m.latency.clone(),
        );
        registry.register(
            "rampart_jobs",
            "Jobs in the queue, by kind and status (done jobs not counted)",
            m.jobs.clone(),
        );
        registry.register(
            "rampart_job_oldest_age_seconds",
            "Age of the oldest job of each kind and status",
            m.oldest_job.clone(),
        );
        registry.register("rampart_companies", "Companies known", m.companies.clone());
        registry.register("rampart_companies_rated", "Companies with a rating", m.rated.clone());
        registry.register(
            "rampart_rating_age_seconds",
            "Age of the companies' latest ratings at quantiles (1 is the oldest)",
            m.rating_age.clone(),
        );
        registry.register("rampart_feed_age_seconds", "Time since each feed was last synchronised", m.feed_age.clone());
        registry.register("rampart_metrics_scrape_errors", "Scrapes whose store reads failed", m.scrape_errors.clone());
        Metrics { registry, ..m }
    }

    /// Counts one answered request.
    pub fn observe(&self, operation: &str, status: StatusCode, took: Duration) {
        let operation = operation.to_owned();
        self.latency.get_or_create(&OperationLabels { operation: operation.clone() }).observe(took.as_secs_f64());
        self.requests.get_or_create(&RequestLabels { operation, status: status.as_u16() }).inc();
    }

    /// The text exposition, the store's figures read afresh.
    pub async fn render(&self, store: &dyn Store) -> String {
        let mut last = self.scraping.lock().await;
        if last.is_none_or(|at| at.elapsed() >= STORE_READ_EVERY) {
            if let Err(e) = self.read_store(store).await {
                tracing::warn!(error = %e, "metrics: reading the store failed");
                self.scrape_errors.inc();
            }
            *last = Some(Instant::now());
        }
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "metrics: encoding failed");
        }
        out
    }

    async fn read_store(&self, store: &dyn Store) -> Result<(), store::StoreError> {
        let now = time::OffsetDateTime::now_utc();
        let age = |t: time::OffsetDateTime| (now - t).as_seconds_f64().max(0.0);
        let counts = store.job_counts().await?;
        self.jobs.clear();
        self.oldest_job.clear();
        for c in counts {
            let labels = QueueLabels { kind: c.kind, status: c.status.as_str().to_owned() };
            self.jobs.get_or_create(&labels).set(i64::try_from(c.count).unwrap_or(i64::MAX));
            self.oldest_job.get_or_create(&labels).set(age(c.oldest));
        }
        let companies = store.company_ids(0, u32::MAX).await?.len();
        self.companies.set(i64::try_from(companies).unwrap_or(i64::MAX));
        let times = store.rating_times().await?;
        self.rated.set(i64::try_from(times.len()).unwrap_or(i64::MAX));
        self.rating_age.clear();
        // Oldest rating first: the age at quantile q is that of the rating at 1 - q.
        if !times.is_empty() {
            for q in ["0.5", "0.9", "0.99", "1"] {
                let qf: f64 = q.parse().unwrap_or(1.0);
                let rank = ((qf * times.len() as f64).ceil() as usize).clamp(1, times.len());
                let t = times[times.len() - rank];
                self.rating_age.get_or_create(&QuantileLabels { quantile: q.to_owned() }).set(age(t));
            }
        }
        self.feed_age.clear();
        for (feed, at) in store.feed_ages().await? {
            self.feed_age.get_or_create(&FeedLabels { feed }).set(age(at));
        }
        Ok(())
    }
}

/// `GET /metrics`.
pub(crate) async fn scrape(State(state): State<crate::AppState>) -> Response {
    match state.metrics() {
        Some(m) => exposition(m.render(state.store()).await),
        None => crate::error::route_not_found().await.into_response(),
    }
}

fn exposition(text: String) -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"))], text)
        .into_response()
}

/// Serves `/metrics` alone on `listener` (`--metrics-listen`), until `shutdown`.
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    store: Arc<dyn Store>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let (metrics, store) = (metrics.clone(), store.clone());
            async move { exposition(metrics.render(&*store).await) }
        }),
    );
    crate::serve_connections(listener, app, shutdown).await
}

/// A request id: the one the client (or its balancer) sent when it is a plain token of
/// at most 64 characters, else one made here (unique in this process, random across).
fn request_id(request: &Request) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static BOOT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    if let Some(given) = request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok())
        && (1..=64).contains(&given.len())
        && given.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    {
        return given.to_owned();
    }
    let boot = *BOOT.get_or_init(|| {
        let mut b = [0u8; 4];
        getrandom::fill(&mut b).map(|()| u32::from_le_bytes(b)).unwrap_or(std::process::id())
    });
    format!("{boot:08x}{:08x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The outermost layer: gives each request its id (answered in `X-Request-Id`), counts
/// it and writes its access-log line (target `api::access`).
pub(crate) async fn track(
    State(state): State<crate::AppState>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let started = Instant::now();
    let id = request_id(&request);
    let operation = request.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_owned();
    let method = request.method().clone();
    let mut response = next.run(request).await;
    let took = started.elapsed();
    let status = response.status();
    if let Some(m) = state.metrics() {
        m.observe(&operation, status, took);
    }
    tracing::info!(
        target: "api::access",
        request_id = %id,
        method = %method,
        operation = %operation,
        status = status.as_u16(),
        micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        "request"
    );
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, v);
    }
    response
}
