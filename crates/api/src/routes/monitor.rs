//! Monitor: the company bound to the calling key, its subsidiaries, findings per
//! subdomain, rescans and predictions.

use axum::Json;
use axum::extract::{Extension, State};
use axum::response::Response;
use model::{Company, CompanyProfile, Domain, SocialId};
use store::{CompanySnapshot, FindingFilter, SubsidiaryState};
use time::OffsetDateTime;

use crate::error::ApiError;
use crate::error::CommonErrors;
use crate::params::{PageQuery, Params, Sent, SubsidiaryQuery};
use crate::responses::*;
use crate::{AppState, Caller};
use utoipa::ToSchema;

use super::{Own, OwnUnrated, Subject};

async fn subsidiary_records(
    app: &AppState,
    caller: &Caller,
    page: Option<model::Page>,
) -> Result<(model::Company, store::Paged<CompanyInfo>), ApiError> {
    let c = super::own_company_unrated(app, caller).await?;
    let subs = app.store().subsidiaries(c.id, page).await?;
    let mut out = Vec::with_capacity(subs.items.len());
    for s in &subs.items {
        out.push(super::company::company_info(app, s, false).await?);
    }
    Ok((c, store::Paged { items: out, total: subs.total }))
}

/// An answer made of the caller's subsidiaries' records (one page, or all with `None`),
/// kept like other company answers; their `searched_by` counts move with every lookup of
/// them, so the counts not yet written (and the flushes) are part of its key.
async fn subsidiaries_answer<T: serde::Serialize>(
    app: &AppState,
    caller: &Caller,
    page: Option<model::Page>,
    op: &'static str,
    build: impl FnOnce(model::Company, store::Paged<CompanyInfo>) -> T,
) -> Result<Response, ApiError> {
    use std::fmt::Write;
    let c = super::own_company_unrated(app, caller).await?;
    let subs = app.store().subsidiaries(c.id, page).await?;
    let mut key = format!("{}|{}|", page.map_or(0, |p| p.number()), app.lookups().generation());
    for s in &subs.items {
        let _ = write!(key, "{},", app.lookups().pending(s.id));
    }
    super::company_answer(app.clone(), c.id, op, key, async move || {
        let (c, subs) = subsidiary_records(app, caller, page).await?;
        Ok(build(c, subs))
    })
    .await
}

/// The caller's subsidiaries as company information records.
#[utoipa::path(get, path = "/monitor-getcompanysubsidiaries", operation_id = "monitor-getcompanysubsidiaries", tag = "Monitor",
    responses((status = 200, description = "Subsidiaries", body = Vec<CompanyInfo>), CommonErrors))]
pub async fn get_company_subsidiaries(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    subsidiaries_answer(&app, &caller, None, "monitor::get_company_subsidiaries", |_, subs| subs.items).await
}

/// The caller's subsidiaries, paged (records spell `serched_by`).
#[utoipa::path(get, path = "/monitor-listsubsidiaries", operation_id = "monitor-listsubsidiaries", tag = "Monitor",
    params(PageQuery),
    responses((status = 200, description = "Subsidiaries", body = ListSubsidiaries), CommonErrors))]
pub async fn list_subsidiaries(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    p: Params,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    subsidiaries_answer(&app, &caller, Some(page), "monitor::list_subsidiaries", |c, subs| ListSubsidiaries {
        social_id: c.social_id.to_string(),
        subsidiaries_list: subs.items.into_iter().map(Into::into).collect(),
        pagination: page.pagination(subs.total).into(),
    })
    .await
}

/// Every vulnerability finding (CVE of detected software) on the caller's assets.
#[utoipa::path(get, path = "/monitor-getall-vulnerability-detection", operation_id = "monitor-getall-vulnerability-detection", tag = "Monitor",
    params(PageQuery),
    responses((status = 200, description = "Vulnerability findings", body = VulnerabilityDetections), CommonErrors))]
pub async fn get_all_vulnerability_detection(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<Own>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    super::company_answer(
        app.clone(),
        c.id,
        "monitor::get_all_vulnerability_detection",
        p.cache_key(),
        async move || {
            let filter = FindingFilter { asset: None, risk_vector: Some(model::RiskVector::Vulnerabilities) };
            let found = app.store().findings(c.id, filter, page).await?;
            let mut data: Vec<FindingOut> = found.items.iter().map(Into::into).collect();
            super::with_severity_cvss(&app, &mut data).await?;
            Ok(VulnerabilityDetections {
                social_id: c.social_id.to_string(),
                data,
                pagination: page.pagination(found.total).into(),
            })
        },
    )
    .await
}

async fn subdomain_findings(
    app: &AppState,
    c: Company,
    p: &Params,
    by_vector: bool,
) -> Result<SubdomainFindings, ApiError> {
    let subdomain = match p.optional("subdomain") {
        Some(raw) => Some(Domain::parse(raw).map_err(|_| ApiError::not_valid("subdomain"))?),
        None => None,
    };
    let risk_vector = if by_vector { Some(p.risk_vector("risk_vector_type")?) } else { None };
    let page = p.page()?;
    let filter = FindingFilter { asset: subdomain.as_ref().map(Domain::as_str), risk_vector };
    let found = app.store().findings(c.id, filter, page).await?;
    let domain_name = subdomain.or(c.domain).map(|d| d.to_string()).unwrap_or_default();
    let mut findings: Vec<FindingOut> = found.items.iter().map(Into::into).collect();
    super::with_severity_cvss(app, &mut findings).await?;
    Ok(SubdomainFindings {
        data: SubdomainFindingsData { domain_name, subdomain: findings },
        pagination: page.pagination(found.total).into(),
    })
}

/// Every finding on one subdomain (all of the company's when none is given).
#[utoipa::path(get, path = "/monitor-getall-subdomain-findings", operation_id = "monitor-getall-subdomain-findings", tag = "Monitor",
    params(("subdomain" = Option<String>, Query, description = "Host name, e.g. www.example.com"),
           PageQuery),
    responses((status = 200, description = "Findings", body = SubdomainFindings), CommonErrors))]
pub async fn get_all_subdomain_findings(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<Own>,
) -> Result<Response, ApiError> {
    let key = p.cache_key();
    super::company_answer(app.clone(), c.id, "monitor::get_all_subdomain_findings", key, async move || {
        subdomain_findings(&app, c, &p, false).await
    })
    .await
}

/// Findings of one risk vector on one subdomain.
#[utoipa::path(get, path = "/monitor-get-subdomain-findings", operation_id = "monitor-get-subdomain-findings", tag = "Monitor",
    params(("subdomain" = Option<String>, Query, description = "Host name, e.g. www.example.com"),
           ("risk_vector_type" = String, Query, description = "One of the twelve components, case-insensitive, e.g. DKIM"),
           PageQuery),
    responses((status = 200, description = "Findings", body = SubdomainFindings), CommonErrors))]
pub async fn get_subdomain_findings(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<Own>,
) -> Result<Response, ApiError> {
    let key = p.cache_key();
    super::company_answer(app.clone(), c.id, "monitor::get_subdomain_findings", key, async move || {
        subdomain_findings(&app, c, &p, true).await
    })
    .await
}

/// Queues a rescan of one risk vector on one of the caller's subdomains.
#[utoipa::path(put, path = "/monitor-rescan-subdomain-by-vectorid", operation_id = "monitor-rescan-subdomain-by-vectorid", tag = "Monitor",
    params(("risk_vector_id" = String, Query, description = "One of the twelve components, case-insensitive"),
           ("subdomain" = String, Query, description = "Host name of the company")),
    responses((status = 200, description = "Rescan queued", body = MessageOut), CommonErrors))]
pub async fn rescan_subdomain_by_vector_id(
    State(app): State<AppState>,
    p: Params,
    OwnUnrated { company: c, .. }: OwnUnrated,
) -> Result<Json<MessageOut>, ApiError> {
    let risk_vector = p.risk_vector("risk_vector_id")?;
    let subdomain = p.domain("subdomain")?;
    if !app.store().owns_host(c.id, &subdomain).await? {
        return Err(ApiError::bad(format!("{subdomain} is not an asset of this company")));
    }
    let job = model::JobSpec::Rescan { social_id: c.social_id.clone(), subdomain: subdomain.clone(), risk_vector };
    app.enqueue(&job).await?;
    Ok(Json(MessageOut {
        message: format!(
            "Scan request for subdomain {subdomain} and risk vector {risk_vector} was received and will be processed soon"
        ),
    }))
}

/// The body of add-subsidiary, validated field by field in the spec's order.
struct NewSubsidiary {
    name: String,
    website: String,
    domain: Domain,
    employees: Option<u64>,
    followers: Option<u64>,
    industry: String,
    social_id: SocialId,
    parent_social_id: SocialId,
    /// Extension: the DKIM selectors the subsidiary signs with (absent: unchanged).
    dkim_selectors: Option<Vec<String>>,
}

/// The optional `dkim_selectors` extension: an array of selectors
/// (`model::dkim_selectors`).
fn selectors_field(v: Option<&Sent>) -> Result<Option<Vec<String>>, ApiError> {
    let invalid = || ApiError::not_valid("dkim_selectors");
    match v {
        None => Ok(None),
        Some(Sent::List(items)) if items.len() <= model::MAX_DKIM_SELECTORS => {
            let texts: Vec<&str> = items.iter().map(|v| v.text().ok_or_else(invalid)).collect::<Result<_, _>>()?;
            model::dkim_selectors(&texts).map(Some).map_err(|_| invalid())
        }
        Some(_) => Err(invalid()),
    }
}

/// A text field, trimmed: at most 500 bytes, no control characters; a `required` one
/// present and not blank.
fn text<'a>(v: Option<&'a Sent>, field: &str, required: bool) -> Result<Option<&'a str>, ApiError> {
    match v {
        None if required => Err(ApiError::required(field)),
        None => Ok(None),
        Some(Sent::Text(s)) if s.trim().is_empty() && required => Err(ApiError::required(field)),
        Some(Sent::Text(s)) if s.len() <= 500 && !s.chars().any(char::is_control) => Ok(Some(s.trim())),
        Some(_) => Err(ApiError::not_valid(field)),
    }
}

fn count_field(v: Option<&Sent>, field: &str) -> Result<Option<u64>, ApiError> {
    match v {
        None => Ok(None),
        Some(Sent::Count(n)) => Ok(Some(*n)),
        Some(_) => Err(ApiError::not_valid(field)),
    }
}

// Read as sent (each field's JSON value), then checked field by field with the spec's
// messages (`AddSubsidiaryBody::parse`); the schema documents what is accepted.
/// The body of POST /monitor-add-subsidiary.
#[derive(serde::Deserialize, ToSchema)]
pub struct AddSubsidiaryBody<'a> {
    #[schema(value_type = String, required = true)]
    #[serde(default, borrow)]
    name: Option<Sent<'a>>,
    /// The subsidiary's website: an `http` or `https` URL, or a host name (meaning
    /// `https`), with an optional port and an optional path of URL-safe characters only
    /// (letters, digits, `-`, `.`, `_`, `~`, `/` and percent-escapes); no query, fragment
    /// or user name. Stored normalised (scheme and host in lower case): `WWW.Acme.example`
    /// is stored as `https://www.acme.example`. Its host without `www.` is the
    /// subsidiary's domain.
    #[schema(value_type = String, required = true)]
    #[serde(default, borrow)]
    website: Option<Sent<'a>>,
    #[schema(value_type = Option<u64>)]
    #[serde(default, borrow)]
    employees: Option<Sent<'a>>,
    #[schema(value_type = Option<u64>)]
    #[serde(default, borrow)]
    followers: Option<Sent<'a>>,
    #[schema(value_type = Option<String>)]
    #[serde(default, borrow)]
    industry: Option<Sent<'a>>,
    #[schema(value_type = Option<String>)]
    #[serde(default, borrow)]
    sub_industry: Option<Sent<'a>>,
    #[schema(value_type = String, required = true)]
    #[serde(default, borrow)]
    social_id: Option<Sent<'a>>,
    #[schema(value_type = Option<String>)]
    #[serde(default, borrow)]
    parent_company_name: Option<Sent<'a>>,
    /// Must be the company of the calling key.
    #[schema(value_type = String, required = true)]
    #[serde(default, borrow)]
    parent_social_id: Option<Sent<'a>>,
    /// Extension: the DKIM selectors the subsidiary signs with (at most 16; each one
    /// to three dot-separated labels of letters, digits, `-` and `_`). Its scans try them first,
    /// and no key at them is a finding; without them, no key at the curated selectors
    /// leaves DKIM not assessable.
    #[schema(value_type = Option<Vec<DkimSelector>>, max_items = 16)]
    #[serde(default, borrow)]
    dkim_selectors: Option<Sent<'a>>,
}

/// A DKIM selector: one to three dot-separated labels of letters, digits, `-` and `_`.
#[derive(ToSchema)]
#[schema(value_type = String, pattern = r"^[A-Za-z0-9_-]{1,63}(\.[A-Za-z0-9_-]{1,63}){0,2}$")]
#[allow(dead_code)]
pub struct DkimSelector(String);

impl AddSubsidiaryBody<'_> {
    /// The new subsidiary a body describes, or the first field that is missing or not valid.
    fn parse(raw: &[u8]) -> Result<NewSubsidiary, ApiError> {
        let body: AddSubsidiaryBody =
            crate::params::object(raw).ok_or_else(|| ApiError::bad(crate::error::INVALID_REQUEST))?;
        let name = text(body.name.as_ref(), "name", true)?.unwrap_or_default().to_owned();
        // Parsed, and stored in its normalised form: the text is shown in answers and pages.
        let website = model::ids::Website::parse(text(body.website.as_ref(), "website", true)?.unwrap_or_default())
            .map_err(|_| ApiError::not_valid("website"))?;
        let domain = website.domain().clone();
        let website = website.to_string();
        let employees = count_field(body.employees.as_ref(), "employees")?;
        let followers = count_field(body.followers.as_ref(), "followers")?;
        let industry = text(body.industry.as_ref(), "industry", false)?.unwrap_or_default();
        let sub_industry = text(body.sub_industry.as_ref(), "sub_industry", false)?.unwrap_or_default();
        let social_id = SocialId::parse(text(body.social_id.as_ref(), "social_id", true)?.unwrap_or_default())
            .map_err(|_| ApiError::not_valid("social_id"))?;
        text(body.parent_company_name.as_ref(), "parent_company_name", false)?;
        let parent_social_id =
            SocialId::parse(text(body.parent_social_id.as_ref(), "parent_social_id", true)?.unwrap_or_default())
                .map_err(|_| ApiError::not_valid("parent_social_id"))?;
        let dkim_selectors = selectors_field(body.dkim_selectors.as_ref())?;
        Ok(NewSubsidiary {
            name,
            website,
            domain,
            employees,
            followers,
            // The subsidiary's own industry; `sub_industry` refines it when `industry` is absent.
            industry: if industry.is_empty() { sub_industry } else { industry }.to_owned(),
            social_id,
            parent_social_id,
            dkim_selectors,
        })
    }
}

/// Adds a subsidiary to the caller's company; a new company is queued for its first scan.
#[utoipa::path(post, path = "/monitor-add-subsidiary", operation_id = "monitor-add-subsidiary", tag = "Monitor",
    request_body(content = AddSubsidiaryBody, content_type = "application/json"),
    responses((status = 200, description = "Subsidiary added", body = MessageOut), CommonErrors))]
pub async fn add_subsidiary(
    State(app): State<AppState>,
    OwnUnrated { company: parent, caller }: OwnUnrated,
    body: crate::params::RawBody,
) -> Result<Json<MessageOut>, ApiError> {
    let new = AddSubsidiaryBody::parse(&body.0)?;
    if new.parent_social_id != parent.social_id {
        return Err(ApiError::bad("parent_social_id is not the company of this API key"));
    }
    if new.social_id == parent.social_id {
        return Err(ApiError::bad("social_id must differ from parent_social_id"));
    }
    let existing = app.store().company_by_social_id(&new.social_id).await?;
    let message = match existing {
        // A company that exists already: linked only if it is in the key's tree now;
        // otherwise an operator decides (a key must not reach a company by naming it).
        Some(child) => {
            if app.store().is_subsidiary(parent.id, child.id).await? {
                // The key's own subsidiary: its DKIM selectors may be given again.
                if let Some(selectors) = &new.dkim_selectors {
                    app.store().set_dkim_selectors(child.id, selectors).await?;
                }
                format!(
                    "Subsidiary {} ({}) is already a subsidiary of {}",
                    child.company_name, child.social_id, parent.company_name
                )
            } else {
                let id = app
                    .store()
                    .record_subsidiary_request(parent.id, child.id, caller.key_id, SubsidiaryState::Pending)
                    .await?;
                tracing::info!(request = id, parent = %parent.social_id, child = %child.social_id, "subsidiary link pending approval");
                pending_message(&child.social_id, id)
            }
        }
        None => {
            if let Some(key) = caller.key_id {
                // Counted and recorded in one step of the store, for every API process.
                let now = OffsetDateTime::now_utc();
                let today = now.replace_time(time::Time::MIDNIGHT);
                if !app.store().reserve_creation(key, today, now, MAX_CREATIONS_PER_DAY).await? {
                    let tomorrow = today + time::Duration::days(1);
                    let wait = (tomorrow - now).unsigned_abs();
                    return Err(ApiError::TooManyRequests { message: CREATIONS_EXCEEDED, retry_after: wait });
                }
            }
            // Its domain: another company's on evidence (at, above or below it) makes the
            // link wait for an operator; otherwise the key's claim, verified at once only
            // when the key's verified tree covers it.
            let family = super::disputes::family_ids(&app, &parent).await?;
            let held = !app.store().holders_of(&new.domain, &family).await?.is_empty();
            let verified = !held && super::disputes::under_verified(&app, &family, &new.domain).await?;
            let domain = new.domain.clone();
            let profile = CompanyProfile {
                social_id: Some(new.social_id.clone()),
                company_name: new.name.clone(),
                website: new.website,
                domain: Some(new.domain),
                // Its NAICS code from the industry text (none when no title matches), so
                // that its predictions take the industry factor.
                naics_code: model::naics::code_for_industry(&new.industry).map(|n| i64::from(n.code)),
                industry: new.industry,
                employees_number: new.employees.map(|n| format!("{n} employees")).unwrap_or_default(),
                followers_number: new.followers.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
                ..Default::default()
            };
            let created = app.store().save_company(&CompanySnapshot { profile, ..Default::default() }).await?;
            let by = caller.key_id.map_or_else(|| "an operator".to_owned(), |k| format!("key {k}"));
            let attribution = format!("claimed by {by} through add-subsidiary");
            app.store().claim_domain(created.id, &domain, &attribution, verified).await?;
            if let Some(selectors) = &new.dkim_selectors {
                app.store().set_dkim_selectors(created.id, selectors).await?;
            }
            if held {
                let id = app
                    .store()
                    .record_subsidiary_request(parent.id, created.id, caller.key_id, SubsidiaryState::Pending)
                    .await?;
                tracing::info!(request = id, parent = %parent.social_id, child = %created.social_id, %domain, "subsidiary with another company's domain pending approval");
                pending_message(&created.social_id, id)
            } else {
                app.store()
                    .record_subsidiary_request(parent.id, created.id, caller.key_id, SubsidiaryState::Created)
                    .await?;
                super::queue_scan(&app, &created).await?;
                let claim = if verified {
                    String::new()
                } else {
                    format!(
                        "; its domain {domain} is the company's claim, not yet verified: it is scanned, but neither \
                         found by domain nor shown to underwriters until POST /monitor-verify-domain proves control"
                    )
                };
                format!(
                    "Subsidiary {} ({}) was added to {}{claim}",
                    created.company_name, created.social_id, parent.company_name
                )
            }
        }
    };
    Ok(Json(MessageOut { message }))
}

/// The answer to a link an operator must approve: the same whether the company existed
/// or its domain is another company's, so the answer tells nothing of either.
fn pending_message(child: &SocialId, request: i64) -> String {
    format!(
        "Subsidiary {child} is pending approval (request {request}): an operator must approve the link; nothing of \
         it is visible to this key until then"
    )
}

/// Companies one key may create through add-subsidiary per UTC day: creating companies
/// queues scans, so a key cannot turn the scanner on the internet at will.
pub const MAX_CREATIONS_PER_DAY: u64 = 20;
const CREATIONS_EXCEEDED: &str = "Too many companies created by this API key today";

/// Removes a subsidiary from the caller's company.
#[utoipa::path(delete, path = "/monitor-delete-subsidiary", operation_id = "monitor-delete-subsidiary", tag = "Monitor",
    params(SubsidiaryQuery),
    responses((status = 200, description = "Subsidiary deleted", body = MessageOut), CommonErrors))]
pub async fn delete_subsidiary(
    State(app): State<AppState>,
    p: Params,
    OwnUnrated { company: parent, .. }: OwnUnrated,
) -> Result<Json<MessageOut>, ApiError> {
    let sub_id = SocialId::parse(p.required("subsidiary_id")?).map_err(|_| ApiError::not_valid("subsidiary_id"))?;
    let not_found = || ApiError::bad("Subsidiary not found");
    let child = app.store().company_by_social_id(&sub_id).await?.ok_or_else(not_found)?;
    // Not a subsidiary as far as this process knows (within the caches' bound): nothing
    // to write. Otherwise the store decides.
    if !app.store().is_subsidiary(parent.id, child.id).await?
        || !app.store().unlink_subsidiary(parent.id, child.id).await?
    {
        return Err(not_found());
    }
    Ok(Json(MessageOut {
        message: format!(
            "Subsidiary {} ({}) was deleted from {}",
            child.company_name, child.social_id, parent.company_name
        ),
    }))
}
