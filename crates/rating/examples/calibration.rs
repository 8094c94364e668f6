//! The published checks of docs/PREDICTIONS.md ("Validation"), recomputed:
//! `cargo run --release -p rating --example calibration`. Every figure of that table comes
//! from this program (fixed seeds: the output is the same on every run).

use rating::predict::{
    Profile, breach_loss_exceedance, data_loss_prediction, fortune_cohort, frequency, incident_prediction, tail_risk,
};

/// Monte Carlo paths (horizons of two events or more: the rest is in closed form) for the
/// $50M retailer and for each member of the Fortune cohort.
const RETAILER_PATHS: u32 = 400_000;
const COHORT_PATHS: u32 = 20_000;

fn firm(revenue: f64, naics: Option<u32>) -> Profile {
    Profile {
        revenue_usd: revenue,
        revenue_basis: "calibration".into(),
        naics,
        score: None,
        incident_ages_months: Vec::new(),
        exposures: Vec::new(),
    }
}

fn probability_within(p: &Profile, months: u32) -> f64 {
    incident_prediction(p, months).last().map_or(0.0, |m| m.probability)
}

fn cohort_probability(ranks: &[u32], months: u32) -> f64 {
    fortune_cohort(ranks).iter().map(|(p, w)| w * probability_within(p, months)).sum()
}

fn exceeds(t: &rating::predict::TailRisk, threshold: f64) -> f64 {
    t.exceedance.iter().find(|(th, _)| *th == threshold).map_or(0.0, |(_, p)| *p)
}

fn main() {
    let all: Vec<u32> = (1..=1000).collect();
    let top: Vec<u32> = (1..=250).collect();
    println!("Frequency (rows 1 and 3; cohort over all ranks x 5 scores):");
    println!("  $5M firm, one year:                 {:.2} %", 100.0 * probability_within(&firm(5e6, None), 12));
    println!("  $100M firm, one year:               {:.2} %", 100.0 * probability_within(&firm(1e8, None), 12));
    println!("  Fortune 1000 cohort, one year:      {:.1} %", 100.0 * cohort_probability(&all, 12));
    println!("  Fortune 250 cohort, one year:       {:.1} %", 100.0 * cohort_probability(&top, 12));
    println!("  Fortune 1000 cohort, ten years:     {:.1} %", 100.0 * cohort_probability(&all, 120));
    let (a, f) = (
        frequency(&Profile { score: Some(95.0), ..firm(1e9, None) }),
        frequency(&Profile { score: Some(40.0), ..firm(1e9, None) }),
    );
    println!("  score 40 vs 95 (row 14):            {:.1}x", f.lambda / a.lambda);

    println!("Severity (rows 5, 6; $1B firm, before the cap):");
    println!("  breach of 1k records > $10M:        {:.1} %", 100.0 * breach_loss_exceedance(1e9, None, 1e3, 1e7));
    println!("  breach of 100M records >= $10M:     {:.1} %", 100.0 * breach_loss_exceedance(1e9, None, 1e8, 1e7));

    let mut retailer = firm(5e7, Some(44));
    let small = tail_risk(&retailer, 12, RETAILER_PATHS, 1);
    println!("$50M retailer (row 15; NAICS 44, no score, {RETAILER_PATHS} paths, seed 1):");
    println!("  expected annual loss (exact):       ${:.0}", small.expected_loss_usd);
    println!("  P(any loss event):                  {:.2} %", 100.0 * small.probability_of_loss);
    println!(
        "  VaR95 / VaR99 / TVaR95:             ${:.0} / ${:.0} / ${:.0}",
        small.var95_usd, small.var99_usd, small.tvar95_usd
    );
    println!(
        "  one year's breach probability:      {:.2} %",
        100.0 * data_loss_prediction(&retailer, 12).last().map_or(0.0, |m| m.breach_probability)
    );
    retailer.naics = None;
    let plain = tail_risk(&retailer, 12, RETAILER_PATHS, 1);
    println!("  (the same firm, no industry:        ${:.0})", plain.expected_loss_usd);

    // Row 5: every 20th rank (10, 30, ..., 990) x 5 scores, COHORT_PATHS paths each.
    let grid: Vec<u32> = (0..50).map(|i| 10 + 20 * i).collect();
    let cohort = fortune_cohort(&grid);
    let p100m: f64 = cohort
        .iter()
        .enumerate()
        .map(|(i, (p, w))| w * exceeds(&tail_risk(p, 12, COHORT_PATHS, 1 + i as u64), 1e8))
        .sum();
    println!("Fortune 1000 (row 5; ranks 10, 30, ..., 990 x 5 scores, {COHORT_PATHS} paths each, seeds 1..250):");
    println!("  one-year P(loss >= $100M):          {:.2} %", 100.0 * p100m);
    let ten = tail_risk(&firm(1e10, None), 12, 200_000, 1);
    println!("  (one $10B firm, 200000 paths:       {:.2} %)", 100.0 * exceeds(&ten, 1e8));
}
