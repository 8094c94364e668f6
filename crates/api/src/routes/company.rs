//! A company's resources (its record, assets, SBOM, scores, subsidiaries' statistics,
//! ratings, events and incidents), each read by one handler for two operations: the
//! Underwriter's, about the company the request names (`?social_id=`), and the Monitor's,
//! about the calling key's own company ([`Whose`]). A handler's annotation documents the
//! Underwriter operation; `openapi::company_resources` registers both and documents the
//! Monitor one from it.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use model::{Company, Domain, Page, Severity};

use super::{Asking, Audience, Subject, Whose};
use crate::AppState;
use crate::error::ApiError;
use crate::error::CommonErrors;
use crate::params::{CompanyQuery, PageQuery, ParentQuery};
use crate::responses::*;

/// How many findings each score component shows.
const TOP_FINDINGS: u32 = 5;

/// The company information record.
#[utoipa::path(get, path = "/underwriter-getcompanyinfo", operation_id = "underwriter-getcompanyinfo", tag = "Underwriter",
    params(CompanyQuery),
    responses((status = 200, description = "Company information", body = CompanyInfo), CommonErrors))]
pub async fn get_company_info<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    Ok(super::json_bytes(company_info_json(&app, &c, true).await?))
}

/// Applications and technologies detected on the company's assets.
#[utoipa::path(get, path = "/underwriter-getcompanyapplicationsassets", operation_id = "underwriter-getcompanyapplicationsassets", tag = "Underwriter",
    params(CompanyQuery, PageQuery),
    responses((status = 200, description = "Applications", body = ApplicationsAssets), CommonErrors))]
pub async fn get_company_applications_assets<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    let op =
        W::AUDIENCE.pick("underwriter::get_company_applications_assets", "monitor::get_company_applications_assets");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || applications(&app, c, page).await).await
}

/// Network endpoints (IP address and port) of the company.
#[utoipa::path(get, path = "/underwriter-getcompanyinfrastructureassets", operation_id = "underwriter-getcompanyinfrastructureassets", tag = "Underwriter",
    params(CompanyQuery, PageQuery),
    responses((status = 200, description = "Network endpoints", body = InfrastructureAssets), CommonErrors))]
pub async fn get_company_infrastructure_assets<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    let op = W::AUDIENCE
        .pick("underwriter::get_company_infrastructure_assets", "monitor::get_company_infrastructure_assets");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || infrastructure(&app, c, page).await).await
}

/// The external software bill of materials.
#[utoipa::path(get, path = "/underwriter-getcompanysbom", operation_id = "underwriter-getcompanysbom", tag = "Underwriter",
    params(CompanyQuery, PageQuery),
    responses((status = 200, description = "SBOM components", body = SbomPage), CommonErrors))]
pub async fn get_company_sbom<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    let op = W::AUDIENCE.pick("underwriter::get_company_sbom", "monitor::get_company_sbom");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || sbom(&app, &c, page, W::AUDIENCE).await)
        .await
}

/// SBOM components that have known CVEs, with those CVEs.
#[utoipa::path(get, path = "/underwriter-getcompanysbomcve", operation_id = "underwriter-getcompanysbomcve", tag = "Underwriter",
    params(CompanyQuery, PageQuery),
    responses((status = 200, description = "SBOM components with CVEs", body = SbomPage), CommonErrors))]
pub async fn get_company_sbom_cve<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    let op = W::AUDIENCE.pick("underwriter::get_company_sbom_cve", "monitor::get_company_sbom_cve");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || {
        sbom_cve(&app, &c, page, W::AUDIENCE).await
    })
    .await
}

/// SBOM components by subdomain of one domain.
#[utoipa::path(get, path = "/underwriter-getcompanysbomdomain", operation_id = "underwriter-getcompanysbomdomain", tag = "Underwriter",
    params(("domain" = String, Query, description = "A domain of the company"), CompanyQuery, PageQuery),
    responses((status = 200, description = "SBOM by subdomain", body = SbomByDomain), CommonErrors))]
pub async fn get_company_sbom_domain<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let domain = p.domain("domain")?;
    let page = p.page()?;
    let op = W::AUDIENCE.pick("underwriter::get_company_sbom_domain", "monitor::get_company_sbom_domain");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || {
        sbom_domain(&app, &c, domain, page, W::AUDIENCE).await
    })
    .await
}

/// The global score and its twelve components, for the company alone.
#[utoipa::path(get, path = "/underwriter-getcompanyscores", operation_id = "underwriter-getcompanyscores", tag = "Underwriter",
    params(CompanyQuery),
    responses((status = 200, description = "Scores", body = CompanyScores), CommonErrors))]
pub async fn get_company_scores<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    scores_json(&app, c).await
}

/// Statistics of each subsidiary.
#[utoipa::path(get, path = "/underwriter-getcompanystats", operation_id = "underwriter-getcompanystats", tag = "Underwriter",
    params(ParentQuery, PageQuery),
    responses((status = 200, description = "Subsidiary statistics", body = CompanyStats), CommonErrors))]
pub async fn get_company_stats<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    let op = W::AUDIENCE.pick("underwriter::get_company_stats", "monitor::get_company_stats");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || stats(&app, &c, page).await).await
}

/// Scores of each subsidiary.
#[utoipa::path(get, path = "/underwriter-getcompanysubscores", operation_id = "underwriter-getcompanysubscores", tag = "Underwriter",
    params(ParentQuery, PageQuery),
    responses((status = 200, description = "Subsidiary scores", body = CompanySubScores), CommonErrors))]
pub async fn get_company_subscores<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    let op = W::AUDIENCE.pick("underwriter::get_company_subscores", "monitor::get_company_subscores");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || subscores(&app, &c, page).await).await
}

/// The company's ratings, newest first, each with its methodology version and component
/// scores (an extension of the spec: its operations have no score history).
#[utoipa::path(get, path = "/underwriter-getcompanyscore-history", operation_id = "underwriter-getcompanyscore-history", tag = "Underwriter",
    params(CompanyQuery, PageQuery),
    responses((status = 200, description = "Score history (extension)", body = ScoreHistory), CommonErrors))]
pub async fn get_company_score_history<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let page = p.page()?;
    let op = W::AUDIENCE.pick("underwriter::get_company_score_history", "monitor::get_company_score_history");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || score_history(&app, c, page).await).await
}

/// The company's events, newest first (an extension of the spec: its events are "not
/// shown"): ratings that moved, critical and high findings opened, findings closed,
/// hosts attributed, scans that failed or stopped short.
#[utoipa::path(get, path = "/underwriter-getevents", operation_id = "underwriter-getevents", tag = "Underwriter",
    params(CompanyQuery, PageQuery),
    responses((status = 200, description = "Events (extension)", body = Events), CommonErrors))]
pub async fn get_events<W: Whose>(
    State(app): State<AppState>,
    Asking { params: p, caller, .. }: Asking<W>,
) -> Result<Json<Events>, ApiError> {
    // Events are read as they are: a company not rated yet may have a failed scan's. The
    // page of a named company's is checked before the company is looked up; the key's
    // company is found first, as for every Monitor operation.
    let (c, page) = match W::AUDIENCE {
        Audience::Underwriter => {
            let page = p.page()?;
            (W::as_is(&app, &caller, &p).await?, page)
        }
        Audience::Monitor => {
            let c = W::as_is(&app, &caller, &p).await?;
            (c, p.page()?)
        }
    };
    // A key's own events are those of its subsidiaries too.
    let companies: Vec<i64> = match W::AUDIENCE {
        Audience::Underwriter => vec![c.id],
        Audience::Monitor => super::family(&app, &c.social_id).await?.iter().map(|f| f.id).collect(),
    };
    Ok(Json(events_of(&app, &c, &companies, page).await?))
}

/// Public incident history of a company.
#[utoipa::path(get, path = "/underwriter-getcompany-history", operation_id = "underwriter-getcompany-history", tag = "Underwriter",
    params(CompanyQuery),
    responses((status = 200, description = "Incident history", body = CompanyHistory), CommonErrors))]
pub async fn get_company_history<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let op = W::AUDIENCE.pick("underwriter::get_company_history", "monitor::get_company_history");
    super::company_answer(app.clone(), c.id, op, p.cache_key(), async move || history(&app, &c).await).await
}

/// Every finding of a company, open by default, worst first: filtered by severity,
/// risk vector, code, host, status, first-seen date and dispute, paged (the score
/// answers show five per component); `format=csv` gives every match.
#[utoipa::path(get, path = "/underwriter-getcompanyfindings", operation_id = "underwriter-getcompanyfindings", tag = "Underwriter",
    params(CompanyQuery, super::portfolio::FindingsQuery, PageQuery),
    responses((status = 200, description = "Findings (extension)",
        content((crate::responses::portfolio::FindingsOut = "application/json"), (String = "text/csv"))), CommonErrors))]
pub async fn get_company_findings<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    super::portfolio::findings_answer(app, store::FindingsOf::Company(c.id), p, Some(c.social_id)).await
}

/// The smallest set of open findings whose fix takes the company to `target_grade`,
/// each with the score after it and its remediation, ordered by what each alone gains
/// (exact: the rating is a function of the findings); or why fixes cannot reach it.
#[utoipa::path(get, path = "/underwriter-getimprovementplan", operation_id = "underwriter-getimprovementplan", tag = "Underwriter",
    params(CompanyQuery, ("target_grade" = String, Query, description = "A to F")),
    responses((status = 200, description = "The plan (extension)", body = ImprovementPlanOut), CommonErrors))]
pub async fn get_improvement_plan<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Json<ImprovementPlanOut>, ApiError> {
    let target =
        model::Grade::parse(p.required("target_grade")?).map_err(|e| ApiError::bad(format!("target_grade: {e}")))?;
    let target_score = rating::grade_floor(target);
    let Some(latest) = app.store().latest_score(c.id).await? else {
        return Err(ApiError::bad(crate::error::NOT_PROCESSED));
    };
    let mut out = ImprovementPlanOut {
        social_id: c.social_id.to_string(),
        company_name: c.company_name.clone(),
        score: latest.score.as_f64(),
        grade: latest.grade.as_str().to_owned(),
        target_grade: target.as_str().to_owned(),
        target_score,
        outcome: String::new(),
        why: None,
        score_after: None,
        grade_after: None,
        steps: Vec::new(),
        methodology: rating::METHODOLOGY_VERSION.to_owned(),
    };
    if latest.methodology.is_none() {
        out.outcome = "unreachable".into();
        out.why = Some("the rating was imported with the company, not made from findings: a scan makes one".into());
        return Ok(Json(out));
    }
    let (findings, kev) = store::judged::rated_findings(app.store(), c.id).await?;
    let assets: std::collections::BTreeMap<model::RiskVector, u32> =
        latest.components.iter().map(|(v, x)| (*v, x.assets_checked)).collect();
    let website = model::website_host(&c.website);
    let input =
        rating::Input { findings: &findings, assets_checked: &assets, kev: &kev, website_host: website.as_deref() };
    match rating::plan::plan(&input, target_score) {
        rating::plan::Plan::Reached { score } => {
            out.outcome = "reached".into();
            out.score_after = Some(score);
            out.grade_after = Some(rating::grade_of(score).as_str().to_owned());
        }
        rating::plan::Plan::Unreachable { why } => {
            out.outcome = "unreachable".into();
            out.why = Some(why);
        }
        rating::plan::Plan::Steps { steps, .. } => {
            out.outcome = "plan".into();
            out.score_after = steps.last().map(|s| s.score_after);
            out.grade_after = steps.last().map(|s| s.grade_after.as_str().to_owned());
            out.steps = steps
                .iter()
                .map(|s| PlanStepOut {
                    gain: s.gain,
                    score_after: s.score_after,
                    grade_after: s.grade_after.as_str().to_owned(),
                    lifts_cap: s.lifts_cap.map(str::to_owned),
                    finding: FindingOut::from(&findings[s.finding]),
                })
                .collect();
        }
    }
    Ok(Json(out))
}

// --- what the answers are made of ----------------------------------------------------------

pub(crate) async fn company_info(
    app: &AppState,
    c: &Company,
    with_subsidiaries: bool,
) -> Result<CompanyInfo, ApiError> {
    let key = (c.id, with_subsidiaries);
    if let Some(info) = kept_info(app, c, &key) {
        return Ok(info);
    }
    // One caller reads the parts; the others asking at the same time wait and take them.
    let _reading = app.fill_lock(crate::Fill::Info, &key).lock().await;
    if let Some(info) = kept_info(app, c, &key) {
        return Ok(info);
    }
    // Read afresh: `searched_by` moves with every lookup (and not across a flush of
    // the pending lookups, which would count a batch twice or not at all).
    let epoch = app.info_cache().epoch();
    let fresh = app
        .lookups()
        .read(|| async {
            let generation = app.lookups().generation();
            let fresh = app.backend().company_by_social_id(&c.social_id).await?;
            let searched_by = super::searched_by(app, fresh.as_ref().unwrap_or(c));
            Ok::<_, ApiError>((generation, fresh, searched_by))
        })
        .await;
    let (generation, fresh, searched_by) = fresh?;
    let row = fresh.as_ref().unwrap_or(c);
    let counts = app.store().counts(row.id).await?;
    let subs = if with_subsidiaries {
        Some(app.store().subsidiaries(row.id, None).await?.items.into_iter().map(|s| s.company_name).collect())
    } else {
        None
    };
    let info = CompanyInfo::new(row, searched_by, counts.ip_addresses, subs.clone());
    let json = super::InfoParts::split(&info);
    app.info_cache().insert_read_in(
        key,
        Arc::new(super::InfoParts {
            generation,
            company: fresh,
            ip_addresses: counts.ip_addresses,
            subsidiaries: subs,
            json,
        }),
        epoch,
    );
    Ok(info)
}

/// A company-info answer from kept parts, while no lookup flush happened since they were
/// read (then the row's count plus the pending lookups is exact in this process). The
/// generation is read again after the pending count (a seqlock): a flush that moved
/// pending lookups into the store meanwhile sends the request the slow way.
fn kept_info(app: &AppState, c: &Company, key: &(i64, bool)) -> Option<CompanyInfo> {
    kept_info_with(app, c, key, |parts, row, searched_by| {
        Some(CompanyInfo::new(row, searched_by, parts.ip_addresses, parts.subsidiaries.clone()))
    })
}

/// [`kept_info`] as the JSON of the answer.
fn kept_info_json(app: &AppState, c: &Company, key: &(i64, bool)) -> Option<Bytes> {
    kept_info_with(app, c, key, |parts, _, searched_by| parts.json_with(searched_by))
}

fn kept_info_with<T>(
    app: &AppState,
    c: &Company,
    key: &(i64, bool),
    answer: impl FnOnce(&super::InfoParts, &Company, i64) -> Option<T>,
) -> Option<T> {
    let parts = app.info_cache().get(key)?;
    if parts.generation != app.lookups().generation() || !parts.generation.is_multiple_of(2) {
        return None;
    }
    let row = parts.company.as_ref().unwrap_or(c);
    let searched_by = super::searched_by(app, row);
    if parts.generation != app.lookups().generation() {
        return None;
    }
    answer(&parts, row, searched_by)
}

/// [`company_info`] as the JSON of the answer: a kept answer is not serialised again.
pub(crate) async fn company_info_json(app: &AppState, c: &Company, with_subsidiaries: bool) -> Result<Bytes, ApiError> {
    if let Some(json) = kept_info_json(app, c, &(c.id, with_subsidiaries)) {
        return Ok(json);
    }
    let info = company_info(app, c, with_subsidiaries).await?;
    serde_json::to_vec(&info).map(Bytes::from).map_err(|e| ApiError::Internal(e.to_string()))
}

pub(crate) async fn applications(app: &AppState, c: Company, page: Page) -> Result<ApplicationsAssets, ApiError> {
    let apps = app.store().applications(c.id, page).await?;
    Ok(ApplicationsAssets {
        social_id: c.social_id.to_string(),
        company_name: c.company_name,
        website: c.website,
        industry: c.industry,
        description: c.description,
        number_of_applications: apps.total,
        applications: apps.items.into_iter().map(Into::into).collect(),
        pagination: page.pagination(apps.total).into(),
    })
}

pub(crate) async fn infrastructure(app: &AppState, c: Company, page: Page) -> Result<InfrastructureAssets, ApiError> {
    let eps = app.store().network_endpoints(c.id, page).await?;
    Ok(InfrastructureAssets {
        social_id: c.social_id.to_string(),
        company_name: c.company_name,
        website: c.website,
        industry: c.industry,
        description: c.description,
        number_of_infrastructure_endpoint: eps.total,
        network_endpoints: eps.items.into_iter().map(Into::into).collect(),
        pagination: page.pagination(eps.total).into(),
    })
}

pub(crate) async fn sbom(app: &AppState, c: &Company, page: Page, who: Audience) -> Result<SbomPage, ApiError> {
    let items = app.store().sbom(c.id, page, false).await?;
    let message = if items.total == 0 {
        Some("No SBOM component has been detected for this company".to_owned())
    } else if who == Audience::Monitor {
        Some("SBOM retrieved successfully".to_owned())
    } else {
        None
    };
    Ok(SbomPage {
        data: items.items.into_iter().map(|s| SbomOut::new(s, None)).collect(),
        pagination: page.pagination(items.total).into(),
        message,
    })
}

pub(crate) async fn sbom_cve(app: &AppState, c: &Company, page: Page, who: Audience) -> Result<SbomPage, ApiError> {
    let items = app.store().sbom(c.id, page, true).await?;
    let mut data = Vec::with_capacity(items.items.len());
    for comp in items.items {
        let mut cves = Vec::with_capacity(comp.cves.len());
        for cve in &comp.cves {
            let rec = app.store().cve(&cve.id).await?;
            cves.push(ComponentCve {
                id: cve.id.to_string(),
                basis: cve.basis.as_str().to_owned(),
                scored: cve.basis.scored(),
                summary: rec.as_ref().map(|r| r.summary.clone()),
                cvss3: rec.as_ref().and_then(|r| r.cvss3),
                cvss: rec.as_ref().and_then(|r| r.cvss),
                kev: rec.as_ref().is_some_and(|r| r.kev.is_some()),
                epss: rec.as_ref().and_then(|r| r.epss),
                severity_cvss: rec.as_ref().and_then(CvssOut::severity_of),
            });
        }
        data.push(SbomOut::new(comp, Some(cves)));
    }
    let message = if items.total == 0 {
        Some("No SBOM vulnerability found".to_owned())
    } else if who == Audience::Monitor {
        Some("SBOM vulnerabilities retrieved successfully".to_owned())
    } else {
        None
    };
    Ok(SbomPage { data, pagination: page.pagination(items.total).into(), message })
}

pub(crate) async fn sbom_domain(
    app: &AppState,
    c: &Company,
    domain: Domain,
    page: Page,
    who: Audience,
) -> Result<SbomByDomain, ApiError> {
    let hosts = app.store().sbom_by_domain(c.id, &domain, page).await?;
    let message = if hosts.total == 0 {
        Some(format!("No SBOM component has been detected on {domain}"))
    } else if who == Audience::Monitor {
        Some("SBOM retrieved successfully".to_owned())
    } else {
        None
    };
    Ok(SbomByDomain {
        data: SbomDomainData {
            domain_name: domain.to_string(),
            subdomain: hosts
                .items
                .into_iter()
                .map(|h| SbomHost {
                    subdomain: h.host,
                    components: h.components.into_iter().map(|s| SbomOut::new(s, None)).collect(),
                })
                .collect(),
        },
        pagination: page.pagination(hosts.total).into(),
        message,
    })
}

/// The scores response as JSON, from the read cache (refreshed ahead by one caller,
/// built once for everyone asking when absent: [`crate::cache::TtlCache::get_or_load`]).
pub(crate) async fn scores_json(app: &AppState, c: Company) -> Result<Response, ApiError> {
    let id = c.id;
    let body = app
        .scores_cache()
        .get_or_load(
            &id,
            app.fill_lock(crate::Fill::Scores, &id),
            |_| true,
            async || {
                serde_json::to_vec(&scores(app, c).await?)
                    .map(Bytes::from)
                    .map_err(|e| ApiError::Internal(e.to_string()))
            },
        )
        .await?;
    Ok(super::json_bytes(body))
}

pub(crate) async fn scores(app: &AppState, c: Company) -> Result<CompanyScores, ApiError> {
    let subsidiaries_number = app.store().subsidiaries(c.id, Some(Page::FIRST)).await?.total;
    let latest = app.store().latest_score(c.id).await?;
    let scan_notes = latest.as_ref().map(|s| s.notes.clone()).unwrap_or_default();
    let depth = latest.as_ref().map(|s| s.depth().to_owned());
    let (stale, stale_reason, last_successful_scan) = match &latest {
        Some(snap) => {
            let last = c.last_scanned_at.map_or(snap.scanned_at.0, |t| t.max(snap.scanned_at.0));
            let why = staleness(app, &c, last).await?;
            (Some(why.is_some()), why, Some(model::timefmt::rfc3339(last)))
        }
        None => (None, None, None),
    };
    let mut peer_benchmarks = None;
    let (global_score, grade, scanned_at, score, message) = match latest {
        Some(snap) => {
            // What the rating counts: findings on a key's unproven claims are not the
            // company's in its score (docs/API.md, "Domain ownership").
            let unproven = store::disputes::unproven(&app.store().domain_claims(c.id).await?);
            let top = if unproven.is_empty() {
                app.store().top_findings(c.id, TOP_FINDINGS).await?
            } else {
                let mut kept: Vec<model::Finding> = Vec::new();
                for f in app.store().top_findings(c.id, TOP_FINDINGS * 8).await? {
                    let same_vector = kept.iter().filter(|k| k.risk_vector == f.risk_vector).count();
                    if same_vector < TOP_FINDINGS as usize && !unproven.iter().any(|d| store::asset_under(&f.asset, d))
                    {
                        kept.push(f);
                    }
                }
                kept
            };
            let disputed = app.store().disputed_vectors(c.id).await?;
            peer_benchmarks = Some(super::peers(app, &c, snap.score.as_f64()).await?);
            let mut components = ScoreComponents::new(&snap, &top, &disputed);
            super::with_severity_cvss(app, components.findings_mut()).await?;
            (
                Some(snap.score.as_f64()),
                Some(snap.grade.as_str().to_owned()),
                Some(model::timefmt::rfc3339(snap.scanned_at.0)),
                Some(components),
                None,
            )
        }
        None => (None, None, None, None, Some("No score is available for this company yet".to_owned())),
    };
    Ok(CompanyScores {
        social_id: c.social_id.to_string(),
        company_name: c.company_name,
        website: c.website,
        domain: c.domain.map(|d| d.to_string()).unwrap_or_default(),
        industry: c.industry,
        description: c.description,
        subsidiaries_number,
        global_score,
        grade,
        scanned_at,
        score,
        message,
        scan_notes,
        peer_benchmarks,
        stale,
        stale_reason,
        last_successful_scan,
        depth,
    })
}

/// Why a rating whose last successful scan was at `last` is stale, if it is: the last
/// full scan failed after it (the reason the worker kept), or it is older than twice the
/// company's rescan cadence.
async fn staleness(app: &AppState, c: &Company, last: time::OffsetDateTime) -> Result<Option<String>, ApiError> {
    if let Some((why, at)) = app.store().scan_error(c.id).await?
        && at >= last
    {
        return Ok(Some(format!("the last scan failed at {}: {why}", model::timefmt::rfc3339(at))));
    }
    let cadence = app.store().cadence(c.id).await?.unwrap_or(app.config().default_cadence);
    let age = time::OffsetDateTime::now_utc() - last;
    if age > cadence * 2 {
        return Ok(Some(format!(
            "rated {} ago, more than twice its rescan cadence of {}",
            span(age.unsigned_abs()),
            span(cadence)
        )));
    }
    Ok(None)
}

/// A span as people say it: `36 h`, `3 d`, `90 s`.
fn span(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..120 => format!("{s} s"),
        120..7_200 => format!("{} min", s / 60),
        7_200..172_800 => format!("{} h", s / 3_600),
        _ => format!("{} d", s / 86_400),
    }
}

pub(crate) async fn stats(app: &AppState, c: &Company, page: Page) -> Result<CompanyStats, ApiError> {
    let subs = app.store().subsidiaries(c.id, Some(page)).await?;
    let mut out = Vec::with_capacity(subs.items.len());
    for s in subs.items {
        let n = app.store().counts(s.id).await?;
        let f = |sev| n.findings.get(&sev).copied().unwrap_or(0);
        out.push(SubsidiaryStats {
            social_id: s.social_id.to_string(),
            company_name: s.company_name.clone(),
            domain: s.domain.as_ref().map(ToString::to_string),
            score: s.score.map(|x| x.as_f64()),
            grade: s.grade.map(|g| g.as_str().to_owned()),
            last_scanned: s.last_scanned_at.map(model::timefmt::rfc3339),
            number_of_applications: n.applications,
            number_of_infrastructure_endpoint: n.network_endpoints,
            ip_addresses: n.ip_addresses,
            sbom_components: n.sbom_components,
            findings: FindingsBySeverity {
                critical: f(Severity::Critical),
                high: f(Severity::High),
                medium: f(Severity::Medium),
                low: f(Severity::Low),
                info: f(Severity::Info),
            },
        });
    }
    Ok(CompanyStats {
        parent_social_id: c.social_id.to_string(),
        subsidiaries_stats: out,
        pagination: page.pagination(subs.total).into(),
    })
}

pub(crate) async fn subscores(app: &AppState, c: &Company, page: Page) -> Result<CompanySubScores, ApiError> {
    let subs = app.store().subsidiaries(c.id, Some(page)).await?;
    let mut out = Vec::with_capacity(subs.items.len());
    for s in subs.items {
        let latest = app.store().latest_score(s.id).await?;
        out.push(SubsidiaryScore {
            social_id: s.social_id.to_string(),
            company_name: s.company_name.clone(),
            domain: s.domain.as_ref().map(ToString::to_string),
            score: s.score.map(|x| x.as_f64()),
            grade: s.grade.map(|g| g.as_str().to_owned()),
            scanned_at: s.last_scanned_at.map(model::timefmt::rfc3339),
            components: latest
                .map(|l| {
                    l.components
                        .iter()
                        .map(|(rv, cs)| {
                            (rv.as_str().to_owned(), cs.not_assessable.is_none().then(|| cs.score.as_f64()))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
    Ok(CompanySubScores {
        social_id: c.social_id.to_string(),
        subsidiaries_scores: out,
        pagination: page.pagination(subs.total).into(),
    })
}

pub(crate) async fn history(app: &AppState, c: &Company) -> Result<CompanyHistory, ApiError> {
    let incidents = app.store().incidents_for_company(c.id).await?;
    Ok(CompanyHistory { social_id: c.social_id.to_string(), incidents: incidents.iter().map(Into::into).collect() })
}

/// One page of a company's ratings, newest first.
pub(crate) async fn score_history(app: &AppState, c: Company, page: model::Page) -> Result<ScoreHistory, ApiError> {
    let ratings = app.store().score_history_page(c.id, page).await?;
    Ok(ScoreHistory {
        social_id: c.social_id.to_string(),
        company_name: c.company_name,
        data: ratings.items.iter().map(RatingOut::from).collect(),
        pagination: page.pagination(ratings.total).into(),
    })
}

/// One page of the events of `companies`, answered for `c` (Underwriter and Monitor).
pub(crate) async fn events_of(app: &AppState, c: &Company, companies: &[i64], page: Page) -> Result<Events, ApiError> {
    let found = app.store().events(companies, page).await?;
    Ok(Events {
        social_id: c.social_id.to_string(),
        data: found.items.iter().map(EventOut::from).collect(),
        pagination: page.pagination(found.total).into(),
    })
}
