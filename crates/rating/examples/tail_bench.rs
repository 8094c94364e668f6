//! Tail-risk speed and stability: `cargo run --release -p rating --example tail_bench
//! [PATHS] [ROUNDS]` runs the Monte Carlo of `rating::predict::tail_risk` for three
//! firms (PATHS paths over 12 months, default 100,000), prints the time per run (median
//! and worst of ROUNDS, default 20) and the spread of VaR99 and of the expected loss over
//! 10 seeds (relative standard deviation), so the path count can be judged.

use std::time::Instant;

use rating::predict::{Profile, tail_risk};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let paths: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20).max(1);
    for (name, revenue, score) in
        [("$50M, score 80", 5e7, 80.0), ("$1B, score 65", 1e9, 65.0), ("$10B, score 90", 1e10, 90.0)]
    {
        let p = Profile {
            revenue_usd: revenue,
            revenue_basis: "bench".into(),
            naics: Some(52),
            score: Some(score),
            incident_ages_months: vec![6.0],
            exposures: Vec::new(),
        };
        let mut times = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let t = Instant::now();
            std::hint::black_box(tail_risk(&p, 12, paths, r as u64));
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        let runs: Vec<_> = (0..10).map(|seed| tail_risk(&p, 12, paths, 1000 + seed)).collect();
        let spread = |xs: Vec<f64>| {
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            (mean, if mean > 0.0 { sd / mean * 100.0 } else { 0.0 })
        };
        let (var99, var99_rsd) = spread(runs.iter().map(|r| r.var99_usd).collect());
        let (el, el_rsd) = spread(runs.iter().map(|r| r.expected_loss_usd).collect());
        println!(
            "{name:<16} {paths} paths: median {:.1} ms, worst {:.1} ms; VaR99 ${:.0} (±{var99_rsd:.1} % over seeds), expected loss ${:.0} (±{el_rsd:.1} %)",
            times[times.len() / 2],
            times[times.len() - 1],
            var99,
            el
        );
    }
}
