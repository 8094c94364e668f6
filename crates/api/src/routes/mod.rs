//! Handlers, one file per operation group, and what they share: resolving the company
//! a request names, and the rule that a company must have been rated.

use axum::Json;
use model::{Company, SocialId};
use serde::Serialize;

use crate::error::{self, ApiError};
use crate::{AppState, Caller};

pub mod alerts;
pub mod changes;
pub mod company;
pub mod disputes;
pub mod general;
pub mod guidelines;
pub mod monitor;
pub mod portfolio;
pub mod predictions;
pub mod underwriter;
pub mod vulnerability;

#[derive(Serialize)]
pub struct Health {
    status: &'static str,
}

/// Liveness: the process answers (it does not look at the database).
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// Readiness: the database answers a key lookup (what every request starts with)
/// within 2 s; otherwise 503, and a balancer sends requests elsewhere.
pub async fn readyz(axum::extract::State(app): axum::extract::State<AppState>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let asked = tokio::time::timeout(std::time::Duration::from_secs(2), app.store().key_by_hash("")).await;
    match asked {
        Ok(Ok(_)) => Json(Health { status: "ready" }).into_response(),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "not ready: the database did not answer");
            (axum::http::StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: "the database does not answer" }))
                .into_response()
        }
        Err(_) => (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            Json(Health { status: "the database does not answer in 2 s" }),
        )
            .into_response(),
    }
}

/// A response whose body is JSON already serialised (cached or spliced).
pub(crate) fn json_bytes(body: impl Into<axum::body::Bytes>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let body: axum::body::Bytes = body.into();
    ([(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/json"))], body)
        .into_response()
}

/// The company `social_id` names, as the caller may see it.
pub(crate) async fn company_named(app: &AppState, caller: &Caller, social_id: &SocialId) -> Result<Company, ApiError> {
    let company = match (app.store().company_by_social_id(social_id).await?, app.mock()) {
        (Some(company), _) => company,
        (None, Some(mock)) => app
            .store()
            .company_by_social_id(&mock.company)
            .await?
            .ok_or_else(|| ApiError::bad(error::COMPANY_NOT_FOUND))?,
        // A key bound to a company is told the same of a company that does not exist as
        // of one outside its tree: whether a company exists is nothing it may learn.
        (None, None) if caller.company.is_some() => return Err(ApiError::Forbidden),
        (None, None) => return Err(ApiError::bad(error::COMPANY_NOT_FOUND)),
    };
    may_see(app, caller, &company).await?;
    // A company known only by a key's unverified claim of its domain is not shown to
    // anyone outside its own tree as that domain's company (docs/API.md, "Domain
    // ownership").
    if caller.company.is_none()
        && !company.domain_verified
        && let Some(d) = &company.domain
    {
        return Err(ApiError::bad(format!(
            "social_id not rated: its domain {d} is claimed by the company and not yet verified"
        )));
    }
    Ok(company)
}

/// The answer of a read about one company (`op` with the request's parameters), once
/// the caller may see it: from the answers cache (kept for the read cache's TTL, cleared
/// by writes through this process), or built once for everyone asking at the same time.
pub(crate) async fn company_answer<T: serde::Serialize>(
    app: AppState,
    company: i64,
    op: &'static str,
    params: String,
    build: impl AsyncFnOnce() -> Result<T, ApiError>,
) -> Result<axum::response::Response, ApiError> {
    let key = (company, op, params);
    let body = app
        .answers()
        .get_or_load(
            &key,
            app.fill_lock(crate::Fill::Answer, &key),
            |b| b.len() <= crate::ANSWER_MAX,
            async || {
                serde_json::to_vec(&build().await?)
                    .map(axum::body::Bytes::from)
                    .map_err(|e| ApiError::Internal(e.to_string()))
            },
        )
        .await?;
    Ok(json_bytes(body))
}

/// A key bound to a company sees that company and its subsidiaries only.
pub(crate) async fn may_see(app: &AppState, caller: &Caller, company: &Company) -> Result<(), ApiError> {
    let Some(own) = &caller.company else { return Ok(()) };
    if &company.social_id == own {
        return Ok(());
    }
    let Some(own) = app.store().company_by_social_id(own).await? else {
        return Err(ApiError::Forbidden);
    };
    if app.store().is_subsidiary(own.id, company.id).await? { Ok(()) } else { Err(ApiError::Forbidden) }
}

/// A company that has never been rated cannot be reported on: its scan is queued
/// (once, however often it is asked for) and the caller is told to come back — unless
/// its last scan found that it cannot be rated (its domain does not exist), which the
/// answer says; such a company is scanned again at most once a day.
pub(crate) async fn rated(app: &AppState, company: Company) -> Result<Company, ApiError> {
    if company.last_scanned_at.is_some() {
        return Ok(company);
    }
    if let Some((why, at)) = app.store().scan_error(company.id).await? {
        if time::OffsetDateTime::now_utc() - at > time::Duration::days(1) {
            queue_scan(app, &company).await?;
        }
        return Err(ApiError::bad(format!("social_id not rated: {why}")));
    }
    queue_scan(app, &company).await?;
    Err(ApiError::bad(error::NOT_PROCESSED))
}

pub(crate) async fn queue_scan(app: &AppState, company: &Company) -> Result<bool, ApiError> {
    app.enqueue(&model::JobSpec::Scan { social_id: company.social_id.clone() }).await
}

/// The rated company a `social_id` parameter names, counted as one lookup.
pub(crate) async fn looked_up(
    app: &AppState,
    caller: &Caller,
    params: &crate::params::Params,
) -> Result<Company, ApiError> {
    let social_id = params.social_id()?;
    let company = rated(app, company_named(app, caller, &social_id).await?).await?;
    app.lookups().record(company.id);
    Ok(company)
}

/// Who an answer is for, where an Underwriter and a Monitor answer differ.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Audience {
    Underwriter,
    Monitor,
}

impl Audience {
    /// Of two names, this audience's: `underwriter` or `monitor`.
    pub(crate) const fn pick(self, underwriter: &'static str, monitor: &'static str) -> &'static str {
        match self {
            Audience::Underwriter => underwriter,
            Audience::Monitor => monitor,
        }
    }
}

/// The caller the key authentication put on the request.
pub(crate) fn caller_of(parts: &axum::http::request::Parts) -> Result<Caller, ApiError> {
    parts.extensions.get::<Caller>().cloned().ok_or(ApiError::Unauthorized(error::KEY_REQUIRED))
}

/// Whose company an operation is about: the one the request names ([`Named`]: the
/// Underwriter and General operations, by `social_id`) or the calling key's own
/// ([`Own`]: the Monitor operations). A company resource has one handler, generic over
/// this, for its two operations (`routes::company`).
pub(crate) trait Whose: Send + Sync + 'static {
    /// Who the answers are for.
    const AUDIENCE: Audience;

    /// The company as it is (rated or not), as the caller may see it.
    fn as_is(
        app: &AppState,
        caller: &Caller,
        params: &crate::params::Params,
    ) -> impl Future<Output = Result<Company, ApiError>> + Send;

    /// The company, which must have been rated (`routes::rated`); a named one's lookup
    /// is counted.
    fn rated(
        app: &AppState,
        caller: &Caller,
        params: &crate::params::Params,
    ) -> impl Future<Output = Result<Company, ApiError>> + Send;
}

/// The company the request's `social_id` names ([`crate::params::CompanyQuery`]).
pub(crate) enum Named {}

impl Whose for Named {
    const AUDIENCE: Audience = Audience::Underwriter;

    async fn as_is(app: &AppState, caller: &Caller, params: &crate::params::Params) -> Result<Company, ApiError> {
        company_named(app, caller, &params.social_id()?).await
    }

    async fn rated(app: &AppState, caller: &Caller, params: &crate::params::Params) -> Result<Company, ApiError> {
        looked_up(app, caller, params).await
    }
}

/// The company the calling key is bound to (a key bound to none is refused).
pub(crate) enum Own {}

impl Whose for Own {
    const AUDIENCE: Audience = Audience::Monitor;

    async fn as_is(app: &AppState, caller: &Caller, _: &crate::params::Params) -> Result<Company, ApiError> {
        own_company_unrated(app, caller).await
    }

    async fn rated(app: &AppState, caller: &Caller, _: &crate::params::Params) -> Result<Company, ApiError> {
        own_company(app, caller).await
    }
}

/// The rated company a request is about ([`Whose::rated`]), with the request's
/// parameters and caller.
pub(crate) struct Subject<W> {
    pub company: Company,
    pub params: crate::params::Params,
    pub caller: Caller,
    whose: std::marker::PhantomData<W>,
}

impl<W: Whose> axum::extract::FromRequestParts<AppState> for Subject<W> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, app: &AppState) -> Result<Self, ApiError> {
        let caller = caller_of(parts)?;
        let params =
            <crate::params::Params as axum::extract::FromRequestParts<AppState>>::from_request_parts(parts, app)
                .await?;
        let company = W::rated(app, &caller, &params).await?;
        Ok(Self { company, params, caller, whose: std::marker::PhantomData })
    }
}

/// A request about a company not looked up yet: its caller and parameters, for a handler
/// that checks parameters first ([`Whose::as_is`] then finds the company).
pub(crate) struct Asking<W> {
    pub params: crate::params::Params,
    pub caller: Caller,
    whose: std::marker::PhantomData<W>,
}

impl<W: Whose> axum::extract::FromRequestParts<AppState> for Asking<W> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, app: &AppState) -> Result<Self, ApiError> {
        let caller = caller_of(parts)?;
        let params =
            <crate::params::Params as axum::extract::FromRequestParts<AppState>>::from_request_parts(parts, app)
                .await?;
        Ok(Self { params, caller, whose: std::marker::PhantomData })
    }
}

/// The company of a monitor key, rated or not (the Monitor writes).
pub(crate) struct OwnUnrated {
    pub company: Company,
    pub caller: Caller,
}

impl axum::extract::FromRequestParts<AppState> for OwnUnrated {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, app: &AppState) -> Result<Self, ApiError> {
        let caller = caller_of(parts)?;
        let company = own_company_unrated(app, &caller).await?;
        Ok(Self { company, caller })
    }
}

/// The company of a monitor key, which must have been rated.
pub(crate) async fn own_company(app: &AppState, caller: &Caller) -> Result<Company, ApiError> {
    rated(app, own_company_unrated(app, caller).await?).await
}

pub(crate) async fn own_company_unrated(app: &AppState, caller: &Caller) -> Result<Company, ApiError> {
    let own = caller.company.as_ref().ok_or(ApiError::Forbidden)?;
    app.store().company_by_social_id(own).await?.ok_or_else(|| ApiError::bad(error::COMPANY_NOT_FOUND))
}

/// What a company-info answer reads from the store, kept for the read cache's TTL: the
/// company row as read, its IP count, its subsidiaries' names, and the lookup-flush
/// generation of the read (`searched_by` is the row's count plus this process's pending
/// lookups only while no flush has moved pending lookups into the store since).
#[derive(Clone)]
pub struct InfoParts {
    pub(crate) generation: u64,
    pub(crate) company: Option<Company>,
    pub(crate) ip_addresses: u64,
    pub(crate) subsidiaries: Option<Vec<String>>,
    /// The answer as JSON, before and after the value of `searched_by` (which moves
    /// with every lookup): a kept answer is written without serialising the record.
    pub(crate) json: Option<(axum::body::Bytes, axum::body::Bytes)>,
}

impl InfoParts {
    /// Splits the answer `info` at its `searched_by` value ([`InfoParts::json`]).
    pub(crate) fn split(info: &crate::responses::CompanyInfo) -> Option<(axum::body::Bytes, axum::body::Bytes)> {
        const MARK: i64 = i64::MIN;
        let mut probe = info.clone();
        probe.searched_by = MARK;
        let text = serde_json::to_vec(&probe).ok()?;
        let needle = format!("\"searched_by\":{MARK}");
        let at = text.windows(needle.len()).position(|w| w == needle.as_bytes())?;
        let (value_at, value_end) = (at + needle.len() - MARK.to_string().len(), at + needle.len());
        Some((
            axum::body::Bytes::copy_from_slice(&text[..value_at]),
            axum::body::Bytes::copy_from_slice(&text[value_end..]),
        ))
    }

    /// The kept answer with `searched_by`.
    pub(crate) fn json_with(&self, searched_by: i64) -> Option<axum::body::Bytes> {
        let (before, after) = self.json.as_ref()?;
        let mut out = Vec::with_capacity(before.len() + after.len() + 20);
        out.extend_from_slice(before);
        out.extend_from_slice(searched_by.to_string().as_bytes());
        out.extend_from_slice(after);
        Some(out.into())
    }
}

/// `searched_by` including lookups not yet written.
pub(crate) fn searched_by(app: &AppState, company: &Company) -> i64 {
    company.searched_by + app.lookups().pending(company.id)
}

/// A company bound to a key and its subsidiaries: everything such a key may see.
pub(crate) async fn family(app: &AppState, own: &SocialId) -> Result<Vec<Company>, ApiError> {
    let Some(own) = app.store().company_by_social_id(own).await? else {
        return Ok(Vec::new());
    };
    let subs = app.store().subsidiaries(own.id, None).await?;
    Ok(std::iter::once(own).chain(subs.items.iter().cloned()).collect())
}

/// One page of an in-memory list.
/// Fills `severity_cvss` of the vulnerabilities findings among `findings` from their
/// CVE records (docs/API.md: the metric their severity is computed from).
pub(crate) async fn with_severity_cvss<'a>(
    app: &AppState,
    findings: impl IntoIterator<Item = &'a mut crate::responses::FindingOut>,
) -> Result<(), ApiError> {
    for f in findings {
        if f.risk_vector != model::RiskVector::Vulnerabilities.as_str() {
            continue;
        }
        let Some(id) = f.cve.as_deref().and_then(|c| model::CveId::parse(c).ok()) else { continue };
        if let Some(record) = app.store().cve(&id).await? {
            f.severity_cvss = crate::responses::CvssOut::severity_of(&record);
        }
    }
    Ok(())
}

pub(crate) fn paginate<T>(all: Vec<T>, page: model::Page) -> store::Paged<T> {
    let total = all.len() as u64;
    let start = usize::try_from(page.offset()).unwrap_or(usize::MAX);
    store::Paged { items: all.into_iter().skip(start).take(model::PAGE_SIZE as usize).collect(), total }
}

/// The company's peer benchmarks (rating::peers) among every rated company, read once
/// per change of the company data (the population is kept with the other answers).
pub(crate) async fn peers(
    app: &AppState,
    c: &Company,
    score: f64,
) -> Result<crate::responses::PeerBenchmarks, ApiError> {
    let population = app
        .population_cache()
        .get_or_load(
            &(),
            app.fill_lock(crate::Fill::Population, &()),
            |_| true,
            async || {
                let rows = app.store().rated_population().await?;
                Ok::<_, ApiError>(std::sync::Arc::new(
                    rows.into_iter()
                        .map(|r| rating::peers::Member::new(r.id, r.naics_code, &r.employees, r.score as f64 / 100.0))
                        .collect::<Vec<_>>(),
                ))
            },
        )
        .await?;
    let me = rating::peers::Member::new(c.id, c.naics_code, &c.employees_number, score);
    let (peer, overall) = rating::peers::benchmarks(&me, &population);
    Ok(crate::responses::PeerBenchmarks { sector_and_size: peer.into(), overall: overall.into() })
}
