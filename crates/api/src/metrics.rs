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
    operation: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: &'static str,
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

/// One operation's metrics, as [`Metrics::observe`] keeps them.
struct Operation {
    name: &'static str,
    latency: Histogram,
    ok: Counter,
}

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
    /// The operations seen, with their latency and count of 200 answers (shared with
    /// the families): a request counts without a look-up in the families. Kept for
    /// the process's life: operations are route templates (or "unmatched"), never a
    /// client's text, so there are as many as routes.
    operations: std::sync::RwLock<std::collections::HashMap<&'static str, Operation>>,
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
            operations: Default::default(),
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
    pub(crate) fn observe(&self, operation: &str, status: StatusCode, took: Duration) {
        let seen = |op: &Operation| {
            op.latency.observe(took.as_secs_f64());
            if status == StatusCode::OK {
                op.ok.inc();
            } else {
                self.requests.get_or_create(&RequestLabels { operation: op.name, status: status.as_u16() }).inc();
            }
        };
        if let Some(op) = self.operations.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(operation) {
            return seen(op);
        }
        let mut operations = self.operations.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !operations.contains_key(operation) {
            let name: &'static str = Box::leak(operation.to_owned().into_boxed_str());
            let latency = self.latency.get_or_create(&OperationLabels { operation: name }).clone();
            let ok = self.requests.get_or_create(&RequestLabels { operation: name, status: 200 }).clone();
            operations.insert(name, Operation { name, latency, ok });
        }
        if let Some(op) = operations.get(operation) {
            seen(op);
        }
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
        let companies = store.company_count().await?;
        self.companies.set(i64::try_from(companies).unwrap_or(i64::MAX));
        let times = store.rating_times().await?;
        self.rated.set(i64::try_from(times.len()).unwrap_or(i64::MAX));
        self.rating_age.clear();
        // Oldest rating first: newest first, the ages ascend.
        let ages: Vec<f64> = times.iter().rev().map(|t| age(*t)).collect();
        for (label, q) in [("0.5", 0.5), ("0.9", 0.9), ("0.99", 0.99), ("1", 1.0)] {
            if let Some(a) = model::nearest_rank(&ages, q) {
                self.rating_age.get_or_create(&QuantileLabels { quantile: label.to_owned() }).set(a);
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
fn request_id(request: &Request) -> HeaderValue {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static BOOT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    if let Some(given) = request.headers().get(REQUEST_ID)
        && (1..=64).contains(&given.len())
        && given.as_bytes().iter().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
    {
        return given.clone();
    }
    let boot = *BOOT.get_or_init(|| {
        let mut b = [0u8; 4];
        getrandom::fill(&mut b).map(|()| u32::from_le_bytes(b)).unwrap_or(std::process::id())
    });
    made_id(boot, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// `{boot:08x}{n:08x}`, written without a format: the counter takes more than eight
/// digits once it needs them.
fn made_id(boot: u32, n: u64) -> HeaderValue {
    let n_digits = (16 - n.leading_zeros() as usize / 4).max(8);
    let mut id = [0u8; 24];
    let digits = b"0123456789abcdef";
    for (i, b) in id[..8].iter_mut().enumerate() {
        *b = digits[((boot >> (28 - 4 * i)) & 0xf) as usize];
    }
    for (i, b) in id[8..8 + n_digits].iter_mut().enumerate() {
        *b = digits[((n >> (4 * (n_digits - 1 - i))) & 0xf) as usize];
    }
    HeaderValue::from_bytes(&id[..8 + n_digits]).unwrap_or_else(|_| HeaderValue::from_static("0"))
}

/// The operations of the API by their route and method: those a key is checked for
/// (a wrong method or an unknown path is answered without one), with the query
/// parameters each takes (any other is refused).
#[derive(Default)]
pub(crate) struct Operations(std::collections::HashMap<String, Vec<(axum::http::Method, Taken)>>);

/// The names of the query parameters an operation takes, as its OpenAPI entry lists them.
pub(crate) type Taken = Arc<[Box<str>]>;

impl Operations {
    pub(crate) fn of(doc: &utoipa::openapi::OpenApi) -> Self {
        use axum::http::Method;
        use utoipa::openapi::path::{Operation, ParameterIn};
        let taken = |op: &Operation| -> Taken {
            op.parameters
                .iter()
                .flatten()
                .filter(|p| matches!(p.parameter_in, ParameterIn::Query))
                .map(|p| p.name.clone().into_boxed_str())
                .collect()
        };
        let mut ops = std::collections::HashMap::new();
        for (path, item) in &doc.paths.paths {
            let methods: Vec<(Method, Taken)> = [
                (&item.get, Method::GET),
                (&item.post, Method::POST),
                (&item.put, Method::PUT),
                (&item.delete, Method::DELETE),
            ]
            .into_iter()
            .filter_map(|(op, m)| op.as_ref().map(|op| (m, taken(op))))
            .collect();
            ops.insert(path.clone(), methods);
        }
        Self(ops)
    }

    /// The scope an operation needs when the request names one (its route and method;
    /// HEAD is the GET it is served by), `None` inside for an operation outside the four
    /// groups, with the parameters it takes; `None` for anything else.
    fn needs(&self, path: &str, method: &axum::http::Method) -> Option<(Option<model::Scope>, Taken)> {
        use axum::http::Method;
        let method = if method == Method::HEAD { &Method::GET } else { method };
        let (_, taken) = self.0.get(path)?.iter().find(|(m, _)| m == method)?;
        Some((crate::auth::scope_for_path(path), taken.clone()))
    }
}

/// Admits the query of an operation that takes `taken` ([`crate::params::Params::admit`]):
/// the parsed parameters go on to the handler in the request's extensions.
fn admit_query(request: &mut Request, taken: &[Box<str>]) -> Result<(), crate::error::ApiError> {
    let params = crate::params::Params::parse(request.uri().query().unwrap_or(""))?;
    params.admit(|name| taken.iter().any(|t| &**t == name))?;
    request.extensions_mut().insert(params);
    Ok(())
}

/// The one layer every request goes through (applied to each route, so the route a
/// request matched is known): gives it its id (answered in `X-Request-Id`), checks the
/// key of an operation ([`crate::auth::admit`]) and then its query (the parameters the
/// document lists for it, no control characters: `admit_query`), answers 503 with
/// Retry-After when it takes longer than [`crate::Config::request_timeout`] (a slow
/// handler, or a client that sends its body a byte at a time; its work is dropped), 500
/// when its handler panics, counts it and writes its access-log line (target
/// `api::access`). One layer, written as a service: every layer costs every request, and
/// a `from_fn` layer also boxes the route it wraps each time.
#[derive(Clone)]
pub(crate) struct GateLayer {
    pub(crate) state: crate::AppState,
    pub(crate) operations: Arc<Operations>,
}

impl<S> tower::Layer<S> for GateLayer {
    type Service = Gate<S>;

    fn layer(&self, inner: S) -> Gate<S> {
        Gate { inner, state: self.state.clone(), operations: self.operations.clone() }
    }
}

#[derive(Clone)]
pub(crate) struct Gate<S> {
    inner: S,
    state: crate::AppState,
    operations: Arc<Operations>,
}

impl<S> tower::Service<Request> for Gate<S>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Response, std::convert::Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The service made ready is the one called; a clone stays for the next request.
        let ready = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, ready);
        let operation = request.extensions().get::<MatchedPath>().cloned();
        let needs = operation.as_ref().and_then(|o| self.operations.needs(o.as_str(), request.method()));
        Box::pin(track(self.state.clone(), request, operation, needs, inner))
    }
}

async fn track<S>(
    state: crate::AppState,
    mut request: Request,
    operation: Option<MatchedPath>,
    needs: Option<(Option<model::Scope>, Taken)>,
    mut inner: S,
) -> Result<Response, std::convert::Infallible>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible>,
{
    use futures_util::FutureExt;
    let started = Instant::now();
    let id = request_id(&request);
    let method = request.method().clone();
    let deadline = tokio::time::Instant::from_std(started) + state.config().request_timeout;
    let run = std::panic::AssertUnwindSafe(async {
        // The key check and the handler, under the one time limit.
        let answer = async {
            if let Some((scope, taken)) = needs {
                if let Err(refused) = crate::auth::admit(&state, &mut request, scope).await {
                    return refused;
                }
                if let Err(refused) = admit_query(&mut request, &taken) {
                    return refused.into_response();
                }
            }
            match inner.call(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        };
        let mut answer = std::pin::pin!(answer);
        // Most answers are ready at their first poll (from the caches): they need no timer.
        let first = std::future::poll_fn(|cx| std::task::Poll::Ready(answer.as_mut().poll(cx))).await;
        match first {
            std::task::Poll::Ready(response) => Ok(response),
            std::task::Poll::Pending => tokio::time::timeout_at(deadline, answer).await,
        }
    });
    let mut response = match run.catch_unwind().await {
        Ok(Ok(response)) => response,
        Ok(Err(_)) => {
            tracing::warn!("request over its time");
            crate::error::ApiError::Unavailable.into_response()
        }
        Err(panic) => crate::error::panic_response(panic),
    };
    let took = started.elapsed();
    let status = response.status();
    let operation = operation.as_ref().map_or("unmatched", MatchedPath::as_str);
    if let Some(m) = state.metrics() {
        m.observe(operation, status, took);
    }
    tracing::info!(
        target: "api::access",
        request_id = %id.to_str().unwrap_or(""),
        method = %method,
        operation = %operation,
        status = status.as_u16(),
        micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        "request"
    );
    response.headers_mut().insert(REQUEST_ID, id);
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_the_clients_plain_token_or_made_here() {
        assert_eq!(made_id(0xdead_beef, 5), "deadbeef00000005");
        assert_eq!(made_id(1, 0xffff_ffff), "00000001ffffffff");
        assert_eq!(made_id(1, 0x1_0000_0000), "00000001100000000");
        assert_eq!(made_id(0, u64::MAX), format!("00000000{:x}", u64::MAX));
        let with = |v: &str| {
            let r = Request::builder().header(REQUEST_ID, v).body(axum::body::Body::empty()).unwrap();
            request_id(&r)
        };
        assert_eq!(with("abc-123.x:y_z"), "abc-123.x:y_z");
        for refused in ["", "a b", "<script>", &"a".repeat(65)] {
            let id = with(refused);
            assert_ne!(id, refused);
            assert_eq!(id.len(), 16, "{refused:?}");
        }
    }
}
