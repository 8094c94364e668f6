//! `rampart scan DOMAIN`: one domain scanned without a database — discovery and every
//! probe — and rated alone, printed as a table or JSON. The findings and checks tables
//! are `rampart probe`'s too.

use anyhow::{Context as _, Result};
use scanner::ScanFinding;
use scanner::check::Check;
use scanner::probes::Context;

use crate::flags::ScanOpts;
use crate::flags::scanner::Format;

#[derive(clap::Args)]
pub(crate) struct Args {
    domain: String,
    /// The company's website host, for the IPv6, security.txt and HTTPS checks.
    #[arg(long)]
    website: Option<String>,
    /// A quick scan, as a new company's first rating: DNS and mail, the web root, TLS
    /// on 443 and the common ports, in seconds.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    opts: ScanOpts,
}

pub(crate) async fn run(args: Args) -> Result<()> {
    scan(&args.domain, args.website.as_deref(), args.quick, &args.opts).await
}

/// `rampart scan DOMAIN`: discovery, then every probe of this stage, with a progress
/// line on stderr.
async fn scan(domain: &str, website: Option<&str>, quick: bool, opts: &ScanOpts) -> Result<()> {
    let mut ctx = opts.context()?;
    if quick {
        ctx = ctx.quick();
    }
    let db = match &opts.cve_db {
        Some(url) => {
            let store = store::open(url).await.with_context(|| format!("opening {}", store::redact_url(url)))?;
            ctx = worker::with_store_data(ctx, &*store).await?;
            Some(store)
        }
        None => None,
    };
    let domain = model::Domain::parse(domain).with_context(|| format!("{domain:?} is not a domain"))?;
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message(format!("scanning {domain}: discovery, DNS and mail checks, a visit to every host"));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let result =
        scanner::scan::scan_domain_with(&ctx, domain.as_str(), website, &ctx.wordlist, &opts.dkim_selectors).await;
    spinner.finish_and_clear();
    let mut scan = result?;
    if let Some(store) = &db
        && ctx.wants(model::RiskVector::Vulnerabilities)
    {
        let now = time::OffsetDateTime::now_utc();
        let inventory = worker::software::inventory(&**store, &scan.software, ctx.eol.as_deref(), now).await?;
        scan.findings.extend(inventory.findings);
        scan.checks.extend(inventory.checks);
    }
    scan.findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.code.cmp(&b.code)).then(a.asset.cmp(&b.asset)));
    let rating = rate(&scan, &ctx, website, db.as_deref()).await?;
    match opts.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Report<'a> {
                #[serde(flatten)]
                scan: &'a scanner::scan::DomainScan,
                rating: &'a rating::Rating,
                /// What the site says the company is called.
                site_name: Option<String>,
            }
            let site_name = scan.site_name(website);
            say!("{}", serde_json::to_string_pretty(&Report { scan: &scan, rating: &rating, site_name })?)
        }
        Format::Table => {
            if let Some(name) = scan.site_name(website) {
                say!("the site calls itself: {name}");
            }
            say!("assets of {domain}: {}", scan.assets.len());
            say!("{:<40} {:<11} EVIDENCE", "HOST", "SOURCE");
            for a in &scan.assets {
                say!("{:<40} {:<11} {}", a.name, a.source, a.evidence);
            }
            say!();
            if !scan.skipped.is_empty() {
                say!("names skipped: {}", scan.skipped.len());
                say!("{:<40} {:<11} REASON (EVIDENCE)", "NAME", "SOURCE");
                for s in &scan.skipped {
                    say!("{:<40} {:<11} {} ({})", s.name, s.source, s.reason, s.evidence);
                }
                say!();
            }
            say!("endpoints that answered: {}", scan.endpoints.len());
            say!("{:<40} {:<16} {:<6} {:<6} SERVER", "HOST", "ADDRESS", "PORT", "SERVICE");
            for e in &scan.endpoints {
                say!("{:<40} {:<16} {:<6} {:<6} {}", e.host, e.ip.to_string(), e.port, e.service, e.banner);
            }
            say!();
            say!("software detected: {}", scan.software.len());
            say!("{:<40} {:<28} {:<16} {:<4} EVIDENCE", "HOST", "TECHNOLOGY", "VERSION", "CONF");
            for s in &scan.software {
                let evidence: String = s.evidence.chars().take(70).collect();
                let version = s.version.as_deref().unwrap_or("-");
                say!("{:<40} {:<28} {:<16} {:<4} {evidence}", s.host, s.name, version, s.confidence);
            }
            say!();
            print(domain.as_str(), "findings", &scan.findings, Format::Table)?;
            say!();
            print_checks(&scan.checks);
            say!();
            match rating.score {
                Some(s) => say!(
                    "rating of {domain} (this domain alone, methodology {}): {s:.1} ({})",
                    rating.methodology,
                    rating.grade.map_or("—", |g| g.as_str())
                ),
                None => say!("rating of {domain}: nothing was assessable"),
            }
            for cap in &rating.caps {
                say!("capped at {:.1}: {} ({})", cap.max_score, cap.reason, cap.findings.join(", "));
            }
            super::explain::print_components(&rating);
            say!();
            say!("stages:");
            for st in &scan.stages {
                say!(
                    "  {:<20} {:>8} ms of {:>4} s  {}",
                    st.name,
                    st.millis,
                    st.budget_millis.div_ceil(1000),
                    st.summary
                );
            }
            for note in &scan.notes {
                say!("note: {note}");
            }
        }
    }
    Ok(())
}

/// The rating of one domain's scan: each component judged against what the scan
/// assessed; components left out by `--vectors` are not assessable.
async fn rate(
    scan: &scanner::scan::DomainScan,
    ctx: &Context,
    website: Option<&str>,
    db: Option<&dyn store::Store>,
) -> Result<rating::Rating> {
    let mut assessed = worker::rate::Assessed::default();
    assessed.add_scan(scan);
    assessed.set_software(&scan.software);
    let mut assets = assessed.per_component();
    for (v, n) in assets.iter_mut() {
        if !ctx.wants(*v) {
            *n = 0;
        }
    }
    let findings = worker::to_findings(scan.findings.clone(), time::OffsetDateTime::now_utc());
    let kev = match db {
        Some(store) => store::judged::kev_among(store, &findings).await?,
        None => std::collections::BTreeSet::new(),
    };
    let website = website.map(str::to_ascii_lowercase);
    let mut rating = rating::rate(&rating::Input {
        findings: &findings,
        assets_checked: &assets,
        kev: &kev,
        website_host: website.as_deref(),
    });
    worker::rate::explain(&mut rating, &assessed.not_assessable_reasons());
    for c in &mut rating.components {
        if !ctx.wants(c.risk_vector) {
            c.not_assessable = Some("not scanned (--vectors)".to_owned());
        }
    }
    Ok(rating)
}

/// [`print`] and every check made: in the JSON report beside the findings, as a
/// second table after them.
pub(super) fn print_checked(
    target: &str,
    what: &str,
    findings: &[ScanFinding],
    checks: &[Check],
    format: Format,
) -> Result<()> {
    report(target, what, findings, Some(checks), format)
}

/// The checks table: every check made, pass, finding or not assessable (and why).
pub(super) fn print_checks(checks: &[Check]) {
    use scanner::check::Outcome;
    let count = |o: Outcome| checks.iter().filter(|c| c.outcome == o).count();
    say!(
        "checks: {} ({} pass, {} finding, {} not assessable)",
        checks.len(),
        count(Outcome::Pass),
        count(Outcome::Finding),
        count(Outcome::NotAssessable)
    );
    if checks.is_empty() {
        return;
    }
    say!("{:<19} {:<19} {:<40} {:<15} DETAIL", "COMPONENT", "CHECK", "ASSET", "OUTCOME");
    for c in checks {
        let detail = crate::common::clip(&c.detail, 110);
        say!("{:<19} {:<19} {:<40} {:<15} {detail}", c.risk_vector.as_str(), c.check, c.asset, c.outcome.as_str());
    }
}

pub(super) fn print(target: &str, what: &str, findings: &[ScanFinding], format: Format) -> Result<()> {
    report(target, what, findings, None, format)
}

/// The findings of `target` (and the checks made, when given): a JSON report, or a
/// findings table followed by the checks table.
fn report(target: &str, what: &str, findings: &[ScanFinding], checks: Option<&[Check]>, format: Format) -> Result<()> {
    match format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Report<'a> {
                domain: &'a str,
                findings: &'a [ScanFinding],
                #[serde(skip_serializing_if = "Option::is_none")]
                checks: Option<&'a [Check]>,
            }
            say!("{}", serde_json::to_string_pretty(&Report { domain: target, findings, checks })?);
        }
        Format::Table => {
            say!("{what} of {target}: {} finding(s)", findings.len());
            if !findings.is_empty() {
                say!("{:<9} {:<42} {:<40} EVIDENCE", "SEVERITY", "CODE", "ASSET");
            }
            for f in findings {
                let evidence = crate::common::clip(&f.evidence, 100);
                say!("{:<9} {:<42} {:<40} {evidence}", f.severity.as_str(), f.code, f.asset);
            }
            if let Some(checks) = checks {
                say!();
                print_checks(checks);
            }
        }
    }
    Ok(())
}
