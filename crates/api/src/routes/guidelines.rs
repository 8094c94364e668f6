//! Underwriting guidelines (docs/API.md, "Underwriting guidelines"): an organisation sets
//! versioned documents of rules (`model::guidelines`) and evaluates any company it may see
//! against the one in force (`rating::guidelines`), with each rule's outcome, what was
//! observed and the findings behind it.

use axum::Json;
use axum::extract::State;
use model::guidelines::{Check, Guidelines};

use super::portfolio::{OrgCaller, by, json_object};
use super::{Named, Subject};
use crate::AppState;
use crate::error::{ApiError, CommonErrors};
use crate::params::{CompanyQuery, RawBody};
use crate::responses::FindingOut;
use crate::responses::guidelines::*;

/// The organisation's guidelines in force, parsed (a kept document always parses: it was
/// parsed before it was kept).
async fn in_force(app: &AppState, org: i64) -> Result<Option<(store::StoredGuidelines, Guidelines)>, ApiError> {
    let Some(kept) = app.store().guidelines(org).await? else { return Ok(None) };
    let doc: serde_json::Value =
        serde_json::from_str(&kept.document).map_err(|e| ApiError::Internal(format!("kept guidelines: {e}")))?;
    let parsed = Guidelines::parse(&doc).map_err(|e| ApiError::Internal(format!("kept guidelines: {e}")))?;
    Ok(Some((kept, parsed)))
}

/// Sets the organisation's underwriting guidelines: a new version, in force at once.
#[utoipa::path(post, path = "/portfolio-set-guidelines", operation_id = "portfolio-set-guidelines", tag = "Portfolio",
    request_body(content = GuidelinesDocument, content_type = "application/json"),
    responses((status = 200, description = "The version kept (extension)", body = GuidelinesOut), CommonErrors))]
pub async fn set(
    State(app): State<AppState>,
    OrgCaller { org, caller }: OrgCaller,
    raw: RawBody,
) -> Result<Json<GuidelinesOut>, ApiError> {
    let doc = serde_json::Value::Object(json_object(&raw.0)?);
    let parsed = Guidelines::parse(&doc).map_err(|e| ApiError::bad(e.to_string()))?;
    let text = serde_json::to_string(&doc).map_err(|e| ApiError::Internal(e.to_string()))?;
    let at = time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or(time::OffsetDateTime::now_utc());
    let version = app.store().save_guidelines(org, &text, &by(&caller), at).await?;
    Ok(Json(GuidelinesOut {
        version: Some(version),
        created_at: Some(model::timefmt::rfc3339(at)),
        created_by: Some(by(&caller)),
        rules: parsed.rules.len() as u64,
        document: doc,
    }))
}

/// The organisation's underwriting guidelines in force (no version: none set yet).
#[utoipa::path(get, path = "/portfolio-getguidelines", operation_id = "portfolio-getguidelines", tag = "Portfolio",
    responses((status = 200, description = "The guidelines in force (extension)", body = GuidelinesOut), CommonErrors))]
pub async fn get(
    State(app): State<AppState>,
    OrgCaller { org, .. }: OrgCaller,
) -> Result<Json<GuidelinesOut>, ApiError> {
    Ok(Json(match in_force(&app, org).await? {
        Some((kept, parsed)) => GuidelinesOut {
            version: Some(kept.version),
            created_at: Some(model::timefmt::rfc3339(kept.created_at.0)),
            created_by: Some(kept.created_by),
            rules: parsed.rules.len() as u64,
            document: serde_json::from_str(&kept.document).unwrap_or_default(),
        },
        None => GuidelinesOut {
            version: None,
            created_at: None,
            created_by: None,
            rules: 0,
            document: serde_json::json!({"rules": []}),
        },
    }))
}

/// Evaluates a company against the organisation's guidelines in force: `pass`, `refer`
/// or `decline`, with every rule's outcome, what was observed and the findings behind it.
#[utoipa::path(get, path = "/underwriter-evaluate-guidelines", operation_id = "underwriter-evaluate-guidelines", tag = "Underwriter",
    params(CompanyQuery),
    responses((status = 200, description = "The evaluation (extension)", body = EvaluationOut), CommonErrors))]
pub async fn evaluate(
    State(app): State<AppState>,
    OrgCaller { org, caller }: OrgCaller,
    Subject { company: c, .. }: Subject<Named>,
) -> Result<Json<EvaluationOut>, ApiError> {
    let Some((kept, guidelines)) = in_force(&app, org).await? else {
        return Err(ApiError::bad("The organisation has no guidelines yet: POST /portfolio-set-guidelines sets them"));
    };
    let Some(latest) = app.store().latest_score(c.id).await? else {
        return Err(ApiError::bad(crate::error::NOT_PROCESSED));
    };
    let (findings, kev) = store::judged::rated_findings(app.store(), c.id).await?;
    let components = latest
        .components
        .iter()
        .filter(|(_, x)| x.not_assessable.is_none())
        .map(|(v, x)| (*v, (x.score.as_f64(), x.grade)))
        .collect();
    let incidents: Vec<time::OffsetDateTime> = app
        .store()
        .incidents_for_company(c.id)
        .await?
        .iter()
        .filter_map(|i| i.date_detected.as_ref().or(i.date_publicly_disclosed.as_ref()))
        .map(|d| time::PrimitiveDateTime::new(d.0, time::Time::MIDNIGHT).assume_utc())
        .collect();
    // The predictions only when a rule reads them (the tail runs a simulation).
    let wants = |k: fn(&Check) -> bool| guidelines.rules.iter().any(|r| k(&r.check));
    let (mut incident_probability, mut loss_1_in_100) = (None, None);
    if wants(|c| matches!(c, Check::MaxIncidentProbability(_) | Check::MaxLoss1In100(_))) {
        let (_, profile, _) = super::predictions::profile(&app, c.clone(), 12).await?;
        incident_probability = rating::predict::incident_prediction(&profile, 12).last().map(|m| m.probability);
        if wants(|c| matches!(c, Check::MaxLoss1In100(_))) {
            let seed = u64::try_from(c.id).unwrap_or(0);
            let t = app
                .computations()
                .run(caller.key_id, move || {
                    let paths = rating::predict::tail_paths(&profile, 12);
                    rating::predict::tail_risk(&profile, 12, paths, seed)
                })
                .await?;
            loss_1_in_100 = Some(t.var99_usd);
        }
    }
    let now = time::OffsetDateTime::now_utc();
    let facts = rating::guidelines::Facts {
        score: latest.score.as_f64(),
        grade: latest.grade,
        components: &components,
        findings: &findings,
        kev: &kev,
        incidents: &incidents,
        incident_probability,
        loss_1_in_100,
        full_depth: !latest.quick,
        rated_at: latest.scanned_at.0,
        now,
    };
    let e = rating::guidelines::evaluate(&guidelines, &facts);
    Ok(Json(EvaluationOut {
        social_id: c.social_id.to_string(),
        company_name: c.company_name.clone(),
        outcome: e.outcome.to_owned(),
        guideline_version: kept.version,
        evaluated_at: model::timefmt::rfc3339(now),
        score: latest.score.as_f64(),
        grade: latest.grade.as_str().to_owned(),
        rules: e
            .rules
            .iter()
            .map(|r| RuleOutcomeOut {
                id: r.id.clone(),
                kind: r.kind.to_owned(),
                action: r.action.as_str().to_owned(),
                outcome: r.outcome.to_owned(),
                observed: r.observed.clone(),
                note: r.note.clone(),
                findings: r.findings.iter().map(|i| FindingOut::from(&findings[*i])).collect(),
            })
            .collect(),
    }))
}
