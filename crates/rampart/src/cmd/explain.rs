//! `rampart explain SOCIAL_ID|DOMAIN`: why a company's score is what it is — every
//! component with its assets, the points each open finding cost, the caps, and the
//! re-weighting — recomputed with the rating crate from the stored findings and the
//! assets the last computed rating assessed.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use model::{Domain, RiskVector, SocialId};
use store::Store;

use crate::flags::DbArg;

#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    db: DbArg,
    /// The company's social_id or one of its domains.
    company: String,
    #[arg(long, value_enum, default_value = "text")]
    format: ExplainFormat,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum ExplainFormat {
    Text,
    Json,
}

pub(crate) async fn run(args: Args) -> Result<()> {
    let store = crate::common::open(&args.db.db).await?;
    explain(&*store, &args.company, args.format).await
}

async fn explain(store: &dyn Store, target: &str, format: ExplainFormat) -> Result<()> {
    let company = match SocialId::parse(target) {
        Ok(id) => store.company_by_social_id(&id).await?,
        Err(_) => None,
    };
    let company = match company {
        Some(c) => c,
        None => {
            let domain =
                Domain::parse(target).with_context(|| format!("{target:?} is neither a social_id nor a domain"))?;
            store.company_by_domain(&domain).await?.with_context(|| format!("no company owns {domain}"))?
        }
    };
    let Some(last) = store.score_history(company.id, 50).await?.into_iter().find(|s| s.methodology.is_some()) else {
        bail!(
            "{} has no rating computed from a scan yet (scan it: the worker rates after every scan)",
            company.social_id
        )
    };
    let assets: BTreeMap<RiskVector, u32> = last.components.iter().map(|(v, c)| (*v, c.assets_checked)).collect();
    let findings = store.open_findings(company.id).await?;
    let kev = store::judged::kev_among(store, &findings).await?;
    let website = model::website_host(&company.website);
    let mut rating = rating::rate(&rating::Input {
        findings: &findings,
        assets_checked: &assets,
        kev: &kev,
        website_host: website.as_deref(),
    });
    let basis = worker::rate::basis_of(&last);
    worker::rate::explain(&mut rating, &basis.reasons);
    let population: Vec<rating::peers::Member> = store
        .rated_population()
        .await?
        .into_iter()
        .map(|r| rating::peers::Member::new(r.id, r.naics_code, &r.employees, r.score as f64 / 100.0))
        .collect();
    let me = rating::peers::Member::new(company.id, company.naics_code, &company.employees_number, last.score.as_f64());
    let (peer, overall) = rating::peers::benchmarks(&me, &population);
    let weightless: Vec<&model::Finding> = findings.iter().filter(|f| f.no_weight).collect();
    match format {
        ExplainFormat::Json => {
            let out = serde_json::json!({
                "social_id": company.social_id.to_string(),
                "company_name": company.company_name,
                "rated_at": model::timefmt::rfc3339(last.scanned_at.0),
                "rating": rating,
                "checks": basis.checks,
                "peer_benchmarks": { "sector_and_size": peer, "overall": overall },
                "compensating_controls": weightless,
            });
            say!("{}", serde_json::to_string_pretty(&out)?);
        }
        ExplainFormat::Text => {
            print_text(&company, &last, &rating);
            for f in &weightless {
                say!("  {} on {}: an accepted compensating control; shown, weighs nothing", f.code, f.asset);
            }
            print_peers(&[("sector and size", &peer), ("overall", &overall)]);
            print_checks(&basis.checks);
        }
    }
    Ok(())
}

/// Where the score stands among peers (rating::peers).
fn print_peers(groups: &[(&str, &rating::peers::Benchmark)]) {
    say!("Peer benchmarks (percentile rank of the global score among rated peers; ties count half):");
    for (name, b) in groups {
        match b.percentile {
            Some(p) => say!("  {name}: percentile rank {p:.1} among {} peers ({})", b.peers, b.group),
            None => say!(
                "  {name}: no percentile: {} ({} peers; {})",
                b.note.as_deref().unwrap_or("unknown"),
                b.peers,
                b.group
            ),
        }
    }
}

fn print_text(company: &model::Company, last: &model::ScoreSnapshot, r: &rating::Rating) {
    let score = |s: Option<f64>| s.map_or_else(|| "—".to_owned(), |s| format!("{s:.1}"));
    let grade = |g: Option<model::Grade>| g.map_or("—", |g| g.as_str());
    say!(
        "{} ({}): {} ({}), methodology {}, assets as of the scan at {}",
        company.social_id,
        company.company_name,
        score(r.score),
        grade(r.grade),
        r.methodology,
        model::timefmt::rfc3339(last.scanned_at.0)
    );
    say!("The global score is the weighted mean of the assessable components: {}.", score(r.uncapped_score));
    if r.reweighted {
        say!("Components with nothing to assess carry no weight; the others share theirs.");
    }
    for cap in &r.caps {
        say!("Capped at {:.1}: {} ({}).", cap.max_score, cap.reason, cap.findings.join(", "));
    }
    say!();
    print_components(r);
    say!();
    say!(
        "Method: docs/METHODOLOGY.md, \"Rating\": component score = 100·exp(−(points/50)/(1 + ln(assets)/2)); \
         web_headers = mean over origins of 100 − the Observatory modifiers."
    );
}

/// The twelve components of a rating, each with what it lost and why.
pub(crate) fn print_components(r: &rating::Rating) {
    let score = |s: Option<f64>| s.map_or_else(|| "—".to_owned(), |s| format!("{s:.1}"));
    let grade = |g: Option<model::Grade>| g.map_or("—", |g| g.as_str());
    say!("{:<20} {:>6} {:>5} {:>7} {:>7} {:>9}", "COMPONENT", "SCORE", "GRADE", "WEIGHT", "ASSETS", "FINDINGS");
    for c in &r.components {
        say!(
            "{:<20} {:>6} {:>5} {:>6.2}% {:>7} {:>9}",
            c.risk_vector.as_str(),
            score(c.score),
            grade(c.grade),
            c.effective_weight,
            c.assets_checked,
            c.findings_count
        );
        if let Some(why) = &c.not_assessable {
            say!("    not assessable: {why}");
        }
        for p in &c.penalties {
            let cve = p.cve.as_deref().map(|c| format!(" {c}")).unwrap_or_default();
            let points = format!("-{:.0}", p.points);
            say!("    {points:>4} pts  {:<8} {}{cve} on {}", p.severity.as_str(), p.code, p.asset);
        }
    }
}

/// The checks the last scan made, per component: how many passed, found something or
/// could not be made, and the list the rating kept.
fn print_checks(checks: &BTreeMap<RiskVector, model::ComponentChecks>) {
    say!();
    if checks.is_empty() {
        say!("The rating keeps no checks (imported, or rated before checks were kept).");
        return;
    }
    say!("Checks of the last scan:");
    for (v, c) in checks {
        say!("{:<20} {} pass, {} finding, {} not assessable", v.as_str(), c.pass, c.finding, c.not_assessable);
        for check in &c.list {
            let detail = crate::common::clip(&check.detail, 100);
            say!("    {:<15} {:<19} {:<40} {detail}", check.outcome.as_str(), check.check, check.asset);
        }
        let listed = u32::try_from(c.list.len()).unwrap_or(u32::MAX);
        let total = c.pass + c.finding + c.not_assessable;
        if listed < total {
            say!("    … {} more", total - listed);
        }
    }
}
