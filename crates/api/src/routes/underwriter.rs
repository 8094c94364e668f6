//! Underwriter: any company, named by social_id or domain. The operations on one
//! company's resources, which the Monitor has too, are `routes::company`'s.

use axum::Json;
use axum::extract::{Extension, State};
use axum::response::{IntoResponse, Response};
use model::{Company, Domain};

use crate::error::CommonErrors;
use crate::error::{self, ApiError};
use crate::params::{PageQuery, Params};
use crate::responses::*;
use crate::{AppState, Caller};

/// The company that owns `domain`, as the caller may see it.
pub(crate) async fn company_by_domain(app: &AppState, caller: &Caller, domain: &Domain) -> Result<Company, ApiError> {
    let mut found = app.store().company_by_domain(domain).await?;
    if found.is_none()
        && let Some(m) = app.mock()
    {
        found = app.store().company_by_social_id(&m.company).await?;
    }
    let c = found.ok_or_else(|| ApiError::bad(error::COMPANY_NOT_FOUND))?;
    super::may_see(app, caller, &c).await?;
    Ok(c)
}

// --- operations --------------------------------------------------------------------------

/// One public incident.
#[utoipa::path(get, path = "/underwriter-getincidentdetail-by-id", operation_id = "underwriter-getincidentdetail-by-id", tag = "Underwriter",
    params(("incident_id" = String, Query, description = "Incident identifier")),
    responses((status = 200, description = "The incident", body = IncidentDetail), CommonErrors))]
pub async fn get_incident_detail_by_id(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    p: Params,
) -> Result<Response, ApiError> {
    let id = p.required("incident_id")?.to_owned();
    if id.len() > 200 {
        return Err(ApiError::not_valid("incident_id"));
    }
    let not_found = || ApiError::bad("Incident not found");
    // A key bound to a company sees the incidents of its company and subsidiaries only;
    // any other incident is answered as one that does not exist (nothing leaks). Asked
    // before the answer is served, from the cache or not.
    if let Some(own) = &caller.company
        && app.mock().is_none()
    {
        let owner = app.store().incident_company(&id).await?;
        let family = super::family(&app, own).await?;
        if !owner.is_some_and(|o| family.iter().any(|c| c.id == o)) {
            return Err(not_found());
        }
    }
    // Ids are matched without regard to ASCII case: one answer for every spelling.
    let key = id.to_ascii_lowercase();
    super::company_answer(app.clone(), 0, "underwriter::incident_detail", key, async move || {
        let mut found = app.store().incident(&id).await?;
        if found.is_none()
            && let Some(m) = app.mock()
        {
            found = app.store().incident(&m.incident).await?;
        }
        Ok(IncidentDetail::from(found.ok_or_else(not_found)?))
    })
    .await
}

/// Companies most recently rated.
#[utoipa::path(get, path = "/underwriter-getlastcompaniesscanned", operation_id = "underwriter-getlastcompaniesscanned", tag = "Underwriter",
    params(PageQuery),
    responses((status = 200, description = "Last companies scanned", body = LastScanned), CommonErrors))]
pub async fn get_last_companies_scanned(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    p: Params,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    // The same answer for every key not bound to a company (company 0 in the key).
    if caller.company.is_none() {
        return super::company_answer(app.clone(), 0, "underwriter::last_scanned", p.cache_key(), async move || {
            last_scanned(&app, &caller, page).await
        })
        .await;
    }
    Ok(Json(last_scanned(&app, &caller, page).await?).into_response())
}

async fn last_scanned(app: &AppState, caller: &Caller, page: model::Page) -> Result<LastScanned, ApiError> {
    let last = match &caller.company {
        // A bound key sees its own companies only.
        Some(own) => {
            let mut all = super::family(app, own).await?;
            all.retain(|c| c.last_scanned_at.is_some());
            all.sort_by(|a, b| b.last_scanned_at.cmp(&a.last_scanned_at).then(b.id.cmp(&a.id)));
            super::paginate(all, page)
        }
        None => app.store().last_scanned(page).await?,
    };
    Ok(LastScanned {
        data: last.items.iter().map(Into::into).collect(),
        pagination: page.pagination(last.total).into(),
    })
}

/// Public incident history of the company that owns a domain.
#[utoipa::path(get, path = "/underwriter-getcompany-history-domain", operation_id = "underwriter-getcompany-history-domain", tag = "Underwriter",
    params(("domain" = String, Query, description = "Web domain")),
    responses((status = 200, description = "Incident history", body = DomainHistory), CommonErrors))]
pub async fn get_company_history_domain(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    p: Params,
) -> Result<Response, ApiError> {
    let domain = p.domain("domain")?;
    if caller.company.is_some() {
        company_by_domain(&app, &caller, &domain).await?;
    }
    // The same answer for every caller allowed to ask (company 0 in the key).
    super::company_answer(app.clone(), 0, "underwriter::history_domain", domain.to_string(), async move || {
        let mut incidents = app.store().incidents_for_domain(&domain).await?;
        if incidents.is_empty() && app.mock().is_some() {
            let c = company_by_domain(&app, &caller, &domain).await?;
            incidents = app.store().incidents_for_company(c.id).await?;
        }
        Ok(DomainHistory { domain: domain.to_string(), incidents: incidents.iter().map(Into::into).collect() })
    })
    .await
}
