//! A company's loss predictions (docs/PREDICTIONS.md): incidents, data loss and tail
//! risk over a period, each with what fixing each finding would do and why. Like the
//! other company resources ([`super::company`]), one handler serves the Underwriter's
//! operation (the company `social_id` names) and the Monitor's (the key's own company).

use axum::extract::State;
use axum::response::Response;
use model::Company;

use super::{Subject, Whose};
use crate::error::{ApiError, CommonErrors};
use crate::params::{CompanyQuery, PeriodQuery};
use crate::responses::*;
use crate::{AppState, Caller};

/// What the model knows of the company (docs/PREDICTIONS.md), for the period asked for.
pub(crate) async fn profile(
    app: &AppState,
    c: Company,
    period: u32,
) -> Result<(Company, rating::predict::Profile, u32), ApiError> {
    let incidents = app.store().incidents_for_company(c.id).await?;
    let exposures = exposures(app, c.id).await?;
    let today = time::OffsetDateTime::now_utc().date();
    let profile = rating::predict::Profile::of_company(&c, &incidents, exposures, today);
    Ok((c, profile, period))
}

/// The company's open findings that an exposure factor reads (not those an accepted
/// compensating control leaves without weight).
async fn exposures(app: &AppState, company: i64) -> Result<Vec<rating::exposure::Exposed>, ApiError> {
    Ok(app
        .store()
        .open_findings(company)
        .await?
        .into_iter()
        .filter(|f| !f.no_weight)
        .map(|f| rating::exposure::Exposed {
            finding_id: f.id,
            critical: f.severity == model::Severity::Critical,
            code: f.code,
            asset: f.asset,
        })
        .filter(|e| rating::exposure::factor_of(e).is_some())
        .collect())
}

fn inputs(profile: &rating::predict::Profile) -> PredictionInputs {
    PredictionInputs::new(profile, &rating::predict::frequency(profile))
}

/// The most findings a tail-risk answer works out a "what if" for.
const TAIL_WHAT_IFS: usize = 10;

/// For each finding that triggers an exposure factor, the prediction's figure at the end
/// of the period with that finding fixed (`at_period` computes it from a profile), how
/// much it moves and why.
fn what_if(
    profile: &rating::predict::Profile,
    limit: usize,
    figure: rating::predict::Figure,
    at_period: impl Fn(&rating::predict::Profile) -> f64,
) -> Vec<WhatIfOut> {
    let before = rating::predict::frequency(profile);
    let now = at_period(profile);
    profile
        .exposures
        .iter()
        .take(limit)
        .map(|e| {
            let fixed = profile.without_finding(e.finding_id);
            let after = rating::predict::frequency(&fixed);
            let value = at_period(&fixed);
            WhatIfOut {
                finding_id: e.finding_id,
                code: e.code.clone(),
                asset: e.asset.clone(),
                annual_event_rate: after.lambda,
                at_period: value,
                change: value - now,
                why: rating::predict::explain_fix(&before, &after, figure, now, value),
            }
        })
        .collect()
}

const METHOD: &str = rating::predict::PREDICTION_METHODOLOGY;

async fn incident_prediction(app: &AppState, c: Company, period: u32) -> Result<IncidentPrediction, ApiError> {
    let (c, profile, period) = profile(app, c, period).await?;
    let inputs = inputs(&profile);
    let data = rating::predict::incident_prediction(&profile, period)
        .into_iter()
        .map(|m| IncidentMonthOut {
            month: m.month,
            horizon_months: m.month,
            probability: m.probability,
            expected_incidents: m.expected_incidents,
            units: INCIDENT_UNITS.into(),
            inputs: inputs.clone(),
            methodology: METHOD.into(),
        })
        .collect();
    let what_if = what_if(&profile, usize::MAX, rating::predict::Figure::IncidentProbability, |p| {
        rating::predict::incident_prediction(p, period).last().map_or(0.0, |m| m.probability)
    });
    Ok(IncidentPrediction { social_id: c.social_id.to_string(), period, data, what_if, message: None })
}

async fn data_loss_prediction(app: &AppState, c: Company, period: u32) -> Result<DataLossPrediction, ApiError> {
    let (c, profile, period) = profile(app, c, period).await?;
    let inputs = inputs(&profile);
    let data = rating::predict::data_loss_prediction(&profile, period)
        .into_iter()
        .map(|m| DataLossMonthOut {
            month: m.month,
            horizon_months: m.month,
            breach_probability: m.breach_probability,
            expected_records: m.expected_records,
            units: DATA_LOSS_UNITS.into(),
            inputs: inputs.clone(),
            methodology: METHOD.into(),
        })
        .collect();
    let what_if = what_if(&profile, usize::MAX, rating::predict::Figure::BreachProbability, |p| {
        rating::predict::data_loss_prediction(p, period).last().map_or(0.0, |m| m.breach_probability)
    });
    Ok(DataLossPrediction { social_id: c.social_id.to_string(), period, data, what_if, message: None })
}

/// The tail-risk answer: the simulation runs off the runtime within the bounds of
/// [`crate::compute`] (per calling key and in all); its what-ifs are the closed-form
/// expected loss with each finding fixed (no simulation).
async fn tail_risk_prediction(
    app: &AppState,
    caller: &Caller,
    c: Company,
    period: u32,
) -> Result<TailRiskPrediction, ApiError> {
    let (c, profile, period) = profile(app, c, period).await?;
    // Seeded by the company: the same inputs give the same answer.
    let seed = u64::try_from(c.id).unwrap_or(0);
    let simulated = profile.clone();
    let t = app
        .computations()
        .run(caller.key_id, move || {
            let paths = rating::predict::tail_paths(&simulated, period);
            rating::predict::tail_risk(&simulated, period, paths, seed)
        })
        .await?;
    let data = vec![TailRiskOut {
        horizon_months: t.months,
        probability_of_loss: t.probability_of_loss,
        expected_loss_usd: t.expected_loss_usd,
        var95_usd: t.var95_usd,
        var99_usd: t.var99_usd,
        tvar95_usd: t.tvar95_usd,
        loss_given_event_p50_usd: t.loss_given_event_p50_usd,
        loss_given_event_p95_usd: t.loss_given_event_p95_usd,
        exceedance: t
            .exceedance
            .iter()
            .map(|&(threshold_usd, probability)| ExceedanceOut { threshold_usd, probability })
            .collect(),
        cap_per_event_usd: t.cap_per_event_usd,
        paths: t.paths,
        seed: t.seed,
        units: TAIL_RISK_UNITS.into(),
        inputs: inputs(&profile),
        methodology: METHOD.into(),
    }];
    let what_if = what_if(&profile, TAIL_WHAT_IFS, rating::predict::Figure::ExpectedLoss, |p| {
        rating::predict::expected_loss(p, period)
    });
    Ok(TailRiskPrediction { social_id: c.social_id.to_string(), period, data, what_if, message: None })
}

/// The key of a prediction's kept answer: its inputs as parsed (`?period=06`, `?period=6`
/// and no period are one answer), not the query as written.
fn period_key(period: u32) -> String {
    period.to_string()
}

/// Tail-risk (large-loss) estimation over `period` months.
#[utoipa::path(get, path = "/underwriter-get-tail-risk-estimation", operation_id = "underwriter-get-tail-risk-estimation", tag = "Underwriter",
    params(CompanyQuery, PeriodQuery),
    responses((status = 200, description = "Tail-risk estimation", body = TailRiskPrediction), CommonErrors))]
pub async fn get_tail_risk_estimation<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, caller, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let period = p.period()?;
    super::company_answer(
        app.clone(),
        c.id,
        "predictions::get_tail_risk_estimation",
        period_key(period),
        async move || tail_risk_prediction(&app, &caller, c, period).await,
    )
    .await
}

/// Data-loss prediction over `period` months.
#[utoipa::path(get, path = "/underwriter-get-data-loss-prediction", operation_id = "underwriter-get-data-loss-prediction", tag = "Underwriter",
    params(CompanyQuery, PeriodQuery),
    responses((status = 200, description = "Data-loss prediction", body = DataLossPrediction), CommonErrors))]
pub async fn get_data_loss_prediction<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let period = p.period()?;
    super::company_answer(
        app.clone(),
        c.id,
        "predictions::get_data_loss_prediction",
        period_key(period),
        async move || data_loss_prediction(&app, c, period).await,
    )
    .await
}

/// Incident prediction over `period` months.
#[utoipa::path(get, path = "/underwriter-get-incident-prediction", operation_id = "underwriter-get-incident-prediction", tag = "Underwriter",
    params(CompanyQuery, PeriodQuery),
    responses((status = 200, description = "Incident prediction", body = IncidentPrediction), CommonErrors))]
pub async fn get_incident_prediction<W: Whose>(
    State(app): State<AppState>,
    Subject { company: c, params: p, .. }: Subject<W>,
) -> Result<Response, ApiError> {
    let period = p.period()?;
    super::company_answer(
        app.clone(),
        c.id,
        "predictions::get_incident_prediction",
        period_key(period),
        async move || incident_prediction(&app, c, period).await,
    )
    .await
}
