//! Fingerprint throughput: `cargo run --release -p scanner --example fingerprint_bench --
//! RULES_DIR ROUNDS PAGE...` loads a Wappalyzer tree (or `builtin`), then analyzes every
//! page ROUNDS times and prints one JSON line: rules load time, pages per second, and the
//! technologies found per page (to compare with a peer on the same pages).
//! A page file is HTML; `PAGE.headers` beside it, if present, holds `Name: value` lines.

use std::time::Instant;

use scanner::fingerprint::{Observation, RuleSet, analyze};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [rules_dir, rounds, pages @ ..] = args.as_slice() else {
        eprintln!("usage: fingerprint_bench RULES_DIR|builtin ROUNDS PAGE...");
        std::process::exit(2);
    };
    let rounds: usize = rounds.parse().unwrap_or(1).max(1);
    let started = Instant::now();
    let rules = if rules_dir == "builtin" {
        RuleSet::builtin().clone()
    } else {
        match RuleSet::load_wappalyzer_dir(std::path::Path::new(rules_dir)) {
            Ok((rules, _)) => rules,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    };
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut observations = Vec::new();
    for page in pages {
        let html = std::fs::read_to_string(page).unwrap_or_default();
        let headers: Vec<(String, String)> = std::fs::read_to_string(format!("{page}.headers"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())))
            .collect();
        observations.push((page.clone(), Observation::from_parts("https://www.example.org/", headers, &html)));
    }
    let started = Instant::now();
    let mut found = Vec::new();
    for round in 0..rounds {
        for (page, o) in &observations {
            let d = analyze(&rules, o);
            if round == 0 {
                let names: Vec<String> = d
                    .iter()
                    .map(|d| match &d.version {
                        Some(v) => format!("{} {v}", d.name),
                        None => d.name.clone(),
                    })
                    .collect();
                found.push(serde_json::json!({"page": page, "technologies": names}));
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let analyzed = rounds * observations.len();
    println!(
        "{}",
        serde_json::json!({
            "tool": "rampart",
            "technologies": rules.len(),
            "load_ms": load_ms,
            "pages": analyzed,
            "seconds": secs,
            "pages_per_second": analyzed as f64 / secs.max(1e-9),
            "found": found,
        })
    );
}
