//! General: conversions between social_id, company name and web domain.

use axum::Json;
use axum::extract::{Extension, State};
use axum::response::{IntoResponse, Response};

use super::{Named, Subject};
use crate::error::CommonErrors;
use crate::error::{self, ApiError};
use crate::params::{CompanyQuery, PageQuery, Params};
use crate::responses::{DomainBySocialId, NameAndSocialId, SocialIdByDomain, SocialIdsByName};
use crate::{AppState, Caller};

/// The domain, name and website of a company.
#[utoipa::path(get, path = "/general-getdomain-by-socialid", operation_id = "general-getdomain-by-socialid", tag = "General",
    params(CompanyQuery),
    responses((status = 200, description = "The company's domain", body = DomainBySocialId), CommonErrors))]
pub async fn get_domain_by_social_id(
    Subject { company: c, .. }: Subject<Named>,
) -> Result<Json<DomainBySocialId>, ApiError> {
    Ok(Json(DomainBySocialId {
        social_id: c.social_id.to_string(),
        company_name: c.company_name,
        website: c.website,
        domain: c.domain.map(|d| d.to_string()).unwrap_or_default(),
    }))
}

/// Companies whose name contains `company_name` (case-insensitive), best matches first.
#[utoipa::path(get, path = "/general-getsocialid-by-companyname", operation_id = "general-getsocialid-by-companyname", tag = "General",
    params(("company_name" = String, Query, description = "Name or part of a name"),
           PageQuery),
    responses((status = 200, description = "Matching companies", body = SocialIdsByName), CommonErrors))]
pub async fn get_social_id_by_company_name(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    p: Params,
) -> Result<Response, ApiError> {
    let name = p.required("company_name")?.to_owned();
    if name.chars().count() > 200 {
        return Err(ApiError::not_valid("company_name"));
    }
    let page = p.page()?;
    // The same answer for every key not bound to a company (company 0 in the key).
    if caller.company.is_none() {
        return super::company_answer(app.clone(), 0, "general::by_company_name", p.cache_key(), async move || {
            by_company_name(&app, &caller, &name, page).await
        })
        .await;
    }
    Ok(Json(by_company_name(&app, &caller, &name, page).await?).into_response())
}

async fn by_company_name(
    app: &AppState,
    caller: &Caller,
    name: &str,
    page: model::Page,
) -> Result<SocialIdsByName, ApiError> {
    let mut found = match &caller.company {
        // A key bound to a company searches only that company and its subsidiaries.
        Some(own) => visible_matches(app, own, name, page).await?,
        None => app.store().search_companies(name, page).await?,
    };
    if found.total == 0
        && let Some(m) = app.mock()
        && let Some(c) = app.store().company_by_social_id(&m.company).await?
    {
        found = store::Paged { items: vec![c], total: 1 };
    }
    if found.total == 0 {
        return Err(ApiError::bad(error::COMPANY_NOT_FOUND));
    }
    Ok(SocialIdsByName {
        data: found
            .items
            .into_iter()
            .map(|c| NameAndSocialId { company_name: c.company_name, social_id: c.social_id.to_string() })
            .collect(),
        pagination: page.pagination(found.total).into(),
    })
}

/// The social_id of the company that owns a web domain (or a name below it).
#[utoipa::path(get, path = "/general-getsocialid-by-domain", operation_id = "general-getsocialid-by-domain", tag = "General",
    params(("domain" = String, Query, description = "Web domain, e.g. example.com")),
    responses((status = 200, description = "The company's social_id", body = SocialIdByDomain), CommonErrors))]
pub async fn get_social_id_by_domain(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    p: Params,
) -> Result<Json<SocialIdByDomain>, ApiError> {
    let domain = p.domain("domain")?;
    let c = super::underwriter::company_by_domain(&app, &caller, &domain).await?;
    app.lookups().record(c.id);
    Ok(Json(SocialIdByDomain { social_id: c.social_id.to_string() }))
}

async fn visible_matches(
    app: &AppState,
    own: &model::SocialId,
    name: &str,
    page: model::Page,
) -> Result<store::Paged<model::Company>, ApiError> {
    let needle = name.to_lowercase();
    let mut all = super::family(app, own).await?;
    all.retain(|c| c.company_name.to_lowercase().contains(&needle));
    Ok(super::paginate(all, page))
}
