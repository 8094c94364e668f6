//! The Portfolio group (extensions, docs/API.md "Portfolios"): an organisation's
//! portfolios, the companies it onboards into them by domain, each with its vendor
//! record, a portfolio's list (sorted, filtered, as CSV) and summary, and the findings
//! searches. Every operation needs a key of an organisation (scope `portfolio`); no key
//! reaches another organisation's portfolio, which is answered as one that does not
//! exist.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use utoipa::ToSchema;

use model::{Company, CompanyProfile, Domain, Grade, Portfolio, RiskVector, Severity, SocialId, VendorRecord};
use store::{FindingQuery, FindingStatus, FindingsOf, PortfolioRow};

use crate::error::{ApiError, CommonErrors};
use crate::params::{BulkBody, PageQuery, Params, RawBody};
use crate::responses::MessageOut;
use crate::responses::portfolio::*;
use crate::{AppState, Caller};

/// Portfolios an organisation may have.
pub const MAX_PORTFOLIOS: u64 = 1000;
/// Rows of one add-companies request.
pub const MAX_ROWS: usize = 1000;
/// Rows of an add-companies request looked up at once.
const ROWS_AT_ONCE: usize = 16;
/// Companies one key may create from their domains per UTC day (each queues scans).
pub const ONBOARD_PER_DAY: u64 = 5000;
/// Footprint additions a company may have waiting for an operator at once.
const MAX_PENDING: u64 = 20;
/// Rows of a findings CSV, at most.
pub const CSV_FINDINGS: u64 = 100_000;

/// The caller of a Portfolio operation and its key's organisation.
pub(crate) struct OrgCaller {
    pub org: i64,
    pub caller: Caller,
}

impl axum::extract::FromRequestParts<AppState> for OrgCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &AppState) -> Result<Self, ApiError> {
        let caller = super::caller_of(parts)?;
        let org = caller.org.ok_or(ApiError::Forbidden)?;
        Ok(Self { org, caller })
    }
}

pub(super) fn portfolio_id(raw: Option<&str>) -> Result<i64, ApiError> {
    let raw = raw.ok_or_else(|| ApiError::required("portfolio_id"))?;
    raw.trim().parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(|| ApiError::not_valid("portfolio_id"))
}

/// The organisation's portfolio `id`; another organisation's is answered as none.
async fn portfolio_of(app: &AppState, org: i64, id: i64) -> Result<Portfolio, ApiError> {
    app.store()
        .portfolio(org, id)
        .await?
        .ok_or_else(|| ApiError::bad(format!("portfolio_id: there is no portfolio {id} in this organisation")))
}

/// The organisation's portfolio `id` as its list shows it (kept); another
/// organisation's is answered as none.
pub(super) async fn viewed(app: &AppState, org: i64, id: i64) -> Result<std::sync::Arc<PortfolioView>, ApiError> {
    app.portfolio_view(org, id)
        .await?
        .ok_or_else(|| ApiError::bad(format!("portfolio_id: there is no portfolio {id} in this organisation")))
}

/// A JSON body's object, or a 400 saying what it must be.
pub(crate) fn json_object(raw: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, ApiError> {
    match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        _ => Err(ApiError::bad("The request body must be one JSON object")),
    }
}

/// A text field of a JSON object: absent or null is none; anything but text is refused.
fn text_field<'a>(
    map: &'a serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Result<Option<&'a str>, ApiError> {
    match map.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(ApiError::not_valid(name)),
    }
}

/// The body of POST /portfolio-create.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct CreateBody {
    /// 1 to 100 characters, unique in the organisation.
    #[schema(max_length = 100)]
    name: String,
}

/// Creates a portfolio of the caller's organisation.
#[utoipa::path(post, path = "/portfolio-create", operation_id = "portfolio-create", tag = "Portfolio",
    request_body(content = CreateBody, content_type = "application/json"),
    responses((status = 200, description = "The portfolio (extension)", body = PortfolioOut), CommonErrors))]
pub async fn create(
    State(app): State<AppState>,
    OrgCaller { org, .. }: OrgCaller,
    raw: RawBody,
) -> Result<Json<PortfolioOut>, ApiError> {
    let body = json_object(&raw.0)?;
    let name = body_name(&body)?;
    match app.store().create_portfolio(org, &name, MAX_PORTFOLIOS).await? {
        Some(p) => Ok(Json(PortfolioOut::from(&p))),
        None if app.store().portfolios(org).await?.iter().any(|p| p.name == name) => {
            Err(ApiError::bad(format!("name: the organisation has a portfolio named {name:?} already")))
        }
        None => Err(ApiError::bad(format!("An organisation may have at most {MAX_PORTFOLIOS} portfolios"))),
    }
}

/// The caller's organisation's portfolios, by name, with how many companies each holds.
#[utoipa::path(get, path = "/portfolio-list", operation_id = "portfolio-list", tag = "Portfolio",
    responses((status = 200, description = "Portfolios (extension)", body = PortfoliosOut), CommonErrors))]
pub async fn list(
    State(app): State<AppState>,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Json<PortfoliosOut>, ApiError> {
    let portfolios = app.store().portfolios(org).await?;
    Ok(Json(PortfoliosOut { portfolios: portfolios.iter().map(PortfolioOut::from).collect() }))
}

/// The body of POST /portfolio-rename.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct RenameBody {
    portfolio_id: i64,
    #[schema(max_length = 100)]
    name: String,
}

/// Renames a portfolio.
#[utoipa::path(post, path = "/portfolio-rename", operation_id = "portfolio-rename", tag = "Portfolio",
    request_body(content = RenameBody, content_type = "application/json"),
    responses((status = 200, description = "The portfolio (extension)", body = PortfolioOut), CommonErrors))]
pub async fn rename(
    State(app): State<AppState>,
    OrgCaller { org, .. }: OrgCaller,
    raw: RawBody,
) -> Result<Json<PortfolioOut>, ApiError> {
    let body = json_object(&raw.0)?;
    let id = body_portfolio_id(&body)?;
    let name = body_name(&body)?;
    match app.store().rename_portfolio(org, id, &name).await {
        Ok(Some(p)) => Ok(Json(PortfolioOut::from(&p))),
        Ok(None) => Err(portfolio_of(&app, org, id).await.err().unwrap_or(ApiError::Internal("renamed none".into()))),
        Err(store::StoreError::Invalid(_)) => {
            Err(ApiError::bad(format!("name: the organisation has a portfolio named {name:?} already")))
        }
        Err(e) => Err(e.into()),
    }
}

/// `name` of a JSON body: a portfolio's name.
fn body_name(body: &serde_json::Map<String, serde_json::Value>) -> Result<String, ApiError> {
    let name = text_field(body, "name")?.ok_or_else(|| ApiError::required("name"))?;
    model::portfolio::name("name", name).map_err(|e| ApiError::bad(e.to_string()))
}

/// `portfolio_id` of a JSON body: a positive integer (or its text).
pub(super) fn body_portfolio_id(body: &serde_json::Map<String, serde_json::Value>) -> Result<i64, ApiError> {
    match body.get("portfolio_id") {
        None | Some(serde_json::Value::Null) => Err(ApiError::required("portfolio_id")),
        Some(serde_json::Value::Number(n)) => {
            n.as_i64().filter(|id| *id > 0).ok_or_else(|| ApiError::not_valid("portfolio_id"))
        }
        Some(serde_json::Value::String(s)) => portfolio_id(Some(s)),
        Some(_) => Err(ApiError::not_valid("portfolio_id")),
    }
}

/// `portfolio_id`: the portfolio an operation is about.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PortfolioQuery {
    /// A portfolio of the caller's organisation (`/portfolio-list`)
    #[param(minimum = 1)]
    portfolio_id: i64,
}

/// `portfolio_id` and `social_id`: one company of a portfolio.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct MemberQuery {
    #[param(minimum = 1)]
    portfolio_id: i64,
    /// The company's social_id
    social_id: String,
}

/// Deletes a portfolio and its vendor records (the companies and their ratings stay).
#[utoipa::path(delete, path = "/portfolio-delete", operation_id = "portfolio-delete", tag = "Portfolio",
    params(PortfolioQuery),
    responses((status = 200, description = "Deleted (extension)", body = MessageOut), CommonErrors))]
pub async fn delete(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Json<MessageOut>, ApiError> {
    let id = portfolio_id(p.optional("portfolio_id"))?;
    let portfolio = portfolio_of(&app, org, id).await?;
    app.store().delete_portfolio(org, id).await?;
    Ok(Json(MessageOut {
        message: format!(
            "Portfolio {id} ({}) was deleted with its {} vendor records",
            portfolio.name, portfolio.companies
        ),
    }))
}

// --- Onboarding -------------------------------------------------------------------------

/// One row of an add-companies request, as sent.
#[derive(Debug, Default, Clone)]
struct RowIn {
    domain: String,
    social_id: Option<String>,
    name: Option<String>,
    industry: Option<String>,
    employees: Option<String>,
    tier: Option<String>,
    tags: Option<Vec<String>>,
    custom_id: Option<String>,
    relationship: Option<String>,
    stage: Option<String>,
    owner: Option<String>,
    note: Option<String>,
}

/// The columns (and JSON fields) a row may have.
const COLUMNS: [&str; 12] = [
    "domain",
    "social_id",
    "name",
    "industry",
    "employees",
    "tier",
    "tags",
    "custom_id",
    "relationship",
    "stage",
    "owner",
    "note",
];

impl RowIn {
    fn set(&mut self, column: &str, value: String) {
        let v = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        match column {
            "domain" => self.domain = v.unwrap_or_default(),
            "social_id" => self.social_id = v,
            "name" => self.name = v,
            "industry" => self.industry = v,
            "employees" => self.employees = v,
            "tier" => self.tier = v,
            "tags" => self.tags = v.map(|t| t.split([';', '|']).map(str::to_owned).collect()),
            "custom_id" => self.custom_id = v,
            "relationship" => self.relationship = v,
            "stage" => self.stage = v,
            "owner" => self.owner = v,
            "note" => self.note = v,
            _ => {}
        }
    }

    /// A JSON row: an object of the [`COLUMNS`], text or numbers (`tier`, `employees`),
    /// `tags` a list of text (or text separated by `;`).
    fn from_json(v: &serde_json::Value) -> Result<RowIn, String> {
        let serde_json::Value::Object(map) = v else { return Err("a row must be a JSON object".into()) };
        let mut row = RowIn::default();
        for (k, v) in map {
            if !COLUMNS.contains(&k.as_str()) {
                return Err(format!("unknown field {:?}", k.chars().take(64).collect::<String>()));
            }
            match (k.as_str(), v) {
                (_, serde_json::Value::Null) => {}
                ("tags", serde_json::Value::Array(items)) => {
                    let mut tags = Vec::new();
                    for item in items.iter().take(model::portfolio::MAX_TAGS + 1) {
                        tags.push(item.as_str().ok_or("tags must be text")?.to_owned());
                    }
                    row.tags = Some(tags);
                }
                (_, serde_json::Value::String(s)) => row.set(k, s.clone()),
                ("tier" | "employees", serde_json::Value::Number(n)) => row.set(k, n.to_string()),
                _ => return Err(format!("{k} must be text")),
            }
        }
        Ok(row)
    }
}

/// The rows of a body: JSON (`{"portfolio_id", "companies": [...]}`) or, with
/// `Content-Type: text/csv`, CSV with a header row naming the [`COLUMNS`]. A row
/// that cannot be read is kept as its error, answered `refused`.
/// Rows as read: each a row or why it cannot be read.
type Rows = Vec<Result<RowIn, String>>;

fn rows_of(headers: &HeaderMap, raw: &[u8]) -> Result<(Option<i64>, Rows), ApiError> {
    let csv = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim().to_ascii_lowercase().starts_with("text/csv"));
    if csv {
        return Ok((None, csv_rows(raw)?));
    }
    let body = json_object(raw)?;
    let id = match body.get("portfolio_id") {
        None | Some(serde_json::Value::Null) => None,
        Some(_) => Some(body_portfolio_id(&body)?),
    };
    let Some(serde_json::Value::Array(companies)) = body.get("companies") else {
        return Err(ApiError::bad("companies must be a list of companies, each with its domain"));
    };
    if companies.len() > MAX_ROWS {
        return Err(ApiError::bad(format!("companies: at most {MAX_ROWS} per request")));
    }
    Ok((id, companies.iter().map(RowIn::from_json).collect()))
}

fn csv_rows(raw: &[u8]) -> Result<Rows, ApiError> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(raw);
    let header: Vec<String> = reader
        .headers()
        .map_err(|_| ApiError::bad("The CSV must start with a header row naming its columns"))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_ascii_lowercase())
        .collect();
    if let Some(bad) = header.iter().find(|h| !COLUMNS.contains(&h.as_str())) {
        return Err(ApiError::bad(format!(
            "CSV column {:?} is not one of: {}",
            bad.chars().take(64).collect::<String>(),
            COLUMNS.join(", ")
        )));
    }
    if !header.iter().any(|h| h == "domain") {
        return Err(ApiError::bad("The CSV must have a domain column"));
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        if rows.len() == MAX_ROWS {
            return Err(ApiError::bad(format!("companies: at most {MAX_ROWS} per request")));
        }
        rows.push(match record {
            Ok(r) => {
                let mut row = RowIn::default();
                for (column, value) in header.iter().zip(r.iter()) {
                    row.set(column, value.to_owned());
                }
                Ok(row)
            }
            Err(e) => Err(format!("the CSV row cannot be read: {e}")),
        });
    }
    Ok(rows)
}

/// The vendor record a row gives (its fields checked), over `base`.
fn record_of(row: &RowIn, base: VendorRecord) -> Result<VendorRecord, String> {
    let mut r = base;
    if let Some(t) = &row.tier {
        r.tier = Some(model::Tier::parse(t).map_err(|e| e.to_string())?);
    }
    if let Some(tags) = &row.tags {
        r.tags = model::portfolio::tags(tags.iter().map(String::as_str).filter(|t| !t.trim().is_empty()))
            .map_err(|e| e.to_string())?;
    }
    if let Some(c) = &row.custom_id {
        r.custom_id =
            Some(model::portfolio::text("custom_id", c, model::portfolio::MAX_CUSTOM_ID).map_err(|e| e.to_string())?);
    }
    if let Some(x) = &row.relationship {
        r.relationship = model::Relationship::parse(x).map_err(|e| e.to_string())?;
    }
    if let Some(x) = &row.stage {
        r.stage = model::Stage::parse(x).map_err(|e| e.to_string())?;
    }
    if let Some(o) = &row.owner {
        r.owner = model::portfolio::text("owner", o, model::portfolio::MAX_OWNER).map_err(|e| e.to_string())?;
    }
    if let Some(n) = &row.note {
        r.note = model::portfolio::text("note", n, model::portfolio::MAX_NOTE).map_err(|e| e.to_string())?;
    }
    Ok(r)
}

/// Top-level names that are never on the internet (RFC 6761, RFC 6762, RFC 7686,
/// RFC 8375, ICANN's `.internal`): no company is rated by one. `.test` is the lab's.
const SPECIAL_TLDS: [&str; 8] = ["test", "localhost", "invalid", "example", "local", "onion", "internal", "arpa"];

/// Why a company cannot be created from `domain`: its top-level name is never on the
/// internet ([`SPECIAL_TLDS`]; `.test` is the lab's, in lab mode).
fn not_on_the_internet(domain: &Domain, lab: bool) -> Option<String> {
    let tld = domain.as_str().rsplit('.').next().unwrap_or("");
    (SPECIAL_TLDS.contains(&tld) && !(lab && tld == "test"))
        .then(|| format!("{domain} is not a registrable domain: .{tld} names are not on the internet"))
}

/// The domain a row onboards: a name or URL (its host), without a leading `www.`; or
/// why it is not a company's domain.
fn onboarding_domain(raw: &str) -> Result<Domain, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err("domain is required".into());
    }
    let shown: String = raw.chars().take(100).collect();
    let host = raw.split_once("://").map_or(raw, |(_, rest)| rest);
    let host = host.split(['/', '?', '#']).next().unwrap_or(host);
    // `[::1]:80`: the address between the brackets.
    let bracketed = host.strip_prefix('[').and_then(|h| h.split(']').next());
    if bracketed.is_some_and(|h| h.parse::<std::net::Ipv6Addr>().is_ok())
        || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok()
        || host.rsplit_once(':').is_some_and(|(h, _)| h.parse::<std::net::Ipv4Addr>().is_ok())
    {
        return Err(format!("{shown} is an IP address, not a registrable domain: give the company's domain"));
    }
    let domain = Domain::from_url(raw).map_err(|_| format!("{shown} is not a domain name"))?;
    match domain.as_str().strip_prefix("www.") {
        Some(rest) if rest.contains('.') => Domain::parse(rest).map_err(|_| format!("{shown} is not a domain name")),
        _ => Ok(domain),
    }
}

/// The social_id of a company onboarded by its domain when none is given: the domain
/// itself (`harborlight.test`), so the same domain always gets the same social_id.
pub fn social_id_for(domain: &Domain) -> Option<SocialId> {
    SocialId::parse(domain.as_str()).ok()
}

/// What one row came to: its answer, and the company to add with its record — or the
/// company to create first, with the request's other new companies in one transaction.
struct Onboarded {
    out: AddedRowOut,
    member: Option<(i64, VendorRecord)>,
    create: Option<Creation>,
}

/// A company new to Rampart that a row creates from its domain.
struct Creation {
    onboarding: store::Onboarding,
    record: VendorRecord,
    /// Its domain, when it is another company's on evidence: an operator must approve
    /// it (the company is created without it).
    held: Option<Domain>,
}

fn refused(domain: &str, message: String) -> Onboarded {
    Onboarded {
        out: AddedRowOut {
            domain: domain.chars().take(253).collect(),
            social_id: None,
            status: "refused".into(),
            depth: None,
            created: false,
            message,
        },
        member: None,
        create: None,
    }
}

/// The key's name in records.
pub(crate) fn by(caller: &Caller) -> String {
    caller.key_id.map_or_else(|| "an operator".to_owned(), |k| format!("key {k}"))
}

/// A company onboarding found: rated (its latest rating), or queued for its first
/// rating at top priority, or refused when its last scan found it cannot be rated.
async fn existing(app: &AppState, c: &Company, record: VendorRecord, note: String) -> Result<Onboarded, ApiError> {
    let mut out = AddedRowOut {
        domain: c.domain.as_ref().map(Domain::to_string).unwrap_or_default(),
        social_id: Some(c.social_id.to_string()),
        status: "rated".into(),
        depth: None,
        created: false,
        message: String::new(),
    };
    if let Some(latest) = app.store().latest_score(c.id).await? {
        out.depth = Some(latest.depth().to_owned());
        out.message = format!("{} is rated {:.1} ({}){note}", c.company_name, latest.score.as_f64(), latest.grade);
    } else if let Some((why, _)) = app.store().scan_error(c.id).await? {
        out.status = "refused".into();
        out.message = format!("{} cannot be rated: {why}", c.social_id);
        return Ok(Onboarded { out, member: None, create: None });
    } else {
        app.enqueue(&model::JobSpec::Quick { social_id: c.social_id.clone() }).await?;
        out.status = "queued".into();
        out.message = format!("{} is not rated yet: its quick rating is queued at top priority{note}", c.social_id);
    }
    Ok(Onboarded { out, member: Some((c.id, record)), create: None })
}

/// One row onboarded: the company it names found, or created from its domain.
async fn onboard(app: &AppState, who: &OrgCaller, row: Result<RowIn, String>) -> Result<Onboarded, ApiError> {
    let row = match row {
        Ok(r) => r,
        Err(why) => return Ok(refused("", why)),
    };
    let given = row.domain.clone();
    let record = match record_of(&row, VendorRecord::default()) {
        Ok(r) => r,
        Err(why) => return Ok(refused(&given, why)),
    };
    let domain = match onboarding_domain(&row.domain) {
        Ok(d) => d,
        Err(why) => return Ok(refused(&given, why)),
    };
    let named = match row.social_id.as_deref().map(SocialId::parse).transpose() {
        Ok(s) => s,
        Err(_) => return Ok(refused(&given, "social_id is not valid".into())),
    };
    if let Some(sid) = &named
        && let Some(c) = app.store().company_by_social_id(sid).await?
    {
        let theirs = c.domain.as_ref().is_some_and(|d| model::asset_under(domain.as_str(), d.as_str()));
        if !theirs || !c.domain_verified {
            let of = c.domain.as_ref().map_or_else(|| "no domain".to_owned(), |d| format!("the domain {d}"));
            return Ok(refused(&given, format!("social_id {sid} is the company of {of}, not of {domain}")));
        }
        return existing(app, &c, record, String::new()).await;
    }
    if let Some(c) = app.store().company_by_domain(&domain).await? {
        let note = match &c.domain {
            Some(d) if *d != domain => format!(" ({domain} is a name of its verified domain {d})"),
            _ => String::new(),
        };
        return existing(app, &c, record, note).await;
    }
    if let Some(why) = not_on_the_internet(&domain, app.config().lab_addresses) {
        return Ok(refused(&given, why));
    }
    let sid = match named.or_else(|| social_id_for(&domain)) {
        Some(s) => s,
        None => return Ok(refused(&given, "give the company a social_id: its domain makes none".into())),
    };
    if app.store().company_by_social_id(&sid).await?.is_some() {
        return Ok(refused(&given, format!("social_id {sid} is another company's: give this one a social_id")));
    }
    // A name another company holds on evidence (a host its scans found) is not taken on
    // a row's word: an operator decides (`rampart footprint pending|approve|reject`).
    let held = !app.store().holders_of(&domain, &[]).await?.is_empty();
    let derived = row.name.is_none();
    let name = match &row.name {
        Some(n) => match model::portfolio::name("name", n) {
            Ok(n) => n,
            Err(e) => return Ok(refused(&given, e.to_string())),
        },
        None => domain.to_string(),
    };
    let industry = row.industry.clone().unwrap_or_default();
    let profile = CompanyProfile {
        social_id: Some(sid.clone()),
        company_name: name,
        website: if held { String::new() } else { format!("https://{domain}") },
        domain: if held { None } else { Some(domain.clone()) },
        naics_code: model::naics::code_for_industry(&industry).map(|n| i64::from(n.code)),
        industry,
        employees_number: row.employees.as_deref().map(|e| format!("{e} employees")).unwrap_or_default(),
        ..Default::default()
    };
    let out = AddedRowOut {
        domain: domain.to_string(),
        social_id: Some(sid.to_string()),
        status: (if held { "pending" } else { "queued" }).into(),
        depth: None,
        created: true,
        message: format!(
            "{sid} was created from {domain}: its quick rating is queued at top priority, its full scan after it"
        ),
    };
    let attribution = format!("the company's domain: onboarded by {} of organisation {}", by(&who.caller), who.org);
    let onboarding = store::Onboarding {
        profile,
        name_derived: derived,
        domain: (!held).then(|| (domain.clone(), attribution)),
        job: (!held).then(|| model::JobSpec::Quick { social_id: sid.clone() }),
    };
    let held = held.then_some(domain);
    Ok(Onboarded { out, member: None, create: Some(Creation { onboarding, record, held }) })
}

/// Creates the companies rows asked for, in one transaction, counted against the key's
/// day ([`ONBOARD_PER_DAY`]: a key cannot turn the scanner on the internet at will); a
/// row past it is refused. A company whose domain is another's waits for an operator.
async fn create_all(
    app: &AppState,
    who: &OrgCaller,
    creating: Vec<(usize, Creation)>,
    results: &mut [AddedRowOut],
    members: &mut Vec<(i64, VendorRecord)>,
) -> Result<(), ApiError> {
    if creating.is_empty() {
        return Ok(());
    }
    let now = time::OffsetDateTime::now_utc();
    let rows: Vec<store::Onboarding> = creating.iter().map(|(_, c)| c.onboarding.clone()).collect();
    let ids = app
        .store()
        .onboard(who.caller.key_id, now.replace_time(time::Time::MIDNIGHT), now, ONBOARD_PER_DAY, &rows)
        .await?;
    for ((i, c), id) in creating.into_iter().zip(ids) {
        let Some(id) = id else {
            let why = format!("this key onboarded {ONBOARD_PER_DAY} new companies today: try tomorrow");
            results[i] = refused(&results[i].domain, why).out;
            continue;
        };
        if let Some(domain) = &c.held {
            let sid = results[i].social_id.clone().unwrap_or_default();
            let asset = model::FootprintAsset::Name(domain.clone());
            let why = format!("onboarded by domain into a portfolio of organisation {}", who.org);
            let request = app.store().request_asset(id, &asset, &why, &by(&who.caller), now, MAX_PENDING).await?;
            results[i].message = format!(
                "{domain} is in the footprint of another company: {sid} was created and an operator must approve \
                 {domain} as its domain (request {}); it is not scanned until then",
                request.map_or_else(|| "not recorded: too many pending".to_owned(), |r| r.to_string())
            );
        }
        members.push((id, c.record));
    }
    Ok(())
}

/// The body of POST /portfolio-add-companies (JSON; or CSV with the same columns).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct AddCompaniesBody {
    /// The portfolio (or the query parameter `portfolio_id`).
    portfolio_id: Option<i64>,
    /// At most 1,000 rows.
    companies: Vec<CompanyRow>,
}

/// One company to add: its domain, and what the organisation knows of it.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct CompanyRow {
    /// The company's domain (or its site's URL).
    domain: String,
    /// Its social_id (when new: made from the domain when absent).
    social_id: Option<String>,
    name: Option<String>,
    industry: Option<String>,
    employees: Option<String>,
    /// 1 to 4.
    tier: Option<i64>,
    tags: Option<Vec<String>>,
    custom_id: Option<String>,
    relationship: Option<String>,
    stage: Option<String>,
    owner: Option<String>,
    note: Option<String>,
}

/// Adds companies to a portfolio by their domains — JSON, or `text/csv` with a header
/// row naming the same columns (`tags` separated by `;`) — at most 1,000 per request.
/// A company new to Rampart is created from its domain (its social_id the domain, its
/// name the domain unless the row gives one) and its quick rating queued at top priority
/// (DNS and mail, the web root, TLS on 443, the common ports: seconds), its full scan
/// after it; each rating answers its `depth`.
/// Each row is answered with its status: `rated`, `queued`, `pending` or
/// `refused` (with why).
#[utoipa::path(post, path = "/portfolio-add-companies", operation_id = "portfolio-add-companies", tag = "Portfolio",
    params(("portfolio_id" = Option<i64>, Query, minimum = 1, description = "The portfolio, when the body does not name it (a CSV body)")),
    request_body(content((AddCompaniesBody = "application/json"), (String = "text/csv"))),
    responses((status = 200, description = "Each row's status (extension)", body = AddCompaniesOut), CommonErrors))]
pub async fn add_companies(
    State(app): State<AppState>,
    p: Params,
    who: OrgCaller,
    headers: HeaderMap,
    raw: BulkBody,
) -> Result<Json<AddCompaniesOut>, ApiError> {
    let (in_body, rows) = rows_of(&headers, &raw.0)?;
    let id = match (in_body, p.optional("portfolio_id")) {
        (Some(id), _) => id,
        (None, q) => portfolio_id(q)?,
    };
    let portfolio = portfolio_of(&app, who.org, id).await?;
    let mut results = Vec::with_capacity(rows.len());
    let mut members: Vec<(i64, VendorRecord)> = Vec::new();
    let mut creating: Vec<(usize, Creation)> = Vec::new();
    // Rows naming a company this request creates already: (row, the creating row).
    let mut again: Vec<(usize, usize)> = Vec::new();
    // Each row read on its own connection, a few at once (answered in order); the
    // request's new companies are then written in one transaction.
    use futures_util::StreamExt;
    let mut onboarded = futures_util::stream::iter(rows).map(|row| onboard(&app, &who, row)).buffered(ROWS_AT_ONCE);
    while let Some(done) = onboarded.next().await {
        let mut done = done?;
        if let Some(create) = done.create.take() {
            let sid = &create.onboarding.profile.social_id;
            match creating.iter().find(|(_, c)| &c.onboarding.profile.social_id == sid) {
                // A new company named twice is created once, with its first row's record.
                Some((first, _)) => {
                    again.push((results.len(), *first));
                    done.out.created = false;
                    done.out.message = format!("the company of row {}, created once", first + 1);
                }
                None => creating.push((results.len(), create)),
            }
        }
        if let Some((company, record)) = done.member {
            // A company named twice is added once, with its first row's record.
            if !members.iter().any(|(c, _)| *c == company) {
                members.push((company, record));
            }
        }
        results.push(done.out);
    }
    create_all(&app, &who, creating, &mut results, &mut members).await?;
    for (row, first) in again {
        if results[first].status == "refused" {
            results[row] = AddedRowOut { domain: results[row].domain.clone(), ..results[first].clone() };
        }
    }
    let added = app.store().add_to_portfolio(portfolio.id, &members).await?;
    let mut counts: BTreeMap<std::borrow::Cow<'static, str>, u64> =
        ["rated", "queued", "pending", "refused"].into_iter().map(|s| (s.into(), 0)).collect();
    for r in &results {
        *counts.entry(r.status.clone()).or_default() += 1;
    }
    Ok(Json(AddCompaniesOut {
        portfolio_id: portfolio.id,
        added: added.iter().filter(|a| **a).count() as u64,
        counts,
        results,
    }))
}

/// The body of PUT /portfolio-update-company: the fields to change (null clears `tier`
/// and `custom_id`; absent fields keep their value).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UpdateBody {
    tier: Option<i64>,
    tags: Option<Vec<String>>,
    custom_id: Option<String>,
    relationship: Option<String>,
    stage: Option<String>,
    owner: Option<String>,
    note: Option<String>,
}

/// The company of a portfolio a request names.
async fn member_of(app: &AppState, org: i64, p: &Params) -> Result<(Portfolio, Company, VendorRecord), ApiError> {
    let id = portfolio_id(p.optional("portfolio_id"))?;
    let sid = p.social_id()?;
    let portfolio = portfolio_of(app, org, id).await?;
    let not_in = || ApiError::bad(format!("social_id: {sid} is not in portfolio {id}"));
    let company = app.store().company_by_social_id(&sid).await?.ok_or_else(not_in)?;
    let record = app.store().member(portfolio.id, company.id).await?.ok_or_else(not_in)?;
    Ok((portfolio, company, record))
}

/// Changes a company's vendor record in a portfolio: tier (1–4), tags, custom id,
/// relationship, life-cycle stage, owner contact and note.
#[utoipa::path(put, path = "/portfolio-update-company", operation_id = "portfolio-update-company", tag = "Portfolio",
    params(MemberQuery),
    request_body(content = UpdateBody, content_type = "application/json"),
    responses((status = 200, description = "The record (extension)", body = MemberOut), CommonErrors))]
pub async fn update_company(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
    raw: RawBody,
) -> Result<Json<MemberOut>, ApiError> {
    let body = json_object(&raw.0)?;
    let (portfolio, company, mut record) = member_of(&app, org, &p).await?;
    let mut row = RowIn::default();
    for (k, v) in &body {
        if !["tier", "tags", "custom_id", "relationship", "stage", "owner", "note"].contains(&k.as_str()) {
            return Err(ApiError::bad(format!(
                "Unknown field {:?}: a record has tier, tags, custom_id, relationship, stage, owner and note",
                k.chars().take(64).collect::<String>()
            )));
        }
        match (k.as_str(), v) {
            ("tier", serde_json::Value::Null) => record.tier = None,
            ("custom_id", serde_json::Value::Null) => record.custom_id = None,
            ("tags", serde_json::Value::Null) => record.tags.clear(),
            (_, serde_json::Value::Null) => return Err(ApiError::not_valid(k)),
            _ => {}
        }
    }
    let rows = serde_json::Value::Object(body.into_iter().filter(|(_, v)| !v.is_null()).collect());
    if let serde_json::Value::Object(map) = &rows
        && !map.is_empty()
    {
        row = RowIn::from_json(&rows).map_err(ApiError::bad)?;
        // Empty text clears a text field.
        for (field, target) in [("owner", &mut record.owner), ("note", &mut record.note)] {
            if map.get(field).and_then(|v| v.as_str()).is_some_and(|s| s.trim().is_empty()) {
                target.clear();
            }
        }
    }
    let record = record_of(&row, record).map_err(ApiError::bad)?;
    if !app.store().update_member(portfolio.id, company.id, &record).await? {
        return Err(ApiError::bad(format!("social_id: {} is not in portfolio {}", company.social_id, portfolio.id)));
    }
    Ok(Json(MemberOut {
        portfolio_id: portfolio.id,
        social_id: company.social_id.to_string(),
        record: VendorRecordOut::from(&record),
    }))
}

/// Removes a company from a portfolio (the company and its ratings stay).
#[utoipa::path(delete, path = "/portfolio-remove-company", operation_id = "portfolio-remove-company", tag = "Portfolio",
    params(MemberQuery),
    responses((status = 200, description = "Removed (extension)", body = MessageOut), CommonErrors))]
pub async fn remove_company(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Json<MessageOut>, ApiError> {
    let (portfolio, company, _) = member_of(&app, org, &p).await?;
    app.store().remove_member(portfolio.id, company.id).await?;
    Ok(Json(MessageOut {
        message: format!("{} was removed from portfolio {} ({})", company.social_id, portfolio.id, portfolio.name),
    }))
}

// --- The portfolio's list -------------------------------------------------------------

/// A portfolio row as its list shows it, as of `now`; `default_cadence` is the
/// scheduler's rescan cadence (a company's own overrides it).
pub(crate) fn company_out(
    row: &PortfolioRow,
    now: time::OffsetDateTime,
    default_cadence: std::time::Duration,
) -> PortfolioCompanyOut {
    let change = |k: usize| -> Option<f64> {
        let (now, then) = (row.rating.as_ref()?.score, row.score_before[k]?);
        Some(((now.hundredths() - then.hundredths()) as f64) / 100.0)
    };
    let (status, status_message, stale) = match (&row.rating, &row.scan_error) {
        (Some(r), error) => {
            let failed = error.as_ref().filter(|(_, at)| at.0 >= r.scanned_at.0);
            let cadence = row.cadence.unwrap_or(default_cadence);
            let old = (now - r.scanned_at.0).unsigned_abs() > cadence.saturating_mul(2);
            ("rated", failed.map(|(why, _)| format!("the last scan failed: {why}")), failed.is_some() || old)
        }
        (None, Some((why, _))) => ("refused", Some(why.clone()), false),
        (None, None) if row.domain.is_none() => {
            ("pending", Some("an operator must approve its domain".to_owned()), false)
        }
        (None, None) => ("queued", Some(crate::error::NOT_PROCESSED.to_owned()), false),
    };
    PortfolioCompanyOut {
        social_id: row.social_id.to_string(),
        name: row.name.clone(),
        name_derived: row.name_derived,
        domain: row.domain.clone(),
        industry: row.industry.clone(),
        status: status.into(),
        status_message,
        score: row.rating.as_ref().map(|r| r.score.as_f64()),
        grade: row.rating.as_ref().map(|r| r.grade.as_str().to_owned()),
        change_7d: change(0),
        change_30d: change(1),
        change_90d: change(2),
        findings: SeverityCounts::of(&row.open),
        kev_findings: row.kev,
        last_scan: row.rating.as_ref().map(|r| model::timefmt::rfc3339(r.scanned_at.0)),
        depth: row.rating.as_ref().map(|r| r.depth.clone()),
        stale,
        added_at: model::timefmt::rfc3339(row.added_at.0),
        record: VendorRecordOut::from(&row.record),
    }
}

/// What a portfolio's list may be filtered by (each given must hold).
#[derive(Debug, Default, Clone)]
pub(crate) struct ListFilter {
    grades: Vec<Grade>,
    tiers: Vec<Option<u8>>,
    tag: Option<String>,
    industry: Option<String>,
    changed_since: Option<time::OffsetDateTime>,
    q: Option<String>,
    status: Option<String>,
    stale: Option<bool>,
    /// Only these companies (a client following the rows it added).
    social_ids: Vec<SocialId>,
}

/// Most companies one `social_id` filter names.
pub const MAX_NAMED: usize = 100;

/// The keys `sort` takes (`-` before one: descending).
pub const SORT_KEYS: [&str; 21] = [
    "score",
    "grade",
    "change_7d",
    "change_30d",
    "change_90d",
    "name",
    "social_id",
    "domain",
    "industry",
    "tier",
    "tags",
    "stage",
    "relationship",
    "findings",
    "critical",
    "high",
    "kev_findings",
    "last_scan",
    "depth",
    "stale",
    "added_at",
];

impl ListFilter {
    fn parse(p: &Params) -> Result<ListFilter, ApiError> {
        let mut f = ListFilter::default();
        if let Some(g) = p.optional("grade") {
            for part in g.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                f.grades.push(Grade::parse(part).map_err(|e| ApiError::bad(format!("grade: {e}")))?);
            }
        }
        if let Some(t) = p.optional("tier") {
            for part in t.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                f.tiers.push(match part {
                    "none" => None,
                    n => Some(model::Tier::parse(n).map_err(|e| ApiError::bad(e.to_string()))?.get()),
                });
            }
        }
        if let Some(t) = p.optional("tag") {
            f.tag = Some(model::portfolio::tag(t).map_err(|e| ApiError::bad(format!("tag: {e}")))?);
        }
        f.industry = p.optional("industry").map(str::to_lowercase);
        f.q = p.optional("q").map(str::to_lowercase);
        if let Some(s) = p.optional("changed_since") {
            f.changed_since = Some(
                model::timefmt::parse_datetime(s)
                    .ok_or_else(|| ApiError::bad("changed_since must be a date or an RFC 3339 time"))?,
            );
        }
        if let Some(s) = p.optional("status") {
            if !["rated", "queued", "pending", "refused"].contains(&s) {
                return Err(ApiError::bad("status must be one of: rated, queued, pending, refused"));
            }
            f.status = Some(s.to_owned());
        }
        if let Some(ids) = p.optional("social_id") {
            for part in ids.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if f.social_ids.len() == MAX_NAMED {
                    return Err(ApiError::bad(format!("social_id names at most {MAX_NAMED} companies")));
                }
                f.social_ids.push(SocialId::parse(part).map_err(|_| ApiError::not_valid("social_id"))?);
            }
        }
        if let Some(s) = p.optional("stale") {
            f.stale = Some(match s {
                "true" => true,
                "false" => false,
                _ => return Err(ApiError::bad("stale must be true or false")),
            });
        }
        Ok(f)
    }

    /// Whether `row` (shown as `out`) passes; `changed` is whether its score moved
    /// since `changed_since`.
    fn keeps(&self, row: &PortfolioRow, out: &PortfolioCompanyOut, changed: Option<bool>) -> bool {
        (self.grades.is_empty() || row.rating.as_ref().is_some_and(|r| self.grades.contains(&r.grade)))
            && (self.tiers.is_empty() || self.tiers.contains(&row.record.tier.map(model::Tier::get)))
            && self.tag.as_ref().is_none_or(|t| row.record.tags.contains(t))
            && self.industry.as_ref().is_none_or(|i| row.industry.to_lowercase() == *i)
            && self.status.as_ref().is_none_or(|s| out.status == s.as_str())
            && self.stale.is_none_or(|s| out.stale == s)
            && changed.is_none_or(|c| c)
            && (self.social_ids.is_empty() || self.social_ids.contains(&row.social_id))
            && self.q.as_ref().is_none_or(|q| {
                row.name.to_lowercase().contains(q)
                    || row.social_id.as_str().contains(q.as_str())
                    || row.domain.as_ref().is_some_and(|d| d.contains(q.as_str()))
                    || row.record.custom_id.as_ref().is_some_and(|c| c.to_lowercase().contains(q))
            })
    }
}

/// A parsed `sort`: the key and whether descending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Sort {
    key: &'static str,
    descending: bool,
}

impl Sort {
    pub(crate) fn parse(raw: Option<&str>) -> Result<Sort, ApiError> {
        let raw = raw.unwrap_or("social_id");
        let (descending, key) = match raw.strip_prefix('-') {
            Some(k) => (true, k),
            None => (false, raw.strip_prefix('+').unwrap_or(raw)),
        };
        let key = SORT_KEYS.iter().find(|k| **k == key).ok_or_else(|| {
            ApiError::bad(format!("sort must be one of: {} (- before one: descending)", SORT_KEYS.join(", ")))
        })?;
        Ok(Sort { key, descending })
    }

    /// The order of `rows` (their indices): by the key (rows without a value last,
    /// whichever the direction), then by social_id. Each row's key is made once.
    pub(crate) fn order(self, rows: &[PortfolioCompanyOut]) -> Vec<u32> {
        use std::cmp::Ordering;
        fn num(v: Option<f64>) -> Option<i64> {
            v.map(|x| (x * 100.0).round() as i64)
        }
        // A row's key: a number or a text (none: no value).
        type Key = (Option<i64>, Option<String>);
        let key = |c: &PortfolioCompanyOut| -> Key {
            match self.key {
                "score" => (num(c.score), None),
                // A is the best grade: ascending is A first.
                "grade" => (None, c.grade.clone()),
                "change_7d" => (num(c.change_7d), None),
                "change_30d" => (num(c.change_30d), None),
                "change_90d" => (num(c.change_90d), None),
                "name" => (None, Some(c.name.to_lowercase())),
                "social_id" => (None, Some(c.social_id.clone())),
                "domain" => (None, c.domain.clone()),
                "industry" => (None, Some(c.industry.to_lowercase()).filter(|s| !s.is_empty())),
                "tier" => (c.record.tier.map(i64::from), None),
                "tags" => (None, Some(c.record.tags.join(",")).filter(|s| !s.is_empty())),
                "stage" => (None, Some(c.record.stage.clone())),
                "relationship" => (None, Some(c.record.relationship.clone())),
                "findings" => (Some(i64::from(c.findings.total())), None),
                "critical" => (Some(i64::from(c.findings.critical)), None),
                "high" => (Some(i64::from(c.findings.high)), None),
                "kev_findings" => (Some(i64::from(c.kev_findings)), None),
                "last_scan" => (None, c.last_scan.clone()),
                "depth" => (None, c.depth.clone()),
                "stale" => (Some(i64::from(c.stale)), None),
                _ => (None, Some(c.added_at.clone())),
            }
        };
        let mut keyed: Vec<(Key, u32)> =
            rows.iter().enumerate().map(|(i, c)| (key(c), u32::try_from(i).unwrap_or(u32::MAX))).collect();
        let present = |k: &Key| k.0.is_some() || k.1.is_some();
        keyed.sort_by(|(ka, a), (kb, b)| {
            let by_key = match (present(ka), present(kb)) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => Ordering::Equal,
                (true, true) => {
                    let o = ka.cmp(kb);
                    if self.descending { o.reverse() } else { o }
                }
            };
            by_key.then_with(|| rows[*a as usize].social_id.cmp(&rows[*b as usize].social_id))
        });
        keyed.into_iter().map(|(_, i)| i).collect()
    }

    /// `rows` in [`Sort::order`].
    #[cfg(test)]
    pub(crate) fn apply(self, rows: &mut Vec<PortfolioCompanyOut>) {
        let order = self.order(rows);
        let mut taken: Vec<Option<PortfolioCompanyOut>> = rows.drain(..).map(Some).collect();
        rows.extend(order.into_iter().filter_map(|i| taken[i as usize].take()));
    }
}

/// A portfolio as its list and summary show it, made once from its rows and kept
/// ([`crate::AppState::portfolio_view`]): each row as shown, the orders asked for so
/// far, the summary.
pub(crate) struct PortfolioView {
    pub(super) portfolio: Portfolio,
    pub(super) rows: Vec<PortfolioRow>,
    outs: Vec<PortfolioCompanyOut>,
    orders: std::sync::Mutex<std::collections::HashMap<Sort, std::sync::Arc<Vec<u32>>>>,
    /// The summary's JSON, made once.
    summary: std::sync::OnceLock<axum::body::Bytes>,
}

impl PortfolioView {
    pub(crate) fn new(
        portfolio: Portfolio,
        rows: Vec<PortfolioRow>,
        now: time::OffsetDateTime,
        cadence: std::time::Duration,
    ) -> Self {
        let outs = rows.iter().map(|r| company_out(r, now, cadence)).collect();
        Self { portfolio, rows, outs, orders: Default::default(), summary: Default::default() }
    }

    /// The rows' order by `sort`, made once.
    fn order(&self, sort: Sort) -> std::sync::Arc<Vec<u32>> {
        let kept = self.orders.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&sort).cloned();
        if let Some(order) = kept {
            return order;
        }
        let order = std::sync::Arc::new(sort.order(&self.outs));
        let mut orders = self.orders.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if orders.len() >= SORT_KEYS.len() * 2 {
            orders.clear();
        }
        orders.insert(sort, order.clone());
        order
    }

    /// The summary's JSON, made once.
    fn summary(&self) -> Result<axum::body::Bytes, ApiError> {
        if let Some(bytes) = self.summary.get() {
            return Ok(bytes.clone());
        }
        let mut out = summary_of(&self.rows, &self.outs);
        out.portfolio_id = self.portfolio.id;
        out.name = self.portfolio.name.clone();
        let bytes = axum::body::Bytes::from(serde_json::to_vec(&out).map_err(|e| ApiError::Internal(e.to_string()))?);
        Ok(self.summary.get_or_init(|| bytes).clone())
    }
}

/// The portfolio's view and the indices of its rows that `p`'s filters keep, in the
/// order `p` asks.
async fn listed(app: &AppState, org: i64, p: &Params) -> Result<(std::sync::Arc<PortfolioView>, Vec<u32>), ApiError> {
    let view = viewed(app, org, portfolio_id(p.optional("portfolio_id"))?).await?;
    let filter = ListFilter::parse(p)?;
    let sort = Sort::parse(p.optional("sort"))?;
    let since = match filter.changed_since {
        Some(t) => Some(app.store().portfolio_scores_at(view.portfolio.id, t).await?),
        None => None,
    };
    let order = view.order(sort);
    let kept = order
        .iter()
        .copied()
        .filter(|i| {
            let (row, shown) = (&view.rows[*i as usize], &view.outs[*i as usize]);
            let changed = since.as_ref().map(|then| {
                let current = row.rating.as_ref().map(|r| r.score);
                current.is_some() && then.get(&row.company).copied() != current
            });
            filter.keeps(row, shown, changed)
        })
        .collect();
    Ok((view, kept))
}

/// A CSV answer (UTF-8, a header row), downloaded as `name`.
pub(super) fn csv_answer(name: &str, body: Vec<u8>) -> Response {
    use axum::http::{HeaderValue, header};
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
        .unwrap_or(HeaderValue::from_static("attachment"));
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8")),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}

/// A cell of a CSV answer: text a spreadsheet would run as a formula (`=`, `+`, `-`,
/// `@`, a tab or a carriage return first) is prefixed with `'` — a company's name may
/// come from its own web page.
pub(super) fn cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{s}") } else { s.to_owned() }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// The list as CSV: one header row, then one row per company, every column of the JSON.
pub(crate) fn companies_csv<'a>(
    rows: impl Iterator<Item = &'a PortfolioCompanyOut>,
    n: usize,
) -> Result<Vec<u8>, ApiError> {
    let mut w = csv::Writer::from_writer(Vec::with_capacity(n * 200 + 400));
    let fail = |e: csv::Error| ApiError::Internal(format!("csv: {e}"));
    w.write_record([
        "social_id",
        "name",
        "domain",
        "industry",
        "status",
        "score",
        "grade",
        "change_7d",
        "change_30d",
        "change_90d",
        "critical",
        "high",
        "medium",
        "low",
        "info",
        "kev_findings",
        "last_scan",
        "depth",
        "stale",
        "tier",
        "tags",
        "custom_id",
        "relationship",
        "stage",
        "owner",
        "note",
        "added_at",
    ])
    .map_err(fail)?;
    for c in rows {
        let f = &c.findings;
        w.write_record([
            cell(&c.social_id),
            cell(&c.name),
            opt(&c.domain),
            cell(&c.industry),
            c.status.to_string(),
            opt(&c.score.map(|s| format!("{s:.1}"))),
            opt(&c.grade),
            opt(&c.change_7d.map(|s| format!("{s:.1}"))),
            opt(&c.change_30d.map(|s| format!("{s:.1}"))),
            opt(&c.change_90d.map(|s| format!("{s:.1}"))),
            f.critical.to_string(),
            f.high.to_string(),
            f.medium.to_string(),
            f.low.to_string(),
            f.info.to_string(),
            c.kev_findings.to_string(),
            opt(&c.last_scan),
            opt(&c.depth),
            c.stale.to_string(),
            opt(&c.record.tier),
            cell(&c.record.tags.join(";")),
            cell(&opt(&c.record.custom_id)),
            c.record.relationship.clone(),
            c.record.stage.clone(),
            cell(&c.record.owner),
            cell(&c.record.note),
            c.added_at.clone(),
        ])
        .map_err(fail)?;
    }
    w.into_inner().map_err(|e| ApiError::Internal(format!("csv: {e}")))
}

pub(super) fn wants_csv(p: &Params) -> Result<bool, ApiError> {
    match p.optional("format") {
        None | Some("json") => Ok(false),
        Some("csv") => Ok(true),
        Some(_) => Err(ApiError::bad("format must be json or csv")),
    }
}

/// The companies of a portfolio, each with its score, grade, change over 7, 30 and 90
/// days, open findings by severity, last scan and its depth, stale flag and vendor
/// record; filtered, sorted (`sort`, `-` for descending) and paged; `format=csv` gives
/// every matching row as CSV.
#[utoipa::path(get, path = "/portfolio-getcompanies", operation_id = "portfolio-getcompanies", tag = "Portfolio",
    params(PortfolioQuery, PageQuery,
        ("sort" = Option<String>, Query, description = "score, grade, change_7d, change_30d, change_90d, name, social_id, domain, industry, tier, tags, stage, relationship, findings, critical, high, kev_findings, last_scan, depth, stale or added_at; `-` before one: descending (social_id by default)"),
        ("grade" = Option<String>, Query, description = "Grades, comma-separated (A,B)"),
        ("tier" = Option<String>, Query, description = "Tiers, comma-separated (1,2; `none`: untiered)"),
        ("tag" = Option<String>, Query, description = "A tag the record has"),
        ("industry" = Option<String>, Query, description = "The industry (case-insensitive)"),
        ("changed_since" = Option<String>, Query, description = "Only companies whose score moved since this date or time"),
        ("q" = Option<String>, Query, description = "Text in the name, social_id, domain or custom id"),
        ("status" = Option<String>, Query, description = "rated, queued, pending or refused"),
        ("stale" = Option<bool>, Query, description = "Only stale (true) or fresh (false) ratings"),
        ("social_id" = Option<String>, Query, description = "Only these companies, comma-separated (at most 100)"),
        ("format" = Option<String>, Query, description = "json (default) or csv")),
    responses((status = 200, description = "The portfolio's companies (extension)",
        content((PortfolioCompaniesOut = "application/json"), (String = "text/csv"))), CommonErrors))]
pub async fn get_companies(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Response, ApiError> {
    if wants_csv(&p)? {
        let (view, kept) = listed(&app, org, &p).await?;
        let rows = kept.iter().map(|i| &view.outs[*i as usize]);
        let name = format!("portfolio-{}.csv", view.portfolio.id);
        return Ok(csv_answer(&name, companies_csv(rows, kept.len())?));
    }
    let body = app
        .portfolio_answer(org, p.cache_key(), async || {
            let page = p.page()?;
            let (view, kept) = listed(&app, org, &p).await?;
            let paged = super::paginate(kept, page);
            let out = PortfolioCompaniesOut {
                portfolio_id: view.portfolio.id,
                name: view.portfolio.name.clone(),
                companies: paged.items.iter().map(|i| view.outs[*i as usize].clone()).collect(),
                pagination: page.pagination(paged.total).into(),
            };
            serde_json::to_vec(&out).map(axum::body::Bytes::from).map_err(|e| ApiError::Internal(e.to_string()))
        })
        .await?;
    Ok(super::json_bytes(body))
}

/// A portfolio's summary from its rows and how its list shows them (`shown`, in the
/// same order); its id and name are the caller's to fill.
fn summary_of(rows: &[PortfolioRow], shown: &[PortfolioCompanyOut]) -> PortfolioSummaryOut {
    let no_grades = || Grade::ALL.iter().map(|g| (g.as_str().to_owned(), 0u64)).collect::<BTreeMap<_, _>>();
    let mut grades = no_grades();
    let mut tiers: BTreeMap<Option<u8>, TierGradesOut> = BTreeMap::new();
    let mut findings = SeverityCounts::default();
    let mut by_component: BTreeMap<String, SeverityCounts> =
        RiskVector::ALL.iter().map(|v| (v.as_str().to_owned(), SeverityCounts::default())).collect();
    let mut scores = Vec::new();
    for (row, out) in rows.iter().zip(shown) {
        let tier = row.record.tier.map(model::Tier::get);
        let t = tiers.entry(tier).or_insert_with(|| TierGradesOut { tier, companies: 0, grades: no_grades() });
        t.companies += 1;
        if let Some(r) = &row.rating {
            *grades.entry(r.grade.as_str().to_owned()).or_default() += 1;
            *t.grades.entry(r.grade.as_str().to_owned()).or_default() += 1;
            scores.push(r.score.as_f64());
        }
        findings.add(&out.findings);
        for (v, counts) in RiskVector::ALL.iter().zip(&row.open_by_vector) {
            if let Some(c) = by_component.get_mut(v.as_str()) {
                c.add(&SeverityCounts::of(counts));
            }
        }
    }
    let mover = |c: &PortfolioCompanyOut| -> Option<MoverOut> {
        Some(MoverOut {
            social_id: c.social_id.clone(),
            name: c.name.clone(),
            score: c.score?,
            grade: c.grade.clone()?,
            change_30d: c.change_30d?,
        })
    };
    let mut moved: Vec<MoverOut> = shown.iter().filter_map(mover).filter(|m| m.change_30d != 0.0).collect();
    moved.sort_by(|a, b| a.change_30d.total_cmp(&b.change_30d).then_with(|| a.social_id.cmp(&b.social_id)));
    let movers_down: Vec<MoverOut> = moved.iter().filter(|m| m.change_30d < 0.0).take(10).cloned().collect();
    let movers_up: Vec<MoverOut> = moved.iter().rev().filter(|m| m.change_30d > 0.0).take(10).cloned().collect();
    let mut kev_companies: Vec<KevCompanyOut> = shown
        .iter()
        .filter(|c| c.kev_findings > 0)
        .map(|c| KevCompanyOut { social_id: c.social_id.clone(), name: c.name.clone(), kev_findings: c.kev_findings })
        .collect();
    kev_companies.sort_by(|a, b| b.kev_findings.cmp(&a.kev_findings).then_with(|| a.social_id.cmp(&b.social_id)));
    let average_score =
        (!scores.is_empty()).then(|| (scores.iter().sum::<f64>() / scores.len() as f64 * 10.0).round() / 10.0);
    PortfolioSummaryOut {
        portfolio_id: 0,
        name: String::new(),
        companies: rows.len() as u64,
        rated: scores.len() as u64,
        average_score,
        grades,
        tiers: tiers.into_values().collect(),
        movers_down,
        movers_up,
        findings,
        findings_by_component: by_component,
        kev_companies,
        stale: shown.iter().filter(|c| c.stale).count() as u64,
    }
}

/// A portfolio at a glance: the grade distribution, the tier × grade matrix, the ten
/// biggest movers down and up over 30 days, open findings by severity and by component,
/// and the companies with a KEV-listed CVE.
#[utoipa::path(get, path = "/portfolio-getsummary", operation_id = "portfolio-getsummary", tag = "Portfolio",
    params(PortfolioQuery),
    responses((status = 200, description = "The portfolio's summary (extension)", body = PortfolioSummaryOut), CommonErrors))]
pub async fn get_summary(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<axum::response::Response, ApiError> {
    Ok(super::json_bytes(viewed(&app, org, portfolio_id(p.optional("portfolio_id"))?).await?.summary()?))
}

// --- Findings searches ----------------------------------------------------------------

/// A findings search's parameters (`severity`, `risk_vector`, `code`, `host`, `status`,
/// `since`, `disputed`).
pub(crate) fn finding_query(p: &Params) -> Result<FindingQuery, ApiError> {
    let mut q = FindingQuery::default();
    if let Some(s) = p.optional("severity") {
        q.severity = Some(Severity::parse(s).map_err(|e| ApiError::bad(format!("severity: {e}")))?);
    }
    if p.optional("risk_vector").is_some() {
        q.risk_vector = Some(p.risk_vector("risk_vector")?);
    }
    if let Some(c) = p.optional("code") {
        let ok =
            c.len() <= 100 && c.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
        if !ok {
            return Err(ApiError::not_valid("code"));
        }
        q.code = Some(c.to_owned());
    }
    if p.optional("host").is_some() {
        q.host = Some(p.domain("host")?);
    }
    q.status = match p.optional("status") {
        None | Some("open") => FindingStatus::Open,
        Some("closed") => FindingStatus::Closed,
        Some("all") => FindingStatus::All,
        Some(_) => return Err(ApiError::bad("status must be open, closed or all")),
    };
    if let Some(s) = p.optional("since") {
        q.since = Some(
            model::timefmt::parse_datetime(s)
                .ok_or_else(|| ApiError::bad("since must be a date or an RFC 3339 time"))?,
        );
    }
    q.disputed = match p.optional("disputed") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(ApiError::bad("disputed must be true or false")),
    };
    Ok(q)
}

/// The findings search parameters, declared once for every operation that takes them.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct FindingsQuery {
    /// critical, high, medium, low or info
    severity: Option<String>,
    /// One of the twelve components
    risk_vector: Option<String>,
    /// A finding code (docs/FINDINGS.md), such as open_ports.rdp_exposed
    code: Option<String>,
    /// A host: its findings and those of the names below it
    host: Option<String>,
    /// open (default), closed or all
    status: Option<String>,
    /// First seen at or after this date or time
    since: Option<String>,
    /// Only disputed (true) or undisputed (false) findings
    disputed: Option<bool>,
    /// json (default) or csv (every matching finding, at most 100,000)
    format: Option<String>,
}

/// The answer of a findings search: a page as JSON, or every match as CSV.
pub(crate) async fn findings_answer(
    app: AppState,
    of: FindingsOf,
    p: Params,
    social_id: Option<SocialId>,
) -> Result<Response, ApiError> {
    let q = finding_query(&p)?;
    let page = p.page()?;
    if wants_csv(&p)? {
        let found = app.store().all_findings(of, &q, CSV_FINDINGS).await?;
        let mut w = csv::Writer::from_writer(Vec::with_capacity(found.len() * 300 + 200));
        let fail = |e: csv::Error| ApiError::Internal(format!("csv: {e}"));
        w.write_record([
            "social_id",
            "id",
            "status",
            "risk_vector",
            "severity",
            "code",
            "asset",
            "title",
            "cve",
            "component",
            "first_seen",
            "last_seen",
            "closed_at",
            "disputed",
            "evidence",
            "remediation",
        ])
        .map_err(fail)?;
        for f in &found {
            let x = &f.finding;
            w.write_record([
                f.social_id.to_string(),
                x.id.to_string(),
                if f.closed_at.is_some() { "closed" } else { "open" }.to_owned(),
                x.risk_vector.as_str().to_owned(),
                x.severity.as_str().to_owned(),
                x.code.clone(),
                cell(&x.asset),
                cell(&x.title),
                opt(&x.cve.as_ref().map(|c| c.as_str().to_owned())),
                cell(&opt(&x.component)),
                model::timefmt::rfc3339(x.first_seen.0),
                model::timefmt::rfc3339(x.last_seen.0),
                opt(&f.closed_at.map(|t| model::timefmt::rfc3339(t.0))),
                x.disputed.to_string(),
                cell(&x.evidence),
                cell(&x.remediation),
            ])
            .map_err(fail)?;
        }
        let body = w.into_inner().map_err(|e| ApiError::Internal(format!("csv: {e}")))?;
        let name = match (of, &social_id) {
            (_, Some(s)) => format!("findings-{s}.csv"),
            (FindingsOf::Portfolio(id), None) => format!("findings-portfolio-{id}.csv"),
            (FindingsOf::Company(id), None) => format!("findings-{id}.csv"),
        };
        return Ok(csv_answer(&name, body));
    }
    let found = app.store().search_findings(of, &q, page).await?;
    let mut outs: Vec<crate::responses::FindingOut> =
        found.items.iter().map(|f| crate::responses::FindingOut::from(&f.finding)).collect();
    super::with_severity_cvss(&app, outs.iter_mut()).await?;
    let findings: Vec<FoundFindingOut> = found
        .items
        .iter()
        .zip(outs)
        .map(|(f, out)| FoundFindingOut { finding: out, ..FoundFindingOut::from(f) })
        .collect();
    Ok(Json(FindingsOut {
        social_id: social_id.as_ref().map(ToString::to_string),
        portfolio_id: match of {
            FindingsOf::Portfolio(id) => Some(id),
            FindingsOf::Company(_) => None,
        },
        findings,
        pagination: page.pagination(found.total).into(),
    })
    .into_response())
}

/// Every finding of a portfolio's companies, worst first, filtered and paged;
/// `format=csv` gives every match.
#[utoipa::path(get, path = "/portfolio-getfindings", operation_id = "portfolio-getfindings", tag = "Portfolio",
    params(PortfolioQuery, FindingsQuery, PageQuery),
    responses((status = 200, description = "Findings (extension)",
        content((FindingsOut = "application/json"), (String = "text/csv"))), CommonErrors))]
pub async fn get_findings(
    State(app): State<AppState>,
    p: Params,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Response, ApiError> {
    let portfolio = viewed(&app, org, portfolio_id(p.optional("portfolio_id"))?).await?.portfolio.id;
    findings_answer(app, FindingsOf::Portfolio(portfolio), p, None).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onboarding_takes_a_domain_or_a_site_and_refuses_what_is_not_on_the_internet() {
        let ok = |raw: &str| onboarding_domain(raw).map(|d| d.to_string());
        assert_eq!(ok("Harborlight.com").unwrap(), "harborlight.com");
        assert_eq!(ok("https://www.harborlight.com:8443/about?x=1").unwrap(), "harborlight.com");
        assert_eq!(ok("www.co").unwrap(), "www.co", "www. of a two-label name is kept");
        for (raw, why) in [
            ("10.0.0.1", "IP address"),
            ("http://[::1]/", "IP address"),
            ("[::1]:80", "IP address"),
            ("[2001:db8::1]", "IP address"),
            ("192.0.2.1:443", "IP address"),
            ("not a domain", "not a domain name"),
            ("com", "not a domain name"),
            ("", "required"),
        ] {
            let e = onboarding_domain(raw).unwrap_err();
            assert!(e.contains(why), "{raw}: {e}");
        }
        let special = |raw: &str, lab: bool| not_on_the_internet(&Domain::parse(raw).unwrap(), lab);
        for raw in ["harborlight.test", "printer.local", "x.localhost", "a.example", "b.internal", "c.onion"] {
            assert!(special(raw, false).unwrap().contains("not a registrable domain"), "{raw}");
        }
        assert_eq!(special("harborlight.test", true), None, "the lab's");
        assert!(special("printer.local", true).is_some(), "lab mode admits .test only");
        assert_eq!(special("harborlight.com", false), None);
    }

    #[test]
    fn csv_rows_are_read_by_their_header_and_bad_columns_refused() {
        let rows =
            csv_rows(b"\xef\xbb\xbfDomain,tier,tags,name\nharbor.test,1,cloud;eu,\"Harbor, Inc\"\n,,,\n").unwrap();
        let first = rows[0].as_ref().unwrap();
        assert_eq!(first.domain, "harbor.test");
        assert_eq!(first.tier.as_deref(), Some("1"));
        assert_eq!(first.tags.clone().unwrap(), ["cloud", "eu"]);
        assert_eq!(first.name.as_deref(), Some("Harbor, Inc"));
        assert_eq!(rows[1].as_ref().unwrap().domain, "");
        assert!(csv_rows(b"domain,colour\nx.test,red\n").is_err());
        assert!(csv_rows(b"name\nHarbor\n").is_err(), "a domain column is needed");
        let many = format!("domain\n{}", "a.test\n".repeat(MAX_ROWS + 1));
        assert!(csv_rows(many.as_bytes()).is_err());
    }

    #[test]
    fn a_cell_a_spreadsheet_would_run_is_defused() {
        assert_eq!(cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(cell("Harbor"), "Harbor");
    }

    fn out(sid: &str, score: Option<f64>, tier: Option<u8>) -> PortfolioCompanyOut {
        PortfolioCompanyOut {
            social_id: sid.into(),
            name: sid.to_uppercase(),
            name_derived: false,
            domain: None,
            industry: String::new(),
            status: "rated".into(),
            status_message: None,
            score,
            grade: None,
            change_7d: None,
            change_30d: None,
            change_90d: None,
            findings: SeverityCounts::default(),
            kev_findings: 0,
            last_scan: None,
            depth: None,
            stale: false,
            added_at: String::new(),
            record: VendorRecordOut {
                tier,
                tags: vec![],
                custom_id: None,
                relationship: "vendor".into(),
                stage: "active".into(),
                owner: String::new(),
                note: String::new(),
            },
        }
    }

    #[test]
    fn sorting_puts_rows_without_a_value_last_in_both_directions() {
        let mut rows = vec![out("c", Some(50.0), None), out("a", None, Some(2)), out("b", Some(90.0), Some(1))];
        let order = |rows: &[PortfolioCompanyOut]| rows.iter().map(|r| r.social_id.clone()).collect::<Vec<_>>();
        Sort::parse(Some("score")).unwrap().apply(&mut rows);
        assert_eq!(order(&rows), ["c", "b", "a"]);
        Sort::parse(Some("-score")).unwrap().apply(&mut rows);
        assert_eq!(order(&rows), ["b", "c", "a"]);
        Sort::parse(Some("-tier")).unwrap().apply(&mut rows);
        assert_eq!(order(&rows), ["a", "b", "c"]);
        Sort::parse(None).unwrap().apply(&mut rows);
        assert_eq!(order(&rows), ["a", "b", "c"]);
        let e = Sort::parse(Some("colour")).unwrap_err();
        assert!(matches!(e, ApiError::BadRequest(m) if m.contains("sort must be one of")));
    }

    proptest::proptest! {
        #[test]
        fn sorting_is_a_permutation_ordered_by_its_key(
            scores in proptest::collection::vec(proptest::option::of(0u32..10_000), 0..40),
            descending: bool,
        ) {
            let mut rows: Vec<PortfolioCompanyOut> = scores
                .iter()
                .enumerate()
                .map(|(i, s)| out(&format!("c{i:03}"), s.map(|h| f64::from(h) / 100.0), None))
                .collect();
            Sort::parse(Some(if descending { "-score" } else { "score" })).unwrap().apply(&mut rows);
            proptest::prop_assert_eq!(rows.len(), scores.len());
            let present: Vec<f64> = rows.iter().filter_map(|r| r.score).collect();
            proptest::prop_assert!(rows.iter().skip(present.len()).all(|r| r.score.is_none()), "none last");
            for w in present.windows(2) {
                let ordered = if descending { w[0] >= w[1] } else { w[0] <= w[1] };
                proptest::prop_assert!(ordered);
            }
        }
    }
}
