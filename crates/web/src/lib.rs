//! The web app: the scorecard for underwriters and monitored companies, served at `/` by
//! the same process as the API, and the report document (`rampart report`).
//!
//! Views are rendered on the server (maud) from the API's own answers: each view calls
//! the operations it shows through the API router in-process ([`Api`]), with the key the
//! browser sent, so the app shows a key exactly what its scopes and company allow
//! through the API, and its calls count against the key like any others. The browser
//! keeps the key in the tab's session storage and sends it as the `apikey` header; a
//! small script of this crate (`assets/app.js`, no framework, no CDN) fetches each
//! view's HTML into the page, posts the forms and watches a rescan until it is done.
//!
//! Routes: `/` and `/app/…` (the page), `/assets/…` (its script and style), `/ui/…`
//! (views and actions, each needing the `apikey` header).

use std::collections::HashMap;
use std::net::SocketAddr;

use api::responses::{
    CompanyInfo, DataLossPrediction, DisputeAnswer, DomainBySocialId, IncidentDetail, IncidentPrediction, LastScanned,
    MessageOut, SocialIdByDomain, SocialIdsByName, TailRiskPrediction,
};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequestParts, Query};
use axum::http::{HeaderValue, Method, StatusCode, header, request::Parts};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use maud::Markup;
use serde::Serialize;

mod alerts;
pub mod chart;
mod client;
pub mod pages;
mod portfolio;
pub mod report;

#[cfg(test)]
mod fixtures;

pub use client::{Api, Failure};
pub use pages::Audience;

const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/app.css");

/// What the page may load: only this server's script and style (no inline script, no
/// other origin); it cannot be framed.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Largest form a view posts (a subsidiary's fields are far smaller).
const FORM_LIMIT: usize = 16 * 1024;

/// Largest add-companies form: 1,000 CSV rows of a few columns.
const ADD_LIMIT: usize = 512 * 1024;

#[derive(Clone)]
struct Web {
    api: Router,
}

/// The app's routes; `api` is the API's whole router (its operations, behind its key
/// authentication), which the views call in-process. Merge the result with the API's
/// router to serve both.
pub fn router(api: Router) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/app", get(page))
        .route("/app/", get(page))
        .route("/app/{*view}", get(page))
        .route("/assets/app.js", get(script))
        .route("/assets/app.css", get(style))
        .route("/ui/home", get(home))
        .route("/ui/search", get(search))
        .route("/ui/company", get(company))
        .route("/ui/incident", get(incident))
        .route("/ui/assets", get(assets))
        .route("/ui/monitor", get(monitor))
        .route("/ui/predictions", get(predictions))
        .route("/ui/report", get(report_download))
        .route("/ui/monitor/rescan", post(rescan))
        .route("/ui/monitor/dispute", post(dispute))
        .route("/ui/monitor/subsidiary", post(add_subsidiary))
        .route("/ui/monitor/subsidiary/remove", post(remove_subsidiary))
        .route("/ui/portfolio", get(portfolio::portfolio))
        .route("/ui/portfolio/csv", get(portfolio::download))
        .route("/ui/portfolio/create", post(portfolio::create))
        .route("/ui/portfolio/member", post(portfolio::member))
        .route("/ui/portfolio/landing", get(portfolio::landing))
        .route("/ui/findings", get(portfolio::findings))
        .route("/ui/findings/csv", get(portfolio::findings_download))
        .route("/ui/compare", get(portfolio::compare))
        .route("/ui/plan", get(plan))
        .route("/ui/alerts", get(alerts::inbox))
        .route("/ui/alerts/count", get(alerts::count))
        .route("/ui/alerts/ack", post(alerts::ack))
        .layer(DefaultBodyLimit::max(FORM_LIMIT))
        // The domains of an add-companies request (1,000 rows of a CSV at most).
        .route("/ui/portfolio/add", post(portfolio::add).layer(DefaultBodyLimit::max(ADD_LIMIT)))
        .layer(axum::middleware::map_response(headers))
        .with_state(Web { api })
}

async fn headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Views hold what one key may see: never kept by the browser or a proxy.
    h.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    response
}

async fn page() -> Html<String> {
    Html(pages::shell().into_string())
}

async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], SCRIPT)
        .into_response()
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], STYLE).into_response()
}

/// The API as the browser's key reaches it. A request without a key is answered 401,
/// which the page takes as "sign in".
pub(crate) struct Caller(Api);

impl FromRequestParts<Web> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, web: &Web) -> Result<Self, Self::Rejection> {
        let key = parts.headers.get("apikey").filter(|k| !k.is_empty()).cloned().ok_or_else(|| {
            let f = Failure::new(StatusCode::UNAUTHORIZED, "Sign in with an API key");
            fragment(f.status, pages::failure("Sign in", &f))
        })?;
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().copied();
        Ok(Caller(Api::new(web.api.clone(), Some(key), peer)))
    }
}

/// The header that carries the API's status when a view or action was refused (401: sign
/// in again). Views and actions themselves answer 200 whenever they rendered: what the
/// API refused is part of the view, and a browser logs every 4xx as a console error.
pub const REFUSED: &str = "x-rampart-refused";

pub(crate) fn fragment(status: StatusCode, markup: Markup) -> Response {
    let mut response = Html(markup.into_string()).into_response();
    if !status.is_success()
        && let Ok(v) = HeaderValue::from_str(status.as_str())
    {
        response.headers_mut().insert(REFUSED, v);
    }
    response
}

pub(crate) fn refused(what: &str, f: &Failure) -> Response {
    fragment(f.status, pages::failure(what, f))
}

pub(crate) type Params = Query<HashMap<String, String>>;

pub(crate) fn param<'a>(q: &'a HashMap<String, String>, name: &str) -> &'a str {
    q.get(name).map_or("", |v| v.trim())
}

async fn home(Caller(api): Caller) -> Response {
    let (recent, own, portfolios) = tokio::join!(
        api.get::<LastScanned>("/underwriter-getlastcompaniesscanned", &[]),
        api.get::<CompanyInfo>("/monitor-getcompanyinfo", &[]),
        api.get::<api::responses::portfolio::PortfoliosOut>("/portfolio-list", &[]),
    );
    // A key the API does not accept is asked to sign in again.
    for f in [recent.as_ref().err(), own.as_ref().err()].into_iter().flatten() {
        if f.status == StatusCode::UNAUTHORIZED || f.status == StatusCode::TOO_MANY_REQUESTS {
            return refused("Sign in", f);
        }
    }
    fragment(StatusCode::OK, pages::home(&pages::Home { recent, own, portfolios }))
}

/// Search results shown with their score and grade (a name search answers more).
const SEARCH_RATED: usize = 25;

/// Name, domain and social_id searches, whichever the text can be.
async fn search(Caller(api): Caller, Query(q): Params) -> Response {
    let text: String = param(&q, "q").chars().take(200).collect();
    if text.is_empty() {
        return refused(
            "Search",
            &Failure::new(StatusCode::BAD_REQUEST, "Type a company name, a domain or a social_id"),
        );
    }
    let by_domain = async {
        match model::Domain::parse(&text) {
            // The answer names the social_id only.
            Ok(d) if text.contains('.') => Some(
                api.get::<SocialIdByDomain>("/general-getsocialid-by-domain", &[("domain", d.as_str())])
                    .await
                    .map(|v| (String::new(), v.social_id)),
            ),
            _ => None,
        }
    };
    let by_id = async {
        match model::SocialId::parse(&text) {
            Ok(_) => Some(
                api.get::<DomainBySocialId>("/general-getdomain-by-socialid", &[("social_id", &text)])
                    .await
                    .map(|v| (v.company_name, v.social_id)),
            ),
            Err(_) => None,
        }
    };
    let name = [("company_name", text.as_str())];
    let by_name = api.get::<SocialIdsByName>("/general-getsocialid-by-companyname", &name);
    let (by_domain, by_id, by_name) = tokio::join!(by_domain, by_id, by_name);
    let mut found: Vec<(String, String, &'static str)> = Vec::new();
    let mut failures = Vec::new();
    let mut add = |name: &str, sid: &str, how: &'static str| {
        if !sid.is_empty() && !found.iter().any(|(_, s, _)| s == sid) {
            found.push((if name.is_empty() { sid.to_owned() } else { name.to_owned() }, sid.to_owned(), how));
        }
    };
    for (answer, how) in [(by_id, "social_id"), (by_domain, "domain")] {
        match answer {
            Some(Ok((name, sid))) => add(&name, &sid, how),
            // Nothing with that domain or social_id: the API says so with a 400.
            Some(Err(f)) if f.status == StatusCode::BAD_REQUEST => {}
            Some(Err(f)) => failures.push(f),
            None => {}
        }
    }
    match by_name {
        Ok(v) => {
            for c in &v.data {
                add(&c.company_name, &c.social_id, "name");
            }
        }
        Err(f) if f.status == StatusCode::BAD_REQUEST && !found.is_empty() => {}
        Err(f) => failures.push(f),
    }
    if let Some(f) = failures.iter().find(|f| f.status == StatusCode::UNAUTHORIZED) {
        return refused("Sign in", f);
    }
    // Each result with its rating (the first SEARCH_RATED of them).
    let mut rated = Vec::with_capacity(found.len());
    for (name, sid, how) in found {
        let scores = match rated.len() < SEARCH_RATED {
            true => api
                .get::<api::responses::CompanyScores>("/underwriter-getcompanyscores", &[("social_id", &sid)])
                .await
                .ok(),
            false => None,
        };
        let (score, grade) = scores.map_or((None, None), |s| (s.global_score, s.grade));
        rated.push(pages::Found { name, social_id: sid, how, score, grade });
    }
    fragment(StatusCode::OK, pages::search(&text, &rated, &failures))
}

/// The operations of a scorecard, for an underwriter (any company) or a monitor key
/// (its own).
pub(crate) async fn scorecard(api: &Api, who: Audience, social_id: &str) -> Result<pages::Scorecard, Failure> {
    let sid = [("social_id", social_id)];
    let (id, ops): (&[(&str, &str)], [&str; 6]) = match who {
        Audience::Underwriter => (
            &sid,
            [
                "/underwriter-getcompanyscores",
                "/underwriter-getcompanyscore-history",
                "/underwriter-getcompanyapplicationsassets",
                "/underwriter-getcompanyinfrastructureassets",
                "/underwriter-getcompanysbomcve",
                "/underwriter-getcompany-history",
            ],
        ),
        Audience::Monitor => (
            &[],
            [
                "/monitor-getcompanyscores",
                "/monitor-getcompanyscore-history",
                "/monitor-getcompanyapplicationsassets",
                "/monitor-getcompanyinfrastructureassets",
                "/monitor-getcompanysbomcve",
                "/monitor-getcompany-history",
            ],
        ),
    };
    // An underwriter reads the subsidiaries' scores; a monitor key lists its own.
    let subsidiaries = async {
        match who {
            Audience::Underwriter => {
                api.get("/underwriter-getcompanysubscores", id).await.map(pages::Subsidiaries::Scores)
            }
            Audience::Monitor => api.get("/monitor-listsubsidiaries", id).await.map(pages::Subsidiaries::Listed),
        }
    };
    // The scores first: a company not rated yet (or not the caller's) stops here.
    let scores = api.get(ops[0], id).await?;
    let (history, subsidiaries, applications, infrastructure, sbom, incidents) = tokio::join!(
        api.get(ops[1], id),
        subsidiaries,
        api.get(ops[2], id),
        api.get(ops[3], id),
        api.get(ops[4], id),
        api.get(ops[5], id),
    );
    let (disputes, evaluation) = match who {
        Audience::Monitor => (own_disputes(api).await, None),
        // The API refuses a key of no organisation, or one without guidelines: no section.
        Audience::Underwriter => {
            (pages::Disputes::default(), api.get("/underwriter-evaluate-guidelines", id).await.ok())
        }
    };
    Ok(pages::Scorecard {
        scores,
        disputes,
        evaluation,
        history,
        subsidiaries,
        applications,
        infrastructure,
        sbom,
        incidents,
    })
}

/// The most pages of disputes a view reads (10 each).
const DISPUTE_PAGES: u64 = 10;

/// The monitor key's disputes, newest first, as a view shows them by finding (none when
/// the key may not read them).
pub(crate) async fn own_disputes(api: &Api) -> pages::Disputes {
    let mut all = Vec::new();
    for page in 1..=DISPUTE_PAGES {
        let p = page.to_string();
        match api.get::<api::responses::DisputesOut>("/monitor-getdisputes", &[("page", p.as_str())]).await {
            Ok(v) => {
                let last = v.pagination.total_pages <= page;
                all.extend(v.disputes);
                if last {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    pages::Disputes::of(all)
}

async fn company(Caller(api): Caller, Query(q): Params) -> Response {
    let social_id = param(&q, "social_id");
    match scorecard(&api, Audience::Underwriter, social_id).await {
        Ok(card) => fragment(StatusCode::OK, pages::scorecard(Audience::Underwriter, &card)),
        Err(f) => refused(&format!("Company {social_id}"), &f),
    }
}

async fn monitor(Caller(api): Caller) -> Response {
    match scorecard(&api, Audience::Monitor, "").await {
        Ok(card) => fragment(StatusCode::OK, pages::scorecard(Audience::Monitor, &card)),
        Err(f) => refused("Your company", &f),
    }
}

/// One page of a company's applications, infrastructure or SBOM: an underwriter's
/// `social_id`, or the monitor key's own company without one.
async fn assets(Caller(api): Caller, Query(q): Params) -> Response {
    let Some(kind) = pages::AssetKind::parse(param(&q, "kind")) else {
        return refused(
            "List",
            &Failure::new(StatusCode::BAD_REQUEST, "kind must be applications, infrastructure or sbom"),
        );
    };
    let social_id = param(&q, "social_id");
    let who = Audience::of(social_id);
    let page = param(&q, "page");
    let mut at = who.naming(social_id);
    at.push(("page", if page.is_empty() { "1" } else { page }));
    let op = kind.operation(who);
    let page = match kind {
        pages::AssetKind::Applications => api.get(op, &at).await.map(pages::AssetPage::Applications),
        pages::AssetKind::Infrastructure => api.get(op, &at).await.map(pages::AssetPage::Infrastructure),
        pages::AssetKind::Sbom => api.get(op, &at).await.map(pages::AssetPage::Sbom),
    };
    match page {
        Ok(v) => fragment(StatusCode::OK, pages::asset_list(who, social_id, &v)),
        Err(f) => refused(kind.as_str(), &f),
    }
}

async fn incident(Caller(api): Caller, Query(q): Params) -> Response {
    let id = [("incident_id", param(&q, "incident_id"))];
    match api.get::<IncidentDetail>("/underwriter-getincidentdetail-by-id", &id).await {
        Ok(v) => fragment(StatusCode::OK, pages::incident(&v)),
        Err(f) => refused("Incident", &f),
    }
}

async fn predictions(Caller(api): Caller, Query(q): Params) -> Response {
    let asked = param(&q, "period");
    let valid: Option<u32> = asked.parse().ok().filter(|p| (1..=60).contains(p));
    let period = valid.unwrap_or(12);
    let notice = (!asked.is_empty() && valid.is_none()).then_some("The horizon is 1 to 60 months: showing 12.");
    let p = period.to_string();
    let social_id = param(&q, "social_id");
    let who = Audience::of(social_id);
    let mut at = who.naming(social_id);
    at.push(("period", p.as_str()));
    let ops =
        ["get-incident-prediction", "get-data-loss-prediction", "get-tail-risk-estimation"].map(|r| who.operation(r));
    let (incident, loss, tail) = tokio::join!(
        api.get::<IncidentPrediction>(&ops[0], &at),
        api.get::<DataLossPrediction>(&ops[1], &at),
        api.get::<TailRiskPrediction>(&ops[2], &at),
    );
    if let Err(f) = &incident
        && f.status == StatusCode::UNAUTHORIZED
    {
        return refused("Sign in", f);
    }
    let of = incident.as_ref().ok().map(|v| v.social_id.as_str()).unwrap_or(social_id);
    fragment(StatusCode::OK, pages::predictions(who, of, period, notice, &incident, &loss, &tail))
}

/// The plan to reach a grade: an underwriter's `social_id`, or the monitor key's own
/// company without one.
async fn plan(Caller(api): Caller, Query(q): Params) -> Response {
    let social_id = param(&q, "social_id");
    let target = param(&q, "target_grade");
    let target = if target.is_empty() { "A" } else { target };
    let who = Audience::of(social_id);
    let mut at = who.naming(social_id);
    at.push(("target_grade", target));
    let answer = api.get::<api::responses::ImprovementPlanOut>(&who.operation("getimprovementplan"), &at).await;
    match answer {
        Ok(p) => fragment(StatusCode::OK, pages::plan_view(who, &p)),
        Err(f) => refused("Plan", &f),
    }
}

/// The report of a company (an underwriter's `social_id`, or the monitor key's own), as
/// a file to keep.
async fn report_download(Caller(api): Caller, Query(q): Params) -> Response {
    let social_id = param(&q, "social_id");
    let who = Audience::of(social_id);
    match report::document(&api, who, social_id).await {
        Ok(html) => {
            let name = format!("attachment; filename=\"rampart-report-{}.html\"", report::file_stem(social_id));
            let disposition = HeaderValue::from_str(&name).unwrap_or(HeaderValue::from_static("attachment"));
            (
                [
                    (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
                    (header::CONTENT_DISPOSITION, disposition),
                ],
                html,
            )
                .into_response()
        }
        Err(f) => refused("Report", &f),
    }
}

/// The fields of a posted form (the page posts `application/x-www-form-urlencoded`).
pub(crate) fn form(body: &Bytes) -> HashMap<String, String> {
    form_urlencoded::parse(body).take(32).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// What an action's answer says (each answers a `message`).
pub(crate) fn answered(result: Result<String, Failure>) -> Response {
    match result {
        Ok(message) => fragment(StatusCode::OK, pages::message(true, &message)),
        Err(f) => fragment(f.status, pages::message(false, &f.to_string())),
    }
}

async fn rescan(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    let q = [("risk_vector_id", param(&f, "risk_vector_id")), ("subdomain", param(&f, "subdomain"))];
    let answer = api.call::<MessageOut>(Method::PUT, "/monitor-rescan-subdomain-by-vectorid", &q).await;
    answered(answer.map(|a| a.message))
}

async fn dispute(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    let Ok(finding_id) = param(&f, "finding_id").parse::<i64>() else {
        return fragment(StatusCode::BAD_REQUEST, pages::message(false, "finding_id is not valid"));
    };
    let body = DisputeBody { finding_id, reason: param(&f, "reason"), explanation: param(&f, "explanation") };
    answered(api.post::<DisputeAnswer>("/monitor-dispute-finding", &body).await.map(|a| a.message))
}

/// The body of `/monitor-dispute-finding`.
#[derive(Serialize)]
struct DisputeBody<'a> {
    finding_id: i64,
    reason: &'a str,
    explanation: &'a str,
}

/// The body of `/monitor-add-subsidiary`: the industry and the employees only when given.
#[derive(Serialize)]
struct NewSubsidiary<'a> {
    name: &'a str,
    website: &'a str,
    social_id: &'a str,
    parent_social_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    industry: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    employees: Option<u64>,
}

async fn add_subsidiary(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    let employees = match param(&f, "employees") {
        "" => None,
        n => match n.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => {
                return fragment(StatusCode::BAD_REQUEST, pages::message(false, "Employees must be a whole number"));
            }
        },
    };
    let sub = NewSubsidiary {
        name: param(&f, "name"),
        website: param(&f, "website"),
        social_id: param(&f, "social_id"),
        parent_social_id: param(&f, "parent_social_id"),
        industry: Some(param(&f, "industry")).filter(|i| !i.is_empty()),
        employees,
    };
    answered(api.post::<MessageOut>("/monitor-add-subsidiary", &sub).await.map(|a| a.message))
}

async fn remove_subsidiary(Caller(api): Caller, body: Bytes) -> Response {
    let f = form(&body);
    let id = [("subsidiary_id", param(&f, "subsidiary_id"))];
    answered(api.call::<MessageOut>(Method::DELETE, "/monitor-delete-subsidiary", &id).await.map(|a| a.message))
}
