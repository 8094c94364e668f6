//! How the scanner reaches its targets (`NetOpts`: `rampart worker`, `serve --workers`,
//! `scan`, `probe`) and what a scan or probe on the command line adds (`ScanOpts`),
//! turned into the scanner's [`Context`] they run on.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use scanner::probes::Context;
use scanner::{Dns, Guard, Policy};

/// How a scan or probe prints what it found.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Table,
    Json,
}

/// Options every `rampart probe` and `rampart scan` command takes.
#[derive(Args, Clone)]
pub(crate) struct ScanOpts {
    #[command(flatten)]
    net: NetOpts,
    #[arg(long, value_enum, default_value = "table")]
    pub(crate) format: Format,
    /// The risk vectors to probe, comma-separated (all when absent).
    #[arg(long, value_delimiter = ',', value_parser = parse_vector)]
    vectors: Vec<model::RiskVector>,
    /// A database whose CVEs the detected software is matched against (`rampart scan`;
    /// its fingerprints and end-of-life data are used too).
    #[arg(long, value_name = "URL")]
    pub(crate) cve_db: Option<String>,
    /// The DKIM selectors the domain's owner names, comma-separated: tried first, and
    /// no key at them is `dkim.missing` (no key at the curated selectors alone is not
    /// assessable: a key at another selector cannot be seen from outside).
    #[arg(long, value_delimiter = ',', value_parser = parse_selector)]
    pub(crate) dkim_selectors: Vec<String>,
}

impl NetOpts {
    /// Lab mode (`--allow-private` or `--lab`): the guard admits special addresses.
    pub(crate) fn lab_mode(&self) -> bool {
        self.allow_private || self.lab.is_some()
    }
}

impl ScanOpts {
    /// The scanner's context: [`NetOpts::context`] with the risk vectors asked for.
    pub(crate) fn context(&self) -> Result<Context> {
        let mut ctx = self.net.context()?;
        ctx.vectors = self.vectors.clone();
        Ok(ctx)
    }
}

/// How the scanner reaches its targets (also for `rampart worker` and `serve --workers`).
#[derive(Args, Clone)]
pub(crate) struct NetOpts {
    /// The DNS server to ask (IP:PORT); the system's resolvers when absent.
    #[arg(long)]
    resolver: Option<SocketAddr>,
    /// Lab mode: the guard admits loopback and private targets.
    #[arg(long)]
    allow_private: bool,
    /// Lab mode from the files `rampart lab up --out DIR` wrote (resolver, port map,
    /// lab CA, DNSSEC trust anchor); implies --allow-private.
    #[arg(long)]
    lab: Option<PathBuf>,
    /// A DNSSEC trust-anchor file (DNSKEY lines); the IANA root key when absent.
    #[arg(long)]
    trust_anchor: Option<PathBuf>,
    /// DKIM selectors to probe, comma-separated (the curated list when absent).
    #[arg(long, value_delimiter = ',')]
    selectors: Vec<String>,
    /// A crt.sh-compatible certificate-transparency search, `{domain}` where the domain
    /// goes (e.g. 'https://crt.sh/?q=%25.{domain}&output=json'); off when absent.
    #[arg(long, value_name = "URL")]
    ct_search: Option<String>,
    /// A Wappalyzer technologies tree (categories.json, technologies/*.json) added to the
    /// built-in fingerprint rules.
    #[arg(long, value_name = "DIR")]
    fingerprints: Option<PathBuf>,
    /// endoflife.date product data (JSON) for the sbom end-of-life and outdated checks.
    #[arg(long, value_name = "FILE")]
    eol: Option<PathBuf>,
    /// A domain scan's budget: candidate names resolved, over every source.
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_names: u64,
    /// Hosts kept as assets of one domain.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_hosts: u64,
    /// Hosts visited by the web rounds of one domain.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_visits: u64,
    /// Seconds one domain's scan may take; a stage that runs out keeps what it has.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    scan_secs: u64,
    /// Endpoints (host and port that answered) kept for one domain.
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_endpoints: u64,
    /// MiB of page bodies the web visits of one domain hold at once (8 MiB per visit
    /// running).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(8..=4_096))]
    page_memory_mib: u64,
    /// The time of one stage of a domain's scan, as STAGE=SECONDS (discovery, mail, web,
    /// ports, other-web, tls); repeat for several. Defaults: discovery=120, mail=60,
    /// web=180, ports=180, other-web=60, tls=240.
    #[arg(long = "stage-secs", value_name = "STAGE=SECONDS", value_parser = parse_stage_time)]
    stage_secs: Vec<(String, u64)>,
}

/// One selector of `--dkim-selectors`.
fn parse_selector(text: &str) -> Result<String, String> {
    let mut one = model::dkim_selectors(&[text]).map_err(|e| e.to_string())?;
    one.pop().ok_or_else(|| "an empty selector".to_owned())
}

/// `STAGE=SECONDS` of `--stage-secs`.
fn parse_stage_time(text: &str) -> Result<(String, u64), String> {
    let (stage, secs) = text.split_once('=').ok_or_else(|| format!("{text:?} is not STAGE=SECONDS"))?;
    let stage = stage.trim().to_ascii_lowercase();
    if !STAGES.contains(&stage.as_str()) {
        return Err(format!("no stage {stage:?}; the stages are {}", STAGES.join(", ")));
    }
    let secs: u64 = secs.trim().parse().map_err(|_| format!("{secs:?} is not a number of seconds"))?;
    if !(1..=86_400).contains(&secs) {
        return Err(format!("{secs} seconds is not in 1..=86400"));
    }
    Ok((stage, secs))
}

/// The stages `--stage-secs` names.
const STAGES: [&str; 6] = ["discovery", "mail", "web", "ports", "other-web", "tls"];

fn parse_vector(text: &str) -> Result<model::RiskVector, String> {
    model::RiskVector::parse(text).map_err(|e| e.to_string())
}

/// The text of `path`; the error names it.
pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

impl NetOpts {
    /// The scanner's context these flags describe: the lab's from `--lab`, else a guard
    /// with the resolver and policy asked for; the budgets, selectors, CT search,
    /// fingerprints and end-of-life data given.
    pub(crate) fn context(&self) -> Result<Context> {
        let anchor_text = self.trust_anchor.as_deref().map(read).transpose()?;
        let mut ctx = match &self.lab {
            Some(dir) => {
                let lab: lab::ScannerFile = serde_json::from_str(&read(&dir.join(lab::ScannerFile::NAME))?)
                    .with_context(|| format!("{}/{}", dir.display(), lab::ScannerFile::NAME))?;
                // A lab without TLS services has no CA; one without signed zones no anchor.
                let ca = dir.join("lab-ca.pem");
                let lab_root = if ca.exists() { Some(pem_to_der(&read(&ca)?).context("lab-ca.pem")?) } else { None };
                let anchor = dir.join("trust-anchor.txt");
                let anchors = match anchor_text {
                    Some(text) => text,
                    None if anchor.exists() => read(&anchor)?,
                    None => String::new(),
                };
                Context::lab(self.resolver.unwrap_or(lab.resolver), lab.port_map, lab_root, &anchors)?
            }
            None => {
                let policy = Policy { allow_private: self.allow_private, ..Policy::default() };
                let dns = match self.resolver {
                    Some(addr) => Dns::with_server(addr)?,
                    None => Dns::system()?,
                };
                let mut ctx = Context::new(Guard::new(policy, dns));
                // DNSSEC is validated through a resolver given on the command line.
                if let Some(server) = self.resolver {
                    let anchors = match &anchor_text {
                        Some(text) => scanner::dnssec::TrustAnchor::parse(text)?,
                        None => vec![scanner::dnssec::TrustAnchor::iana_root()],
                    };
                    ctx.validator = Some(scanner::dnssec::Validator::new(server, anchors));
                }
                ctx
            }
        };
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let mut stages = scanner::probes::StageTimes::default();
        for (stage, secs) in &self.stage_secs {
            let time = std::time::Duration::from_secs(*secs);
            match stage.as_str() {
                "discovery" => stages.discovery = time,
                "mail" => stages.mail = time,
                "web" => stages.web = time,
                "ports" => stages.ports = time,
                "other-web" => stages.other_web = time,
                _ => stages.tls = time,
            }
        }
        ctx.limits = scanner::probes::Limits {
            names: count(self.max_names),
            hosts: count(self.max_hosts),
            endpoints: count(self.max_endpoints),
            visits: count(self.max_visits),
            page_bytes: count(self.page_memory_mib).saturating_mul(1024 * 1024),
            time: std::time::Duration::from_secs(self.scan_secs),
            stages,
        };
        if !self.selectors.is_empty() {
            ctx.selectors = self.selectors.clone();
        }
        if let Some(template) = &self.ct_search {
            if !template.contains("{domain}") {
                bail!("--ct-search {template:?} has no {{domain}} in it");
            }
            ctx.ct_search = Some(template.clone());
        }
        if let Some(dir) = &self.fingerprints {
            let (rules, report) = scanner::fingerprint::RuleSet::load_wappalyzer_dir(dir)?;
            tracing::info!(technologies = report.technologies, skipped = report.skipped.len(), "fingerprints loaded");
            ctx.fingerprints = Arc::new(scanner::fingerprint::RuleSet::builtin().clone().merged(&rules));
        }
        if let Some(file) = &self.eol {
            let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("product");
            let rows = scanner::software::Eol::rows(&read(file)?, stem)?;
            ctx.eol =
                Some(Arc::new(scanner::software::Eol::from_rows(rows.iter().map(|(a, b)| (a.as_str(), b.as_str())))));
        }
        Ok(ctx)
    }
}

/// The DER bytes of the first certificate of a PEM file.
pub(crate) fn pem_to_der(pem: &str) -> Result<Vec<u8>> {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body.trim()).context("PEM body is not base64")?;
    if der.is_empty() {
        bail!("no certificate in the PEM file");
    }
    Ok(der)
}
