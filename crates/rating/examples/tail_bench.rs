//! Tail-risk speed and statistical error: `cargo run --release -p rating --example
//! tail_bench [ROUNDS] [SEEDS]` times one whole tail-risk answer as the API computes it —
//! `rating::predict::tail_risk` with the answer's paths (`tail_paths`) and the expected
//! loss with each finding fixed (`expected_loss`, at most 10 what-ifs) — for five firms
//! over 12 and 60 months: the median and worst of ROUNDS answers (default 20). Beside
//! each time, the statistical error of the answer: the relative standard deviation over
//! SEEDS seeds (default 12) of VaR99, TVaR95 and P(loss ≥ $10M). The expected loss and
//! P(any loss) are exact (no error).

use std::time::Instant;

use rating::exposure::Exposed;
use rating::predict::{Profile, TailRisk, expected_loss, frequency, tail_paths, tail_risk};

/// The what-ifs an answer works out at most (`TAIL_WHAT_IFS` of the API).
const WHAT_IFS: usize = 10;

/// One answer: the simulation and the what-ifs.
fn answer(p: &Profile, months: u32, seed: u64) -> (TailRisk, Vec<f64>) {
    let t = tail_risk(p, months, tail_paths(p, months), seed);
    let what_if =
        p.exposures.iter().take(WHAT_IFS).map(|e| expected_loss(&p.without_finding(e.finding_id), months)).collect();
    (t, what_if)
}

/// The relative standard deviation of `xs`, in per cent.
fn rsd(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    if mean > 0.0 { sd / mean * 100.0 } else { 0.0 }
}

fn exceeds(t: &TailRisk, threshold: f64) -> f64 {
    t.exceedance.iter().find(|(th, _)| *th == threshold).map_or(0.0, |(_, p)| *p)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(20).max(1);
    let seeds: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(12).max(2);
    let found = |id: i64, code: &str, critical: bool| Exposed {
        finding_id: id,
        code: code.into(),
        asset: format!("h{id}.example"),
        critical,
    };
    // Ten findings with an exposure factor: ten what-ifs.
    let exposed = vec![
        found(1, "open_ports.rdp_exposed", false),
        found(2, "sbom.end_of_life", false),
        found(3, "vulnerabilities.cve", true),
        found(4, "open_ports.mongodb_exposed", false),
        found(5, "open_ports.telnet_exposed", false),
        found(6, "dmarc.missing", false),
        found(7, "vulnerabilities.cve", true),
        found(8, "open_ports.rdp_exposed", false),
        found(9, "vulnerabilities.cve", true),
        found(10, "sbom.end_of_life", false),
    ];
    let worst = exposed[..5].to_vec();
    let firms = [
        ("$50M, score 80", 5e7, 80.0, vec![6.0], Vec::new()),
        ("$1B, score 65", 1e9, 65.0, vec![6.0], Vec::new()),
        ("$10B, score 90", 1e10, 90.0, vec![6.0], Vec::new()),
        ("$25M, 10 findings", 2.5e7, 55.0, vec![6.0], exposed),
        // Every factor at its cap: the most events per path an answer meets.
        ("$2.5B, worst case", 2.5e9, 0.0, vec![0.0; 4], worst),
    ];
    println!(
        "{:<18} {:>6} {:>6} {:>7} {:>9} {:>9} {:>8} {:>8} {:>9}  expected loss (exact)",
        "firm", "months", "λ/yr", "paths", "median", "worst", "VaR99", "TVaR95", "P(≥$10M)"
    );
    for (name, revenue, score, incidents, exposures) in firms {
        let p = Profile {
            revenue_usd: revenue,
            revenue_basis: "bench".into(),
            naics: Some(52),
            score: Some(score),
            incident_ages_months: incidents,
            exposures,
        };
        for months in [12, 60] {
            let mut times = Vec::with_capacity(rounds);
            for r in 0..rounds {
                let t = Instant::now();
                std::hint::black_box(answer(&p, months, r as u64));
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            times.sort_by(f64::total_cmp);
            let runs: Vec<TailRisk> = (0..seeds).map(|seed| answer(&p, months, 1000 + seed).0).collect();
            let of = |f: fn(&TailRisk) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
            println!(
                "{name:<18} {months:>6} {:>6.2} {:>7} {:>6.2} ms {:>6.2} ms {:>7.2}% {:>7.2}% {:>8.2}%  ${:.0}",
                frequency(&p).lambda,
                runs[0].paths,
                times[times.len() / 2],
                times[times.len() - 1],
                rsd(&of(|t| t.var99_usd)),
                rsd(&of(|t| t.tvar95_usd)),
                rsd(&of(|t| exceeds(t, 1e7))),
                runs[0].expected_loss_usd,
            );
        }
    }
    println!("(VaR99, TVaR95, P(≥$10M): relative standard deviation over {seeds} seeds; times of {rounds} answers)");
}
