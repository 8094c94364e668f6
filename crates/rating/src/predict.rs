//! Predictions: incident frequency, data loss and tail risk for one company, the
//! FAIR-style model of docs/PREDICTIONS.md (frequency × magnitude, aggregated by Monte
//! Carlo). Every parameter below carries its source there; the row numbers refer to the
//! table of published figures in ../shared/MODEL-NOTES.md.

use serde::Serialize;

/// The version of the prediction model; every prediction item names it. 2026.11.1 is
/// the recalibration of docs/PREDICTIONS.md ("Calibration"): negative-binomial counts in
/// the Monte Carlo, severity by firm size for every event, a one-year-revenue cap.
/// 2026.12 computes the tail risk's closed forms exactly (P(any loss), the expected loss
/// and its what-ifs, one event's percentiles) and simulates only paths with an event
/// (docs/PREDICTIONS.md, "Tail risk"): the same model, other figures within its error.
pub const PREDICTION_METHODOLOGY: &str = "2026.12";

/// Base annual rate of a loss event for a $1B-revenue firm: fitted so that the Fortune
/// 1000 cohort averages 25 % a year (row 1) with the overdispersion below; it keeps the
/// $5M firm under 2 % (row 1) and the $100M firm in 2.18–12.95 % (row 3).
pub const LAMBDA_0: f64 = 0.175;
/// Size elasticity of the rate (rows 1 and 3).
pub const BETA: f64 = 0.43;
/// Score effect per point (row 14: F vs A ≈ 4–14×).
pub const GAMMA: f64 = 0.045;
/// The cohort's mean score and spread (the score multiplier is normalised over it).
pub const COHORT_MEAN: f64 = 80.0;
pub const COHORT_SD: f64 = 12.0;
/// Overdispersion of the event count (negative binomial shape κ, a gamma frailty between
/// firms): with the 25 % a year of row 1 it gives the "over 60 % of the Fortune 1000 in a
/// decade" of the same study (IRIS 20/20; a Poisson count would give 86 %).
pub const OVERDISPERSION_K: f64 = 0.4;
/// P(a data breach | an incident) (row 12: 35–55 %).
pub const P_BREACH: f64 = crate::exposure::BREACH_SHARE;
/// Records per breach: ln R ~ N(μ, σ) with log10 mean 3.5 and log10 sd 1.2 (row 11).
pub const RECORDS_MU: f64 = 3.5 * std::f64::consts::LN_10;
pub const RECORDS_SIGMA: f64 = 1.2 * std::f64::consts::LN_10;
/// Revenue per employee used when revenue is unknown (US private-sector average, order
/// of magnitude).
pub const REVENUE_PER_EMPLOYEE: f64 = 250_000.0;
/// The typical (median) loss of one event for a $100B-revenue firm, and its elasticity
/// to revenue (row 5: $292K at $100B; with 0.18 a firm of $100K revenue typically loses
/// about a quarter of its revenue, the other end of the same IRIS 20/20 finding).
pub const LOSS_MEDIAN_AT_100B: f64 = 292_000.0;
pub const LOSS_SIZE_EXPONENT: f64 = 0.18;
/// The spread of ln(loss) of one event (row 5: median $200K with 10 % above $20M gives
/// ln 100 / 1.2816 = 3.59; the Fortune 250's event 95th percentile ≈ $100M gives 3.6).
pub const LOSS_SIGMA: f64 = 3.6;
/// Elasticity of a breach's loss to its records (row 9: ln E[L] = 8.19 + 0.424 ln R).
pub const BREACH_RECORDS_ELASTICITY: f64 = 0.424;
/// The largest loss one event may cause, as a fraction of annual revenue (an assumption:
/// row 5's typical event of a very small firm is already about a quarter of its revenue,
/// so a smaller cap would cut typical events; a loss beyond a year's revenue exceeds what
/// a firm can bear).
pub const CAP_REVENUE_FRACTION: f64 = 1.0;

/// What the model knows of the company.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// Annual revenue in US dollars (or the employee-based proxy).
    pub revenue_usd: f64,
    /// How `revenue_usd` was obtained.
    pub revenue_basis: String,
    /// NAICS code, when known (its first two digits choose the industry multiplier).
    pub naics: Option<u32>,
    /// The company's global score, 0–100 (none: the cohort mean is used).
    pub score: Option<f64>,
    /// Ages of the company's public incidents, in months before now.
    pub incident_ages_months: Vec<f64>,
    /// The open findings the exposure factors read (`crate::exposure`).
    pub exposures: Vec<crate::exposure::Exposed>,
}

impl Profile {
    /// What the model knows of a company on `today`: revenue from its employee band (a
    /// 50-employee firm when it has none), its NAICS code, its global score and the ages
    /// of its public incidents (those with a detection date).
    pub fn of_company(
        c: &model::Company,
        incidents: &[model::Incident],
        exposures: Vec<crate::exposure::Exposed>,
        today: time::Date,
    ) -> Profile {
        let incident_ages_months = incidents
            .iter()
            .filter_map(|i| i.date_detected.map(|d| (today - d.0).whole_days().max(0) as f64 / 30.44))
            .collect();
        let (revenue_usd, revenue_basis) = match Profile::from_employees(&c.employees_number) {
            Some(e) => (e * REVENUE_PER_EMPLOYEE, format!("{} employees × $250,000", e.round())),
            None => (50.0 * REVENUE_PER_EMPLOYEE, "size unknown: a 50-employee firm assumed".to_owned()),
        };
        Profile {
            revenue_usd,
            revenue_basis,
            naics: c.naics_code.and_then(|n| u32::try_from(n).ok()),
            score: c.score.map(|s| s.as_f64()),
            incident_ages_months,
            exposures,
        }
    }

    /// The same company with one finding fixed (the "what if" of a prediction).
    pub fn without_finding(&self, finding_id: i64) -> Profile {
        Profile {
            exposures: self.exposures.iter().filter(|e| e.finding_id != finding_id).cloned().collect(),
            ..self.clone()
        }
    }

    /// A profile from an employee-count band such as "51-200 employees" or "10,001+".
    pub fn from_employees(band: &str) -> Option<f64> {
        let digits: Vec<f64> = band
            .split(|c: char| !c.is_ascii_digit() && c != ',')
            .filter_map(|s| s.replace(',', "").parse::<f64>().ok())
            .collect();
        match digits.as_slice() {
            [lo, hi, ..] if hi >= lo => Some((lo * hi).sqrt()),
            [one] | [one, ..] => Some(*one),
            _ => None,
        }
    }
}

/// The annual rate of loss events and its factors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frequency {
    pub base: f64,
    pub size_factor: f64,
    pub industry_factor: f64,
    pub score_factor: f64,
    pub history_factor: f64,
    /// The product of the exposure factors applied (capped).
    pub exposure_factor: f64,
    /// The exposure factors applied, with the findings that triggered them.
    pub exposure: Vec<crate::exposure::Applied>,
    /// The share of events that are data breaches (π_b), as the exposures move it.
    pub breach_share: crate::exposure::BreachShare,
    /// Loss events per year.
    pub lambda: f64,
}

/// The two-digit NAICS sector of a code of any length (333998 → 33).
fn naics_sector(code: u32) -> u32 {
    let mut sector = code;
    while sector >= 100 {
        sector /= 10;
    }
    sector
}

/// The industry multiplier by NAICS sector (row 4: government, information, finance and
/// education highest; construction, agriculture and mining lowest; the published
/// multipliers were not retrieved, so the spread is a documented assumption).
pub fn industry_factor(naics: Option<u32>) -> f64 {
    let Some(sector) = naics.map(naics_sector) else { return 1.0 };
    match sector {
        92 | 51 | 52 | 61 => 2.0,
        62 => 1.5,
        44 | 45 | 54 | 56 => 1.2,
        23 | 11 | 21 => 0.3,
        _ => 1.0,
    }
}

/// The industry multiplier of one event's loss: √10 ≈ 3.16 for retail (NAICS 44–45) and
/// information (51), else 1. IRIS 20/20 (the study of rows 1, 4 and 5; its published
/// summary, not a row of the table) finds that these two sectors "show abnormally high
/// losses that exceed many other sectors by a factor of 10". The all-sector median of
/// row 5 already contains them and "many other sectors" is not all of them, so the
/// multiplier is the geometric middle of 1 and 10 (an assumption).
pub fn severity_factor(naics: Option<u32>) -> f64 {
    let Some(sector) = naics.map(naics_sector) else { return 1.0 };
    match sector {
        44 | 45 | 51 => 10f64.sqrt(),
        _ => 1.0,
    }
}

/// The median loss of one event that is not a breach, in US dollars:
/// `$292K · (Revenue / $100B)^0.18 · severity_factor` (row 5).
pub fn event_loss_median(revenue_usd: f64, naics: Option<u32>) -> f64 {
    LOSS_MEDIAN_AT_100B * (usable_revenue(revenue_usd) / 1e11).powf(LOSS_SIZE_EXPONENT) * severity_factor(naics)
}

/// The spread of a breach's ln(loss) once its records are known: the records explain
/// `b · σ_R` of the event spread `LOSS_SIGMA`, the rest is `√(σ² − b² σ_R²)` ≈ 3.40.
pub fn breach_residual_sigma() -> f64 {
    (LOSS_SIGMA * LOSS_SIGMA - (BREACH_RECORDS_ELASTICITY * RECORDS_SIGMA).powi(2)).sqrt()
}

/// The mean of ln(loss) of a breach of `records` records:
/// `ln median + b (ln records − μ_R)` (rows 5 and 9): a breach of the median size costs
/// the typical event of the firm's size.
pub fn breach_log_loss_mean(revenue_usd: f64, naics: Option<u32>, records: f64) -> f64 {
    event_loss_median(revenue_usd, naics).ln() + BREACH_RECORDS_ELASTICITY * (records.max(1.0).ln() - RECORDS_MU)
}

/// P(one breach of `records` records costs at least `threshold` US dollars), before the
/// cap (compare with row 6).
pub fn breach_loss_exceedance(revenue_usd: f64, naics: Option<u32>, records: f64, threshold: f64) -> f64 {
    1.0 - phi((threshold.ln() - breach_log_loss_mean(revenue_usd, naics, records)) / breach_residual_sigma())
}

fn usable_revenue(revenue_usd: f64) -> f64 {
    if revenue_usd.is_finite() && revenue_usd > 0.0 { revenue_usd } else { 1e6 }
}

/// The score multiplier `exp(−γ(s − s̄)) / E[exp(−γ(S − s̄))]`, capped to [0.25, 5]; the
/// cohort S ~ N(s̄, sd) gives `E = exp(γ² sd² / 2)`.
pub fn score_factor(score: Option<f64>) -> f64 {
    let s = score.unwrap_or(COHORT_MEAN).clamp(0.0, 100.0);
    let norm = (GAMMA * GAMMA * COHORT_SD * COHORT_SD / 2.0).exp();
    ((-GAMMA * (s - COHORT_MEAN)).exp() / norm).clamp(0.25, 5.0)
}

/// A public incident raises the rate, decaying with a one-year time constant: `1 + Σ
/// exp(−age / 12)`, at most 4.
pub fn history_factor(ages_months: &[f64]) -> f64 {
    let extra: f64 = ages_months.iter().filter(|a| a.is_finite()).map(|a| (-a.max(0.0) / 12.0).exp()).sum();
    (1.0 + extra).min(4.0)
}

pub fn frequency(p: &Profile) -> Frequency {
    let revenue = usable_revenue(p.revenue_usd);
    let size_factor = (revenue / 1e9).powf(BETA);
    let industry = industry_factor(p.naics);
    let score = score_factor(p.score);
    let history = history_factor(&p.incident_ages_months);
    let exposure = crate::exposure::applied(&p.exposures);
    let exposure_factor = crate::exposure::combined(&exposure);
    let breach_share = crate::exposure::breach_share(&exposure);
    Frequency {
        base: LAMBDA_0,
        size_factor,
        industry_factor: industry,
        score_factor: score,
        history_factor: history,
        exposure_factor,
        exposure,
        breach_share,
        lambda: LAMBDA_0 * size_factor * industry * score * history * exposure_factor,
    }
}

/// The approximate revenue of the Fortune 1000 firm of rank `rank` (clamped to 1–1000),
/// in US dollars: log-linear in ln(rank) between rounded anchors from the 2024 Fortune 500
/// and Fortune 1000 lists (#1 $648B, #10 $262B, #100 $46B, #500 $7.4B, #1000 $2.4B). An
/// assumption for the cohort checks of rows 1 and 5, which are statistics over the
/// Fortune 1000 (or 250), not figures for one firm.
pub fn fortune_1000_revenue(rank: u32) -> f64 {
    const ANCHORS: [(f64, f64); 5] = [(1.0, 648e9), (10.0, 262e9), (100.0, 46e9), (500.0, 7.4e9), (1000.0, 2.4e9)];
    let r = f64::from(rank.clamp(1, 1000));
    let i = ANCHORS.windows(2).position(|w| r <= w[1].0).unwrap_or(ANCHORS.len() - 2);
    let ((r0, v0), (r1, v1)) = (ANCHORS[i], ANCHORS[i + 1]);
    let t = (r.ln() - r0.ln()) / (r1.ln() - r0.ln());
    (v0.ln() + t * (v1.ln() - v0.ln())).exp()
}

/// The scores of the rated cohort, N(80, 12²), as a five-point Gauss–Hermite rule:
/// (score, weight), the weights summing to 1.
pub const COHORT_SCORES: [(f64, f64); 5] = [
    (COHORT_MEAN, 8.0 / 15.0),
    (COHORT_MEAN - 1.355_626_179_974_266 * COHORT_SD, 0.222_075_922_005_612_66),
    (COHORT_MEAN + 1.355_626_179_974_266 * COHORT_SD, 0.222_075_922_005_612_66),
    (COHORT_MEAN - 2.856_970_013_872_806 * COHORT_SD, 0.011_257_411_327_720_69),
    (COHORT_MEAN + 2.856_970_013_872_806 * COHORT_SD, 0.011_257_411_327_720_69),
];

/// A Fortune cohort for the published checks: each rank of `ranks` with each score of
/// `COHORT_SCORES` (no industry, no incident history), as (profile, weight) with the
/// weights summing to 1. A cohort statistic is the weighted sum over it.
pub fn fortune_cohort(ranks: &[u32]) -> Vec<(Profile, f64)> {
    let n = ranks.len().max(1) as f64;
    ranks
        .iter()
        .flat_map(|&rank| {
            COHORT_SCORES.iter().map(move |&(score, w)| {
                let p = Profile {
                    revenue_usd: fortune_1000_revenue(rank),
                    revenue_basis: format!("Fortune rank {rank} (approximate revenue)"),
                    naics: None,
                    score: Some(score),
                    incident_ages_months: Vec::new(),
                    exposures: Vec::new(),
                };
                (p, w / n)
            })
        })
        .collect()
}

/// One month of the incident prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncidentMonth {
    pub month: u32,
    /// P(at least one incident within the first `month` months), negative binomial.
    pub probability: f64,
    /// Expected incidents within the first `month` months.
    pub expected_incidents: f64,
}

pub fn incident_prediction(p: &Profile, period: u32) -> Vec<IncidentMonth> {
    let f = frequency(p);
    (1..=period)
        .map(|m| {
            let mean = f.lambda * f64::from(m) / 12.0;
            IncidentMonth {
                month: m,
                probability: 1.0 - (1.0 + mean / OVERDISPERSION_K).powf(-OVERDISPERSION_K),
                expected_incidents: mean,
            }
        })
        .collect()
}

/// One month of the data-loss prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataLossMonth {
    pub month: u32,
    /// P(at least one data breach within the first `month` months).
    pub breach_probability: f64,
    /// Expected records lost within the first `month` months.
    pub expected_records: f64,
}

/// The records a company of this size plausibly holds: one per $10 of revenue, at
/// least 10,000 (the truncation point of the records-per-breach distribution).
pub fn records_held(revenue_usd: f64) -> f64 {
    (revenue_usd / 10.0).max(10_000.0)
}

/// E[min(R, H)] for ln R ~ N(μ, σ).
pub fn truncated_lognormal_mean(mu: f64, sigma: f64, h: f64) -> f64 {
    let lh = h.ln();
    (mu + sigma * sigma / 2.0).exp() * phi((lh - mu - sigma * sigma) / sigma) + h * (1.0 - phi((lh - mu) / sigma))
}

pub fn data_loss_prediction(p: &Profile, period: u32) -> Vec<DataLossMonth> {
    let f = frequency(p);
    let per_breach = truncated_lognormal_mean(RECORDS_MU, RECORDS_SIGMA, records_held(p.revenue_usd));
    (1..=period)
        .map(|m| {
            // Breaches are the events thinned by π_b: negative binomial with the same κ.
            let breaches = f.lambda * f.breach_share.share * f64::from(m) / 12.0;
            DataLossMonth {
                month: m,
                breach_probability: 1.0 - (1.0 + breaches / OVERDISPERSION_K).powf(-OVERDISPERSION_K),
                expected_records: breaches * per_breach,
            }
        })
        .collect()
}

/// The aggregate loss over the horizon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TailRisk {
    pub months: u32,
    /// Paths simulated, each with at least two events (horizons with none or one event
    /// are in closed form).
    pub paths: u32,
    pub seed: u64,
    /// P(at least one loss event in the horizon), exact (the incident prediction's).
    pub probability_of_loss: f64,
    /// E[aggregate loss], exact: events expected × the mean capped loss of one event.
    pub expected_loss_usd: f64,
    pub var95_usd: f64,
    pub var99_usd: f64,
    pub tvar95_usd: f64,
    /// The 50th and 95th percentiles of one event's loss (useful when VaR is 0), exact.
    pub loss_given_event_p50_usd: f64,
    pub loss_given_event_p95_usd: f64,
    /// (threshold, P(aggregate loss ≥ threshold)).
    pub exceedance: Vec<(f64, f64)>,
    /// The largest loss one event may cause: one year's revenue (`CAP_REVENUE_FRACTION`).
    pub cap_per_event_usd: f64,
}

/// Thresholds whose exceedance probability is reported.
pub const THRESHOLDS: [f64; 5] = [1e5, 1e6, 1e7, 1e8, 1e9];

/// Paths a tail-risk answer simulates at most ([`tail_paths`]).
pub const TAIL_PATHS: u32 = 20_000;
/// Events an answer's paths draw at most in all: a simulation costs about its events, so
/// a company with many events per path gets fewer paths (each of them less variable).
pub const TAIL_EVENTS: f64 = 150_000.0;
/// The fewest paths an answer simulates, whatever its events (a firm with every factor
/// against it, λ ≈ 80 a year, over 60 months: 500 paths of about 400 events each).
pub const TAIL_MIN_PATHS: u32 = 500;

/// The paths of a tail-risk answer for `p` over `months`: [`TAIL_PATHS`], fewer when
/// their events would pass [`TAIL_EVENTS`] (never under [`TAIL_MIN_PATHS`]).
pub fn tail_paths(p: &Profile, months: u32) -> u32 {
    let mean = frequency(p).lambda * f64::from(months) / 12.0;
    let counts = NegativeBinomial::new(mean, OVERDISPERSION_K);
    let (one, more) = (counts.below(2) - counts.below(1), 1.0 - counts.below(2));
    if !(more > 0.0 && mean.is_finite()) {
        return TAIL_PATHS;
    }
    // E[N | N ≥ 2]: the events of a simulated path.
    let per_path = ((mean - one) / more).max(2.0);
    (TAIL_EVENTS / per_path).clamp(f64::from(TAIL_MIN_PATHS), f64::from(TAIL_PATHS)) as u32
}

/// The expected aggregate loss over `months` (exact): the events expected, λ·months/12,
/// times the mean capped loss of one event. Linear in the rate and in the breach share,
/// so a "what if" costs no simulation.
pub fn expected_loss(p: &Profile, months: u32) -> f64 {
    let f = frequency(p);
    f.lambda * f64::from(months) / 12.0 * Severity::of(p, &f).mean()
}

/// The loss of one event: non-breach (probability 1 − π_b) with ln X ~ N(ln m, σ²), or a
/// breach with ln X = ln m + b (ln R' − μ_R) + ε, ε ~ N(0, σ_ε²), the records
/// ln R' = ln R clamped to [0, ln H] (at least one record, at most what the firm holds);
/// every loss capped at `cap` (rows 5, 9, 11).
struct Severity {
    ln_m: f64,
    breach: f64,
    residual: f64,
    ln_held: f64,
    cap: f64,
    ln_cap: f64,
    /// The law of ln R' as (value, probability) nodes: the two clamped ends as point
    /// masses, the normal density between them by Simpson's rule ([`record_nodes`]).
    records: Vec<(f64, f64)>,
}

/// The nodes of [`Severity::records`] for records held up to e^`hi`.
fn record_nodes(hi: f64) -> Vec<(f64, f64)> {
    let (mu, s) = (RECORDS_MU, RECORDS_SIGMA);
    let mut nodes = vec![(0.0, phi(-mu / s)), (hi, 1.0 - phi((hi - mu) / s))];
    let h = hi / RECORD_STEPS as f64;
    let scale = h / 3.0 / (s * std::f64::consts::TAU.sqrt());
    for i in 0..=RECORD_STEPS {
        let w = h * i as f64;
        let simpson = if i == 0 || i == RECORD_STEPS {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let z = (w - mu) / s;
        nodes.push((w, simpson * scale * (-0.5 * z * z).exp()));
    }
    nodes
}

/// Simpson intervals of the integrals over a breach's records (even; the integrand is
/// smooth and the interval at most ~30 wide against σ_R = 2.76, so the rule's error is
/// far below the normal function's 1.5e-7).
const RECORD_STEPS: usize = 128;

impl Severity {
    fn of(p: &Profile, f: &Frequency) -> Severity {
        let revenue = usable_revenue(p.revenue_usd);
        let cap = CAP_REVENUE_FRACTION * revenue;
        let ln_held = records_held(revenue).ln();
        Severity {
            ln_m: event_loss_median(revenue, p.naics).ln(),
            breach: f.breach_share.share,
            residual: breach_residual_sigma(),
            ln_held,
            cap,
            ln_cap: cap.ln(),
            records: record_nodes(ln_held),
        }
    }

    /// E[g(ln R')] over a breach's records.
    fn over_records(&self, g: impl Fn(f64) -> f64) -> f64 {
        self.records.iter().map(|(w, p)| p * g(*w)).sum()
    }

    /// The centre of ln X for a breach with ln R' = `w`.
    fn breach_centre(&self, w: f64) -> f64 {
        self.ln_m + BREACH_RECORDS_ELASTICITY * (w - RECORDS_MU)
    }

    /// E[min(X, cap)].
    fn mean(&self) -> f64 {
        let other = truncated_lognormal_mean(self.ln_m, LOSS_SIGMA, self.cap);
        let breach = self.over_records(|w| truncated_lognormal_mean(self.breach_centre(w), self.residual, self.cap));
        (1.0 - self.breach) * other + self.breach * breach
    }

    /// E[min(X, v)] for 0 < v ≤ cap (the capped mean below `v`).
    fn mean_below(&self, v: f64) -> f64 {
        let other = truncated_lognormal_mean(self.ln_m, LOSS_SIGMA, v);
        let breach = self.over_records(|w| truncated_lognormal_mean(self.breach_centre(w), self.residual, v));
        (1.0 - self.breach) * other + self.breach * breach
    }

    /// E[(min(X, cap) − v)⁺], the mean excess over `v ≥ 0`.
    fn excess(&self, v: f64) -> f64 {
        if v >= self.cap {
            return 0.0;
        }
        if v <= 0.0 {
            return self.mean() - v;
        }
        (self.mean() - self.mean_below(v)).max(0.0)
    }

    /// P(X < x) of the loss before the cap (continuous): for 0 < x ≤ cap, P(min(X, cap) < x).
    fn uncapped_below(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        let lx = x.ln();
        let other = phi((lx - self.ln_m) / LOSS_SIGMA);
        let breach = self.over_records(|w| phi((lx - self.breach_centre(w)) / self.residual));
        (1.0 - self.breach) * other + self.breach * breach
    }

    /// P(min(X, cap) ≤ x).
    fn cdf(&self, x: f64) -> f64 {
        if x >= self.cap { 1.0 } else { self.uncapped_below(x) }
    }

    /// P(min(X, cap) ≥ x).
    fn at_least(&self, x: f64) -> f64 {
        if x > self.cap { 0.0 } else { 1.0 - self.uncapped_below(x) }
    }

    /// The smallest loss whose distribution function reaches `q` (bisection on ln x):
    /// the cap when the capped mass is more than 1 − q.
    fn quantile(&self, q: f64) -> f64 {
        if self.cdf(self.cap * (1.0 - 1e-12)) < q {
            return self.cap;
        }
        let (mut lo, mut hi) = (self.ln_m - 80.0, self.ln_cap);
        for _ in 0..56 {
            let mid = 0.5 * (lo + hi);
            if self.cdf(mid.exp()) < q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi.exp()
    }

    fn sample(&self, rng: &mut Rng) -> f64 {
        let ln_x = if rng.uniform() < self.breach {
            let w = (RECORDS_MU + RECORDS_SIGMA * rng.normal()).clamp(0.0, self.ln_held);
            self.breach_centre(w) + self.residual * rng.normal()
        } else {
            self.ln_m + LOSS_SIGMA * rng.normal()
        };
        if ln_x >= self.ln_cap { self.cap } else { ln_x.exp() }
    }
}

/// The aggregate losses of `paths` paths, each with at least `least` events: the count is
/// drawn from the negative binomial given N ≥ `least`, stratified (path i takes its
/// uniform from the i-th of `paths` equal slices of (P(N < least), 1)), each event from
/// `severity`.
fn totals_from(counts: &NegativeBinomial, least: usize, severity: &Severity, paths: u32, rng: &mut Rng) -> Vec<f64> {
    let below = counts.below(least);
    let n = f64::from(paths.max(1));
    (0..paths)
        .map(|i| {
            let u = below + (1.0 - below) * ((f64::from(i) + rng.uniform()) / n);
            (0..counts.sample(u).max(least as u32)).map(|_| severity.sample(rng)).sum()
        })
        .collect()
}

/// The law of the aggregate loss S over the horizon, by the count of events: none (S = 0,
/// probability `none`), one (S is one event's loss, `one`, in closed form) or more (`more`,
/// from the simulated `totals`, sorted).
struct Aggregate<'a> {
    none: f64,
    one: f64,
    more: f64,
    severity: &'a Severity,
    totals: Vec<f64>,
}

impl Aggregate<'_> {
    fn share(&self, count: usize) -> f64 {
        if self.totals.is_empty() { 0.0 } else { count as f64 / self.totals.len() as f64 }
    }

    /// P(S ≤ t).
    fn at_most(&self, t: f64) -> f64 {
        if t < 0.0 {
            return 0.0;
        }
        self.none + self.one * self.severity.cdf(t) + self.more * self.share(self.totals.partition_point(|x| *x <= t))
    }

    /// P(S ≥ t), t > 0.
    fn at_least(&self, t: f64) -> f64 {
        let beyond = self.totals.len() - self.totals.partition_point(|x| *x < t);
        self.one * self.severity.at_least(t) + self.more * self.share(beyond)
    }

    /// The q-quantile, inf { t : P(S ≤ t) ≥ q } (bisection on ln t).
    fn quantile(&self, q: f64) -> f64 {
        if self.at_most(0.0) >= q {
            return 0.0;
        }
        let top = self.totals.last().copied().unwrap_or(0.0).max(self.severity.cap);
        let (mut lo, mut hi) = (self.severity.ln_m - 80.0, top.ln());
        for _ in 0..56 {
            let mid = 0.5 * (lo + hi);
            if self.at_most(mid.exp()) < q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // The value reached: the step of the simulated part or the cap it lands on.
        let t = hi.exp();
        let step = self.totals.partition_point(|x| *x < t * (1.0 - 1e-9));
        match self.totals.get(step) {
            Some(x) if (x - t).abs() <= t * 1e-9 => *x,
            _ if (t - self.severity.cap).abs() <= self.severity.cap * 1e-9 => self.severity.cap,
            _ => t,
        }
    }

    /// E[(S − v)⁺].
    fn excess(&self, v: f64) -> f64 {
        let simulated = self.totals.iter().map(|x| (x - v).max(0.0)).sum::<f64>();
        self.one * self.severity.excess(v) + self.more * simulated / self.totals.len().max(1) as f64
    }
}

/// The tail risk of the aggregate loss over `months`, from `paths` simulated paths and
/// `seed` (results identical for the same inputs; [`tail_paths`] is the answer's count).
///
/// The count of events is negative binomial (mean λ·months/12, shape κ), the law of
/// `incident_prediction`; each event is a breach with probability π_b, its loss
/// lognormal around the firm's typical event (`event_loss_median`), a breach's shifted
/// by its records; each loss is capped. What has a closed form is computed exactly: P(any
/// loss), the expected loss, the percentiles of one event's loss, and the whole law of a
/// horizon with one event (its loss is one event's). Only horizons with two events or
/// more are simulated, each path with at least two, and weighted by their probability:
/// P(S ≤ t) = P(N = 0) + P(N = 1) F_X(t) + P(N ≥ 2) F̂₂(t); VaR is its inverse,
/// TVaR_q = VaR_q + E[(S − VaR_q)⁺] / (1 − q), exceedance P(S ≥ t) likewise. No path is
/// spent on a horizon without an event or with one (most of a small firm's).
pub fn tail_risk(p: &Profile, months: u32, paths: u32, seed: u64) -> TailRisk {
    let f = frequency(p);
    let severity = Severity::of(p, &f);
    let mean = f.lambda * f64::from(months) / 12.0;
    let counts = NegativeBinomial::new(mean, OVERDISPERSION_K);
    let (none, below_two) = (counts.below(1), counts.below(2));
    let expected_loss = if mean > 0.0 { mean * severity.mean() } else { 0.0 };
    let mut rng = Rng::new(seed);
    let mut totals = if below_two < 1.0 { totals_from(&counts, 2, &severity, paths, &mut rng) } else { Vec::new() };
    totals.sort_unstable_by(f64::total_cmp);
    let law = Aggregate { none, one: below_two - none, more: 1.0 - below_two, severity: &severity, totals };
    let var95 = law.quantile(0.95);
    // TVaR95, the mean of the worst 5 %: when those include horizons without events it is
    // E[S] / 0.05 exactly.
    let tvar95 = if var95 == 0.0 { expected_loss / 0.05 } else { var95 + law.excess(var95) / 0.05 };
    TailRisk {
        months,
        paths: u32::try_from(law.totals.len()).unwrap_or(u32::MAX),
        seed,
        probability_of_loss: 1.0 - none,
        expected_loss_usd: expected_loss,
        var95_usd: var95,
        var99_usd: law.quantile(0.99),
        tvar95_usd: tvar95,
        loss_given_event_p50_usd: severity.quantile(0.5),
        loss_given_event_p95_usd: severity.quantile(0.95),
        exceedance: THRESHOLDS.iter().map(|t| (*t, if mean > 0.0 { law.at_least(*t) } else { 0.0 })).collect(),
        cap_per_event_usd: severity.cap,
    }
}

/// The standard normal distribution function (Abramowitz–Stegun 7.1.26 on erf,
/// |error| < 1.5e-7).
pub fn phi(x: f64) -> f64 {
    let z = x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z.abs());
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    let erf = if z >= 0.0 { erf } else { -erf };
    0.5 * (1.0 + erf)
}

/// The negative binomial count as a table of its distribution function (the mean is the
/// same on every path, so one table serves them all): `P(N = 0) = (κ / (κ + μ))^κ`,
/// `P(N = n + 1) = P(N = n) · (n + κ) / (n + 1) · μ / (κ + μ)`, up to 1 − 10⁻¹²
/// (or 100,000 events, where the rest of the tail is put).
struct NegativeBinomial {
    cdf: Vec<f64>,
}

impl NegativeBinomial {
    fn new(mean: f64, kappa: f64) -> NegativeBinomial {
        if !mean.is_finite() || mean <= 0.0 {
            return NegativeBinomial { cdf: vec![1.0] };
        }
        let q = mean / (kappa + mean);
        let mut pmf = (kappa / (kappa + mean)).powf(kappa);
        let mut cdf = vec![pmf];
        let mut total = pmf;
        while total < 1.0 - 1e-12 && cdf.len() < 100_000 {
            let n = (cdf.len() - 1) as f64;
            pmf *= (n + kappa) / (n + 1.0) * q;
            total += pmf;
            cdf.push(total);
        }
        NegativeBinomial { cdf }
    }

    /// P(N < n).
    fn below(&self, n: usize) -> f64 {
        if n == 0 { 0.0 } else { self.cdf.get(n - 1).copied().unwrap_or(1.0) }
    }

    /// The count whose distribution function first reaches `u` (inversion).
    fn sample(&self, u: f64) -> u32 {
        let n = self.cdf.partition_point(|c| *c < u).min(self.cdf.len() - 1);
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

/// The sampler of the Monte Carlo: PCG-64 (rand_pcg, `Pcg64Mcg`) with Box–Muller normals.
struct Rng {
    inner: rand_pcg::Pcg64Mcg,
    spare: Option<f64>,
}

impl Rng {
    /// The state is expanded from the seed by `SeedableRng::seed_from_u64` (before
    /// 2026.11.1 it was `seed | 1`, so seeds 2k and 2k + 1 gave the same paths).
    fn new(seed: u64) -> Rng {
        use rand_core::SeedableRng as _;
        Rng { inner: rand_pcg::Pcg64Mcg::seed_from_u64(seed), spare: None }
    }

    /// Uniform on (0, 1).
    fn uniform(&mut self) -> f64 {
        use rand_core::Rng as _;
        ((self.inner.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        // Marsaglia's polar form of Box–Muller: a point of the unit disc, no sine or cosine.
        loop {
            let (u, v) = (2.0 * self.uniform() - 1.0, 2.0 * self.uniform() - 1.0);
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let r = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(v * r);
                return u * r;
            }
        }
    }
}

/// The figure a "what if" reports: what it depends on decides what its explanation says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// P(an incident): the event rate alone.
    IncidentProbability,
    /// P(a data breach): the event rate times the share of events that are breaches.
    BreachProbability,
    /// The expected loss: the event rate and the mix of breaches and other events.
    ExpectedLoss,
}

impl Figure {
    fn name(self) -> &'static str {
        match self {
            Figure::IncidentProbability => "the incident probability",
            Figure::BreachProbability => "the breach probability",
            Figure::ExpectedLoss => "the expected loss",
        }
    }

    fn reads_breach_share(self) -> bool {
        self != Figure::IncidentProbability
    }
}

/// Why fixing a finding moves a prediction's figure the way it does, from the model's
/// inputs with the finding open (`before`) and fixed (`after`), and the figure both ways:
/// the exposure factors that stop applying and the event rate they change, then — for the
/// figures that read it — the share of events that are breaches, which a fix can raise
/// (fixing spoofable mail takes away the email fraud that loses money rather than
/// records, so fewer events but more of them breaches), and the net direction.
pub fn explain_fix(before: &Frequency, after: &Frequency, figure: Figure, now: f64, fixed: f64) -> String {
    let gone: Vec<String> = before
        .exposure
        .iter()
        .filter(|a| !after.exposure.iter().any(|b| b.factor.code == a.factor.code))
        .map(|a| format!("{} ×{}", a.factor.label, a.factor.multiplier))
        .collect();
    let mut why = if gone.is_empty() {
        format!(
            "The event rate stays {:.3} a year: another open finding still triggers the same exposure factor",
            before.lambda
        )
    } else {
        format!(
            "Fixing it lowers the event rate from {:.3} to {:.3} a year ({} no longer applies)",
            before.lambda,
            after.lambda,
            gone.join(", ")
        )
    };
    let share_moves =
        figure.reads_breach_share() && (before.breach_share.share - after.breach_share.share).abs() > 1e-12;
    if share_moves {
        why.push_str(&format!(
            "; the share of events that are data breaches moves from {:.0} % to {:.0} % ({})",
            before.breach_share.share * 100.0,
            after.breach_share.share * 100.0,
            after.breach_share.basis
        ));
    }
    let relative = if now.abs() > f64::EPSILON { (fixed - now) / now } else { 0.0 };
    let net = if relative > 1e-9 {
        if share_moves && after.breach_share.share > before.breach_share.share {
            format!("{} rises: fewer events, but more of them breaches", figure.name())
        } else {
            format!("{} rises", figure.name())
        }
    } else if relative < -1e-9 {
        format!("{} falls", figure.name())
    } else {
        format!("{} does not move", figure.name())
    };
    format!("{why}. Net: {net} ({:+.1} %).", relative * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_company_profile_takes_its_size_industry_and_score() {
        let mut c = model::Company {
            id: 1,
            social_id: model::SocialId::parse("acme").unwrap(),
            company_name: "Acme".into(),
            website: String::new(),
            domain: None,
            domain_verified: true,
            industry: String::new(),
            description: String::new(),
            company_id: String::new(),
            funding_id: String::new(),
            employees_number: "51-200 employees".into(),
            followers_number: None,
            naics_code: Some(484121),
            searched_by: 0,
            last_scanned_at: None,
            score: Some(model::Score::from_f64(71.5).unwrap()),
            grade: None,
        };
        let today = time::macros::date!(2026 - 11 - 28);
        let p = Profile::of_company(&c, &[], Vec::new(), today);
        // The geometric mean of the band's ends: √(51·200) ≈ 101 employees.
        assert_eq!(p.revenue_basis, "101 employees × $250,000");
        assert!((p.revenue_usd - (51.0f64 * 200.0).sqrt() * REVENUE_PER_EMPLOYEE).abs() < 1e-6);
        assert_eq!((p.naics, p.score), (Some(484121), Some(71.5)));
        assert!(p.incident_ages_months.is_empty());
        c.employees_number = String::new();
        let p = Profile::of_company(&c, &[], Vec::new(), today);
        assert_eq!(p.revenue_usd, 50.0 * REVENUE_PER_EMPLOYEE);
        assert!(p.revenue_basis.contains("assumed"));
    }

    fn exposed(id: i64, code: &str, critical: bool) -> crate::exposure::Exposed {
        crate::exposure::Exposed { finding_id: id, code: code.into(), asset: "rdp.example".into(), critical }
    }

    #[test]
    fn an_exposed_rdp_port_multiplies_the_event_rate_by_its_factor_and_fixing_it_restores_it() {
        use crate::exposure::FACTORS;
        let factor = |code: &str| FACTORS.iter().find(|f| f.code == code).unwrap().multiplier;
        let base = firm(50e6, Some(80.0));
        let mut rdp = base.clone();
        rdp.exposures.push(exposed(7, "open_ports.rdp_exposed", false));
        let (f0, f1) = (frequency(&base), frequency(&rdp));
        assert!((f1.lambda / f0.lambda - factor("rdp_exposed")).abs() < 1e-12);
        assert_eq!(f1.exposure.len(), 1);
        assert_eq!(f1.exposure[0].findings, [7]);
        // The incident probability follows the rate: the negative binomial at the new mean.
        let p1 = incident_prediction(&rdp, 12).last().unwrap().probability;
        let expected = 1.0 - (1.0 + f1.lambda / OVERDISPERSION_K).powf(-OVERDISPERSION_K);
        assert!((p1 - expected).abs() < 1e-12 && p1 > incident_prediction(&base, 12).last().unwrap().probability);
        // Fixed: the baseline again.
        assert_eq!(frequency(&rdp.without_finding(7)), f0);
        // Factors compose by multiplying (under the cap); a second RDP host adds nothing.
        rdp.exposures.push(exposed(8, "open_ports.rdp_exposed", false));
        rdp.exposures.push(exposed(9, "vulnerabilities.cve", true));
        let both = frequency(&rdp);
        let product = crate::exposure::compose([factor("rdp_exposed"), factor("critical_vulnerability")]);
        assert!((both.lambda / f0.lambda - product).abs() < 1e-12);
        // Fixing one of the two RDP hosts leaves the factor in place.
        assert!((frequency(&rdp.without_finding(7)).lambda - both.lambda).abs() < 1e-12);
    }

    #[test]
    fn a_fix_that_raises_a_figure_says_why() {
        let mut spoofable = firm(50e6, Some(80.0));
        spoofable.exposures.push(exposed(4, "dmarc.missing", false));
        spoofable.exposures.push(exposed(5, "open_ports.rdp_exposed", false));
        spoofable.exposures.push(exposed(6, "open_ports.rdp_exposed", false));
        let fixed = spoofable.without_finding(4);
        let (before, after) = (frequency(&spoofable), frequency(&fixed));
        let breach = |p: &Profile| data_loss_prediction(p, 12).last().unwrap().breach_probability;
        let incident = |p: &Profile| incident_prediction(p, 12).last().unwrap().probability;
        // Fewer events, a larger share of them breaches: the breach probability rises.
        assert!(after.lambda < before.lambda && breach(&fixed) > breach(&spoofable));
        let why = explain_fix(&before, &after, Figure::BreachProbability, breach(&spoofable), breach(&fixed));
        assert!(why.contains("no longer applies") && why.contains("from 35 % to 45 %"), "{why}");
        assert!(why.contains("Net: the breach probability rises: fewer events, but more of them breaches"), "{why}");
        // The incident probability reads the rate alone: it falls, and the share is not named.
        let why = explain_fix(&before, &after, Figure::IncidentProbability, incident(&spoofable), incident(&fixed));
        assert!(why.contains("Net: the incident probability falls") && !why.contains("share"), "{why}");
        // One of two RDP hosts fixed: the factor stays, and the answer says so.
        let one_rdp = spoofable.without_finding(5);
        let why = explain_fix(&before, &frequency(&one_rdp), Figure::IncidentProbability, 0.2, 0.2);
        assert!(why.contains("another open finding") && why.contains("does not move"), "{why}");
    }

    #[test]
    fn an_exposed_database_shifts_the_event_mix_towards_breaches() {
        let base = firm(50e6, Some(80.0));
        let mut db = base.clone();
        db.exposures.push(exposed(3, "open_ports.mongodb_exposed", false));
        let (f0, f1) = (frequency(&base), frequency(&db));
        assert_eq!((f0.breach_share.share, f1.breach_share.share), (P_BREACH, 0.55));
        let records = |p: &Profile| data_loss_prediction(p, 12).last().unwrap().expected_records;
        let expected = (f1.lambda * 0.55) / (f0.lambda * P_BREACH);
        assert!((records(&db) / records(&base) - expected).abs() < 1e-9);
    }

    fn firm(revenue: f64, score: Option<f64>) -> Profile {
        Profile {
            revenue_usd: revenue,
            revenue_basis: "test".into(),
            naics: None,
            score,
            incident_ages_months: Vec::new(),
            exposures: Vec::new(),
        }
    }

    fn probability_within(p: &Profile, months: u32) -> f64 {
        incident_prediction(p, months).last().map_or(0.0, |m| m.probability)
    }

    fn annual_probability(p: &Profile) -> f64 {
        probability_within(p, 12)
    }

    fn cohort_probability(ranks: &[u32], months: u32) -> f64 {
        fortune_cohort(ranks).iter().map(|(p, w)| w * probability_within(p, months)).sum()
    }

    fn exceeds(t: &TailRisk, threshold: f64) -> f64 {
        t.exceedance.iter().find(|(th, _)| *th == threshold).map_or(0.0, |(_, p)| *p)
    }

    /// Within `factor` of a published figure, either way.
    fn within(model: f64, published: f64, factor: f64) -> bool {
        model >= published / factor && model <= published * factor
    }

    #[test]
    fn the_base_rate_reproduces_the_published_size_table() {
        // Row 1: SMB < 2 %, Fortune 1000 ≈ 25 %, Fortune 250 ≈ 50 % ("slightly less than
        // one in two"); row 3: a $100M firm 2.18–12.95 %. The Fortune figures are averages
        // over the cohort (every rank, five scores).
        let smb = annual_probability(&firm(5e6, None));
        let hundred = annual_probability(&firm(1e8, None));
        let all: Vec<u32> = (1..=1000).collect();
        let f1000 = cohort_probability(&all, 12);
        let f250 = cohort_probability(&all[..250], 12);
        assert!(smb < 0.02, "{smb}");
        assert!((0.0218..0.1295).contains(&hundred), "{hundred}");
        assert!((0.225..0.275).contains(&f1000), "{f1000}");
        assert!(within(f250, 0.5, 2.0) && f250 < 0.5, "{f250}");
    }

    #[test]
    fn the_overdispersion_reproduces_the_decade_figure() {
        // IRIS 20/20: over 60 % of the Fortune 1000 had an event in the decade, with 25 %
        // a year; a Poisson count (κ → ∞) would give 86 %.
        let all: Vec<u32> = (1..=1000).collect();
        let decade = cohort_probability(&all, 120);
        assert!((0.55..0.66).contains(&decade), "{decade}");
    }

    #[test]
    fn the_fortune_1000_revenue_grid() {
        assert!((fortune_1000_revenue(1) / 648e9 - 1.0).abs() < 1e-12);
        assert!((fortune_1000_revenue(500) / 7.4e9 - 1.0).abs() < 1e-12);
        assert_eq!(fortune_1000_revenue(5000), fortune_1000_revenue(1000));
        assert!((1..1000).all(|r| fortune_1000_revenue(r) > fortune_1000_revenue(r + 1)));
        let cohort = fortune_cohort(&[1, 2, 3]);
        assert_eq!(cohort.len(), 15);
        assert!((cohort.iter().map(|(_, w)| w).sum::<f64>() - 1.0).abs() < 1e-12);
        // The quadrature holds the cohort's mean score and spread.
        let mean: f64 = COHORT_SCORES.iter().map(|(s, w)| s * w).sum();
        let var: f64 = COHORT_SCORES.iter().map(|(s, w)| w * (s - mean).powi(2)).sum();
        assert!((mean - COHORT_MEAN).abs() < 1e-9 && (var.sqrt() - COHORT_SD).abs() < 1e-9);
    }

    #[test]
    fn worse_scores_raise_the_rate_within_the_published_ratio() {
        let a = frequency(&firm(1e9, Some(95.0))).lambda;
        let f = frequency(&firm(1e9, Some(40.0))).lambda;
        // Row 14: F vs A between 4× and 13.8×.
        assert!((4.0..=14.0).contains(&(f / a)), "{}", f / a);
        assert_eq!(score_factor(Some(0.0)), 5.0, "capped");
        assert_eq!(score_factor(Some(100.0)).max(0.25), score_factor(Some(100.0)));
    }

    #[test]
    fn a_recent_incident_raises_the_rate_and_decays() {
        assert_eq!(history_factor(&[]), 1.0);
        assert!((history_factor(&[0.0]) - 2.0).abs() < 1e-12);
        assert!(history_factor(&[12.0]) < history_factor(&[1.0]));
        assert_eq!(history_factor(&[0.0; 10]), 4.0);
    }

    #[test]
    fn probabilities_grow_with_the_horizon_and_stay_below_one() {
        let p = firm(2e8, Some(70.0));
        let months = incident_prediction(&p, 60);
        assert_eq!(months.len(), 60);
        assert!(months.windows(2).all(|w| w[1].probability > w[0].probability && w[1].probability < 1.0));
        let loss = data_loss_prediction(&p, 24);
        assert!(loss.windows(2).all(|w| w[1].expected_records > w[0].expected_records));
        assert!(loss.iter().all(|m| m.breach_probability < months[m.month as usize - 1].probability));
    }

    #[test]
    fn employee_bands() {
        assert_eq!(Profile::from_employees("51-200 employees").map(f64::round), Some(101.0));
        assert_eq!(Profile::from_employees("10,001+ employees"), Some(10_001.0));
        assert_eq!(Profile::from_employees("unknown"), None);
    }

    #[test]
    fn the_normal_distribution_function() {
        assert!((phi(0.0) - 0.5).abs() < 1e-7);
        assert!((phi(1.96) - 0.975).abs() < 1e-4);
        assert!((phi(-1.0) - 0.158_655).abs() < 1e-5);
        // With no truncation the mean is the lognormal mean.
        let m = truncated_lognormal_mean(1.0, 0.5, 1e12);
        assert!((m - (1.0f64 + 0.125).exp()).abs() < 1e-6);
    }

    #[test]
    fn the_event_loss_follows_the_published_severity() {
        // Row 5: $292K typical at $100B; about a quarter of revenue at $100K; 10 % of
        // events above 100× the median ($200K → $20M).
        assert!((event_loss_median(1e11, None) - 292_000.0).abs() < 1e-6);
        let tiny = event_loss_median(1e5, None) / 1e5;
        assert!((0.2..0.3).contains(&tiny), "{tiny}");
        let above = 1.0 - phi(100f64.ln() / LOSS_SIGMA);
        assert!((0.095..0.105).contains(&above), "{above}");
        // Row 6 ($1B firm): a breach of 1k records exceeds $10M with ≈ 6 % (within 2×); one
        // of 100M records reaches $10M with "better than 50 %".
        let small = breach_loss_exceedance(1e9, None, 1e3, 1e7);
        let mega = breach_loss_exceedance(1e9, None, 1e8, 1e7);
        assert!(within(small, 0.06, 2.0), "{small}");
        assert!((0.5..0.75).contains(&mega), "{mega}");
        // The sector multiplier (IRIS 20/20: retail and information ≈ 10× many others).
        assert!((event_loss_median(5e7, Some(44)) / event_loss_median(5e7, None) - 10f64.sqrt()).abs() < 1e-9);
        assert_eq!(severity_factor(Some(238_210)), 1.0);
    }

    #[test]
    fn the_same_seed_gives_the_same_tail() {
        let p = firm(5e7, None);
        assert_eq!(tail_risk(&p, 12, 20_000, 7), tail_risk(&p, 12, 20_000, 7));
        assert_ne!(tail_risk(&p, 12, 20_000, 7), tail_risk(&p, 12, 20_000, 8));
        assert_ne!(tail_risk(&p, 12, 20_000, 2), tail_risk(&p, 12, 20_000, 3));
    }

    #[test]
    fn the_monte_carlo_count_is_the_incident_prediction() {
        // The tail's P(any loss) is the incident prediction's, exactly; one event in closed
        // form and the simulated paths of two or more, each weighted by its probability,
        // average to the exact expected loss.
        for (p, months) in [(firm(1e10, Some(60.0)), 12), (firm(2e8, None), 36), (firm(5e11, Some(90.0)), 6)] {
            let t = tail_risk(&p, months, 20_000, 3);
            assert!((t.probability_of_loss - probability_within(&p, months)).abs() < 1e-12, "{t:?}");
            let f = frequency(&p);
            let counts = NegativeBinomial::new(f.lambda * f64::from(months) / 12.0, OVERDISPERSION_K);
            let severity = Severity::of(&p, &f);
            let totals = totals_from(&counts, 2, &severity, 200_000, &mut Rng::new(5));
            let n = totals.len() as f64;
            let m = totals.iter().sum::<f64>() / n;
            let se = (totals.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
            let (one, more) = (counts.below(2) - counts.below(1), 1.0 - counts.below(2));
            let mixed = one * severity.mean() + more * m;
            assert!(
                (mixed - t.expected_loss_usd).abs() < 4.0 * more * se,
                "{mixed} vs {} ± {}",
                t.expected_loss_usd,
                more * se
            );
        }
        // The table's mean is the requested mean.
        let nb = NegativeBinomial::new(2.5, OVERDISPERSION_K);
        let mean: f64 =
            nb.cdf.iter().enumerate().map(|(n, c)| n as f64 * (c - if n == 0 { 0.0 } else { nb.cdf[n - 1] })).sum();
        assert!((mean - 2.5).abs() < 1e-6, "{mean}");
        assert_eq!(NegativeBinomial::new(0.0, OVERDISPERSION_K).sample(0.999), 0);
        // No events at all: nothing to simulate, every figure 0.
        let none = tail_risk(&firm(f64::NAN, None), 0, 1_000, 1);
        assert_eq!((none.paths, none.expected_loss_usd, none.var99_usd, none.tvar95_usd), (0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn the_tail_agrees_with_a_plain_simulation() {
        // Every path drawn as it comes (no closed form, no conditioning), 400,000 of them:
        // the answer's figures are within the plain estimate's error of it.
        for p in [firm(5e7, Some(80.0)), firm(1e9, Some(65.0))] {
            let f = frequency(&p);
            let severity = Severity::of(&p, &f);
            let counts = NegativeBinomial::new(f.lambda, OVERDISPERSION_K);
            let mut rng = Rng::new(99);
            let n = 400_000;
            let mut plain: Vec<f64> = (0..n)
                .map(|_| (0..counts.sample(rng.uniform())).map(|_| severity.sample(&mut rng)).sum::<f64>())
                .collect();
            plain.sort_unstable_by(f64::total_cmp);
            let at = |q: f64| plain[(q * n as f64).ceil() as usize - 1];
            let t = tail_risk(&p, 12, tail_paths(&p, 12), 1);
            let mean = plain.iter().sum::<f64>() / n as f64;
            let var99 = at(0.99);
            let tail = &plain[(0.95 * n as f64) as usize..];
            let tvar95 = tail.iter().sum::<f64>() / tail.len() as f64;
            println!("plain {mean} {var99} {tvar95}; answer {t:?}");
            assert!((t.expected_loss_usd / mean - 1.0).abs() < 0.1, "{mean}");
            assert!((t.var99_usd / var99 - 1.0).abs() < 0.1, "{var99}");
            assert!((t.tvar95_usd / tvar95 - 1.0).abs() < 0.1, "{tvar95}");
            assert_eq!(t.var95_usd == 0.0, at(0.95) == 0.0);
            for (threshold, probability) in &t.exceedance {
                let seen = (n - plain.partition_point(|x| x < threshold)) as f64 / n as f64;
                let se = (seen * (1.0 - seen) / n as f64).sqrt();
                assert!((probability - seen).abs() < 4.0 * se + 1e-4, "{threshold}: {probability} vs {seen}");
            }
        }
    }

    #[test]
    fn one_events_law_matches_its_samples() {
        // The closed forms (mean, distribution function, percentiles) against 400,000
        // sampled events, for a small firm (many losses at the cap) and a large one.
        let mut db = firm(2e7, Some(70.0));
        db.exposures.push(exposed(1, "open_ports.mongodb_exposed", false));
        for p in [firm(5e7, None), firm(2e10, Some(85.0)), db] {
            let severity = Severity::of(&p, &frequency(&p));
            let mut rng = Rng::new(11);
            let mut xs: Vec<f64> = (0..400_000).map(|_| severity.sample(&mut rng)).collect();
            let n = xs.len() as f64;
            let m = xs.iter().sum::<f64>() / n;
            let se = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
            assert!((m - severity.mean()).abs() < 4.0 * se, "{m} vs {} ± {se}", severity.mean());
            xs.sort_unstable_by(f64::total_cmp);
            let capped = 1.0 - xs.partition_point(|v| *v < severity.cap) as f64 / n;
            let below_cap = severity.cdf(severity.cap * (1.0 - 1e-12));
            assert!((1.0 - below_cap - capped).abs() < 5.0 * (capped * (1.0 - capped) / n).sqrt() + 1e-6);
            for q in [0.1, 0.5, 0.9, 0.95, 0.99] {
                let x = severity.quantile(q);
                let binomial = (q * (1.0 - q) / n).sqrt();
                if q > below_cap {
                    // More than 1 − q of the events are at the cap: the percentile is the cap.
                    assert_eq!(x, severity.cap);
                    continue;
                }
                let below = xs.partition_point(|v| *v <= x) as f64 / n;
                assert!(
                    (below - q).abs() < 5.0 * binomial && (severity.cdf(x) - q).abs() < 1e-6,
                    "q {q}: {below} at {x}"
                );
            }
        }
    }

    #[test]
    fn a_what_if_of_the_expected_loss_is_exact_and_linear_in_the_rate() {
        let mut p = firm(5e7, Some(70.0));
        p.exposures.push(exposed(7, "open_ports.rdp_exposed", false));
        p.exposures.push(exposed(8, "open_ports.mongodb_exposed", false));
        let el = |p: &Profile| expected_loss(p, 12);
        // The answer's expected loss is the closed form.
        assert_eq!(tail_risk(&p, 12, 2_000, 1).expected_loss_usd, el(&p));
        // Fixing RDP: the same mix of events, the rate divided by 2.5.
        let rdp = p.without_finding(7);
        let ratio = frequency(&rdp).lambda / frequency(&p).lambda;
        assert!((el(&rdp) / el(&p) - ratio).abs() < 1e-12);
        // Fixing the database also moves the breach share (55 % → 45 %).
        let db = p.without_finding(8);
        assert!(el(&db) < el(&p) && frequency(&db).breach_share.share == P_BREACH);
        assert!((expected_loss(&p, 36) / el(&p) - 3.0).abs() < 1e-12, "linear in the horizon");
    }

    #[test]
    fn the_paths_follow_the_event_budget() {
        assert_eq!(tail_paths(&firm(5e7, Some(80.0)), 12), TAIL_PATHS);
        // A firm with every factor against it over five years: fewer, longer paths.
        let mut worst = firm(1e10, Some(0.0));
        worst.incident_ages_months = vec![0.0; 5];
        for (i, code) in ["open_ports.rdp_exposed", "sbom.end_of_life", "open_ports.telnet_exposed"].iter().enumerate()
        {
            worst.exposures.push(exposed(i as i64, code, false));
        }
        let paths = tail_paths(&worst, 60);
        assert!((TAIL_MIN_PATHS..TAIL_PATHS).contains(&paths), "{paths}");
        assert_eq!(tail_paths(&firm(f64::NAN, None), 0), TAIL_PATHS);
    }

    /// The relative standard deviation, in per cent, of `xs` (over seeds).
    fn rsd(xs: &[f64]) -> f64 {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        if mean > 0.0 { 100.0 * sd / mean } else { 0.0 }
    }

    #[test]
    fn the_tail_of_an_answer_varies_little_between_seeds() {
        // The statistical error of an answer (its paths, `tail_paths`): over 12 seeds, the
        // relative standard deviation of VaR99, TVaR95 and P(loss ≥ $10M) stays under 5 %
        // (tail_bench prints it for more firms: docs/PERFORMANCE.md); the expected loss is
        // exact, the same for every seed.
        let mut exposed_firm = firm(2.5e7, Some(55.0));
        exposed_firm.naics = Some(44);
        exposed_firm.exposures.push(exposed(1, "open_ports.rdp_exposed", false));
        exposed_firm.exposures.push(exposed(2, "sbom.end_of_life", false));
        let mut worst: f64 = 0.0;
        for (p, months) in [(firm(5e7, Some(80.0)), 12), (firm(1e9, Some(65.0)), 12), (exposed_firm, 60)] {
            let paths = tail_paths(&p, months);
            let runs: Vec<TailRisk> = (0..12).map(|seed| tail_risk(&p, months, paths, 100 + seed)).collect();
            let of = |f: fn(&TailRisk) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
            let (var99, tvar95, p10m) =
                (rsd(&of(|t| t.var99_usd)), rsd(&of(|t| t.tvar95_usd)), rsd(&of(|t| exceeds(t, 1e7))));
            println!(
                "{months} months, {paths} paths: VaR99 ±{var99:.2} %, TVaR95 ±{tvar95:.2} %, P(≥ $10M) ±{p10m:.2} %"
            );
            worst = worst.max(var99).max(tvar95).max(p10m);
            assert!(runs.iter().all(|t| t.expected_loss_usd == runs[0].expected_loss_usd));
        }
        assert!(worst < 5.0, "{worst}");
    }

    #[test]
    fn the_fifty_million_retailer_check() {
        // Row 15: a $50M-revenue retailer's expected annual (liability) loss is ≈ $428K
        // (an insurer's figure): within 2×.
        let mut retailer = firm(5e7, None);
        retailer.naics = Some(44);
        let t = tail_risk(&retailer, 12, tail_paths(&retailer, 12), 1);
        println!("$50M retailer: {t:?}");
        assert!(within(t.expected_loss_usd, 428_000.0, 2.0), "{t:?}");
    }

    #[test]
    fn the_fortune_1000_tail_check() {
        // Row 5: 6 % of Fortune 1000 firms lose ≥ $100M in a year (IRIS 20/20), a cohort
        // statistic: every 20th rank × five scores. The model gives about 2.2 %: within 3×,
        // not 2×. The published rows do not allow more (docs/PREDICTIONS.md, Validation):
        // row 7's extreme events (about 5 a year above $100M, all firms) put the observed
        // rate near 0.5 %.
        let grid: Vec<u32> = (0..50).map(|i| 10 + 20 * i).collect();
        let p100m: f64 = fortune_cohort(&grid)
            .iter()
            .enumerate()
            .map(|(i, (p, w))| w * exceeds(&tail_risk(p, 12, 4_000, 1 + i as u64), 1e8))
            .sum();
        println!("Fortune 1000 cohort, one-year P(loss ≥ $100M): {p100m}");
        assert!(within(p100m, 0.06, 3.0), "{p100m}");
        assert!(p100m > 0.005, "above the observed rate of row 7: {p100m}");
    }
}
